# The peer of benchmarks/engine/bench_enumeration.py: poLCA on the election data's 1,311 complete rows
# (12 four-category items), 1 to 6 classes with 10 starts each, then a bootstrap LRT done by hand
# with poLCA (poLCA has none): replicates drawn from the k - 1 class fit by poLCA.simdata, both
# models refitted with 10 starts. Prints one JSON object.
#   Rscript benchmarks/engine/polca_election.R [B replicates per test, default 3; 0: the sweep alone]
suppressMessages(library(poLCA))
args <- commandArgs(trailingOnly = TRUE)
B <- if (length(args) > 0) as.integer(args[1]) else 3L
data(election)
items <- c("MORALG", "CARESG", "KNOWG", "LEADG", "DISHONG", "INTELG",
           "MORALB", "CARESB", "KNOWB", "LEADB", "DISHONB", "INTELB")
E <- election[complete.cases(election[, items]), items]
f <- as.formula(paste("cbind(", paste(items, collapse = ","), ") ~ 1"))
set.seed(1)
fits <- list()
sweep <- system.time(for (k in 1:6) fits[[k]] <- poLCA(f, E, nclass = k, nrep = 10, verbose = FALSE, calc.se = FALSE))
blrt_seconds <- c()
blrt_cpu <- c()
for (k in if (B > 0) 2:6 else integer(0)) {
  null <- fits[[k - 1]]
  t <- system.time(for (b in seq_len(B)) {
    sim <- poLCA.simdata(N = nrow(E), probs = null$probs, P = null$P)$dat
    names(sim) <- items
    small <- poLCA(f, sim, nclass = k - 1, nrep = 10, verbose = FALSE, calc.se = FALSE)
    big <- poLCA(f, sim, nclass = k, nrep = 10, verbose = FALSE, calc.se = FALSE)
  })
  blrt_seconds <- c(blrt_seconds, t[["elapsed"]] / B)
  blrt_cpu <- c(blrt_cpu, (t[["user.self"]] + t[["sys.self"]]) / B)
}
cat(sprintf(paste0('{"sweep_seconds": %.3f, "sweep_cpu": %.3f, "logliks": [%s], ',
                   '"blrt_seconds_per_replicate": [%s], "blrt_cpu_per_replicate": [%s], "B_timed": %d}\n'),
            sweep[["elapsed"]], sweep[["user.self"]] + sweep[["sys.self"]],
            paste(sprintf("%.6f", sapply(fits, function(x) x$llik)), collapse = ", "),
            paste(sprintf("%.3f", blrt_seconds), collapse = ", "), paste(sprintf("%.3f", blrt_cpu), collapse = ", "), B))
