# Writes poLCA's data sets election and cheating as CSV files bundled with effdim (core/datasets/):
# one row per respondent, missing cells empty, the item labels and numeric codes as poLCA stores them.
#   Rscript benchmarks/make_polca_datasets.R
# poLCA (Linzer & Lewis 2011) is GPL; only its published data are used, none of its code.
suppressMessages(library(poLCA))
out <- file.path("core", "datasets")
data(election)
write.csv(election, file.path(out, "election.csv"), row.names = FALSE, na = "")
data(cheating)
write.csv(cheating, file.path(out, "cheating.csv"), row.names = FALSE, na = "")
cat("poLCA", as.character(packageVersion("poLCA")), "\n")
