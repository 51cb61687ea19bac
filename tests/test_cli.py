"""The effdim command: output, JSON, and one-line errors with exit status 2."""

import json
import subprocess
import sys

import pytest


def test_dims_table(cli):
    status, out, _ = cli("dims", "5(3(2,2),2,3(2,2))")
    assert status == 0
    assert "ds 41" in out and "de 23 (proven; Corollary 4.1 and direct rank)" in out
    assert "3:5,2,2" in out and "5:3,3,2" in out
    assert "sum of local deficits 18" in out


def test_dims_json_lc(cli):
    status, out, _ = cli("dims", "3:2,2,2,2", "--json")
    data = json.loads(out)
    assert status == 0
    assert (data["ds"], data["de"], data["dc"], data["dp"], data["db"]) == (14, 13, 15, 14, 14)
    assert data["de_status"] == "probable"
    assert data["local"][0]["binding"] == "ds"


def test_dims_reads_json_files(cli, tmp_path):
    from effdim import model_to_json, parse_model

    path = tmp_path / "model.json"
    path.write_text(json.dumps(model_to_json(parse_model("5(3(2,2),2,3(2,2))"))))
    status, out, _ = cli("dims", str(path), "--json")
    assert status == 0 and json.loads(out)["de"] == 23


def test_regularize_json(cli):
    status, out, _ = cli("regularize", "4(3(2,2),3(2,2))", "--json")
    data = json.loads(out)
    assert status == 0
    assert [s["rule"] for s in data["steps"]] == ["shrink", "remove"]
    assert data["regular_model"] == "H2:3(H3:3(O3:2,O4:2),O1:2,O2:2)"


def test_gaps_lists_models_found_by_computation(cli):
    status, out, _ = cli("gaps", "--max-observed", "4", "--max-card", "3", "--json")
    assert status == 0
    assert {"3:2,2,2,2", "4:3,3,3"} <= {g["model"] for g in json.loads(out)}


@pytest.mark.parametrize(
    "argv, culprit",
    [
        (["dims", "5(3(2,,2),2)"], "position 7"),
        (["dims", "missing.json"], "missing.json"),
        (["dims", "3:1,2"], "'O1'"),
        (["dims"], "model"),
        (["frobnicate"], "frobnicate"),
        (["dims", "3:2,2,2", "--repeats", "0"], "--repeats"),
        (["sweep", "stouffer-toby", "--cs-prior", "dirichlet"], "unknown CS prior 'dirichlet'"),
        (
            ["fit", "stouffer-toby", "--model", "2:2,2,2,2", "--prior", "1", "--cs-prior", "bdeu:1"],
            "must be k2:2, not bdeu:1",
        ),
        (["experiment", "lc", "--cs-prior", "bdeu:0"], "equivalent sample size"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, argv, culprit):
    status, out, err = cli(*argv)
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and culprit in err
    assert "Traceback" not in err


def test_installed_command_exits_2_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "effdim.cli", "dims", "5((2,2)"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_map_joins_model_leaves_to_data_columns(cli):
    argv = ["fit", "stouffer-toby", "--model", "X:2(P:2,Q:2,R:2,S:2)", "--quiet", "--json", "--seed", "0"]
    status, out, err = cli(*argv)
    assert status == 2 and err.endswith("name the leaves after the columns, or map them with --map LEAF=COLUMN\n")
    assert "mapping=" not in err  # the Python argument means nothing on the command line
    status, out, _ = cli(*argv, "--map", "P=A", "--map", "Q=B", "--map", "R=C", "--map", "S=D")
    assert status == 0 and json.loads(out)["n"] == 216
    status, _, err = cli(*argv, "--map", "P")
    assert status == 2 and "LEAF=COLUMN" in err


def test_sweep_names_the_cs_prior_and_flags_saturated_picks(cli):
    argv = ["sweep", "stouffer-toby", "--seed", "0", "--restarts", "2", "--quiet", "--cs-prior", "k2"]
    status, out, _ = cli(*argv, "--past-saturation")
    assert status == 0
    assert "CS and CS+ use the Dirichlet prior K2, alpha 1 (--cs-prior)" in out
    assert "best by CS+   |X| = 8   [largest regular cardinality; saturated (de = dc = 15)]" in out
    assert "best by BIC   |X| = 2\n" in out
    status, out, _ = cli("sweep", "stouffer-toby", "--seed", "0", "--restarts", "2", "--quiet")
    assert "BDeu, ESS 1" in out and "best by CS+   |X| = 2\n" in out


def test_sweep_until_saturated_stops_where_de_reaches_dc(cli):
    for flag in ("--until-saturated", "--quiet"):  # the flag or not: stopping there is the default
        status, out, _ = cli("sweep", "stouffer-toby", "--seed", "0", "--restarts", "2", "--quiet", flag)
        assert status == 0
        assert "sweep of |X| = 1..4 in" in out  # |X| = 4 is the first with de = dc = 15 (not 8, the regular top)
    status, _, err = cli("sweep", "stouffer-toby", "--until-saturated", "--past-saturation")
    assert status == 2 and "not allowed with argument" in err


def test_dims_of_a_huge_model_gives_the_closed_forms_and_says_why_not_de(cli):
    status, out, err = cli("dims", "3:1000000000,2")
    assert status == 0 and not err
    assert "ds 3000000002   de ? (not computed)   dc 1999999999" in out
    assert "more than the limit of 2.0 GiB" in out and "sketch" not in out
    status, out, _ = cli("dims", "--json", "61:50,50,50", "--max-memory-mb", "100")
    data = json.loads(out)
    assert data["de"] is None and data["ds"] == 9027 and "100.0 MiB" in data["de_method"]


@pytest.mark.parametrize(
    "text, words",
    [
        ("workers = 0\n", "limit 'workers' must be at least 1, got 0"),
        ("wrkers = 1\n", "unknown limit 'wrkers'"),
        ("time_limit = [\n", "is not valid TOML"),
    ],
)
def test_app_refuses_a_bad_limits_file_in_one_line(cli, tmp_path, text, words):
    path = tmp_path / "limits.toml"
    path.write_text(text)
    status, out, err = cli("app", "--config", str(path), "--no-show")
    assert status == 2 and words in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "name, text, words",
    [
        ("limits.json", "[1, 2]", "must hold a table of limits"),
        ("limits.toml", "wrkers = 1\n", "unknown limit 'wrkers'"),
        ("limits.json", "{", "is not valid JSON"),
        ("missing.toml", None, "cannot read limits file"),
    ],
)
def test_a_bad_limits_file_is_refused_as_an_effdim_error(tmp_path, name, text, words):
    """One exception family: a bare ValueError here was caught by the CLI only, by patching over it."""
    from effdim.errors import EffdimError
    from effdim_app.config import load_limits

    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(EffdimError, match=words):
        load_limits(path)


def test_limits_from_json_file_and_options(tmp_path):
    from effdim_app.config import load_limits

    path = tmp_path / "limits.json"
    path.write_text('{"max_nodes": 50, "time_limit": 5}')
    limits = load_limits(path, max_nodes=60, workers=None)
    assert (limits.max_nodes, limits.time_limit, limits.workers) == (60, 5, load_limits().workers)


def test_the_command_line_starts_without_the_engines_heavy_libraries():
    """``effdim --version``, ``--help`` and ``dims`` start in about half a second: building the parser imports
    neither pandas nor SciPy nor the EM engine and the structure search (each command imports what it needs when
    it runs; together they were half a second more of every command's start)."""
    heavy = ["pandas", "scipy", "effdim.em", "effdim.structure", "effdim.data"]
    code = f"import sys; from effdim.cli import build_parser; build_parser(); print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"imported while the parser was built: {out.strip()}"
