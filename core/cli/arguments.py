"""The ``effdim`` command's argument types and shared option groups, and how a command's options
become the engine's keyword arguments. A bad argument is a :class:`UsageError`: one line, exit 2."""

from __future__ import annotations

import argparse
from typing import NoReturn

from ..errors import EffdimError
from ..priors import CS_PRIOR_CHOICES, DEFAULT_CS_PRIOR


class UsageError(EffdimError):
    """Bad command-line input: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + message
        raise UsageError(f"{self.prog}: {message}")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def em_settings_of(args: argparse.Namespace):
    """How every EM fit of a command runs (:class:`effdim.EMSettings`): the command's own fits and a
    bootstrap's refits alike; a bad or contradictory CS prior is refused before any progress bar."""
    from .. import EMSettings

    return EMSettings(
        restarts=args.restarts,
        seed=args.seed,
        tol=args.tol,
        max_iter=args.max_iter,
        prior=args.prior,
        cs_prior=getattr(args, "cs_prior", None),
        sbic_phi=getattr(args, "sbic_phi", None),
    )


def mapping_of(args: argparse.Namespace) -> dict[str, str] | None:
    """The leaf -> column mapping of ``--map LEAF=COLUMN`` (``None`` without one)."""
    mapping = {}
    for item in args.map:
        leaf, sep, column = item.partition("=")
        if not sep or not leaf or not column:
            raise UsageError(f"effdim {args.command}: --map expects LEAF=COLUMN, got {item!r}")
        mapping[leaf] = column
    return mapping or None


def execution_of(args: argparse.Namespace):
    """Where jobs run (:class:`effdim.executor.Execution`): --workers 1 in this process, else local
    processes, or the Dask cluster of --scheduler."""
    from ..executor import Execution

    return Execution("serial" if args.workers == 1 else "processes", args.workers, args.scheduler)


def _add_em_options(p: argparse.ArgumentParser) -> None:
    from ..text_formats import ENCODINGS, encoding_name

    p.add_argument(
        "--sep",
        default=None,
        type=_separator,
        metavar="CHAR",
        help="field separator of a CSV file: a character, or comma, semicolon, tab "
        "(default: detected: comma, semicolon or tab)",
    )
    p.add_argument(
        "--encoding",
        default=None,
        type=encoding_name,  # latin1, UTF8, ...: the names the reader takes
        choices=list(ENCODINGS),
        help="text encoding of a CSV file (default: detected: UTF-8, else Latin-1; UTF-16 by its mark)",
    )
    p.add_argument(
        "--columns",
        action="append",
        default=None,
        metavar="COLUMN",
        help="a column of the file to use (repeatable; default: every column)",
    )
    p.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="COLUMN",
        help="a column of the file to leave out, such as an identifier (repeatable)",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="LEAF=COLUMN",
        help="data column of a model leaf (repeatable); default: leaves named after columns",
    )
    p.add_argument("--restarts", type=_positive_int, default=5, help="random EM starts, pruned (default 5)")
    p.add_argument("--seed", type=_seed, default=None, help="seed of the EM starts")
    p.add_argument(
        "--tol",
        type=_nonnegative_float,
        default=1e-8,
        help="EM stops when the log-likelihood per row rises less (default 1e-8) and the "
        "parameters are within 1e-6 of EM's fixed point",
    )
    p.add_argument("--max-iter", type=_positive_int, default=1000, help="most EM steps per start (default 1000)")
    p.add_argument(
        "--prior",
        type=_nonnegative_float,
        default=None,
        help="pseudo-count per CPT cell (MAP); default: maximum likelihood",
    )
    p.add_argument(
        "--cs-prior",
        default=None,
        metavar="PRIOR",
        help=f"Dirichlet prior of CS and CS+: {CS_PRIOR_CHOICES} (default {DEFAULT_CS_PRIOR}; "
        "with --prior A the prior EM used, k2:A+1)",
    )
    p.add_argument(
        "--criteria",
        choices=["paper", "all"],
        default="paper",
        help="criteria in printed tables: the paper's BIC, BIC+, CS, CS+ and AIC (default), or all "
        "(adds AIC+, AIC3, SABIC, CAIC and their de versions); JSON always has all",
    )
    p.add_argument(
        "--deviance",
        action="store_true",
        help="print scores on the -2 log-likelihood scale of poLCA and Mplus (lower is better)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def _add_report_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        metavar="FILE.html",
        default=None,
        help="write the analysis as one self-contained HTML page (opens offline; docs/report.md)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an output file (--report, --posteriors, --table-file) that exists; without it such a file is "
        "refused before any work. A file the command reads is never written, even with --overwrite",
    )


def _add_executor_options(
    p: argparse.ArgumentParser, jobs: str = "bootstrap replicates", default: str = "CPUs"
) -> None:
    p.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help=f"local worker processes for the {jobs} (default: {default}"
        + ("" if default == "this process" else "; 1: this process")
        + ")",
    )
    p.add_argument("--scheduler", default=None, help=f"Dask scheduler address: run the {jobs} on that cluster")


def _whole_number(text: str, low: int, high: int | None, expected: str) -> int:
    """An option's whole number in ``low..high``; else argparse's one-line error saying what was ``expected``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
    return value


def _positive_int(text: str) -> int:
    return _whole_number(text, 1, None, "a number >= 1")


def _count_range(text: str) -> tuple[int, int]:
    """``LOW..HIGH`` (or one number ``N``, meaning ``N..N``): a range of counts such as ``--leaves 8..12``."""
    low, sep, high = text.partition("..")
    try:
        return (int(low), int(high)) if sep else (int(low), int(low))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a range LOW..HIGH of whole numbers, got {text!r}") from None


def _seed(text: str) -> int:
    """``--seed``: what numpy's generators take."""
    return _whole_number(text, 0, 2**63 - 1, "a seed from 0 to 2**63 - 1")


def _port(text: str) -> int:
    """``--port``: 0 is any free port."""
    return _whole_number(text, 0, 65535, "a port from 0 to 65535")


#: ``--sep`` by name (``tab`` is hard to type in a shell); the first name of a character is the one written back.
SEPARATOR_NAMES = {"comma": ",", "semicolon": ";", "tab": "\t", "\\t": "\t", "pipe": "|", "space": " "}


def _separator(text: str) -> str:
    """``--sep``: one character, or its name (:data:`SEPARATOR_NAMES`)."""
    sep = SEPARATOR_NAMES.get(text.lower(), text)
    if len(sep) != 1 or sep in '\r\n"':
        raise argparse.ArgumentTypeError(f"expected one character (or comma, semicolon, tab), got {text!r}")
    return sep


def _nonnegative_int(text: str) -> int:
    return _whole_number(text, 0, None, "a number >= 0")


def _rounds(text: str) -> int:
    """``--rounds`` of a structure search (:data:`effdim.limits.MAX_ROUNDS` at most)."""
    from ..limits import MAX_ROUNDS

    return _whole_number(text, 0, MAX_ROUNDS, f"a number of rounds from 0 to {MAX_ROUNDS}")


def _nonnegative_float(text: str) -> float:
    """A finite number >= 0 (``--tol``, ``--prior``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value
