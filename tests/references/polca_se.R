# poLCA's latent class regressions and standard errors, the reference of tests/test_polca_reference.py.
#   Rscript tests/references/polca_se.R      (from the repository's root; writes tests/references/polca_se.json)
# Each model is fitted with many random starts; the best is fitted again from its own estimate with the
# classes by decreasing share (poLCA.reorder), so poLCA's reference class 1 is the largest, as effdim's.
# Missing item cells are marginalised (na.rm = FALSE), as effdim does; rows with a missing covariate are
# left out by poLCA either way. Standard errors are poLCA's (its manual, section 3.3: the outer product of
# each row's score in log-ratio parameters, inverted, then the delta method back to probabilities).
suppressMessages(library(poLCA))
suppressMessages(library(jsonlite))
data(election); data(cheating); data(carcinoma); data(gss82); data(values)
gore_bush <- c("MORALG", "CARESG", "KNOWG", "LEADG", "DISHONG", "INTELG",
               "MORALB", "CARESB", "KNOWB", "LEADB", "DISHONB", "INTELB")
TOL <- 1e-11
fit_ordered <- function(formula, data, nclass, nrep, seed) {
  set.seed(seed)
  first <- poLCA(formula, data, nclass = nclass, nrep = nrep, maxiter = 50000, tol = TOL,
                 na.rm = FALSE, verbose = FALSE)
  start <- poLCA.reorder(first$probs, order(first$P, decreasing = TRUE))
  again <- poLCA(formula, data, nclass = nclass, probs.start = start, maxiter = 50000, tol = TOL,
                 na.rm = FALSE, verbose = FALSE)
  list(first = first, fit = again)
}
entry <- function(name, dataset, items, covariates, nclass, nrep, seed, data) {
  rhs <- if (is.null(covariates)) "1" else covariates
  formula <- as.formula(paste0("cbind(", paste(items, collapse = ","), ") ~ ", rhs))
  both <- fit_ordered(formula, data, nclass, nrep, seed)
  m <- both$fit
  out <- list(
    name = name, dataset = dataset, items = items, covariates = covariates, nclass = nclass,
    nrep = nrep, seed = seed, N = m$N, llik = m$llik, best_of_starts = both$first$llik,
    attempts = both$first$attempts, npar = m$npar, numiter = m$numiter,
    P = unname(m$P), P_se = unname(m$P.se),
    probs = lapply(m$probs, function(p) unname(p)),
    probs_se = lapply(m$probs.se, function(p) unname(p))
  )
  if (!is.null(covariates)) {
    out$coeff_names <- rownames(m$coeff)
    out$coeff <- unname(m$coeff)
    out$coeff_se <- unname(m$coeff.se)
  }
  out
}
models <- list(
  entry("election_party", "election", gore_bush, "PARTY", 3, 20, 61, election),
  entry("election_party_age", "election", gore_bush, "PARTY * AGE", 3, 20, 62, election),
  entry("cheating_gpa", "cheating", c("LIEEXAM", "LIEPAPER", "FRAUD", "COPYEXAM"), "GPA", 2, 20, 63, cheating),
  entry("election_3", "election", gore_bush, NULL, 3, 20, 64, election),
  entry("cheating_2", "cheating", c("LIEEXAM", "LIEPAPER", "FRAUD", "COPYEXAM"), NULL, 2, 20, 65, cheating),
  entry("carcinoma_2", "carcinoma", LETTERS[1:7], NULL, 2, 20, 66, carcinoma),
  entry("carcinoma_3", "carcinoma", LETTERS[1:7], NULL, 3, 20, 67, carcinoma),
  entry("gss82_3", "gss82", c("PURPOSE", "ACCURACY", "UNDERSTA", "COOPERAT"), NULL, 3, 20, 68, gss82),
  entry("values_2", "values", c("A", "B", "C", "D"), NULL, 2, 20, 69, values)
)
names(models) <- sapply(models, function(m) m$name)
result <- list(
  generated_by = "tests/references/polca_se.R",
  polca_version = as.character(packageVersion("poLCA")),
  r_version = R.version.string,
  tol = TOL,
  models = models
)
writeLines(toJSON(result, digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null"),
           "tests/references/polca_se.json")
for (m in models) cat(sprintf("%-20s N=%d llik=%.6f (best start %.6f) iter=%d\n",
                              m$name, m$N, m$llik, m$best_of_starts, m$numiter))
