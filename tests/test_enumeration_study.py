"""The class-enumeration study (effdim.experiments.enumeration) and ``effdim experiment enumeration --quick``."""

import json

import numpy as np
import pandas as pd
import pytest

from effdim.errors import EffdimError
from effdim.experiments import build_study
from effdim.experiments.enumeration import DESIGNS, PICKERS, _ks_uniform, vignette_parameters
from effdim.model import HLCModel
from effdim.scores import model_dimensions


def test_the_vignette_design_is_the_packages_simulation():
    params = vignette_parameters(HLCModel.parse(DESIGNS["vignette"]))
    p = np.array([params.cpts[o][:, 0] for o in params.model.observed])  # P(item = 1 | class), as the vignette's P
    p1, p2, p3 = 0.85, 0.1, 0.2
    expected = [
        [p1, p2, p2, p2],
        [p1, p3, p3, p3],
        [p2, p1, p2, p2],
        [p3, p1, p3, p3],
        [p2, p2, p1, p2],
        [p3, p3, p1, p3],
        [p2, p2, p2, p1],
        [p3, p3, p3, p1],
    ]
    assert p == pytest.approx(np.array(expected)) and params.cpts[params.model.root] == pytest.approx([0.25] * 4)


def test_the_designs_are_what_the_docs_say():
    dims = {name: model_dimensions(HLCModel.parse(text)) for name, text in DESIGNS.items()}
    assert dims["3:2,2,2,2"] == (14, 13) and dims["4:3,3,3"] == (27, 25) and dims["4:2,3,5"] == (31, 27)
    assert dims["3:2,3,4,5,3,2"] == (41, 41)
    study = build_study("enumeration")
    assert study.fitted_cards("vignette") == [1, 2, 3, 4, 5, 6] and study.fitted_cards("3:2,2,2,2") == [1, 2, 3, 4, 5]
    assert len(study.jobs()) == len(DESIGNS) * study.replicates * len(study.sizes)


def test_bad_settings_are_refused_in_words():
    with pytest.raises(EffdimError, match="unknown design"):
        build_study("enumeration", designs=("5:2,2",))
    with pytest.raises(EffdimError, match="row_concentration"):
        build_study("enumeration", row_concentration=0)


def test_the_ks_distance_of_uniform_quantiles_is_small_and_of_zeros_is_one():
    assert _ks_uniform(np.linspace(0.005, 0.995, 100)) == pytest.approx(0.005)
    assert _ks_uniform(np.zeros(10)) == pytest.approx(1.0)


def test_the_quick_study_runs_resumes_and_writes_its_tables(cli, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    argv = ["experiment", "enumeration", "--quick", "--design", "vignette", "--design", "4:2,3,5"]
    argv += ["--workers", "1", "--quiet", "--cache-dir", cache, "--out", out]
    status, text, err = cli(*argv)
    assert status == 0, err
    assert "**vignette** (true k = 4" in text and "Under the null" in text
    summary = pd.read_csv(out / "enumeration_summary.csv")
    assert set(summary["picker"]) == set(PICKERS) and set(summary["design"]) == {"vignette", "4:2,3,5"}
    assert summary["true_share"].between(0, 1).all()
    calibration = pd.read_csv(out / "enumeration_calibration.csv")
    assert set(calibration["test"]) == {"blrt", "vlmr", "almr"} and (calibration["tests"] == 1).all()
    fits = pd.read_csv(out / "enumeration_fits.csv")
    vignette = fits[fits["design"] == "vignette"]
    assert list(vignette["k"]) == [1, 2, 3, 4, 5, 6]
    assert vignette["blrt_p"].iloc[1:5].notna().all() and vignette["blrt_p"].iloc[5:].isna().all()  # up to k + 1
    status, again, _ = cli(*argv[:-2], "--out", tmp_path / "again", "--json")
    assert status == 0 and json.loads(again)["run"]["cached"] == 2
