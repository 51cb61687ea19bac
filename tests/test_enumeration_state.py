"""State of the dashboard's "Class enumeration" card, without a browser (effdim_app.state.enumeration): the
table built after a sweep, the bootstrap LRT on the job workers with progress and cancel, the exports."""

import csv

from waiting import run_in_fresh_loop as run
from waiting import until

from effdim.bootstrap import CHUNK
from effdim_app.jobs import JobRunner
from effdim_app.state import DataState, EnumerationState, FittedState, ModelState, ScoresState


def _session(workers: int = 2, card_max: int = 3):
    models, data = ModelState(), DataState()
    scores = ScoresState(models, data, jobs=JobRunner(workers=workers, timeout=120))
    fitted = FittedState(scores, models)
    enumeration = EnumerationState(fitted)
    data.load_bundled("stouffer-toby")
    scores.param.update(card_max=card_max, restarts=2, seed=4)
    return scores, fitted, enumeration


def test_a_sweep_gets_its_table_and_the_blrt_runs_in_chunks_with_progress():
    scores, fitted, enumeration = _session(card_max=2)
    seen = []
    enumeration.param.watch(lambda e: seen.append(e.new), ["progress"])

    async def scenario():
        await scores.run_sweep()
        await until(lambda: enumeration.table is not None, "the class-enumeration table")
        assert [r.k for r in enumeration.table.rows] == [1, 2] and enumeration.table.blrt_B is None
        assert fitted.enumeration is enumeration.table
        enumeration.B = CHUNK + 1  # two chunks (10 and 1 replicates), two jobs
        assert enumeration.run_blrt() and enumeration.running
        await until(lambda: not enumeration.running, "the bootstrap LRT and the new table", seconds=240)

    run(scenario(), seconds=300)
    table = enumeration.table
    assert table.blrt_B == 11 and [r.blrt_p is None for r in table.rows] == [True, False]
    assert table.rows[1].blrt_p == 1 / 12  # two real classes: no replicate of one class reaches the data's LR
    assert 0 < min(p for p in seen if p) < 100 and "with the bootstrap LRT (B = 11)" in enumeration.status
    assert fitted.enumeration is table
    rows = list(csv.DictReader(enumeration.export("csv").splitlines()))
    assert [r["k"] for r in rows] == ["1", "2"]
    assert enumeration.export("md").startswith("| k |") and "\\toprule" in enumeration.export("tex")


def test_cancel_stops_every_chunk_and_a_new_sweep_clears_the_table():
    scores, fitted, enumeration = _session(workers=1)

    async def scenario():
        await scores.run_sweep()
        await until(lambda: enumeration.table is not None, "the class-enumeration table")
        enumeration.B = 200
        assert enumeration.run_blrt()
        pending = list(enumeration._pending)
        await until(lambda: enumeration.progress > 0 or any(j.state == "running" for j in pending), "a chunk")
        enumeration.cancel()
        await until(lambda: all(j.finished for j in pending), "every chunk to stop")
        assert all(j.state in ("done", "cancelled") for j in pending)
        assert enumeration.status == "Cancelled." and not enumeration.running
        assert enumeration.table.blrt_B is None  # the table without a BLRT stays
        scores.card_min = 2
        await scores.run_sweep()
        await until(lambda: enumeration.table is not None and enumeration.table.rows[0].k == 2, "the new table")

    run(scenario(), seconds=300)


def test_the_blrt_needs_a_sweep_of_two_cardinalities():
    scores, fitted, enumeration = _session()
    assert not enumeration.run_blrt() and "two cardinalities" in enumeration.message
    assert enumeration.export("csv") == ""
