"""`certify tables --paper bok`: the certified lossless column on the sweep executor (issues 13 item 6, 14 item 2).

Fast: a few cells of one (p, sigma) with small T go through the executor (two local workers) and are
compared with the standalone `certify.pld.tables.lossless_group`, then classified. The full cold
regeneration (about 10 minutes on two cores) is not a test: `certify tables --check` is run by hand
(NOTES-tables.md gives its time and memory).
"""

import pytest

from certify.balls import exact, fmpq
from certify.dpsgd import tables as BT
from certify.pld.tables import classify as pld_classify
from certify.pld.tables import lossless_group

# published rows of Table 1 (delta 1e-6, p 0.0025, sigma 8), two small T, with their printed lossless values
ROWS = [
    {"table": "1", "delta": "1e-6", "p": "0.0025", "sigma": "8", "T": "250", "lossless": "0.04"},
    {"table": "1", "delta": "1e-6", "p": "0.0025", "sigma": "8", "T": "500", "lossless": "0.05"},
]


def test_lossless_tasks_on_the_executor_match_the_standalone_group():
    tasks = BT.lossless_tasks(ROWS)
    assert tasks == [("lossless", "0.0025", "8", [(250, "1e-6"), (500, "1e-6")], "1e-4")]  # one task: powers shared
    (res,) = BT.execute(tasks, jobs=2, executor_kind="local")
    ref = lossless_group("0.0025", "8", "1e-6", [250, 500])
    assert res["kind"] == "lossless" and res["group"] == "0.0025|8"
    for T in (250, 500):
        lo, up = (exact(x) for x in res["cells"][f"{T}|1e-6"])
        assert (lo, up) == ref[T]  # the same plan, the same exact enclosure
        assert 0 < lo < up and up / lo - 1 < fmpq(1, 100)  # tight at grid 1e-4
    u = res["usage"]
    assert u["maxrss_mib"] > 0 and u["cpu_s"] >= 0 and isinstance(u["pid"], int)
    # classified as pld/tables.py defines it; the printed values are confirmed
    results = {"0.0025|8": {k: {"lossless": v} for k, v in res["cells"].items()}}
    for r in ROWS:
        enc, verdict, dist = BT.classify_lossless(results["0.0025|8"][f"{r['T']}|1e-6"], r["lossless"])
        lo, up = ref[int(r["T"])]
        assert verdict == pld_classify(r["lossless"], lo, up) == "confirmed" and dist == 0
        assert enc.startswith("[") and "e-2" in enc


def test_shared_plan_across_deltas_is_sound_and_as_tight():
    """One (p, sigma) task serves both deltas with the plan of the smaller one: same enclosure as each
    delta's own plan here, and in any case overlapping it (both contain the exact eps)."""
    cells = [(250, "1e-6"), (500, "1e-8")]
    (res,) = BT.execute([("lossless", "0.0025", "8", cells, "1e-4")], jobs=1)
    for T, d in cells:
        lo, up = (exact(x) for x in res["cells"][f"{T}|{d}"])
        rlo, rup = lossless_group("0.0025", "8", d, [T])[T]
        assert lo <= rup and rlo <= up
        assert up - lo <= (rup - rlo) * fmpq(101, 100)


def test_lossless_classification_and_counts():
    cell = {"lossless": ["1765/1000", "1766/1000"]}
    assert BT.classify_lossless(cell, "1.77")[1] == "confirmed"
    v, d = BT.classify_lossless(cell, "1.80")[1:]
    assert v == "above" and d == exact("1.795") - exact("1.766")
    v, d = BT.classify_lossless(cell, "1.70")[1:]
    assert v == "below" and d == exact("1.765") - exact("1.705")
    assert BT.classify_lossless({"lossless": ["21", "22"]}, ">=20")[1] == "confirmed"
    assert BT.classify_lossless({"lossless": ["19", "22"]}, ">=20")[1:] == ("below", fmpq(1))
    assert BT.classify_lossless({"lossless": None}, "1.77")[1] == "undecided"
    assert BT.classify_lossless({"lossless": "1.7700"}, "1.77")[1] == "undecided"  # a float estimate is not certified
    rows = [{f"{c}_verdict": "confirmed" for c in BT.COLUMNS} for _ in range(3)]
    rows[1]["lossless_verdict"] = "above"
    rows[2]["lossless_verdict"] = "below"
    c = BT.counts(rows)
    assert c["lossless"] == {"confirmed": 1, "mismatch": 2, "above": 1, "below": 1, "undecided": 0}
    assert c["ours"] == {"confirmed": 3, "mismatch": 0}
    assert BT.count_text(c["lossless"]) == "1 confirmed, 2 mismatch (1 above, 1 below, 0 undecided)"


def test_ge20_rows_need_the_first_T_only():
    rows = [
        {"table": "2", "delta": "1e-6", "p": "0.01", "sigma": "1", "T": ">=2000"},
        {"table": "2", "delta": "1e-6", "p": "0.01", "sigma": "1", "T": "1000"},
    ]
    assert BT.lossless_queries(rows) == {("0.01", "1"): {(2000, "1e-6"), (1000, "1e-6")}}
    # the Rényi columns still need every grid T from T0 on
    assert BT.queries(rows)[("0.01", "1")] == {(T, "1e-6") for T in BT.T_GRID if T >= 2000} | {(1000, "1e-6")}


def test_task_cost_puts_big_groups_first():
    rows = [{"table": "3", "delta": "1e-6", "p": p, "sigma": s, "T": "250"} for p, s in (("0.0025", "8"), ("0.04", "1"))]
    tasks = BT.lossless_tasks(rows)
    costs = [BT.task_cost(t) for t in tasks]
    assert costs[1] > costs[0]  # p = 0.04, sigma = 1 is the bigger one
    assert BT.task_cost(("renyi", "0.01", "2", [], None, False, {})) > 0


@pytest.mark.parametrize("text", ["0.04", ">=20"])
def test_standalone_and_table_classifiers_agree(text):
    lo, up = exact("0.0372"), exact("0.0375")
    assert BT.classify_lossless({"lossless": [str(lo), str(up)]}, text)[1] == pld_classify(text, lo, up)


@pytest.mark.slow  # a 5 s connection timeout
def test_unreachable_scheduler_is_bad_input_and_writes_nothing(tmp_path):
    import os
    import socket
    import subprocess
    import sys
    import time

    from certify.sweep.executor import dask_available

    if not dask_available():
        pytest.skip("dask is not installed")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "published").mkdir()
    src = os.path.join(root, "tables", "published", BT.PUBLISHED)
    with open(src) as fh:
        lines = fh.read().splitlines()
    (tmp_path / "published" / BT.PUBLISHED).write_text("\n".join(lines[:3]) + "\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = time.perf_counter()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "certify",
            "tables",
            "--paper",
            "bok",
            "--tables-dir",
            str(tmp_path),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--scheduler",
            f"tcp://127.0.0.1:{port}",
        ],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
    )
    assert r.returncode == 2 and "certify: error: --scheduler: cannot reach the Dask scheduler" in r.stderr
    assert time.perf_counter() - t < 15
    assert sorted(os.listdir(tmp_path)) == ["published"]
