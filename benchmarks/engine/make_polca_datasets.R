# Writes poLCA's data sets election, cheating, carcinoma and gss82 as CSV files bundled with effdim
# (core/datasets/): election and cheating one row per respondent, missing cells empty, the item labels and
# numeric codes as poLCA stores them; carcinoma and gss82 (no missing cells, no covariates) as the published
# tables of response-pattern counts (a column 'count').
#   Rscript benchmarks/engine/make_polca_datasets.R
# poLCA (Linzer & Lewis 2011) is GPL; only its published data are used, none of its code.
suppressMessages(library(poLCA))
out <- file.path("core", "datasets")
data(election)
write.csv(election, file.path(out, "election.csv"), row.names = FALSE, na = "")
data(cheating)
write.csv(cheating, file.path(out, "cheating.csv"), row.names = FALSE, na = "")
patterns <- function(frame, file) {
  counts <- as.data.frame(table(frame), responseName = "count")
  counts <- counts[counts$count > 0, ]
  counts <- counts[do.call(order, unname(as.list(counts[names(frame)]))), ]  # by the codes, first column first
  write.csv(counts, file.path(out, file), row.names = FALSE, quote = FALSE)
}
data(carcinoma)
patterns(carcinoma, "carcinoma.csv")
data(gss82)
patterns(gss82, "gss82.csv")
cat("poLCA", as.character(packageVersion("poLCA")), "\n")
