"""``effdim app``: the dashboard served from this process (effdim_app.server)."""

from __future__ import annotations

import argparse

from ..errors import EffdimError
from .arguments import UsageError


def _cmd_app(args: argparse.Namespace) -> None:
    from effdim_app import serve
    from effdim_app.config import load_limits
    from effdim_app.logs import configure

    try:
        limits = load_limits(
            args.config,
            workers=args.workers,
            time_limit=args.time_limit,
            max_memory_mb=args.max_memory_mb,
            max_nodes=args.max_nodes,
            max_card=args.max_card,
            max_sweep=args.max_sweep,
            max_upload_mb=args.max_upload_mb,
        )
    except EffdimError as err:
        raise UsageError(f"effdim app: {err}") from None
    configure(args.log_level)
    serve(
        port=args.port,
        show=args.show,
        address=args.address,
        limits=limits,
        websocket_origin=args.allow_websocket_origin or None,
        num_threads=args.threads or None,
        num_procs=args.processes,
    )
