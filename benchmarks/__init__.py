"""Speed measurements against targets and peers; run each from the repository root: ``python -m benchmarks.GROUP.NAME``."""
