"""The dashboard: one :class:`EffdimApp` per browser session or notebook cell.

``create_app()`` builds fresh state and views every time it is called; the
server calls it once per session (``apps/effdim.py``), so sessions never
share mutable state. The only thing shared across sessions is the engine's
cache of immutable results.
"""

from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from effdim import HLCModel

from . import explain
from .compat import Fast, add_page_at_once
from .config import ServerLimits
from .jobs import JobRunner
from .links import read_link
from .logs import NO_SESSION, use_session_lookup
from .notebook import RenderGate
from .state import (
    DataState,
    DistalState,
    EnumerationState,
    FitChecksState,
    FittedState,
    ModelState,
    ProposalState,
    RegressionState,
    ScoresState,
)
from .style import ACCENT, HTML_CSS, PROJECTOR_SCALE, SCALE_VAR, TEMPLATE_CSS
from .views import (
    DataDemo,
    DataPanel,
    DimensionsPanel,
    DistalView,
    EnumerationView,
    ExperimentsPanel,
    FitChecksView,
    FittedView,
    GuidedDemo,
    ModelPanel,
    ProposalView,
    RegressionView,
    RegularizationPanel,
    ScoresPanel,
    SelectionPanel,
    TreeView,
)
from .views.widgets import one_message

__all__ = ["EffdimApp", "app", "create_app", "EXTENSIONS", "TITLE", "TEMPLATE_DESIGN"]

#: Panel extensions the dashboard needs (loaded by ``pn.extension``).
EXTENSIONS = ("tabulator", "filedropper")
TITLE = "effdim · effective dimension of HLC models"
DATA_TAB, EXPERIMENTS_TAB = 1, 2
SIDEBAR_WIDTH = 300
#: The first thing the Model tab says: what the numbers are and what to try.
FIRST_SENTENCE = (
    "<p class='effdim-lead'><b>ds</b> counts a model's free parameters; <b>de</b>, its effective dimension "
    "(Kocka &amp; Zhang 2002), counts only those the observed variables can pin down, and is what BIC+ and "
    "CS+ penalise. Try it: click a node and type a new number of states, or press <i>▶ Guided demo</i> "
    "for the paper's key cases, one sentence each.</p>"
)
INLINE_SIDEBAR_WIDTH = 250
#: Fonts the user's system has: the page loads no web font (a classroom server may have no internet).
SYSTEM_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"


#: The served page's design (FastListTemplate's own); session_page makes it every component's.
TEMPLATE_DESIGN = Fast
PROJECTOR_LABELS = {False: "Projector: off", True: "Projector: on ✓"}


def session_id() -> str:
    """The session the log names (effdim_app/logs.py): the Bokeh session's id served, ``notebook`` in one."""
    doc = pn.state.curdoc
    if doc is None:
        return NO_SESSION
    return doc.session_context.id if doc.session_context is not None else "notebook"


use_session_lookup(session_id)


class EffdimApp(Viewer):
    """The whole dashboard for one session: states plus views.

    ``app.models``, ``app.data`` and ``app.scores`` are the param state objects
    (see :mod:`effdim_app.state`); display the app itself in a notebook, or
    serve :meth:`template` with ``panel serve``.
    """

    projector = param.Boolean(default=False, doc="Projector mode: large type for a class at the back of a room.")

    def __init__(
        self,
        model: HLCModel | str | None = None,
        limits: ServerLimits | None = None,
        jobs: JobRunner | None = None,
        **params,
    ):
        super().__init__(**params)
        limits = limits or ServerLimits()
        if jobs is None:
            jobs = JobRunner(workers=limits.workers, timeout=limits.time_limit, max_bytes=limits.job_bytes)
        self.models = ModelState(model, limits=limits, jobs=jobs)
        self.data = DataState(max_bytes=limits.upload_bytes, jobs=jobs)
        self.scores = ScoresState(self.models, self.data, jobs=jobs)
        self.models.in_one_update = self.data.in_one_update = self.scores.in_one_update = one_message
        self.tree = TreeView(self.models, height=340)
        self.model_panel = ModelPanel(self.models)
        self.selection = SelectionPanel(self.models)
        self.regularity = RegularizationPanel(self.models)
        self.dimensions = DimensionsPanel(self.models)
        self.fitted_state = FittedState(self.scores, self.models)
        self.proposal = ProposalState(self.fitted_state)
        self.checks = FitChecksState(self.fitted_state)
        self.distal = DistalState(self.fitted_state, jobs=jobs)
        self.distal.in_one_update = one_message
        self.enumeration = EnumerationState(self.fitted_state, jobs=jobs)
        self.enumeration.in_one_update = one_message
        self.regression = RegressionState(self.fitted_state)
        self.regression.in_one_update = one_message
        # The Data & scores and Experiments tabs are built when first opened: a new session builds
        # only what its first screen shows, which a class opening the page at once pays for every
        # student (docs/robustness.md, "Opening a page").
        self._unbuilt = {DATA_TAB: self._data_tab, EXPERIMENTS_TAB: ExperimentsPanel}
        self._data_views: tuple = ()  # the Data tab's views whose figures projector mode scales, once built
        self.demo = GuidedDemo(self.models, show_model=lambda: setattr(self.tabs, "active", 0))
        self.data_demo = DataDemo(self.proposal, show_data=lambda: setattr(self.tabs, "active", DATA_TAB))
        self.tabs = pn.Tabs(
            ("Model & dimensions", self._model_tab()),
            ("Data & scores", pn.Column(sizing_mode="stretch_width")),
            ("Experiments", pn.Column(sizing_mode="stretch_width")),
            dynamic=True,
            sizing_mode="stretch_width",
            css_classes=["effdim-tabs"],
        )
        self.tabs.param.watch(self._tab_opened, "active")
        self.scores.param.watch(self._say_scored, ["mapping"])
        self.data.param.watch(self._say_scored, ["dataset"])
        self.projector_toggle = pn.widgets.Toggle.from_param(
            self.param.projector,
            name=PROJECTOR_LABELS[False],
            color="light",
            width=130,
            margin=(10, 5),
            css_classes=["effdim-projector-toggle"],
        )
        self.param.watch(self._projector_changed, "projector")

    def _say_scored(self, *_) -> None:
        """The sidebar says which model the Data tab scores: the sidebar's, or an LC model over the data."""
        dataset = self.data.dataset
        columns = None if dataset is None else len(dataset.columns)
        self.model_panel.say_scored(explain.scored_model(self.scores.mapping, columns))

    def _projector_changed(self, *_) -> None:
        """Scale the type of the tabs (what the class looks at; the sidebar is the teacher's): one CSS
        variable on the tabs (style.py), the tree's labels in Python."""
        scale = PROJECTOR_SCALE if self.projector else 1.0
        with pn.io.hold():
            self.tabs.styles = {**self.tabs.styles, SCALE_VAR: str(scale)}
            self.tree.font_scale = scale
            self.dimensions.set_font_scale(scale)
            self.regularity.set_font_scale(scale)
            for view in self._data_views:
                view.set_font_scale(scale)
            self.projector_toggle.name = PROJECTOR_LABELS[self.projector]

    def _tab_opened(self, event) -> None:
        build = self._unbuilt.pop(event.new, None)
        if build is not None:
            self.tabs[event.new].objects = [build()]

    def _model_tab(self):
        # FlexBoxes wrap: beside the tree go the regularization log (on screen with the tree it
        # explains) and the Selected-node card; below about 800 px of width (1024 px with the
        # sidebar open, 150 % zoom, a notebook cell) they go under the tree, side by side when
        # there is room, instead of being cut off at the right edge. The Dimensions get the
        # whole width below.
        side = pn.FlexBox(
            pn.Column(self.regularity, sizing_mode="stretch_width", styles={"flex": "1 1 300px"}, min_width=280),
            self.selection,
            flex_wrap="wrap",
            align_content="flex-start",
            sizing_mode="stretch_width",
            styles={"flex": "1 1 330px"},
            min_width=310,
            css_classes=["effdim-side"],
        )
        return pn.Column(
            pn.pane.HTML(
                FIRST_SENTENCE,
                sizing_mode="stretch_width",
                margin=(0, 10),
                stylesheets=[HTML_CSS],
                css_classes=["effdim-first"],
            ),
            self.demo,
            self.dimensions.top,
            pn.FlexBox(
                pn.Column(
                    self.tree,
                    self.selection.message,
                    sizing_mode="stretch_width",
                    styles={"flex": "3 1 420px"},
                    min_width=360,
                ),
                side,
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            self.dimensions,
            sizing_mode="stretch_width",
        )

    def _data_tab(self):
        # wraps like the model tab: below about 1,200 px the scores go under the data panel; the fitted
        # model takes the whole width below both (beside the scores it left the data panel's column
        # blank on its left).
        # One wrapping box holds all three, the fitted view on a line of its own (flex-basis 100%): with
        # the fitted view's figures beside the box in the tab's column instead, Bokeh laid that column
        # out as a grid of its figures and never computed the layout of any figure inside the box (a
        # FlexBox has no Bokeh layout of its own), so the score curves were drawn with a 0x0 frame.
        fitted = FittedView(
            self.fitted_state, ProposalView(self.proposal), DistalView(self.distal), checks=FitChecksView(self.checks)
        )
        scores = ScoresPanel(self.scores)
        self._data_views = (scores, fitted)
        scale = PROJECTOR_SCALE if self.projector else 1.0
        for view in self._data_views:
            view.set_font_scale(scale)
        return pn.Column(
            self.data_demo,
            pn.FlexBox(
                pn.Column(DataPanel(self.data), width=330),
                pn.Column(
                    scores,
                    EnumerationView(self.enumeration),
                    sizing_mode="stretch_width",
                    styles={"flex": "1 1 520px"},
                    min_width=360,
                ),
                pn.Column(fitted, sizing_mode="stretch_width", styles={"flex": "1 1 100%"}),
                pn.Column(RegressionView(self.regression), sizing_mode="stretch_width", styles={"flex": "1 1 100%"}),
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        """Inline form (notebooks): the model controls to the left of the tabs, above them in a narrow cell.

        Drawn once the cell's output exists in the browser, with Panel's
        stylesheets from the install (:mod:`effdim_app.notebook`).
        """
        self._header_buttons(on_dark=False)
        self.dimensions.build_details()  # one user's cell: nothing to save by building it when scrolled to
        return RenderGate(
            pn.FlexBox(
                pn.Column(
                    self.demo.start,
                    self.data_demo.start,
                    self.projector_toggle,
                    self.model_panel,
                    width=INLINE_SIDEBAR_WIDTH,
                ),
                pn.Column(self.tabs, sizing_mode="stretch_width", styles={"flex": "1 1 600px"}, min_width=360),
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
        )

    def close(self) -> None:
        """Stop the session's jobs (the session ended); its state then goes with the session."""
        self.models.cancel_jobs()
        self.scores.cancel()
        if self.data.load_job is not None:
            self.data.load_job.cancel()
        if self.distal.job is not None:
            self.distal.job.cancel()
        if self.regression.job is not None:
            self.regression.job.cancel()
        self.enumeration.cancel(quiet=True)

    def _header_buttons(self, on_dark: bool) -> None:
        """ "Guided demo" and "Projector" as light buttons on the page's blue header, outlined on a
        notebook's white (light ones there looked like plain text)."""
        for button in (self.demo.start, self.data_demo.start, self.projector_toggle):
            button.param.update(color="light" if on_dark else "primary", button_style="solid" if on_dark else "outline")

    def template(self) -> pn.template.FastListTemplate:
        """The served form: a FastListTemplate with the model controls in the sidebar."""
        self._header_buttons(on_dark=True)
        template = pn.template.FastListTemplate(
            title=TITLE,
            design=TEMPLATE_DESIGN,
            font=SYSTEM_FONT,
            sidebar=[self.model_panel],
            main=[self.tabs],
            header=[pn.Row(self.demo.start, self.data_demo.start, self.projector_toggle, margin=0)],
            sidebar_width=SIDEBAR_WIDTH,
            accent_base_color=ACCENT,
            header_background=ACCENT,
            theme_toggle=False,
            main_layout=None,
            # Panel's busy spinner is one flag for the whole process: every callback of any session
            # set the spinner of every open page (30 pages: 30 updates per student edit, and each
            # student saw the others' work as their own). Jobs show their own progress instead.
            busy_indicator=None,
        )
        template.config.raw_css.append(TEMPLATE_CSS)
        add_page_at_once(template)
        self._share_in_url()
        return template

    def _share_in_url(self) -> None:
        """Keep the model (notation), the tab and projector mode in the page's address: a link opens the same view.

        ``?model=5(3(2,2),2,3(2,2))&tab=1&projector=1``; a bad notation in a link
        is refused like a typed one (the message says why; the default model stays) and stays in the
        notation box, to be corrected there.
        """
        location = pn.state.location
        if location is None:
            return
        link = read_link(pn.state.session_args or {}, tabs=len(self.tabs))
        if link.model and not self.models.open_link(link.model):
            self.model_panel.notation.value = link.model
        if link.tab is not None:
            self.tabs.active = link.tab
        self.projector = link.projector
        self.models.param.watch(lambda e: location.update_query(model=e.new), "notation")
        self.tabs.param.watch(lambda e: location.update_query(tab=e.new), "active")
        self.param.watch(lambda e: location.update_query(projector=int(e.new)), "projector")


def create_app(
    model: HLCModel | str | None = None, limits: ServerLimits | None = None, jobs: JobRunner | None = None
) -> EffdimApp:
    """A fresh dashboard (fresh state) for one session; a server passes its limits and its one job runner."""
    return EffdimApp(model, limits=limits, jobs=jobs)


def app(model: HLCModel | str | None = None):
    """The dashboard for display in a notebook (loads the Panel extensions first, and starts the worker
    processes of its jobs in a thread: the first sweep does not wait for them).

    Served (``pn.serve(effdim_app.app)``), each session gets the templated page.
    """
    # in a notebook with BokehJS inline, so the output is not empty offline (served, the server sends the resources)
    pn.extension(*EXTENSIONS, inline=not pn.state.served)
    dashboard = create_app(model)
    if pn.state.served:
        return dashboard.template()
    dashboard.models.jobs.warm_up(wait=False)  # else the kernel's first job waits about a second for them
    return dashboard
