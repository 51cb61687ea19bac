"""``effdim experiment``: the paper's studies (docs/experiments.md) and its exit statuses."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, NoReturn

from ..errors import EffdimError

if TYPE_CHECKING:
    from ..experiments import ExperimentError
from .arguments import UsageError, execution_of
from .output import _STDERR, _emit_json
from .outputs import check_output_folder, writing


def _cmd_experiment(args: argparse.Namespace) -> None:
    """``effdim experiment lc|hlc|structure|enumeration``: the paper's Sections 5 and 6 and the studies beyond
    it (logic in :mod:`effdim.experiments`)."""
    from ..experiments import ExperimentError, build_study, write_outputs

    options = {
        k: getattr(args, k, None)
        for k in ("replicates", "restarts", "max_iter", "seed", "model", "cs_prior", "concentration")
    }
    if args.study != "hlc" and args.concentration is not None:
        raise UsageError("effdim experiment: --concentration applies to hlc only")
    if args.study == "enumeration":
        options.update(designs=tuple(args.design) or None, B=args.blrt)
    elif args.design or args.blrt is not None:
        raise UsageError("effdim experiment: --design and --blrt apply to enumeration only")
    for option in ("leaves", "hidden", "rounds"):
        if getattr(args, option) is not None:
            if args.study != "structure":
                raise UsageError(f"effdim experiment: --{option} applies to structure only")
            options[option] = getattr(args, option)
    if args.study == "lc":
        options["generators"] = args.generator or None
        options["deterministic"] = () if args.no_deterministic else (args.deterministic or None)
    try:
        study = build_study(args.study, quick=args.quick, sizes=args.sizes, **options)
    except EffdimError as err:
        raise UsageError(f"effdim experiment: {err}") from None
    if args.ship and (args.study not in ("lc", "hlc") or args.quick):
        raise UsageError(
            "effdim experiment: --ship writes the full lc or hlc design's summaries, not a quick or structure run's"
        )
    if args.cached_only and args.no_cache:
        raise UsageError("effdim experiment: --cached-only reads the cache; it cannot go with --no-cache")
    if not (args.no_cache or args.cached_only):  # each finished job is written there at once
        check_output_folder("experiment", "--cache-dir", args.cache_dir)
    check_output_folder("experiment", "--out", args.out)
    if args.ship:
        from ..experiments.committed import RESULTS_DIR

        check_output_folder("experiment", "--ship into", str(RESULTS_DIR))
    try:
        result = study.run(
            cache_dir=None if args.no_cache else args.cache_dir,
            execution=execution_of(args),
            # reading the cache is quick, and it may end in an error line: no progress bar then
            progress=not (args.quiet or args.cached_only),
            cached_only=args.cached_only,
        )
    except ExperimentError as err:
        _experiment_failed(err)
    for line in result.stats.damaged:  # named, and run again (or, with --cached-only, counted as not run)
        _STDERR.note(f"cached job {line}; {'not used' if args.cached_only else 'computed again'}")
    if not result.records:
        raise UsageError(
            f"effdim experiment: none of the {result.stats.total} jobs of this design is in the cache "
            f"{args.cache_dir}; run it without --cached-only first"
        )
    result.test = args.test
    try:
        paths, notes = write_outputs(
            result,
            args.out,
            plots=not args.no_plots,
            png=not args.no_png,
            preset="quick" if args.quick else "full",
            command=recorded_command(sys.argv[1:]),
        )
    except ExperimentError as err:
        _experiment_failed(err)
    if args.ship:
        from ..experiments.committed import RESULTS_DIR, ship

        with writing(str(RESULTS_DIR), "summaries the package ships"):
            paths += ship(args.study, args.out, RESULTS_DIR)
    stats = result.stats
    if args.json:
        table = result.table2() if args.study == "hlc" else result.summary()
        _emit_json(
            {
                "run": stats.to_json(),
                "files": [str(p) for p in paths],
                "notes": notes,
                "summary": json.loads(table.to_json(orient="records")),
            }
        )
        return
    print(result.markdown())
    missing = f", {stats.missing} not run (--cached-only)" if stats.missing else ""
    print(
        f"\n{stats.total} job{'s' if stats.total != 1 else ''}: {stats.executed} run, {stats.cached} from the cache{missing}; "
        f"{stats.wall_seconds:.1f} s wall, {stats.job_seconds:.1f} s of job time ({stats.executor}, "
        f"{stats.workers} worker{'s' if stats.workers != 1 else ''})"
    )
    print("wrote " + ", ".join(str(p) for p in paths))
    for note in notes:
        print(f"note: {note}")


#: Options naming where a run reads and writes, not what it computes: left out of the recorded command.
PLACES = ("--cache-dir", "--out")


def recorded_command(argv: list[str]) -> str:
    """The command line a run file records: ``argv`` without the folders of :data:`PLACES` (they name
    one machine's paths, and the results do not depend on them).

    >>> recorded_command(["experiment", "enumeration", "--cache-dir", "/tmp/c", "--out=/tmp/o", "--replicates", "2"])
    'experiment enumeration --replicates 2'
    """
    kept: list[str] = []
    skip_value = False
    for arg in argv:
        if skip_value:
            skip_value = False
        elif arg in PLACES:
            skip_value = True
        elif not arg.startswith(tuple(f"{place}=" for place in PLACES)):
            kept.append(arg)
    return " ".join(kept)


def _experiment_failed(err: ExperimentError) -> NoReturn:
    """A study's failure: a refusal of its settings exits 2 like any bad input (:func:`main`); a failure
    inside effdim or its tools (``err.inside``) exits 1, so a script can tell the two apart."""
    if not err.inside:
        raise err
    _STDERR.fail(f"effdim: {err}")
    raise SystemExit(1) from None
