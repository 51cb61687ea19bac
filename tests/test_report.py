"""The HTML report (effdim.report, `effdim fit|sweep|search --report`): sections, numbers from the engine,
escaping of everything the user supplied, no request of any kind, and a command that reproduces it."""

from __future__ import annotations

import html
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from effdim import datasets, dimensions, fit, hill_climb, parse_model, sweep
from effdim.cli import main
from effdim.report import command_line, report_html, write_report
from effdim.scores import FIT_SCORES, SCORES, best

XSS = "<img src=x onerror=alert(1)>"


class Page(HTMLParser):
    """What a browser would build from the report: tags with attributes, section texts, table cells."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.sections: dict[str, str] = {}
        self.cells: dict[str, list[str]] = {}  # per section id: the text of every <td>, <th>, <dt> and <dd>
        self._section: str | None = None
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "section":
            self._section = attrs["id"]
            self.sections[self._section] = ""
            self.cells[self._section] = []
        if tag in ("td", "th", "dt", "dd"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th", "dt", "dd") and self._cell is not None and self._section:
            self.cells[self._section].append("".join(self._cell).strip())
            self._cell = None
        if tag == "section":
            self._section = None

    def handle_data(self, data):
        if self._section:
            self.sections[self._section] += data
        if self._cell is not None:
            self._cell.append(data)

    def svgs(self, label_prefix: str) -> list[dict]:
        return [a for t, a in self.tags if t == "svg" and a.get("aria-label", "").startswith(label_prefix)]


SECTIONS = ["command", "data", "model", "selection", "profiles", "fit", "residuals"]


def test_stouffer_toby_fit_report_has_every_section_and_the_engines_numbers(tmp_path, capsys):
    out = tmp_path / "st.html"
    assert main(["fit", "stouffer-toby", "--model", "2:2,2,2,2", "--seed", "3", "--report", str(out)]) == 0
    assert f"report written to {out}" in capsys.readouterr().out
    page = Page(out.read_text(encoding="utf-8"))
    assert list(page.sections) == SECTIONS
    engine = fit(datasets.load("stouffer-toby"), "2:2,2,2,2", seed=3, warn=False)
    dims = dimensions(parse_model("2:2,2,2,2"))
    numbers = page.cells["model"]
    assert numbers[numbers.index("ds (standard dimension)") + 1] == str(dims.ds) == "9"
    assert numbers[numbers.index("de (effective dimension)") + 1] == f"{dims.de} (proven; direct rank)"
    assert numbers[numbers.index("dc (complete dimension)") + 1] == str(dims.dc)
    assert f"{engine.loglik:.4f}" in page.sections["fit"] and f"{engine.loglik:.4f}" in page.sections["selection"]
    stats = engine.fit_statistics()
    fit_cells = page.cells["fit"]
    assert fit_cells[fit_cells.index("df = dc − de") + 1] == str(stats.df) == str(dims.dc - dims.de)
    assert fit_cells[fit_cells.index("df = dc − ds") + 1] == str(stats.df_standard)
    # every criterion on both scales
    cells = page.cells["selection"]
    for name, c in ((name, SCORES[name]) for name in FIT_SCORES):  # a lone fit has no sBIC
        row = cells.index(c.label)
        assert cells[row + 2] == f"{engine.score(name):.4f}" and cells[row + 3] == f"{-2 * engine.score(name):.4f}"
    # one profile panel per item, bars = categories x classes, none joins items
    panels = page.svgs("profile of ")
    assert [p["aria-label"] for p in panels] == ["profile of A", "profile of B", "profile of C", "profile of D"]
    assert len([t for t, a in page.tags if t == "rect" and a.get("fill", "").startswith("#")]) >= 4 * 2 * 2
    assert not [t for t, _ in page.tags if t in ("polyline", "path")]
    shares = engine.class_shares()
    assert all(f"{100 * s:.1f} %" in page.sections["profiles"] for s in shares["share"])
    # the bivariate residuals with the value in each cell
    bvr = engine.bivariate_residuals()
    assert f"{bvr.loc['A', 'B']:.2f}" in page.cells["residuals"]
    assert page.cells["residuals"].count(f"{bvr.loc['A', 'B']:.2f}") == 2  # both halves of the table
    # the tree: the leaves read the columns A..D
    assert {"A : 2", "B : 2", "C : 2", "D : 2", "H1 : 2"} <= {
        t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", out.read_text())
    }


def test_hlc_figure2_report_shows_the_local_table_and_corollary_4_1():
    data = datasets.load("hlc-figure2")
    model = "5(3(2,2),2,3(2,2))"
    result = fit(data, model, seed=0, restarts=2, warn=False)
    page = Page(report_html(result, data=data, command=command_line("fit", "hlc-figure2", {"--model": model})))
    dims = dimensions(parse_model(model))
    assert (dims.ds, dims.de, dims.dc) == (41, 23, 31)
    cells = page.cells["model"]
    assert cells[cells.index("de (effective dimension)") + 1].startswith("23 (proven")
    assert cells[cells.index("ds (standard dimension)") + 1] == "41"
    for row in dims.local:  # hidden, local LC, ds, de, dc, dp, db, binding, ds - de
        i = cells.index(row.hidden)
        assert cells[i : i + 9] == [
            row.hidden,
            row.lc,
            *map(str, (row.ds, row.de, row.dc, row.dp, row.db)),
            row.binding,
            str(row.deficit),
        ]
    assert "sum of the local deficits = 18" in page.sections["model"]
    assert f"{result.loglik:.4f}" in page.sections["fit"]
    assert "effdim fit hlc-figure2 --model '5(3(2,2),2,3(2,2))'" in page.sections["command"]
    # profiles for every hidden node, each with a panel per item
    assert len(page.svgs("profile of ")) == 3 * 5 and len(page.svgs("class shares of ")) == 3


def test_sweep_report_marks_every_criterions_pick(tmp_path):
    out = tmp_path / "sweep.html"
    assert (
        main(
            [
                "sweep",
                "stouffer-toby",
                "--seed",
                "5",
                "--quiet",
                "--pick",
                "cs+",
                "--cs-prior",
                "k2",
                "--past-saturation",
                "--report",
                str(out),
            ]
        )
        == 0
    )
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    results = sweep(datasets.load("stouffer-toby"), seed=5, cs_prior="k2", until_saturated=False)
    assert "--past-saturation" in page.sections["command"]  # the command sweeps what was swept
    cells = page.cells["selection"]
    width = 1 + len(results) + 1  # criterion, one column per cardinality, pick
    for name, c in SCORES.items():
        row = cells[cells.index(c.label) : cells.index(c.label) + width]
        assert row[-1] == str(best(results, name).card), name
    assert text.count('class="num pick"') == len(SCORES)
    chosen = best(results, "cs+")
    assert chosen.card == 8  # under K2, CS+ runs to the top (docs/experiments.md): the report says why
    assert "caveat, CS+: largest regular cardinality; saturated (de = dc = 15)" in page.sections["selection"]
    assert f"The underlined column is the CS+ pick, detailed below: {chosen.model}" in page.sections["selection"]
    assert f"{chosen.loglik:.4f}" in page.sections["fit"]


def test_climb_report_lists_the_path_and_its_pick():
    data = datasets.load("hlc-figure2")
    climb = hill_climb(data, "5(3(2,2),2,3(2,2))", "bic+", seed=1, restarts=2)
    page = Page(report_html(climb.best, data=data, climb=climb, pick="bic+"))
    assert "Hill climbing by BIC+" in page.sections["selection"]
    cells = page.cells["selection"]
    assert cells[: len(climb.path) + 2] == [
        "criterion",
        *[f"step {i}{f.model}" for i, f in enumerate(climb.path)],
        "pick",
    ]
    assert cells[cells.index("BIC+") + len(climb.path) + 1] == f"step {len(climb.path) - 1}"


def test_everything_the_user_supplied_is_escaped(tmp_path):
    csv = tmp_path / "a&b<i>.csv"
    csv.write_text(
        f'"{XSS}",q2,<script>alert(2)</script>\n'
        + "\n".join(f"{'<b>yes</b>' if i % 3 else 'no'},{i % 2},{(i // 2) % 2}" for i in range(60))
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "x.html"
    assert main(["fit", str(csv), "--model", "2:2,2,2", "--seed", "1", "--report", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    assert not [t for t, _ in page.tags if t in ("img", "script", "i")]
    assert not [k for _, attrs in page.tags for k in attrs if k.startswith("on")]
    assert "<b>yes</b>" not in text and "<script" not in text.lower()
    # ... and shown as text: header, category label, file name, and the command
    assert XSS in page.sections["data"] and "<b>yes</b> (" in page.sections["data"]
    assert "<script>alert(2)</script>" in page.sections["data"]
    assert f"profile of {XSS}" in [a["aria-label"] for a in page.svgs("profile of ")]
    assert XSS in page.sections["residuals"] and "a&b<i>.csv" in page.sections["command"]


def test_the_report_loads_nothing(stouffer_toby_fit):
    text = report_html(stouffer_toby_fit)
    page = Page(text)
    assert not [t for t, _ in page.tags if t in ("script", "link", "img", "iframe", "object", "embed")]
    assert all(a["href"].startswith("#") for t, a in page.tags if "href" in a)
    assert not [a for t, a in page.tags if "src" in a]
    assert set(re.findall(r"https?://[^\"'\s<>)]+", text)) == {"http://www.w3.org/2000/svg"}  # a name, not a fetch
    assert "@import" not in text and "url(" not in text and "@font-face" not in text
    csp = next(a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp.startswith("default-src 'none'")


def test_the_reports_command_reproduces_it_without_a_seed_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["fit", "stouffer-toby", "--model", "3:2,2,2,2", "--restarts", "2", "--report", "one.html"]) == 0
    text = (tmp_path / "one.html").read_text()
    first = Page(text)
    command = html.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', text).group(1))
    words = shlex.split(command)
    assert words[:2] == ["effdim", "fit"] and "--seed" in words
    words[words.index("--report") + 1] = "two.html"
    assert main(words[1:]) == 0
    second = Page((tmp_path / "two.html").read_text())
    for section in ("data", "model", "selection", "profiles", "fit", "residuals"):
        assert first.sections[section] == second.sections[section], section


def test_the_command_keeps_how_the_file_was_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = ["Frage 1;Frage 2;Größe"] + [
        f"{'ja' if i % 3 else 'nein'};{i % 2};{'groß' if i % 5 else 'klein'}" for i in range(80)
    ]
    (tmp_path / "umfrage.csv").write_bytes("\n".join(rows).encode("latin-1"))
    assert (
        main(
            [
                "fit",
                "umfrage.csv",
                "--model",
                "2:2,2,2",
                "--sep",
                "semicolon",
                "--encoding",
                "latin-1",
                "--seed",
                "4",
                "--quiet",
                "--report",
                "one.html",
            ]
        )
        == 0
    )
    text = (tmp_path / "one.html").read_text(encoding="utf-8")
    command = html.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', text).group(1))
    assert "--sep semicolon --encoding latin-1" in command
    assert "Größe" in Page(text).sections["data"] and "groß (" in Page(text).sections["data"]
    words = shlex.split(command)
    words[words.index("--report") + 1] = "two.html"
    assert main(words[1:]) == 0
    again = Page((tmp_path / "two.html").read_text(encoding="utf-8"))
    assert again.sections["profiles"] == Page(text).sections["profiles"]


def test_a_report_into_a_missing_folder_is_refused_before_any_work(tmp_path, capsys):
    target = tmp_path / "nowhere" / "r.html"
    assert main(["sweep", "stouffer-toby", "--report", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--report" in err[0] and "does not exist" in err[0]


def test_report_needs_a_fit_with_its_data(stouffer_toby_fit):
    from effdim.errors import InvalidArgument

    result = stouffer_toby_fit
    with pytest.raises(InvalidArgument, match="sweep or a hill climb"):
        report_html(result, sweep=[result], climb=object())
    with pytest.raises(InvalidArgument, match="unknown criterion"):
        report_html(result, pick="bic++")


def test_write_report_writes_utf8(tmp_path, stouffer_toby_fit):
    path = write_report(tmp_path / "r.html", stouffer_toby_fit, command="effdim fit stouffer-toby --model 2:2,2,2,2")
    assert path.read_bytes().startswith(b"<!DOCTYPE html>") and "−" in path.read_text(encoding="utf-8")


def test_report_and_charts_import_no_plotting_library():
    """The engine stays Panel-, Bokeh- and HoloViews-free: the report draws its SVG itself."""
    code = (
        "import sys; import effdim.report, effdim.cli, effdim.treedraw, effdim.charts\n"
        "from effdim import datasets; from effdim import fit\n"
        "effdim.report.report_html(fit(datasets.load('stouffer-toby'), '2:2,2,2,2', seed=0, warn=False))\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('panel', 'bokeh', 'holoviews'))\n"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_profile_panel_draws_a_bar_per_class_and_category_scaled_to_its_probability():
    import xml.etree.ElementTree as ET

    from effdim.charts import CLASS_COLORS, profile_panel, share_bars

    probs = [[0.7, 0.2, 0.1], [0.25, 0.25, 0.5]]
    categories = ["a very long category label", "agree", "neutral"]
    svg = ET.fromstring(profile_panel("q1", categories, probs, [1, 2], "X"))
    ns = "{http://www.w3.org/2000/svg}"
    bars = list(svg.iter(f"{ns}rect"))
    assert len(bars) == 2 * 3
    heights = [float(r.get("height")) for r in bars]  # per category, class 1's bar then class 2's
    order = [(c, j) for j in range(3) for c in range(2)]
    for (c, j), h in zip(order, heights):
        assert h == pytest.approx(heights[0] * probs[c][j] / probs[0][0], abs=0.1)
    assert [r.get("fill") for r in bars[:2]] == list(CLASS_COLORS[:2])
    # a long label is turned and shortened, given in full in its tooltip, and its far end stays in the drawing
    label = next(t for t in svg.iter(f"{ns}text") if t.get("class") == "category")
    assert label.find(f"{ns}title").text == categories[0] and "rotate(-35" in label.get("transform")
    shown = "".join(label.itertext())[len(categories[0]) :]
    assert shown == "a very long categ…"
    assert float(label.get("x")) - len(shown) * 6.8 * 0.82 >= 0  # cos 35° of its length, leftwards
    # labels that fit when wrapped at spaces are wrapped, not turned; a long item name takes two lines and the rest
    # is in its tooltip
    item = "I would recommend this organisation as a place to work to my friends and to my family"
    answers = ["Disagree", "Neither agree nor disagree", "Agree"]
    svg = ET.fromstring(profile_panel(item, answers, [[0.2, 0.3, 0.5]] * 3, [1, 2, 3], "X"))
    labels = [t for t in svg.iter(f"{ns}text") if t.get("class") == "category"]
    assert [[span.text for span in t.iter(f"{ns}tspan")] for t in labels] == [
        ["Disagree"],
        ["Neither", "agree nor", "disagree"],
        ["Agree"],
    ]
    assert not any(t.get("transform") for t in labels)
    (title,) = [t for t in svg.iter(f"{ns}text") if t.get("class") == "panel-title"]
    lines = [span.text for span in title.iter(f"{ns}tspan")]
    assert len(lines) == 2 and lines[-1].endswith("…") and title.find(f"{ns}title").text == item
    assert item.startswith(" ".join(lines).rstrip("…"))
    shares = ET.fromstring(share_bars("X", [1, 2], [0.75, 0.25]))
    widths = [float(r.get("width")) for r in shares.iter(f"{ns}rect") if r.get("fill") != "none"]
    assert widths[0] == pytest.approx(3 * widths[1])


def test_a_bootstrap_p_value_reaches_the_report_and_its_command(tmp_path, capsys):
    out = tmp_path / "b.html"
    assert (
        main(
            [
                "fit",
                "stouffer-toby",
                "--model",
                "2:2,2,2,2",
                "--bootstrap",
                "4",
                "--workers",
                "1",
                "--seed",
                "2",
                "--report",
                str(out),
            ]
        )
        == 0
    )
    printed = re.search(r"bootstrap p\(G2\) ([0-9.]+) \(B = 4\)", capsys.readouterr().out).group(1)
    page = Page(out.read_text(encoding="utf-8"))
    cells = page.cells["fit"]
    assert cells[cells.index("bootstrap p(G²)") + 1] == printed
    assert "--bootstrap 4" in page.sections["command"]
