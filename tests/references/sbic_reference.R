# The R package sBIC's singular BIC for latent class models, the reference tests/test_sbic.py compares
# effdim's `sbic` with. Run from the repository's root:  Rscript tests/references/sbic_reference.R
#
# Writes, beside this script:
#   sbic_vignette_data.csv  the sBIC vignette's data ("Latent Class Analysis": 8 binary items, 4 true
#                           classes, 50 rows, simulated with set.seed(37421) as the vignette does)
#   sbic_reference.csv      per data set, phi and number of classes: poLCA's maximum log-likelihood
#                           (as sBIC fits it: 50 starts, 8000 iterations), the package's sBIC and BIC
# for the vignette data (1 to 6 classes) and poLCA's election data (complete rows, 1 to 4 classes).
library(poLCA)
library(sBIC)

# sBIC 0.2 exports its R.oo methods without registering them; under R 4 S3 dispatch needs them registered.
ns <- asNamespace("sBIC")
for (fn in ls(ns)) {
  parts <- regmatches(fn, regexec("^(.+)\\.(LCAs|MixtureModels|ModelPoset)$", fn))[[1]]
  if (length(parts) == 3 && exists(parts[2], envir = ns)) {
    registerS3method(parts[2], parts[3], get(fn, envir = ns), envir = ns)
  }
}

here <- "tests/references"

# --- the vignette's data, as the vignette makes it
alpha <- rep(0.25, 4)
p1 <- 0.85; p2 <- 0.1; p3 <- 0.2
P <- matrix(c(p1, p2, p2, p2,  p1, p3, p3, p3,  p2, p1, p2, p2,  p3, p1, p3, p3,
              p2, p2, p1, p2,  p3, p3, p1, p3,  p2, p2, p2, p1,  p3, p3, p3, p1), nrow = 8, ncol = 4, byrow = TRUE)
simLCA <- function(alpha, ProbMat, sampleSize, nsim) {
  probs <- vector("list", nrow(ProbMat))
  for (i in 1:nrow(ProbMat)) probs[[i]] <- cbind(ProbMat[i, ], 1 - ProbMat[i, ])
  X <- poLCA.simdata(N = sampleSize * nsim, probs = probs, P = alpha)$dat
  split(X, rep(1:nsim, each = sampleSize))
}
set.seed(37421)
X <- simLCA(alpha, P, sampleSize = 50, nsim = 1)[[1]]
write.csv(X, file.path(here, "sbic_vignette_data.csv"), row.names = FALSE)

data(election)
items <- c("MORALG", "CARESG", "KNOWG", "LEADG", "DISHONG", "INTELG",
           "MORALB", "CARESB", "KNOWB", "LEADB", "DISHONB", "INTELB")
E <- election[complete.cases(election[, items]), items]
E[] <- lapply(E, as.integer)

rows <- list()
run <- function(name, data, classes, states, phis) {
  set.seed(1)
  lcas <- LCAs(maxNumClasses = classes, numVariables = ncol(data), numStatesForVariables = states)
  results <- sBIC(data, lcas)  # the default phi, (d1 + 1) / 2
  out <- list(data.frame(data = name, phi = "default", classes = 1:classes, loglik = results$logLike,
                         sbic = results$sBIC, bic = results$BIC))
  for (phi in phis) {
    setPhi(lcas, phi)
    again <- sBIC(NULL, lcas)  # the same log-likelihoods, another phi
    out[[length(out) + 1]] <- data.frame(data = name, phi = format(phi), classes = 1:classes,
                                         loglik = again$logLike, sbic = again$sBIC, bic = again$BIC)
  }
  do.call(rbind, out)
}
table <- rbind(
  run("vignette", X, 6, 2, c(0.5, 1, 3, 3.5, 4, 5, 8, 12)),
  run("election", E, 4, 4, c(1, 10, 30, 40))
)
write.csv(table, file.path(here, "sbic_reference.csv"), row.names = FALSE)
print(table, digits = 12)
