"""The loaded data as a param class (no Panel import): :class:`DataState`.

The loaded :class:`effdim.data.Dataset` (upload or bundled); a bad file
leaves the previous data in place. Uploads are read in a worker process
(:class:`~effdim_app.jobs.JobRunner`).
"""

from __future__ import annotations

import param

from effdim.errors import shown

from .. import tasks
from ..jobs import Job
from .shared import MESSAGE_KINDS, NOTHING_HELD, error_text, job_parameter, runner_parameter

__all__ = ["DataState"]


class DataState(param.Parameterized):
    """The loaded data set; a failed load keeps the previous one."""

    dataset = param.Parameter(default=None, doc="effdim.data.Dataset or None: the columns in use.")
    full = param.Parameter(default=None, doc="The Dataset as loaded, every column.")
    columns = param.List(default=[], doc="The columns of `full` in use (`dataset`).")
    left_out = param.List(default=[], doc="The file's columns the reader left out (too many values), by name.")
    ids = param.Parameter(
        default=None,
        doc="The identifier columns of the file's rows (effdim.reading.Loaded.ids: among `left_out`, those with a "
        "value of their own in every row), put first in the posteriors' download; None without.",
    )
    source = param.String(default="", doc="Where the data came from.")
    max_bytes = param.Integer(default=10_000_000, bounds=(1, None), doc="Upload size limit.")
    max_states = param.Integer(default=50, bounds=(2, None), doc="Most states a column may have.")
    max_columns = param.Integer(default=2_000, bounds=(2, None), doc="Most columns an upload may have.")
    message = param.String(default="")
    message_kind = param.Selector(default="info", objects=MESSAGE_KINDS)
    load_job = job_parameter("The job reading an upload, while it runs.")
    jobs = runner_parameter("Reads uploads in a worker process; None: in this process.")

    def __init__(self, **params):
        super().__init__(**params)
        self.in_one_update = NOTHING_HELD  # how a read upload reaches the screen (.shared)

    def _loaded(self, full, *, source: str, how: str = "", dropped: tuple[str, ...] = (), ids=None) -> bool:
        """Use ``full`` (read as ``how`` says; the ``dropped`` columns had more than ``max_states`` values:
        identifiers, most likely, left out by the reader, which refuses a file left with fewer than two; ``ids``
        the values of those that identify the rows)."""
        self.param.update(
            full=full, columns=list(full.columns), dataset=full, source=source, left_out=list(dropped), ids=ids
        )
        named = set(() if ids is None else ids.columns)
        why = {True: "a value per row: an identifier, kept for the posteriors' download"}
        left_out = [
            f"{c!r} ({why.get(c in named, f'more than {self.max_states} distinct values: an identifier?')})"
            for c in dropped
        ]
        notes = ([f"read as {how}"] if how else []) + (
            [f"left out {', '.join(left_out)}; pick the columns to use below"] if dropped else []
        )
        extra = "".join(f" {n[0].upper()}{n[1:]}." for n in notes)
        self.param.update(message=f"Loaded {source}: {self.describe()}.{extra}", message_kind="success")
        return True

    def use_columns(self, columns: list[str]) -> bool:
        """Score only ``columns`` of the loaded data (drop an ID column, pick a subset)."""
        full = self.full
        if full is None:
            return False
        columns = [c for c in full.columns if c in set(columns)]  # the file's order
        if len(columns) < 2:
            self.param.update(
                message="Pick at least two columns. The columns in use are unchanged.", message_kind="danger"
            )
            return False
        self.param.update(columns=columns, dataset=full.subset(columns))
        self.param.update(
            message=f"Using {len(columns)} of {len(full.columns)} columns: {self.describe()}.", message_kind="success"
        )
        return True

    def move_state(self, column: str, state: str, step: int) -> bool:
        """Move ``state`` (its text) of ``column`` ``step`` places later (earlier if negative) in the column's
        order (:meth:`effdim.data.Dataset.with_state_order`); the data themselves do not change."""
        from effdim import DataError

        full = self.full
        if full is None:
            self.param.update(message="Load a data set first.", message_kind="warning")
            return False
        try:
            order = [str(s) for s in full.states[full.index(column)]]
            if state not in order:
                raise DataError(f"column {column!r} has no state {state!r}")
            i = order.index(state)
            j = min(max(i + step, 0), len(order) - 1)
            order.insert(j, order.pop(i))
            full = full.with_state_order(column, order)
        except DataError as err:
            self.param.update(message=f"The order was not changed: {error_text(err)}.", message_kind="danger")
            return False
        dataset = full.subset(self.columns) if list(self.columns) != list(full.columns) else full
        self.param.update(
            full=full,
            dataset=dataset,
            message=f"Column {column!r}: states in the order {', '.join(map(shown, order))}.",
            message_kind="success",
        )
        return True

    def _failed(self, source: str, err: BaseException) -> bool:
        keep = f" Still using {self.source}." if self.dataset is not None else ""
        self.param.update(message=f"Could not load {source}: {error_text(err)}.{keep}", message_kind="danger")
        return False

    def load_upload(self, filename: str, content: bytes) -> bool:
        """Read an uploaded data file (:func:`effdim_app.tasks.read_upload_task`: the engine's reader, its
        detection, limits and messages) in a worker process whatever its size: a 231 kB file of 22,000
        columns read on the server's loop stalled every session. The header's width is checked before any
        cell is parsed; columns over ``max_states`` are left out while parsing, not refused.
        """
        from effdim import DataError, ReadLimits
        from effdim.errors import EffdimError

        source = f"upload {filename!r}"
        if content is None:
            return self._failed(source, DataError("no file content received"))
        if len(content) > self.max_bytes:
            return self._failed(
                source, DataError(f"the file has {len(content):,} bytes, more than the limit of {self.max_bytes:,}")
            )
        options = dict(
            name=filename,
            limits=ReadLimits(max_bytes=self.max_bytes, max_columns=self.max_columns, max_states=self.max_states),
        )
        if self.jobs is None:  # no worker processes (a state used alone): read here
            try:
                return self._read(tasks.read_upload_task(content, **options), source)
            except EffdimError as err:
                return self._failed(source, err)
        if self.load_job is not None:
            self.load_job.cancel()
        job = self.jobs.submit(tasks.read_upload_task, content, **options, label=f"Reading {filename}")
        self.param.update(load_job=job, message=f"Reading {source}…", message_kind="info")
        job.add_done_callback(lambda job: self._upload_read(job, source))
        return True

    def _upload_read(self, job: Job, source: str) -> None:
        if self.load_job is not job:  # a newer upload replaced it
            return
        with self.in_one_update():
            self.load_job = None
            if job.state != "done":
                self._failed(source, ValueError(job.error.rstrip(".")))
                return
            self._read(job.result, source)

    def _read(self, loaded, source: str) -> bool:
        """Use a file as :func:`effdim.reading.read_data` read it (a :class:`effdim.reading.Loaded`)."""
        return self._loaded(
            loaded.dataset,
            source=source,
            how=loaded.description(),
            dropped=tuple(name for name, _ in loaded.dropped),
            ids=loaded.ids,
        )

    def load_bundled(self, name: str) -> bool:
        from effdim import datasets

        source = f"bundled data set {name!r}"
        try:
            return self._loaded(datasets.load(name), source=source)
        except (KeyError, ValueError, OSError) as err:
            return self._failed(source, err)

    def describe(self) -> str:
        ds = self.dataset
        if ds is None:
            return "no data"
        missing = f", {_number(ds.n_missing)} missing cells" if ds.n_missing else ""
        return f"{_number(ds.n_rows)} rows, {ds.n_patterns} distinct patterns over {len(ds.columns)} columns{missing}"

    def columns_frame(self):
        """One row per column: name (and what it asks, where the file says), number of states, the states."""
        import pandas as pd

        ds = self.dataset
        if ds is None:
            return pd.DataFrame(
                {
                    "column": pd.Series(dtype=object),
                    "states": pd.Series(dtype="int64"),
                    "values": pd.Series(dtype=object),
                }
            )
        return pd.DataFrame(
            {
                "column": [f"{c}: {ds.variable_labels[c]}" if c in ds.variable_labels else c for c in ds.columns],
                "states": [len(s) for s in ds.states],
                "values": [", ".join(map(str, s[:8])) + (" …" if len(s) > 8 else "") for s in ds.states],
            }
        )


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.2f}"
