"""``certify dpsgd --epochs`` with every accountant: the PLD under Poisson sampling, and fixed-size sampling (Bok's
accountant, the Wang baseline, the PLD), where q = b/n exactly and T = floor(E n / b).

The expected q and T are hand computations from Opacus's documented rules, written here apart from certify:
``get_noise_multiplier(epochs=E, sample_rate=q)`` counts int(E / q) steps; Opacus's DPDataLoader samples at
q = 1/len(data_loader) = 1/ceil(n/b). Each certificate must equal (byte for byte) the one the same run gives with
--sampling-rate and --steps written out by hand, plus the recorded epochs where the kind records them.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from certify import cli
from certify.balls import InputError
from certify.dpsgd.certificates import validate_renyi
from certify.verify import verify_text

RUN = ["--noise-multiplier", "11/10", "--delta", "1e-5"]


def _run(tmp_path, capsys, name: str, argv: list[str]) -> tuple[dict, str]:
    out = tmp_path / f"{name}.json"
    assert cli.main(["dpsgd", *argv, *RUN, "--out", str(out)]) == 0, capsys.readouterr().err
    return json.loads(out.read_text()), capsys.readouterr().out


def test_pld_under_poisson_counts_as_opacus(tmp_path, capsys):
    b, n, e = 100, 1000, 2
    q, t = Fraction(1, -(-n // b)), e * -(-n // b)  # hand: q = 1/ceil(1000/100) = 1/10, T = 2 * 10 = 20
    assert (q, t) == (Fraction(1, 10), 20)
    by_epochs, text = _run(
        tmp_path,
        capsys,
        "e",
        ["--sampling", "poisson", "--accountant", "pld", "--grid", "1e-2", "--batch-size", str(b), "--dataset-size", str(n), "--epochs", str(e)],
    )
    by_hand, _ = _run(
        tmp_path, capsys, "h", ["--sampling", "poisson", "--accountant", "pld", "--grid", "1e-2", "--sampling-rate", "1/10", "--steps", "20"]
    )
    assert by_epochs == by_hand and by_epochs["inputs"]["sampling_rate"] == "1/10" and by_epochs["inputs"]["steps"] == "20"
    assert "q = 1/ceil(1000/100) = 1/10" in text and "T = floor(2 epochs / q) = 20 steps" in text
    assert verify_text((tmp_path / "e.json").read_text()).ok
    assert (
        cli.main(
            [
                "dpsgd",
                "--sampling",
                "poisson",
                "--accountant",
                "pld",
                "--grid",
                "1e-2",
                "--batch-size",
                "100",
                "--dataset-size",
                "1000",
                "--epochs",
                "2",
                *RUN,
                "--json",
            ]
        )
        == 0
    )
    short = json.loads(capsys.readouterr().out)
    assert short["run"]["steps"] == "20" and short["run"]["epochs"] == "2" and short["run"]["batch_size"] == "100"


@pytest.mark.parametrize("accountant", ["bok", "wang"])
def test_fixed_size_counts_p_as_b_over_n_and_records_the_epochs(tmp_path, capsys, accountant):
    b, n, e = 256, 50_000, 2
    p, t = Fraction(b, n), (e * n) // b  # hand: p = 256/50000 = 16/3125, T = floor(100000/256) = floor(390.625) = 390
    assert (p, t) == (Fraction(16, 3125), 390)
    flags = ["--sampling", "fixed-size", "--accountant", accountant]
    by_epochs, text = _run(tmp_path, capsys, "e", [*flags, "--batch-size", str(b), "--dataset-size", str(n), "--epochs", str(e)])
    by_hand, _ = _run(tmp_path, capsys, "h", [*flags, "--batch-size", str(b), "--dataset-size", str(n), "--steps", "390"])
    i = by_epochs["inputs"]
    assert (i["sampling_rate"], i["steps"], i["epochs"], i["batch_size"], i["dataset_size"]) == ("16/3125", "390", "2", "256", "50000")
    assert by_epochs["quantities"]["epsilon"] == by_hand["quantities"]["epsilon"]  # the epochs change only what is recorded
    assert "p = 256/50000 = 16/3125" in text and "T = floor(2 epochs / p) = 390 steps" in text
    assert verify_text((tmp_path / "e.json").read_text()).ok


def test_fixed_size_epochs_with_a_sampling_rate(tmp_path, capsys):
    doc, _ = _run(tmp_path, capsys, "r", ["--sampling", "fixed-size", "--sampling-rate", "0.003", "--epochs", "2", "--alpha", "8"])
    assert doc["inputs"]["steps"] == str(int(2 / Fraction("0.003"))) == "666" and doc["inputs"]["epochs"] == "2"


def test_fixed_size_pld_with_epochs(tmp_path, capsys):
    by_epochs, text = _run(
        tmp_path,
        capsys,
        "e",
        ["--sampling", "fixed-size", "--accountant", "pld", "--grid", "5e-2", "--batch-size", "100", "--dataset-size", "1000", "--epochs", "1"],
    )
    by_hand, _ = _run(
        tmp_path, capsys, "h", ["--sampling", "fixed-size", "--accountant", "pld", "--grid", "5e-2", "--sampling-rate", "1/10", "--steps", "10"]
    )
    assert by_epochs == by_hand and "T = floor(1 epochs / p) = 10 steps" in text


def test_the_checker_re_derives_the_steps_from_the_recorded_epochs(tmp_path, capsys):
    doc, _ = _run(
        tmp_path, capsys, "e", ["--sampling", "fixed-size", "--batch-size", "256", "--dataset-size", "50000", "--epochs", "2", "--alpha", "3"]
    )
    validate_renyi(doc["inputs"])  # the recorded inputs are consistent
    for field, value in (("steps", "391"), ("epochs", "3"), ("epochs", "2.0"), ("epochs", "0"), ("dataset_size", "51200")):
        with pytest.raises(InputError):
            validate_renyi(dict(doc["inputs"], **{field: value}))


@pytest.mark.slow  # matplotlib, and for Poisson the float libraries' overlays (Opacus imports torch): 2-13 s
@pytest.mark.parametrize(
    "sampling,label", [("fixed-size", "epochs (50000/256 = 195.312 steps each)"), ("poisson", "epochs (196 steps each, Opacus's count)")]
)
def test_the_run_plot_counts_epochs_by_the_contract(tmp_path, capsys, monkeypatch, sampling, label):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from certify.run_plot import draw

    doc, _ = _run(tmp_path, capsys, "e", ["--sampling", sampling, "--batch-size", "256", "--dataset-size", "50000", "--epochs", "2", "--alpha", "3"])
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    draw(doc, str(tmp_path / "run.png"), "run.json")
    tops = [child.get_xlabel() for ax in figures[0].axes for child in ax.child_axes]
    assert tops == [label]
