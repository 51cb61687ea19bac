"""The dashboard's log (effdim_app/logs.py): an error the dashboard shows and survives is logged with its
traceback and the session it happened in; ``effdim app --log-level`` sets the level."""

from __future__ import annotations

import io
import logging

import pytest
from waiting import run_in_fresh_loop

from effdim import parse_model
from effdim_app import logs
from effdim_app.jobs import UNEXPECTED, JobRunner
from effdim_app.state import ModelState
from effdim_app.state import model as model_state


@pytest.fixture
def in_session(monkeypatch):
    """The code runs for session ``browser-session-7`` (the dashboard's lookup reads Panel's current document)."""
    monkeypatch.setattr(logs, "_session_lookup", lambda: "browser-session-7")


@pytest.fixture
def log(caplog, monkeypatch):
    caplog.set_level(logging.DEBUG, logger="effdim_app")
    monkeypatch.setattr(logs.LOG, "propagate", True)  # to caplog's handler, even after a configure()
    return caplog


def forget_configure():
    for handler in [h for h in logs.LOG.handlers if getattr(h, "effdim_app", False)]:
        logs.LOG.removeHandler(handler)
    logs.LOG.setLevel(logging.NOTSET)
    logs.LOG.propagate = True


def broken_engine(*args, **kwargs):
    raise RuntimeError("the engine broke")


def fails_in_worker(*, progress=None):
    raise RuntimeError("the worker broke")


def test_a_failure_the_model_tab_shows_is_logged_with_traceback_and_session(monkeypatch, in_session, log):
    monkeypatch.setattr(model_state.tasks, "dimensions_task", broken_engine)
    monkeypatch.setattr(model_state.REPORTS, "get", lambda key: None)
    state = ModelState(parse_model("3(2,2,2)"))
    assert state.report_error == UNEXPECTED  # shown to the user as effdim's failure, the app goes on
    (record,) = [r for r in log.records if "the engine broke" in r.getMessage()]
    assert record.levelno == logging.ERROR
    assert record.session == "browser-session-7"
    text = logging.Formatter(logs.FORMAT).format(record)
    assert "Traceback (most recent call last)" in text and "broken_engine" in text
    assert "[session browser-session-7]" in text


def test_a_job_failed_in_its_worker_is_logged_with_the_workers_traceback_and_the_submitting_session(in_session, log):
    runner = JobRunner(workers=1, timeout=20)

    async def go():
        job = runner.submit(fails_in_worker, label="Breaking")
        await job
        return job

    job = run_in_fresh_loop(go())
    assert job.state == "failed" and job.error == UNEXPECTED  # the user reads effdim's failure ...
    (record,) = [r for r in log.records if "Breaking failed" in r.getMessage()]
    assert record.levelno == logging.ERROR and record.session == "browser-session-7"
    assert "RuntimeError: the worker broke" in record.getMessage()  # ... the log the worker's own words
    assert "Traceback (most recent call last)" in record.getMessage()
    assert "fails_in_worker" in record.getMessage()


def test_a_refused_input_is_logged_at_info_not_error(log):
    from effdim.errors import InvalidArgument

    try:
        raise InvalidArgument("node 'H9' does not exist")
    except InvalidArgument as err:
        logs.swallowed("select", err)
    (record,) = log.records
    assert record.levelno == logging.INFO and record.exc_info and record.session == logs.NO_SESSION


def test_configure_sets_the_level_and_the_line(in_session):
    stream = io.StringIO()
    try:
        logs.configure("warning", stream)
        logs.LOG.info("not shown")
        logs.LOG.warning("shown")
        assert stream.getvalue().count("\n") == 1
        assert "WARNING effdim_app [session browser-session-7] shown" in stream.getvalue()
        with pytest.raises(ValueError, match="loud"):
            logs.configure("loud")
    finally:
        forget_configure()


def test_effdim_app_log_level(monkeypatch, capsys):
    from effdim.cli import main
    from effdim_app import server

    served = []
    monkeypatch.setattr(server, "serve", lambda **kwargs: served.append(kwargs))
    try:
        assert main(["app", "--no-show", "--log-level", "debug"]) == 0
        assert served and logs.LOG.level == logging.DEBUG
        assert [h for h in logs.LOG.handlers if getattr(h, "effdim_app", False)]
    finally:
        forget_configure()
    capsys.readouterr()
    assert main(["app", "--no-show", "--log-level", "loud"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("invalid choice: 'loud' (choose from 'debug', 'info', 'warning', 'error')"), err


def test_the_dashboard_names_the_served_session():
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from effdim_app import dashboard

    with set_curdoc(Document()):
        assert dashboard.session_id() == "notebook"

    class Context:
        id = "abc123"

    doc = Document()
    doc._session_context = lambda: Context()  # Bokeh keeps a weak reference to the server's context
    with set_curdoc(doc):
        assert logs.current_session() == "abc123"
