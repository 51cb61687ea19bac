"""The "Data & scores" tab: loading data, and scoring the model on it (sweeps and hill climbs)."""

from __future__ import annotations

import io

import pandas as pd
import panel as pn
from panel.viewable import Viewer

from effdim.reading import EXTENSIONS
from effdim.scores import SCORES
from effdim.treedraw import model_data

from ..compat import quiet_filepond
from ..figures import ClimbCurve, ScoreCurves
from ..state import CS_PRIORS, SHOWN_SCORES, DataState, ScoresState
from ..style import ALERT_CSS, BUTTON_CSS, TOGGLE_CSS
from .tree_view import TreeFigure
from .widgets import JobLine, TableOnDemand, heading, html, in_one_message, labelled, message, plain, typed

__all__ = ["DataPanel", "ScoresPanel"]

quiet_filepond()  # the file dropper's draw loop at full rate only while the page is in use (effdim_app/compat.py)

RESULT_COLUMNS = {
    "|H|": "int64",
    "loglik": "float64",
    "BIC": "float64",
    "BIC+": "float64",
    "CS": "float64",
    "CS+": "float64",
    "AIC": "float64",
    "ds": "int64",
    "de": "int64",
    "n": "int64",
}
PATH_COLUMNS = {
    "step": "int64",
    "model": "object",
    "hidden cards": "object",
    "score": "float64",
    "loglik": "float64",
    "ds": "int64",
    "de": "int64",
}
LEAF_COLUMNS = {"leaf": "object", "column": "object", "leaf states": "Int64", "column states": "int64"}
#: Tabulator formatter of scores and log-likelihoods: thousands separated, two decimals.
TWO_DECIMALS = {"type": "money", "decimal": ".", "thousand": ",", "precision": 2}
DATA_COLUMNS = {"column": "object", "states": "int64", "values": "object"}


def _caveat_html(notes: list[str]) -> str:
    """A pick's caveats (top of the range, saturated: effdim.search.pick_caveats) as a small note."""
    return f" <small>({plain('; '.join(notes))})</small>" if notes else ""


class DataPanel(Viewer):
    """Upload a CSV or pick a bundled data set; the loader's messages inline."""

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
        # the values wrap in their cell: a column of six long labels was cut at the panel's edge
        self.columns = TableOnDemand(
            typed(**DATA_COLUMNS),
            show_index=False,
            disabled=True,
            selectable=False,
            sizing_mode="stretch_width",
            layout="fit_columns",
            widths={"column": 100, "states": 80},
            formatters={"values": {"type": "textarea"}},
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
                f"A CSV file with a header row; one column per observed variable, categorical values "
                f"(at most {self.state.max_states} states each); an optional 'count' column of "
                f"pattern counts; at most {limit}.",
            ),
            html(f"<small>Upload a CSV file (at most {limit}) …</small>", margin=(0, 5)),
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


class ScoresPanel(Viewer):
    """Mapping, sweep and hill climb controls, progress, curves, table, CSV download."""

    def __init__(self, state: ScoresState, **params):
        super().__init__(**params)
        self.state = state
        # every input bound to a state parameter with from_param (two-way: the widget follows when the state
        # changes it, e.g. the mapping after "Edit the LC model over these columns in the tree editor")
        self.mapping = pn.widgets.RadioButtonGroup.from_param(
            state.param.mapping,
            label="",
            sizing_mode="stretch_width",
            color="primary",
            options={"LC model over all columns": "lc", "Edited model (leaves = columns)": "model"},
            css_classes=["effdim-mapping"],
            stylesheets=[TOGGLE_CSS],
        )
        self.leaf_map = TableOnDemand(
            typed(**LEAF_COLUMNS),
            show_index=False,
            disabled=True,
            selectable=False,
            sizing_mode="stretch_width",
            layout="fit_data_stretch",
            max_height=200,
        )
        self.mismatch = pn.pane.Alert(
            "", alert_type="danger", visible=False, sizing_mode="stretch_width", stylesheets=[ALERT_CSS]
        )
        self.to_editor = pn.widgets.Button(
            label="Edit the LC model over these columns in the tree editor", sizing_mode="stretch_width"
        )
        self.to_editor.on_click(in_one_message(lambda _: state.use_lc_model_in_editor()))
        self.node = pn.widgets.Select.from_param(state.param.node, label="Node to sweep", options=[], width=120)
        self.card_min = pn.widgets.IntInput.from_param(state.param.card_min, label="|H| from", width=90)
        self.card_max = pn.widgets.IntInput.from_param(
            state.param.card_max, label="to (0 = until de = dc)", width=150, css_classes=["effdim-card-max"]
        )
        self.past_saturation = pn.widgets.Checkbox.from_param(
            state.param.past_saturation,
            label="past saturation",
            margin=(30, 5, 5, 5),
            css_classes=["effdim-past-saturation"],
        )
        self.restarts = pn.widgets.IntInput.from_param(
            state.param.restarts, label="EM restarts", width=90, css_classes=["effdim-restarts"]
        )
        self.seed = pn.widgets.IntInput.from_param(
            state.param.seed, label="Seed", width=90, css_classes=["effdim-seed"]
        )
        self.run = pn.widgets.Button(label="▶ Sweep cardinality", color="primary", width=180)
        score_labels = {SCORES[name].label: name for name in SHOWN_SCORES}
        self.climb_score = pn.widgets.Select.from_param(
            state.param.climb_score, label="Hill-climb score", options=score_labels, width=130
        )
        self.cs_prior = pn.widgets.Select.from_param(
            state.param.cs_prior, label="CS prior", width=150, options={label: key for key, label in CS_PRIORS.items()}
        )
        self.climb = pn.widgets.Button(label="Hill climb", width=130, margin=(24, 5, 5, 5))
        self.learn_score = pn.widgets.Select.from_param(
            state.param.learn_score, label="Structure score", options=score_labels, width=130
        )
        self.learn = pn.widgets.Button(
            label="Learn structure",
            width=170,
            margin=(24, 5, 5, 5),
            description="Search for a latent tree over all columns (EAST moves, "
            "docs/structure.md) and open it in the tree editor",
        )
        self.cancel = pn.widgets.Button(
            label="■ Cancel",
            color="danger",
            width=100,
            disabled=True,
            margin=(24, 5, 5, 5),
            stylesheets=[BUTTON_CSS],
            css_classes=["effdim-scores-cancel"],
        )
        self.run.on_click(self._run_sweep)
        self.climb.on_click(self._run_climb)
        self.learn.on_click(self._run_learn)
        self.cancel.on_click(in_one_message(lambda _: state.cancel()))
        self.progress = pn.indicators.Progress(
            value=0, max=100, active=False, sizing_mode="stretch_width", height=18, margin=(10, 10)
        )
        self.status = html("", sizing_mode="stretch_width", margin=(0, 10), css_classes=["effdim-status"])
        self.message = message(state, keep_height=False)
        # the search's live drawing, built with the first tree a search sends: a figure in the page, even hidden,
        # is laid out again with every change the page receives (a job's progress too), at a cost to the browser
        self.learned_drawing: TreeFigure | None = None
        self.learned_note = html("", sizing_mode="stretch_width", margin=(0, 10), css_classes=["effdim-learned"])
        self.learned_box = pn.Column(self.learned_note, sizing_mode="stretch_width", margin=0, visible=False)
        # Bokeh figures updated in place, each built with the first results it shows (effdim_app.figures)
        self.curves: ScoreCurves | None = None
        self.climb_curve: ClimbCurve | None = None
        self.plot_hint = html(
            "<small>Press ▶ Sweep cardinality (with data loaded): BIC, BIC+, CS, CS+ and AIC "
            "against the cardinality appear here.</small>",
            margin=(5, 10),
        )
        # visibility is toggled on wrapping columns, not on the rendered plots themselves
        self.plot_box = pn.Column(sizing_mode="stretch_width", margin=0, visible=False, css_classes=["effdim-curves"])
        self.climb_box = pn.Column(sizing_mode="stretch_width", margin=0, visible=False, css_classes=["effdim-climb"])
        self.table = TableOnDemand(
            typed(**RESULT_COLUMNS),
            show_index=False,
            disabled=True,
            selectable=False,
            sortable=False,
            sizing_mode="stretch_width",
            layout="fit_data_table",
            css_classes=["effdim-results"],
            header_align={c: "right" for c in RESULT_COLUMNS},
            text_align={c: "right" for c in RESULT_COLUMNS},
            configuration={"columnDefaults": {"resizable": False}},
        )
        self.best = html("", sizing_mode="stretch_width", margin=(0, 10), css_classes=["effdim-best"])
        self.download = pn.widgets.FileDownload(
            label="Download curves (CSV)",
            callback=self._csv,
            filename="effdim-scores.csv",
            embed=False,
            visible=False,
            width=220,
        )
        self.path = TableOnDemand(
            typed(**PATH_COLUMNS),
            show_index=False,
            disabled=True,
            selectable=False,
            sizing_mode="stretch_width",
            layout="fit_data_stretch",
        )
        state.param.watch(self._update_inputs, ["mismatch", "leaf_map", "node", "mapping"])
        state.models.param.watch(self._update_inputs, ["effective"])
        state.data.param.watch(self._update_inputs, ["dataset"])
        state.param.watch(self._update_running, ["running", "progress", "status"])
        state.param.watch(self._update_results, ["results", "climb"])
        state.param.watch(self._update_learned, ["learned_tree", "learned_note"])
        self._update_inputs()
        self._update_running()
        self._update_results()
        self._update_learned()

    async def _run_sweep(self, _=None) -> None:
        await self.state.run_sweep()

    async def _run_climb(self, _=None) -> None:
        await self.state.run_climb()

    async def _run_learn(self, _=None) -> None:
        await self.state.run_learn()

    def _csv(self):
        return io.StringIO(self.state.results_csv())

    def _update_inputs(self, *_) -> None:
        state = self.state
        choices = state.hidden_choices()
        self.node.param.update(
            options=choices, value=state.node if state.node in choices else None, visible=state.mapping == "model"
        )
        self.climb_score.disabled = state.mapping != "model"
        self.to_editor.visible = state.mapping == "lc" and state.data.dataset is not None
        if state.leaf_map:
            frame = pd.DataFrame(state.leaf_map, columns=["leaf", "column", "leaf states", "column states"])
            frame["leaf states"] = frame["leaf states"].astype("Int64")
            self.leaf_map.show(frame)
        else:
            self.leaf_map.hide()
        self._update_running()
        items = "".join(f"<li>{plain(m)}</li>" for m in state.mismatch)
        self.mismatch.param.update(
            object=f"<div><b>The model does not match the data:</b><ul>{items}</ul></div>" if items else "",
            visible=bool(items),
        )

    def _update_running(self, *_) -> None:
        state = self.state
        self.progress.param.update(
            value=state.progress, active=state.running and state.progress == 0, visible=state.running
        )
        self.status.object = plain(state.status)
        blocked = state.running or state.data.dataset is None or bool(state.mismatch)
        self.run.disabled = blocked
        self.climb.disabled = blocked or state.mapping != "model"
        self.learn.disabled = state.running or state.data.dataset is None
        self.cancel.disabled = not state.running

    def _update_learned(self, *_) -> None:
        """Draw the structure search's best tree so far, then its result (ScoresState.learned_tree)."""
        tree = self.state.learned_tree
        if tree is not None:
            first = self.learned_drawing is None
            if first:
                self.learned_drawing = TreeFigure("effdim-learned-tree", 280, "effdim-learned-tree")
            self.learned_drawing.draw(model_data(tree))
            if first:  # shown with its first tree
                self.learned_box.append(self.learned_drawing.pane)
            self.learned_note.object = f"<b>{plain(self.state.learned_note)}</b>"
        self.learned_box.visible = tree is not None

    def _update_results(self, *_) -> None:
        state = self.state
        if state.results:
            scored = state.results_frame()
            if self.curves is None:
                self.curves = ScoreCurves(SHOWN_SCORES)
                self.plot_box.objects = [pn.pane.Bokeh(self.curves.figure, sizing_mode="stretch_width", height=330)]
            best = state.best()
            with pn.io.unlocked():  # Bokeh models changed from a coroutine (the sweep ending)
                self.curves.update(scored, best)
            labels = {SCORES[name].key: SCORES[name].label for name in SHOWN_SCORES}
            keep = [c for c in ["card", "loglik", *labels, "ds", "de", "n"] if c in scored.columns]
            frame = scored[keep].rename(columns={"card": "|H|", **labels})
            floats = {c: TWO_DECIMALS for c in ["loglik", *labels.values()] if c in frame.columns}
            self.table.show(frame, formatters=floats)
            self.download.visible = True
            notes = state.pick_notes()
            cells = "".join(
                f"<span class='effdim-best-item' style='border-color:{SCORES[name].color}'>{SCORES[name].label} "
                f"<b>{card}</b>{_caveat_html(notes[name])}"
                f"</span>"
                for name, (card, _) in best.items()
            )
            prior = CS_PRIORS.get(state.results[0].scores.cs_prior, state.results[0].scores.cs_prior)
            self.best.object = (
                f"<div class='effdim-best-row'>★ Best cardinality by score: {cells}</div>"
                f"<small>CS and CS+ with the Dirichlet prior {plain(prior)}</small>"
            )
        else:
            self.table.hide()
            self.download.visible = False
            self.best.object = ""
        climb = state.climb
        if climb is not None:
            path = state.climb_frame()
            self.path.show(path, formatters={"score": TWO_DECIMALS, "loglik": TWO_DECIMALS})
            if self.climb_curve is None:
                self.climb_curve = ClimbCurve()
                self.climb_box.objects = [
                    pn.pane.Bokeh(self.climb_curve.figure, sizing_mode="stretch_width", height=300)
                ]
            with pn.io.unlocked():
                self.climb_curve.update(path, climb.score)
        else:
            self.path.hide()
        self.climb_box.visible = climb is not None
        self.plot_box.visible = climb is None and bool(state.results)
        self.plot_hint.visible = climb is None and not state.results

    def __panel__(self):
        return pn.Column(
            heading(
                "Scores",
                "BIC and AIC penalise with the standard dimension ds; BIC+ and CS+ with the "
                "effective dimension de (Section 2.3). CS is the Cheeseman-Stutz score.",
            ),
            html("<small>Which model is scored:</small>", margin=(0, 5)),
            self.mapping,
            self.to_editor,
            self.mismatch,
            self.leaf_map,
            # the controls wrap onto a second line where the column is narrow, never past its edge
            pn.FlexBox(
                self.node,
                self.card_min,
                self.card_max,
                self.past_saturation,
                self.restarts,
                self.seed,
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            pn.FlexBox(
                self.run, self.climb_score, self.climb, self.cs_prior, flex_wrap="wrap", sizing_mode="stretch_width"
            ),
            pn.FlexBox(self.learn_score, self.learn, self.cancel, flex_wrap="wrap", sizing_mode="stretch_width"),
            html(
                "<small>Learn structure searches for a latent tree over all columns and opens it in the tree "
                "editor; the best tree so far is drawn below while it runs.</small>",
                margin=(0, 10),
                sizing_mode="stretch_width",
            ),
            self.progress,
            self.status,
            self.message,
            self.learned_box,
            self.plot_hint,
            self.plot_box,
            self.climb_box,
            self.best,
            self.download,
            self.table,
            self.path,
            sizing_mode="stretch_width",
        )
