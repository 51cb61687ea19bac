"""The example notebook runs top to bottom without errors."""

from __future__ import annotations

from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "effdim_dashboard.ipynb"


def test_example_notebook_executes():
    # imported here, not by every test process that only collects this file (nbformat's schema checks cost a
    # second and a half of CPU to import); both are in the test extra: CI runs the notebook
    import nbclient
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "ds = 41, de = 23" in text
    # the dashboard cell displays a live Panel app (Panel's notebook mimetype)
    dashboard = next(c for c in nb.cells if c.cell_type == "code" and "effdim_app.app(" in c.source)
    results = [o for o in dashboard.outputs if o.get("output_type") == "execute_result"]
    assert results and "application/vnd.holoviews_exec.v0+json" in results[0]["data"]
    # BokehJS is in the notebook itself, not fetched from a CDN (classrooms without internet)
    assert "cdn.bokeh.org" not in nbformat.writes(nb)
