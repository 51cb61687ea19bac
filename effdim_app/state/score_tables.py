"""What the views show of a sweep's or a climb's results (no Panel import): :class:`ScoreTables`, the tables,
each score's pick with its caveats, and the CSV download, read off :class:`~effdim_app.state.ScoresState`'s
``results`` and ``climb``."""

from __future__ import annotations

import json

from effdim.scores import PAPER_SCORES, SCORES, best
from effdim.search import pick_caveats

__all__ = ["SHOWN_SCORES", "CLIMB_SCORES", "ScoreTables"]

#: Criteria the dashboard shows (names of :data:`effdim.scores.SCORES`), in display order.
SHOWN_SCORES: tuple[str, ...] = (*PAPER_SCORES, "aic", "sbic", "sbic+")
#: Those a hill climb or a structure search can use: every one but the sweep's singular BIC.
CLIMB_SCORES: tuple[str, ...] = tuple(name for name in SHOWN_SCORES if not SCORES[name].chain)


class ScoreTables:
    """The results of :class:`~effdim_app.state.ScoresState` as the views show them (a mixin of it: reads its
    ``results``, the fits of a sweep, ``climb``, a hill climb, and ``deviance``, the scale shown)."""

    def results_frame(self):
        """One row per fit of the sweep: its cardinality, every score, ds, de and n, its starts and flags."""
        import pandas as pd

        rows = [r.to_json() for r in self.results]
        frame = pd.DataFrame(rows)
        for column in ("restarts", "degenerate"):
            if column in frame:
                frame[column] = frame[column].map(lambda v: json.dumps(v, default=str) if v else "")
        return frame

    def shown_frame(self):
        """:meth:`results_frame` on the scale the views show (``deviance``: ``-2LL`` for the log-likelihood and
        every score as ``-2 log L + penalty``, lower is better, as poLCA and Mplus print them)."""
        frame = self.results_frame()
        if not self.deviance or frame.empty:
            return frame
        keys = [key for key in ("loglik", *(c.key for c in SCORES.values())) if key in frame.columns]
        frame[keys] = frame[keys].astype(float) * -2.0
        return frame.rename(columns={"loglik": "-2LL"})

    def best(self) -> dict[str, tuple[int, float]]:
        """Score name -> (card, value on the shown scale) of the best cardinality for each shown score
        (:func:`effdim.scores.best`: ties go to the smaller model, whatever the scale)."""
        if not self.results:
            return {}
        sign = -2.0 if self.deviance else 1.0
        return {name: (fit.card, sign * fit.score(name)) for name in SHOWN_SCORES for fit in [best(self.results, name)]}

    def pick_notes(self) -> dict[str, list[str]]:
        """Score name -> caveats of its best cardinality (:func:`effdim.search.pick_caveats`: top of the
        swept range, largest regular cardinality, saturated model)."""
        if not self.results:
            return {}
        return {name: pick_caveats(best(self.results, name), self.results) for name in SHOWN_SCORES}

    def climb_frame(self):
        """One row per accepted hill-climb step: the model, its hidden cardinalities, its scores."""
        import pandas as pd

        if self.climb is None:
            return pd.DataFrame()
        rows = []
        for i, fit in enumerate(self.climb.path):
            m = fit.model
            row = {
                "step": i,
                "model": str(m),
                "hidden cards": ", ".join(f"{h}={m.card(h)}" for h in m.hidden),
                "score": fit.score(self.climb.score),
                "loglik": fit.loglik,
                "ds": fit.ds,
                "de": fit.de,
            }
            rows.append(row)
        return pd.DataFrame(rows)

    def results_csv(self) -> str:
        """:meth:`results_frame` as CSV ("" without results)."""
        if not self.results:
            return ""
        return self.results_frame().to_csv(index=False)
