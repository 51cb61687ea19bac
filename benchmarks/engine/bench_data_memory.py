"""Peak memory of reading a CSV file, per MB of input (docs/robustness.md).

Writes survey-like CSV files (``--columns`` items of 2-5 short labels each,
optionally an ID column of distinct values) of the requested sizes, then
reads each in a fresh Python process with :func:`effdim.reading.read_data`
(the function every face calls) and reports that process's peak resident
memory above what the imports alone take (``ru_maxrss`` after the read
minus the RSS before it). Each size is read ``--repeats`` times; the median
is reported.

Run: ``python -m benchmarks.engine.bench_data_memory [--sizes 5,20,50] [--columns 10] [--id] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import json, resource, sys
import effdim.data, effdim.csvscan, effdim.read_limits  # imports outside the measurement
def rss_kib():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmRSS"))
before = rss_kib()
path, reader = sys.argv[1], sys.argv[2]
if reader == "read_data":
    from effdim.reading import read_data
    read_data(path, limits=effdim.ReadLimits(max_states=1_000_000, max_bytes=10**10))
else:
    effdim.data.load_csv(path, limits=effdim.ReadLimits(max_states=1_000_000, max_bytes=10**10))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"before_kib": before, "peak_kib": peak}))
"""


def write_csv(path: Path, megabytes: float, columns: int, with_id: bool, seed: int = 0) -> int:
    """A CSV of about ``megabytes`` MB; returns its size in bytes."""
    rng = np.random.default_rng(seed)
    labels = [np.array(["yes", "no", "maybe", "often", "never"][: 2 + j % 4]) for j in range(columns)]
    header = (["id"] if with_id else []) + [f"item{j + 1}" for j in range(columns)]
    target = int(megabytes * 1e6)
    with open(path, "w") as fh:
        fh.write(",".join(header) + "\n")
        written, row = 0, 0
        while written < target:
            block = 10_000
            cols = [lab[rng.integers(0, lab.size, block)] for lab in labels]
            if with_id:
                cols.insert(0, np.char.add("r", np.arange(row, row + block).astype(str)))
            text = "\n".join(",".join(r) for r in zip(*cols)) + "\n"
            fh.write(text)
            written += len(text)
            row += block
    return path.stat().st_size


def measure(path: Path, reader: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), reader], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,20,50", help="file sizes in MB")
    parser.add_argument("--columns", type=int, default=10)
    parser.add_argument("--id", action="store_true", help="add an ID column of distinct values")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--reader",
        choices=["read_data", "load_csv"],
        default="read_data",
        help="read_data (this version) or load_csv (also present in older versions)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'MB':>6} {'peak above imports (MB)':>24} {'per MB of input':>16}")
        for size in (float(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"data_{size:g}.csv"
            n_bytes = write_csv(path, size, args.columns, args.id)
            extra = [
                (r["peak_kib"] - r["before_kib"]) / 1024
                for r in (measure(path, args.reader) for _ in range(args.repeats))
            ]
            mb = n_bytes / 1e6
            median = statistics.median(extra)
            print(f"{mb:6.1f} {median:24.0f} {median / mb:16.1f}")


if __name__ == "__main__":
    main()
