"""certify plot --run CERT: the user's own run, from a verified certificate (matplotlib, the `plot` extra).

The curves are report.curves' (tested against mpmath there); here: the drawing is written only for a certificate
that verifies, the re-optimised certified curve matches the certificate at t = T and stays within 0.1% of
dp_accounting's float RDP values (an independent accountant) at every t, and bad requests are one-line errors.
"""

from __future__ import annotations

import json

import pytest

from certify import cli
from certify.run_plot import _float_overlays, _reoptimised

pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"


def _cert(tmp_path, argv, name="run.json"):
    out = tmp_path / name
    assert cli.main(["dpsgd", *argv, "--out", str(out)]) == 0
    return out


def test_a_fixed_size_run_is_drawn(tmp_path, capsys):
    cert = _cert(
        tmp_path,
        ["--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "100", "--delta", "1e-5", "--alpha", "8"],
    )
    assert cli.main(["plot", "--run", str(cert)]) == 0
    png = tmp_path / "run.png"
    assert png.read_bytes().startswith(PNG) and "wrote" in capsys.readouterr().out


@pytest.mark.slow
def test_an_opacus_run_is_drawn_with_epochs_and_the_float_overlays(tmp_path):
    cert = _cert(
        tmp_path,
        ["--sampling", "poisson", "--batch-size", "256", "--dataset-size", "50000", "--epochs", "10", "--noise-multiplier", "1.1", "--delta", "1e-5"],
    )
    out = tmp_path / "mine.png"
    assert cli.main(["plot", "--run", str(cert), "--out", str(out)]) == 0
    assert out.read_bytes().startswith(PNG)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_the_reoptimised_curve_is_certified_and_as_tight_as_dp_accounting(tmp_path):
    pytest.importorskip("dp_accounting")
    cert = _cert(tmp_path, ["--sampling", "poisson", "--sampling-rate", "0.01", "--noise-multiplier", "1.1", "--steps", "1000", "--delta", "1e-5"])
    doc = json.loads(cert.read_text())
    ts = [10, 300, 1000]
    ours = _reoptimised(doc, ts)
    floats = _float_overlays(doc, ts)["dp_accounting RDP (float estimate)"]
    assert abs(ours[-1] - float(doc["witnesses"]["epsilon_bound"])) < 1e-9
    for e, f in zip(ours, floats):
        assert e <= f * (1 + 1e-3)


def test_bad_requests_are_one_line_errors_and_write_nothing(tmp_path, capsys):
    cert = _cert(tmp_path, ["--sampling", "poisson", "--sampling-rate", "0.01", "--noise-multiplier", "1.1", "--steps", "100", "--delta", "1e-5"])
    doc = json.loads(cert.read_text())
    doc["witnesses"]["epsilon_bound"] = "1.000000000e-1"  # a forged bound
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc, indent=2))
    assert cli.main(["plot", "--run", str(bad)]) == 2
    assert not (tmp_path / "bad.png").exists()
    assert cli.main(["plot", "--run", str(cert), "--figure", "2"]) == 2
    assert cli.main(["plot"]) == 2
    fails = tmp_path / "f.json"
    assert (
        cli.main(
            [
                "calibrate-dpsgd",
                "--epsilon",
                "1",
                "--delta",
                "1e-5",
                "--steps",
                "100",
                "--sampling-rate",
                "0.01",
                "--out-fail",
                str(fails),
                "--orders",
                "integer",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert cli.main(["plot", "--run", str(fails)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no privacy curve" in err
