"""The "Data & scores" tab's data: upload a file or pick a bundled data set, the columns used, the order of
each column's answers."""

from __future__ import annotations

import panel as pn
from panel.viewable import Viewer

from effdim.reading import EXTENSIONS

from ..compat import load_with_file_dropper, quiet_filepond, script_url
from ..state import DataState
from .widgets import JobLine, TableOnDemand, heading, html, in_one_message, labelled, message, typed

__all__ = ["DataPanel"]

quiet_filepond()  # the file dropper's draw loop at full rate only while the page is in use (effdim_app/compat.py)
load_with_file_dropper(script_url("select_titles.js"))  # a select box shows its chosen option whole on hover

DATA_COLUMNS = {"column": "object", "states": "int64", "values": "object"}


class DataPanel(Viewer):
    """Upload a data file (CSV, SPSS, Stata, Excel, Parquet) or pick a bundled data set; the loader's messages
    inline."""

    def __init__(self, state: DataState, **params):
        super().__init__(**params)
        self.state = state
        self.drop_zone = pn.Column(self._dropper(), sizing_mode="stretch_width", margin=0)
        from effdim import datasets

        names = list(datasets.names())
        self.bundled = pn.widgets.Select(
            label="Bundled data set to load",
            options=names,
            value=datasets.DEFAULT,
            sizing_mode="stretch_width",
        )
        self.load_bundled = pn.widgets.Button(label="Load data set", color="primary", sizing_mode="stretch_width")
        self.load_bundled.on_click(in_one_message(lambda _: state.load_bundled(self.bundled.value)))
        # the values and names wrap in their cells: a column of six long labels, or a name with what it asks (an
        # SPSS or Stata variable label), was cut at the panel's edge
        self.columns = TableOnDemand(
            typed(**DATA_COLUMNS),
            show_index=False,
            disabled=True,
            selectable=False,
            sizing_mode="stretch_width",
            layout="fit_columns",
            widths={"column": 150, "states": 64},
            formatters={"values": {"type": "textarea"}, "column": {"type": "textarea"}},
            max_height=220,
        )
        self.message = message(state)
        self.load_job = JobLine(state, "load_job")
        self.use = pn.widgets.MultiChoice(
            label="Columns used (remove an ID column here)",
            options=[],
            sizing_mode="stretch_width",
            visible=False,
            css_classes=["effdim-columns-used"],
        )
        self.use.param.watch(in_one_message(self._columns_picked), "value")
        # the states of one column in order, with buttons moving the chosen one (a survey's scale)
        self.order_column = pn.widgets.Select(
            label="Order the states of", options=[], sizing_mode="stretch_width", css_classes=["effdim-order-column"]
        )
        self.order_states = pn.widgets.Select(options=[], size=5, width=190, css_classes=["effdim-order-states"])
        self.order_up = pn.widgets.Button(label="▲ Earlier", width=95, css_classes=["effdim-order-up"])
        self.order_down = pn.widgets.Button(label="▼ Later", width=95, css_classes=["effdim-order-down"])
        self.order_up.on_click(in_one_message(lambda _: self._move(-1)))
        self.order_down.on_click(in_one_message(lambda _: self._move(1)))
        self.order_column.param.watch(in_one_message(lambda _: self._show_order()), "value")
        self.order = pn.Column(
            self.order_column,
            pn.Row(self.order_states, pn.Column(self.order_up, self.order_down, margin=0), margin=0),
            visible=False,
            margin=0,
            sizing_mode="stretch_width",
        )
        state.param.watch(self._update, ["dataset", "full", "columns"])
        self._update()  # built when the tab first opens: the data may already be loaded

    def _dropper(self) -> pn.widgets.FileDropper:
        limit_mb = max(1, self.state.max_bytes // 1_000_000)
        dropper = pn.widgets.FileDropper(
            accepted_filetypes=[*EXTENSIONS, "text/csv", "text/plain"],
            max_file_size=f"{limit_mb}MB",
            multiple=False,
            sizing_mode="stretch_width",
            height=90,
            layout="compact",
        )
        dropper.param.watch(in_one_message(self._uploaded), "value")  # the verdict and the fresh zone together
        return dropper

    def _uploaded(self, event) -> None:
        """Load the dropped file, then offer a fresh drop zone.

        The message below says whether the file was accepted; the dropper's own
        green "Upload complete" only means the bytes arrived, and stayed beside
        a red refusal.
        """
        for name, content in (event.new or {}).items():
            if isinstance(content, str):  # Panel decodes text/* uploads; the loader wants the bytes
                content = content.encode("utf-8")
            self.state.load_upload(name, content)
        self.drop_zone[:] = [self._dropper()]

    def _columns_picked(self, event) -> None:
        if list(event.new) != self.state.columns and not self.state.use_columns(list(event.new)):
            self.use.value = list(self.state.columns)  # refused: show the columns still in use

    def _update(self, *_) -> None:
        state = self.state
        if state.dataset is None:
            return
        self.use.param.update(options=labelled(state.full.columns), value=list(state.columns), visible=True)
        self.columns.show(state.columns_frame())
        column = self.order_column.value if self.order_column.value in state.columns else state.columns[0]
        self.order_column.param.update(options=list(state.columns), value=column)
        self._show_order()
        self.order.visible = True

    def _show_order(self) -> None:
        full, column = self.state.full, self.order_column.value
        if full is None or column not in full.columns:
            return
        names = [str(s) for s in full.states[full.index(column)]]
        chosen = self.order_states.value if self.order_states.value in names else names[0]
        self.order_states.param.update(options=names, value=chosen)

    def _move(self, step: int) -> None:
        chosen = self.order_states.value
        if chosen is not None and self.state.move_state(self.order_column.value, chosen, step):
            self.order_states.value = chosen  # the moved state stays chosen for the next click

    def __panel__(self):
        limit = f"{self.state.max_bytes / 1e6:.0f} MB"
        return pn.Column(
            heading(
                "Data",
                f"A data file with a header row (CSV, SPSS, Stata, Excel or Parquet); one column per observed "
                f"variable, categorical values "
                f"(at most {self.state.max_states} states each); an optional 'count' column of "
                f"pattern counts; at most {limit}.",
            ),
            html(
                f"<small>Upload a data file: CSV, SPSS .sav, Stata .dta, Excel .xlsx or Parquet (at most {limit}) …"
                "</small>",
                margin=(0, 5),
            ),
            self.drop_zone,
            html("<small>… or pick a bundled data set:</small>", margin=(0, 5)),
            self.bundled,
            self.load_bundled,
            self.load_job,
            self.message,
            self.use,
            self.columns,
            self.order,
            sizing_mode="stretch_width",
        )
