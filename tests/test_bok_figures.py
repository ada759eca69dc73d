"""Figures 2-3 of Bok (2026): the paper's printed values drawn from ``--tables-dir`` beside ours, and the folder
checked before any cell is computed."""

from __future__ import annotations

import os
import time

import pytest

from test_hostile import ROOT, run_inprocess

pytest.importorskip("matplotlib")

#: Table 2 of Bok (2026), delta = 1e-6, p = 0.01, sigma = 2, column "ours" as printed (T = 64000 is printed ">= 20")
TABLE2_SIGMA2 = {250: 1.77, 500: 1.99, 1000: 2.44, 2000: 3.32, 4000: 4.75, 8000: 7.00, 16000: 10.48, 32000: 15.83}
#: Table 2, sigma = 6, column "ours" as printed
TABLE2_SIGMA6 = {250: 0.24, 500: 0.34, 1000: 0.48, 2000: 0.69, 4000: 0.99, 8000: 1.44, 16000: 2.10, 32000: 3.07, 64000: 4.52}


def test_figure2_draws_the_printed_values_of_table2(monkeypatch, tmp_path):
    from certify.dpsgd import plots

    def fake_rows(p, sigma, delta, tables_dir, cache_dir):  # no cell computed: only the overlay is under test
        Ts = [250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000]
        return Ts, {k: [1.0] * len(Ts) for k in ("ours", "birrell", "wang", "lossless")}

    figs = []
    monkeypatch.setattr(plots, "_eps_rows", fake_rows)
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig))
    monkeypatch.setattr(plots._plt(), "close", lambda fig: None)
    plots.plot(2, str(tmp_path), os.path.join(ROOT, "tables"), None)
    (fig,) = figs
    drawn = []
    for ax in fig.axes:
        (line,) = [x for x in ax.get_lines() if x.get_label() == "Bok (2026), printed"]
        drawn.append(dict(zip(line.get_xdata(), line.get_ydata())))
    assert drawn == [TABLE2_SIGMA2, TABLE2_SIGMA6]


def test_plot_refuses_a_tables_dir_without_published_before_any_work(tmp_path):
    (tmp_path / "empty").mkdir()
    t0 = time.process_time()
    rc, out, err = run_inprocess(["plot", "--figure", "2", "--tables-dir", str(tmp_path / "empty"), "--out-dir", str(tmp_path / "f")], seconds=30)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "--tables-dir" in err, (rc, out, err)
    assert time.process_time() - t0 < 1.5
    assert sorted(os.listdir(tmp_path)) == ["empty"]


def test_figure5_needs_no_tables_dir_unless_one_is_given(tmp_path, monkeypatch):
    """The default folder is read only by Figures 2-3: Figure 5 runs from any working directory."""
    from certify import cli

    from certify.dpsgd import plots

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(plots, "figure5", lambda path, cache_dir: open(path, "wb").close())
    assert cli.main(["plot", "--figure", "5", "--out-dir", "f", "--cache-dir", ""]) == 0
    assert os.listdir(tmp_path / "f") == ["bok_2026_figure5.png"]
