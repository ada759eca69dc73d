"""Caches are witnesses: a fabricated cached table cell or rho witness is re-checked, discarded and recomputed."""

import glob
import json
import os

import pytest

from certify.dpsgd import tables as BT
from certify.dpsgd.accountant import certify_rho, clear_memo
from certify.dpsgd.problem import Problem
from certify.balls import fmpq
from certify.verify import verify_text

ROWS = [{"p": "0.01", "sigma": "2", "T": "1000", "delta": "1e-6"}]


@pytest.mark.slow  # about 2 CPU s: recomputes a table cell
def test_fabricated_cell_is_rechecked_and_replaced(tmp_path, capsys):
    cache = str(tmp_path)
    first = BT.compute_all(ROWS, cache, jobs=1, with_lossless=False)
    cell = first["0.01|2"]["1000|1e-6"]
    path = os.path.join(cache, BT.CACHE_FILE)
    doc = json.load(open(path))
    assert doc["0.01|2"]["1000|1e-6"] == cell
    # a forger edits the cached cell so that it prints as some other value
    doc["0.01|2"]["1000|1e-6"]["ours"] = ["1", "1"]
    doc["0.01|2"]["1000|1e-6"]["wang"] = ["3/2", "3/2"]
    json.dump(doc, open(path, "w"))
    capsys.readouterr()
    clear_memo()
    again = BT.compute_all(ROWS, cache, jobs=1, with_lossless=False)
    err = capsys.readouterr().err
    assert "failed its re-check" in err and "ours" in err and "wang" in err
    assert again["0.01|2"]["1000|1e-6"] == cell
    assert json.load(open(path))["0.01|2"]["1000|1e-6"] == cell  # the cache is repaired
    # an untouched cache re-checks silently and gives the same cells
    capsys.readouterr()
    clear_memo()
    assert BT.compute_all(ROWS, cache, jobs=1, with_lossless=False) == again
    assert "warning" not in capsys.readouterr().err


def test_tampered_rho_cache_is_rejected_and_recomputed(tmp_path, capsys):
    prob = Problem(8, fmpq(1, 100), fmpq(2))
    clear_memo()
    a = certify_rho(prob, cache_dir=str(tmp_path))
    (path,) = glob.glob(os.path.join(str(tmp_path), "rho-*.json"))
    w = json.load(open(path))
    w["leaves"][0][1] = "1/1000000"  # the leaves no longer partition [0, 1/2]
    json.dump(w, open(path, "w"))
    clear_memo()
    capsys.readouterr()
    b = certify_rho(prob, cache_dir=str(tmp_path))
    assert "cached rho witness" in capsys.readouterr().err
    assert b.source == "search"
    assert b.certificate.dumps() == a.certificate.dumps()
    assert verify_text(b.certificate.dumps()).ok
