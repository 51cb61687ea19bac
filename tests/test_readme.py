"""The README and docs/ stay true: the quick start runs on a user's CSV, the commands match CI, links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: The README is a user's first ten minutes; tables and logs belong in docs/.
README_MAX_LINES = 250


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def _survey_csv(path: Path) -> None:
    """A survey of 300 respondents on five yes/no items from two classes, as a user's own file."""
    rng = np.random.default_rng(7)
    engaged = rng.random(300) < 0.4
    items = {}
    for item in ("trust", "vote", "donate", "volunteer", "petition"):
        p_yes = np.where(engaged, 0.85, 0.2)
        items[item] = np.where(rng.random(300) < p_yes, "yes", "no")
    pd.DataFrame(items).to_csv(path, index=False)


def test_the_quick_start_fits_a_users_own_csv(tmp_path, monkeypatch, capsys):
    (quick_start,) = [block for block in _blocks(README.read_text(encoding="utf-8"), "python") if "survey.csv" in block]
    _survey_csv(tmp_path / "survey.csv")
    monkeypatch.chdir(tmp_path)
    exec(compile(quick_start, "README.md quick start", "exec"), {})
    out = capsys.readouterr().out
    assert re.search(r"^1 classes: BIC\+ -\d+\.\d+ ds 5 de 5$", out, flags=re.M), out
    assert re.search(r"^4 classes: BIC\+ ", out, flags=re.M), out
    # the class shares and the profiles, in the file's own column names and labels
    assert "share" in out and "probability" in out
    assert "petition" in out and "yes" in out


def test_the_readme_is_short_and_its_test_command_is_the_one_ci_runs():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    ci_command = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci_command in _blocks(text, "bash")[1].splitlines()
    assert "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/effdim app" in _blocks(text, "bash")[0]


def test_the_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    pages = {page.name for page in DOCS.glob("*.md")} - {"README.md"}
    assert pages == listed


def test_every_relative_link_of_the_readme_and_docs_resolves():
    broken = []
    for page in [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken


def test_what_an_lca_paper_reports_runs_as_written(capsys):
    """The README's second example: the enumeration table, standard errors, a regression and a distal outcome."""
    (example,) = [block for block in _blocks(README.read_text(encoding="utf-8"), "python") if "covariates=" in block]
    exec(compile(example, "README.md: what an LCA paper reports", "exec"), {})
    out = capsys.readouterr().out
    assert re.search(r"^\| 3 \| -21311\.\d\d \| 110 \| 110 \|", out, flags=re.M), out  # k, LL, ds, de
    assert "sBIC" in out and "VLMR p" in out
    profile_row = r"MORALG\s+X\s+1\.0\s+1 Extremely well\s+0\.1057\s+0\.0134\s+0\.0822\s+0\.1350\b"
    assert re.search(profile_row, out), out  # probability, SE, interval
    assert re.search(r"PARTY\s+2\s+0\.7\d+\s+0\.05\d+", out), out  # a coefficient with its SE
    assert re.search(r"^\s*\d+\s+3\s+1\s+0\.98\d+", out, flags=re.M), out  # class 3 votes 1 (BCH)
