"""The "Data & scores" tab's scores: scoring the model on the data (sweeps, hill climbs, structure searches);
loading the data is :mod:`.data_panel`."""

from __future__ import annotations

import io

import pandas as pd
import panel as pn
from panel.viewable import Viewer

from effdim.scores import SCORES
from effdim.treedraw import model_data

from ..figures import ClimbCurve, ScoreCurves, scale_fonts
from ..state import CLIMB_SCORES, CS_PRIORS, SHOWN_SCORES, ScoresState
from ..style import ALERT_CSS, BUTTON_CSS, TOGGLE_CSS, more_right_css
from .tree_view import TreeFigure, layered_height
from .widgets import TableOnDemand, heading, html, in_one_message, message, plain, typed

__all__ = ["ScoresPanel"]

RESULT_COLUMNS = {
    "|H|": "int64",
    "loglik": "float64",  # "-2LL" on poLCA's scale
    "BIC": "float64",
    "BIC+": "float64",
    "CS": "float64",
    "CS+": "float64",
    "AIC": "float64",
    "sBIC": "float64",
    "sBIC+": "float64",
    "ds": "int64",
    "de": "int64",
    "n": "int64",
}
#: The results table's columns shown with two decimals ("-2LL": the log-likelihood column on poLCA's scale).
RESULT_FLOATS = (*(c for c, kind in RESULT_COLUMNS.items() if kind == "float64"), "-2LL")
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
#: The heights of the score curves and of the climb's chart at the normal type (projector mode makes them taller),
#: and the least height of the structure search's tree (a deeper one is drawn taller, ``layered_height``).
CURVES_HEIGHT, CLIMB_HEIGHT, LEARNED_HEIGHT = 330, 300, 280
#: Tabulator formatter of scores and log-likelihoods: thousands separated, two decimals.
TWO_DECIMALS = {"type": "money", "decimal": ".", "thousand": ",", "precision": 2}


def _caveat_html(notes: list[str]) -> str:
    """A pick's caveats (top of the range, saturated: effdim.search.pick_caveats) as a small note."""
    return f" <small>({plain('; '.join(notes))})</small>" if notes else ""


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
            description="LC model over all columns: one hidden class variable over every column used. Edited "
            "model: the tree on the Model tab, its leaves matched to the data's columns by name.",
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
            state.param.card_max,
            label="to",
            width=90,
            css_classes=["effdim-card-max"],
            description="The most states of the swept node; never beyond the largest regular cardinality "
            "(Lemmas 3.2 and 4.1). The sweep stops at the first saturated model (de = dc), where the scores "
            "turn flat, unless 'past saturation' is ticked.",
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
        score_labels = {SCORES[name].label: name for name in CLIMB_SCORES}
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
            value=0,
            max=100,
            active=False,
            sizing_mode="stretch_width",
            height=18,
            margin=(10, 10),
            css_classes=["effdim-scores-progress"],
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
        self.font_scale = 1.0  # projector mode: 1.5
        self.plot_hint = html(
            "<small>Press ▶ Sweep cardinality (with data loaded): BIC, BIC+, CS, CS+, AIC and the "
            "singular BIC (sBIC, sBIC+) against the cardinality appear here.</small>",
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
            stylesheets=[more_right_css(".tabulator-tableholder")],  # eleven columns outgrow a card at 1024 px
            header_align={c: "right" for c in RESULT_COLUMNS},
            text_align={c: "right" for c in RESULT_COLUMNS},
            # formatted from the first row on: fits arrive one by one while a sweep runs
            formatters={c: TWO_DECIMALS for c in RESULT_FLOATS},
            configuration={"columnDefaults": {"resizable": False}},
        )
        self.best = html("", sizing_mode="stretch_width", margin=(0, 10), css_classes=["effdim-best"])
        self.scale = pn.widgets.RadioButtonGroup.from_param(
            state.param.deviance,
            label="",
            options={"log L − penalty (higher is better)": False, "−2 log L + penalty, as poLCA, Mplus": True},
            color="primary",
            css_classes=["effdim-scale"],
            stylesheets=[TOGGLE_CSS],
            margin=(0, 10),
        )
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
        state.param.watch(self._update_results, ["results", "climb", "deviance"])
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
        self._show_hint()

    def _show_hint(self) -> None:
        """What the curves' place says before there are any: nothing while a run speaks for itself."""
        state = self.state
        self.plot_hint.visible = state.climb is None and not state.results and not state.running

    def _update_learned(self, *_) -> None:
        """Draw the structure search's best tree so far, then its result (ScoresState.learned_tree)."""
        tree = self.state.learned_tree
        if tree is not None:
            first = self.learned_drawing is None
            if first:
                self.learned_drawing = TreeFigure("effdim-learned-tree", LEARNED_HEIGHT, "effdim-learned-tree")
            data = model_data(tree, scale=self.font_scale)
            self.learned_drawing.draw(data, self.font_scale, layered_height(data, LEARNED_HEIGHT))
            if first:  # shown with its first tree
                self.learned_box.append(self.learned_drawing.pane)
            self.learned_note.object = f"<b>{plain(self.state.learned_note)}</b>"
        self.learned_box.visible = tree is not None

    def _update_results(self, *_) -> None:
        state = self.state
        if state.results:
            scored = state.shown_frame()
            if self.curves is None:
                self.curves = ScoreCurves(SHOWN_SCORES)
                self.plot_box.objects = [pn.pane.Bokeh(self.curves.figure, sizing_mode="stretch_width")]
                self._scale_figures()
            best = state.best()
            with pn.io.unlocked():  # Bokeh models changed from a coroutine (the sweep ending)
                self.curves.update(scored, best, state.deviance)
            labels = {SCORES[name].key: SCORES[name].label for name in SHOWN_SCORES}
            keep = [c for c in ["card", "loglik", "-2LL", *labels, "ds", "de", "n"] if c in scored.columns]
            frame = scored[keep].rename(columns={"card": "|H|", **labels})
            self.table.show(frame, formatters={c: TWO_DECIMALS for c in RESULT_FLOATS if c in frame.columns})
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
                self.climb_box.objects = [pn.pane.Bokeh(self.climb_curve.figure, sizing_mode="stretch_width")]
                self._scale_figures()
            with pn.io.unlocked():
                self.climb_curve.update(path, climb.score)
        else:
            self.path.hide()
        self.climb_box.visible = climb is not None
        self.plot_box.visible = climb is None and bool(state.results)
        self._show_hint()
        self.scale.visible = climb is None and bool(state.results)

    def set_font_scale(self, scale: float) -> None:
        """Projector mode: the score curves' and the climb's type (and height) at ``scale``; the learned tree's
        labels too."""
        self.font_scale = scale
        self._scale_figures()
        self._update_learned()

    def _scale_figures(self) -> None:
        drawn = ((self.curves, self.plot_box, CURVES_HEIGHT), (self.climb_curve, self.climb_box, CLIMB_HEIGHT))
        for figure, box, height in drawn:
            if figure is not None:
                with pn.io.unlocked():
                    scale_fonts(figure.figure, self.font_scale, height)
                box[0].height = figure.figure.height

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
                # the EM settings wrap together: the Seed on a line of its own read as a setting apart
                pn.Row(self.restarts, self.seed, margin=0, css_classes=["effdim-em-settings"]),
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
            self.scale,
            self.plot_box,
            self.climb_box,
            self.best,
            self.download,
            self.table,
            self.path,
            sizing_mode="stretch_width",
        )
