# Writes tests/data/election.csv from poLCA's data/election.rda (one row per respondent, as distributed).
# Run from the repository's root:  Rscript tests/data/election_from_poLCA.R /path/to/poLCA/data/election.rda
args <- commandArgs(trailingOnly = TRUE)
load(args[1])
election[] <- lapply(election, function(x) if (is.factor(x)) as.character(x) else x)
write.csv(election, "tests/data/election.csv", row.names = FALSE, na = "", quote = TRUE)
