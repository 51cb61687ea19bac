"""The ``effdim`` command's parser: every command, its arguments and its help."""

from __future__ import annotations

import argparse

from .. import __version__
from ..limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_CARD, ROUNDS
from ..priors import CS_PRIOR_CHOICES, DEFAULT_CS_PRIOR
from ..scores import FIT_SCORES, SCORES
from . import three_step
from .app_command import _cmd_app
from .arguments import (
    _add_em_options,
    _add_executor_options,
    _add_report_option,
    _count_range,
    _nonnegative_int,
    _Parser,
    _port,
    _positive_float,
    _positive_int,
    _rounds,
    _seconds,
    _seed,
)
from .data_commands import _cmd_blrt, _cmd_fit, _cmd_learn, _cmd_search, _cmd_sweep
from .experiment_command import _cmd_experiment
from .model_commands import _cmd_dims, _cmd_gaps, _cmd_regularize

#: The DATA argument of the commands that read data (``fit`` spells the formats and data sets out).
DATA_HELP = "a data file (CSV, .sav, .dta, .xlsx, .parquet) or a bundled data set name"


#: The help of ``--stop-after`` (the sequential bootstrap LRT, :mod:`effdim.bootstrap`).
STOP_HELP = (
    "sequential BLRT: a test stops drawing replicates once H of them reach the data's LR, at the l-th, and reports "
    "p = H / l (Besag & Clifford 1991); with H >= 0.05 (B + 1) the decision at 0.05 is that of all B replicates"
)


def build_parser() -> argparse.ArgumentParser:
    """The ``effdim`` argument parser: one function below adds each command."""
    parser = _Parser(prog="effdim", description="Effective dimension of LC and HLC models (Kocka & Zhang 2002).")
    parser.add_argument("--version", action="version", version=f"effdim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (
        _add_model_commands,
        _add_fit,
        _add_sweep,
        _add_blrt,
        _add_search,
        _add_learn,
        _add_experiment,
        _add_app,
    ):
        add(sub)
    return parser


def _add_model_commands(sub) -> None:
    """``dims``, ``regularize`` and ``gaps``: the commands on models, no data."""
    dims = sub.add_parser("dims", help="ds, de, dc and the local LC table of a model")
    dims.add_argument("model", help="notation (e.g. '3:2,2,2,2' or '5(3(2,2),2,3(2,2))') or a JSON file")
    dims.add_argument("--json", action="store_true", help="print one JSON object")
    dims.add_argument("--repeats", type=_positive_int, default=2, help="random points per unproven rank (default 2)")
    dims.add_argument("--seed", type=_seed, default=None, help="seed for the random points of the direct rank")
    dims.add_argument(
        "--max-memory-mb",
        type=_positive_int,
        default=DEFAULT_MAX_BYTES // 1024**2,
        help=f"memory one rank may use, in MiB (default {DEFAULT_MAX_BYTES // 1024**2})",
    )
    dims.set_defaults(run=_cmd_dims)

    reg = sub.add_parser("regularize", help="the regular equivalent of a model and the steps taken")
    reg.add_argument("model", help="notation or a JSON file")
    reg.add_argument("--json", action="store_true", help="print one JSON object")
    reg.set_defaults(run=_cmd_regularize)

    gaps = sub.add_parser("gaps", help="find LC models whose de is below the bound db (Theorem 4)")
    gaps.add_argument("--max-observed", type=_positive_int, default=4, help="largest number of observed variables")
    gaps.add_argument("--max-card", type=_positive_int, default=3, help="largest observed cardinality")
    gaps.add_argument("--repeats", type=_positive_int, default=3, help="random points per rank")
    gaps.add_argument("--json", action="store_true", help="print a JSON list")
    gaps.set_defaults(run=_cmd_gaps)


def _add_fit(sub) -> None:
    """``fit``: one model fitted to data, its tables, diagnostics and report."""
    fit_p = sub.add_parser("fit", help="fit a model to data by EM and print its scores (Section 2.3)")
    fit_p.add_argument(
        "data",
        help="a data file (CSV, SPSS .sav, Stata .dta, Excel .xlsx, Parquet) or a bundled "
        "data set name (carcinoma, cheating, election, gss82, hlc-figure2, lc-8-2222, stouffer-toby)",
    )
    fit_p.add_argument(
        "--model",
        required=True,
        help="model notation, a JSON file, or a number of classes K: the LC model over every column "
        "but the covariates and the weights",
    )
    _add_em_options(fit_p)
    _add_report_option(fit_p)
    fit_p.set_defaults(run=_cmd_fit)
    fit_p.add_argument(
        "--covariates",
        metavar="FORMULA",
        default=None,
        help="latent class regression: the root's classes on columns left out of the model, as R writes "
        "it: 'PARTY', 'PARTY * AGE' (both and their product), 'A:B' (the product), 'C(GPA)' (as categories); "
        "rows with a missing covariate are left out and counted",
    )
    fit_p.add_argument(
        "--weights",
        metavar="COLUMN",
        default=None,
        help="a column of sampling weights (not counts): the fit and every score use them, rescaled to "
        "sum to the rows used; standard errors become robust",
    )
    fit_p.add_argument(
        "--se",
        choices=["observed", "empirical", "robust", "none"],
        default=None,
        help="standard errors of every probability and coefficient: observed information (default), "
        "empirical (poLCA's), robust sandwich (default with --weights), or none",
    )

    fit_p.add_argument(
        "--posteriors",
        metavar="FILE.csv",
        default=None,
        help="write each row's posterior of every hidden node (rows in input order; "
        "one row per pattern for count data)",
    )
    fit_p.add_argument(
        "--id",
        action="append",
        default=[],
        metavar="COLUMN",
        help="a column that identifies the rows (repeatable): left out of the model, written first in "
        "--posteriors so they merge back into the file",
    )
    fit_p.add_argument(
        "--bootstrap",
        type=_positive_int,
        default=None,
        metavar="B",
        help="parametric bootstrap p-value of G2 with B replicates (for sparse tables)",
    )
    fit_p.add_argument(
        "--order",
        action="append",
        default=[],
        metavar="NODE=2,1,3",
        help="renumber a hidden node's states (as printed; default: by decreasing share)",
    )
    fit_p.add_argument(
        "--equivalent-fits",
        type=_nonnegative_int,
        default=4,
        metavar="K",
        help="where de < ds, refit K times from other starts and show how far the class shares "
        "move between fits that are equally good (default 4; 0: skip)",
    )
    three_step.add_options(fit_p)
    _add_executor_options(fit_p)


def _add_sweep(sub) -> None:
    """``sweep``: every cardinality of one hidden node."""
    sweep_p = sub.add_parser("sweep", help="fit and score the cardinalities 1, 2, ... of one hidden node")
    sweep_p.add_argument("data", help=DATA_HELP)
    sweep_p.add_argument("--model", default=None, help="model (default: an LC model over all columns)")
    sweep_p.add_argument("--node", default=None, help="hidden node to sweep (default: the root)")
    sweep_p.add_argument(
        "--max-card",
        type=_positive_int,
        default=None,
        help=f"largest cardinality (default {DEFAULT_MAX_CARD}); never beyond the largest regular one "
        "(Lemmas 3.2 / 4.1)",
    )
    saturation = sweep_p.add_mutually_exclusive_group()
    saturation.add_argument(
        "--until-saturated",
        dest="until_saturated",
        action="store_true",
        default=True,
        help="stop at the first cardinality where de = dc: larger ones fit alike (the default)",
    )
    saturation.add_argument(
        "--past-saturation",
        dest="until_saturated",
        action="store_false",
        help="go on past the first cardinality where de = dc, up to --max-card",
    )
    _add_em_options(sweep_p)
    _add_report_option(sweep_p)
    sweep_p.add_argument(
        "--pick",
        default="bic+",
        choices=list(SCORES),
        help="with --report: the criterion whose best model the report details (default bic+)",
    )
    sweep_p.add_argument(
        "--sbic-phi",
        type=_positive_float,
        default=None,
        metavar="PHI",
        help="Dirichlet parameter of the class weights in the singular BIC (default (d1 + 1) / 2, the sBIC "
        "package's; d1 = parameters of one class, docs/theory.md section 11)",
    )
    sweep_p.add_argument(
        "--table",
        action="store_true",
        help="print the class-enumeration table: LL, ds, de, BIC, SABIC, CAIC, AIC, BIC+, sBIC, sBIC+, "
        "entropy, smallest class, VLMR and BLRT p of k-1 against k, starts at the best",
    )
    sweep_p.add_argument(
        "--blrt",
        type=_positive_int,
        default=None,
        metavar="B",
        help="bootstrap likelihood-ratio test of every k against k-1 with B replicates (the table's BLRT p; "
        "implies --table)",
    )
    sweep_p.add_argument(
        "--stop-after",
        type=_positive_int,
        default=None,
        metavar="H",
        help=STOP_HELP,
    )
    sweep_p.add_argument(
        "--table-file",
        default=None,
        metavar="FILE",
        help="write the class-enumeration table to FILE: .csv, .md (Markdown), .tex (LaTeX) or .json (implies --table)",
    )
    _add_executor_options(sweep_p)
    sweep_p.set_defaults(run=_cmd_sweep)


def _add_blrt(sub) -> None:
    """``blrt``: the bootstrap likelihood-ratio test."""
    blrt_p = sub.add_parser("blrt", help="bootstrap likelihood-ratio test of k-1 against k states of a hidden node")
    blrt_p.add_argument("data", help=DATA_HELP)
    blrt_p.add_argument("--model", required=True, help="the model with k states (e.g. 3:2,2,2,2)")
    blrt_p.add_argument("--node", default=None, help="hidden node whose states are tested (default: the root)")
    blrt_p.add_argument("--bootstrap", type=_positive_int, default=100, metavar="B", help="replicates (default 100)")
    blrt_p.add_argument("--stop-after", type=_positive_int, default=None, metavar="H", help=STOP_HELP)
    _add_em_options(blrt_p)
    _add_executor_options(blrt_p)
    blrt_p.set_defaults(run=_cmd_blrt)


def _add_search(sub) -> None:
    """``search``: hill climbing over the hidden cardinalities."""
    search_p = sub.add_parser("search", help="hill climbing over the hidden cardinalities (Section 6)")
    search_p.add_argument("data", help=DATA_HELP)
    search_p.add_argument("--model", required=True, help="the structure (its cardinalities are ignored)")
    search_p.add_argument(
        "--score",
        required=True,
        choices=list(FIT_SCORES),
        help="criterion the climb maximises (higher is better on effdim's scale)",
    )
    _add_em_options(search_p)
    _add_report_option(search_p)
    search_p.set_defaults(run=_cmd_search)


def _add_learn(sub) -> None:
    """``learn``: the structure search."""
    learn_p = sub.add_parser("learn", help="learn the latent tree from data (structure search)")
    learn_p.add_argument("data", help=f"{DATA_HELP}; every column is a leaf")
    learn_p.add_argument(
        "--score", default="bic+", choices=list(FIT_SCORES), help="the score that drives the search (default bic+)"
    )
    learn_p.add_argument(
        "--start",
        default="islands",
        choices=["islands", "lc"],
        help="start from mutual-information islands (default) or the LC model",
    )
    learn_p.add_argument(
        "--max-time",
        type=_seconds,
        default=None,
        metavar="S",
        help="stop searching after S seconds and return the best tree so far",
    )
    learn_p.add_argument(
        "--rounds",
        type=_rounds,
        default=ROUNDS,
        metavar="N",
        help=f"start the search again from its own end, while that ends higher, at most N times (default {ROUNDS})",
    )
    _add_em_options(learn_p)
    _add_executor_options(learn_p, "candidates' local EM and refits", "this process")
    learn_p.set_defaults(run=_cmd_learn)


def _add_experiment(sub) -> None:
    """``experiment``: the paper's studies."""
    exp = sub.add_parser(
        "experiment",
        help="the paper's experiments: 'lc' (Section 5), 'hlc' (Section 6, Table 2)",
        epilog="Exit status: 0 when every job ran; 2, with one line, when the settings are refused (before "
        "any job, or by a job, named with its settings); 1 when a job or the plots failed inside effdim or "
        "its tools (not on your input), the failing job named. Finished jobs stay cached either way.",
    )
    exp.add_argument(
        "study",
        choices=["lc", "hlc", "structure", "enumeration"],
        help="lc: Figures 4-5; hlc: Table 2; structure: latent trees learned per score; enumeration: how often "
        "each criterion and test picks the true number of classes (docs/enumeration.md)",
    )
    exp.add_argument("--quick", action="store_true", help="small preset (minutes on 2 cores) instead of the paper's")
    exp.add_argument("--replicates", type=_positive_int, default=None, help="random parametrizations per model")
    exp.add_argument("--sizes", default=None, help="sample sizes, e.g. '1k,3k,9k'")
    exp.add_argument("--restarts", type=_positive_int, default=None, help="EM starts per fit (default 5)")
    exp.add_argument("--max-iter", type=_positive_int, default=None, help="most EM steps per start (default 1000)")
    exp.add_argument("--seed", type=_seed, default=None, help="seed of the whole study (default 0)")
    exp.add_argument("--generator", action="append", default=[], help="lc: a generating LC model (repeatable)")
    exp.add_argument(
        "--deterministic",
        action="append",
        default=[],
        help="lc: a generating LC model with deterministic leaves (Figure 5; repeatable)",
    )
    exp.add_argument("--no-deterministic", action="store_true", help="lc: skip the deterministic variant")
    exp.add_argument("--model", default=None, help="hlc: the generating HLC model (default 5(3(2,2),2,3(2,2)))")
    exp.add_argument(
        "--leaves",
        type=_count_range,
        default=None,
        metavar="LOW..HIGH",
        help="structure: leaves per generating tree (default 8..20; --quick 8..12)",
    )
    exp.add_argument(
        "--hidden",
        type=_count_range,
        default=None,
        metavar="LOW..HIGH",
        help="structure: hidden nodes per generating tree (default 2..6; --quick 2..4)",
    )
    exp.add_argument(
        "--rounds",
        type=_rounds,
        default=None,
        metavar="N",
        help=f"structure: times each search starts again from its own end, at most (default {ROUNDS})",
    )
    exp.add_argument(
        "--cs-prior",
        default=None,
        metavar="PRIOR",
        help=f"Dirichlet prior of CS and CS+: {CS_PRIOR_CHOICES} (default {DEFAULT_CS_PRIOR})",
    )
    exp.add_argument(
        "--concentration",
        type=float,
        default=None,
        help="hlc: Dirichlet concentration of the generating CPT rows (default 1: uniform)",
    )
    exp.add_argument(
        "--design",
        action="append",
        default=[],
        help="enumeration: a design (repeatable): vignette, 3:2,2,2,2, 4:3,3,3, 4:2,3,5 or 3:2,3,4,5,3,2 (default all)",
    )
    exp.add_argument(
        "--blrt",
        type=_positive_int,
        default=None,
        metavar="B",
        help="enumeration: bootstrap replicates of each BLRT (default 19; --quick 4)",
    )
    exp.add_argument("--test", choices=["t", "wilcoxon"], default="t", help="paired test for the marks (default t)")
    exp.add_argument("--workers", type=_positive_int, default=None, help="local worker processes (default: CPUs)")
    exp.add_argument("--scheduler", default=None, help="Dask scheduler address: run the jobs on that cluster")
    exp.add_argument("--cache-dir", default=".effdim-cache", help="per-job result cache (default .effdim-cache)")
    exp.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    exp.add_argument(
        "--cached-only",
        action="store_true",
        help="run nothing: write the outputs from the jobs of this design already in the cache "
        "(a long study reported part way; the same command without it runs the rest)",
    )
    exp.add_argument("--out", default="effdim-experiments", help="directory for CSV, markdown and plots")
    exp.add_argument(
        "--ship",
        action="store_true",
        help="lc and hlc, full design: also write the summaries the package ships "
        "(core/experiments/results/), which the dashboard's Experiments tab shows",
    )
    exp.add_argument("--no-plots", action="store_true", help="skip the HTML/PNG plots")
    exp.add_argument("--no-png", action="store_true", help="HTML plots only (PNG needs Chromium)")
    exp.add_argument("--json", action="store_true", help="print the summary as JSON")
    exp.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    exp.set_defaults(run=_cmd_experiment)


def _add_app(sub) -> None:
    """``app``: the dashboard."""
    app = sub.add_parser("app", help="launch the dashboard in the browser")
    app.add_argument("--port", type=_port, default=5006, help="TCP port (default 5006; 0: any free port)")
    app.add_argument("--address", default="localhost")
    app.add_argument("--show", action=argparse.BooleanOptionalAction, default=True, help="open a browser tab")
    app.add_argument("--allow-websocket-origin", action="append", default=[], help="host[:port] allowed to connect")
    app.add_argument("--config", default=None, help="limits from a TOML or JSON file (keys as the options below)")
    app.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="computations running at once, in worker processes (default: 2, or 1 on one core)",
    )
    app.add_argument(
        "--time-limit",
        type=_positive_float,
        default=None,
        help="seconds one computation may run before it is stopped (default 60)",
    )
    app.add_argument(
        "--max-memory-mb",
        type=_positive_int,
        default=None,
        help="memory one computation may use, in MiB (default 2048)",
    )
    app.add_argument("--max-nodes", type=_positive_int, default=None, help="nodes of one model (default 200)")
    app.add_argument("--max-card", type=_positive_int, default=None, help="states of one node (default 1000000000)")
    app.add_argument("--max-sweep", type=_positive_int, default=None, help="cardinalities in one sweep (default 50)")
    app.add_argument(
        "--max-upload-mb", type=_positive_float, default=None, help="size of an uploaded data file, in MB (default 10)"
    )
    app.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        help="threads serving the sessions' callbacks (default: none, the event loop alone)",
    )
    app.add_argument(
        "--processes",
        type=_positive_int,
        default=1,
        help="server processes sharing the sessions (default 1; more only on Linux/macOS, each with its "
        "share of --workers: see docs/robustness.md)",
    )
    from effdim_app.logs import LEVELS

    app.add_argument(
        "--log-level",
        choices=LEVELS,
        default="warning",
        help="what the server logs to stderr: errors shown to users, with their traceback and "
        "session, at error; input the engine refused at info (default warning)",
    )
    app.set_defaults(run=_cmd_app)
