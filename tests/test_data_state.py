"""The dashboard's data state (effdim_app.state.DataState) without a browser: bundled data, uploads read in a worker,
bad files refused with the data kept, the states' order.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from waiting import run_in_fresh_loop as run

from effdim_app.state import DataState

BAD_CSV = b"A,B\n1,2\n3\n"


def test_data_loading_and_bad_files():
    d = DataState()
    assert d.load_bundled("stouffer-toby")
    assert d.dataset.columns == ("A", "B", "C", "D") and d.message_kind == "success"
    good = d.dataset
    assert not d.load_upload("bad.csv", BAD_CSV)
    assert d.dataset is good and d.message_kind == "danger" and "line 3" in d.message
    assert "Still using" in d.message
    assert not d.load_upload("empty.csv", b"")
    assert not d.load_upload("one.csv", b"A,B\nx,1\nx,2\n")  # a column with a single value
    assert "'A'" in d.message
    d.max_bytes = 10
    assert not d.load_upload("big.csv", b"A,B\n1,2\n2,1\n" * 10)
    assert "limit" in d.message and d.dataset is good
    d.max_bytes = 10_000
    assert d.load_upload("ok.csv", b"X,Y\n1,a\n2,b\n1,b\n")
    assert d.dataset.columns == ("X", "Y")
    assert list(d.columns_frame()["states"]) == [2, 2]


def test_every_upload_is_read_in_a_worker_and_a_bad_one_keeps_the_data():
    from effdim_app.jobs import JobRunner

    rows = "\n".join(f"{i % 3},{i % 2},{(i // 2) % 4}" for i in range(50_000))
    good = ("A,B,C\n" + rows + "\n").encode()
    bad = ("A,B\n" + "1,2\n" * 70_000 + "1\n").encode()

    async def go():
        d = DataState(jobs=JobRunner(workers=1))
        d.load_upload("small.csv", b"A,B\n1,x\n2,y\n")
        small = d.load_job is not None  # a small file too: no parsing on the server's loop
        await d.load_job
        d.load_upload("big.csv", good)
        first = (d.load_job is not None, d.message)
        await d.load_job
        loaded = d.dataset
        d.load_upload("bad.csv", bad)
        await d.load_job
        return d, small, first, loaded

    d, small, (had_job, reading), loaded = run(go())
    assert small and had_job and "Reading upload 'big.csv'" in reading
    assert loaded.columns == ("A", "B", "C") and loaded.n_rows == 50_000
    assert d.dataset is loaded and d.message_kind == "danger" and "Still using upload 'big.csv'" in d.message


def raises_a_library_error(content, *, name, progress=None, **limits):
    """An upload reader that fails as a format's library may (module level: a worker unpickles it by name)."""
    raise TypeError("unhashable type: 'numpy.ndarray'")


def test_an_upload_that_fails_inside_reads_as_one_effdim_line_naming_the_file(monkeypatch):
    """Whatever a reader raises in the worker, the user reads the file's name and an effdim line, never
    the library's words, and keeps her data."""
    from effdim_app import tasks
    from effdim_app.jobs import JobRunner

    monkeypatch.setattr(tasks, "read_upload_task", raises_a_library_error)

    async def go():
        d = DataState(jobs=JobRunner(workers=1))
        d.load_bundled("stouffer-toby")
        d.load_upload("survey.parquet", b"PAR1 whatever")
        await d.load_job
        return d

    d = run(go())
    assert d.message == (
        "Could not load upload 'survey.parquet': an unexpected error inside effdim, not a problem with your "
        "input (the server's log has the details). Still using bundled data set 'stouffer-toby'."
    )
    assert d.message_kind == "danger" and d.dataset.columns == ("A", "B", "C", "D")


@pytest.mark.exclusive  # bounds on seconds and on the event loop's gaps
def test_a_wide_upload_is_refused_by_its_header_without_stalling_the_loop():
    """231 kB, 22,000 columns: once 31 s of another session's edit; now a worker refuses it on its header."""
    from effdim_app.jobs import JobRunner

    header = ",".join(f"c{i}" for i in range(22_000))
    wide = (
        header + "\n" + "\n".join(",".join("01"[(i + r) % 2] for i in range(22_000)) for r in range(2)) + "\n"
    ).encode()
    assert 200_000 < len(wide) < 250_000

    async def go():
        d = DataState(jobs=JobRunner(workers=1))
        d.load_bundled("stouffer-toby")
        gaps, last = [], time.perf_counter()
        d.load_upload("wide.csv", wide)
        job = d.load_job
        while not job.finished:  # the loop keeps turning while the worker reads
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
        return d, job, max(gaps)

    start = time.perf_counter()
    d, job, gap = run(go())
    assert time.perf_counter() - start < 10
    assert "the header has 22,000 columns, more than the limit of 2,000" in d.message
    assert d.message_kind == "danger" and d.dataset.columns == ("A", "B", "C", "D")  # the data in use stay
    assert gap < 0.5, gap


def test_upload_leaves_out_identifier_columns_detects_semicolons_and_latin1():
    d = DataState()
    rows = ["id;A;B"] + [f"{i};{'é' if i % 2 else 'e'};{i % 3}" for i in range(60)]
    assert d.load_upload("ids.csv", "\n".join(rows).encode("latin-1"))
    assert d.dataset.columns == ("A", "B") and d.full.columns == ("A", "B")  # left out while reading
    assert "Left out 'id' (a value per row: an identifier, kept for the posteriors' download)" in d.message
    assert "semicolons" in d.message and "Latin-1" in d.message
    assert not d.use_columns(["A"]) and d.dataset.columns == ("A", "B")
    assert d.load_upload("utf16.csv", "A,B\né,1\ne,2\n".encode("utf-16"))
    assert "UTF-16" in d.message and d.dataset.states[0] == ("é", "e")  # as the CLI reads it
    assert d.load_upload("plain.csv", b"A,B,C\n1,2,3\n2,1,4\n")
    assert d.use_columns(["C", "A"]) and d.dataset.columns == ("A", "C")  # the file's order


def test_moving_a_state_reorders_the_column_in_the_data_in_use():
    data = DataState()
    assert data.load_upload("s.csv", b"id,freq,item\n1,sometimes,1\n2,never,2\n3,often,1\n")
    assert data.use_columns(["freq", "item"])
    assert data.full.states[1] == ("never", "sometimes", "often")  # along the frequency scale
    assert data.move_state("freq", "often", -1)
    assert data.full.states[1] == data.dataset.states[0] == ("never", "often", "sometimes")
    assert data.move_state("freq", "often", -1)
    assert data.full.states[1] == data.dataset.states[0] == ("often", "never", "sometimes")
    assert data.move_state("freq", "never", 1)
    assert data.dataset.columns == ("freq", "item") and data.dataset.n_rows == 3
    assert not data.move_state("freq", "seldom", 1)
    assert data.message == "The order was not changed: column 'freq' has no state 'seldom'."
    assert data.dataset.states[0] == ("often", "sometimes", "never")
