"""certify calibrate-dpsgd: a certified bracket s_fail < s_pass, and the monotonicity obligations behind it."""

from __future__ import annotations

import json

import pytest

from certify import cli
from certify.balls import fmpq
from certify.poisson.calibrate import REL_WIDTH, calibrate
from certify.proofs import PROVED, UNDECIDED, get
from certify.verify import verify_document


@pytest.mark.parametrize("eps,delta,steps,q", [("1", "1e-5", 1000, "0.01"), ("8", "1e-5", 10000, "0.004")])
def test_bracket_is_certified_and_narrow(eps, delta, steps, q):
    cal = calibrate(eps, delta, steps, q)
    assert cal.s_fail < cal.s_pass and cal.relative_width <= REL_WIDTH
    for s in (cal.s_fail, cal.s_pass):  # exact dyadics
        assert s.q & (s.q - 1) == 0
    assert verify_document(cal.passing.to_json()).ok and verify_document(cal.failing.to_json()).ok
    assert cal.passing.claims[-1].holds and cal.passing.claims[-1].rhs == str(fmpq(int(eps)))
    assert cal.failing.claims[-1].name == "fails" and cal.failing.claims[-1].holds


def test_cli_and_refusals(tmp_path, capsys):
    out, out_fail = tmp_path / "p.json", tmp_path / "f.json"
    assert (
        cli.main(
            [
                "calibrate-dpsgd",
                "--epsilon",
                "2",
                "--delta",
                "1e-5",
                "--steps",
                "500",
                "--sampling-rate",
                "0.02",
                "--out",
                str(out),
                "--out-fail",
                str(out_fail),
            ]
        )
        == 0
    )
    assert "s_pass" in capsys.readouterr().out
    assert json.loads(out.read_text())["kind"] == "dpsgd/renyi-poisson"
    assert json.loads(out_fail.read_text())["kind"] == "dpsgd/renyi-poisson-fails"
    for args, field in [
        (["--epsilon", "0"], "--epsilon"),
        (["--delta", "1"], "--delta"),
        (["--sampling", "fixed-size", "--adjacency", "replace-one"], "--sampling"),
        (["--sampling", "shuffle"], "shuffl"),
        (["--epsilon", "1e-9"], "not reachable"),
    ]:
        base = {"--epsilon": "1", "--delta": "1e-5", "--steps": "100", "--sampling-rate": "0.01"}
        argv = ["calibrate-dpsgd"]
        for k, v in base.items():
            if k not in args:
                argv += [k, v]
        assert cli.main(argv + args + ["--out", str(tmp_path / "never.json")]) == 2
        err = capsys.readouterr().err
        assert field in err and err.count("\n") == 1
        assert not (tmp_path / "never.json").exists()


@pytest.mark.slow  # about 3 CPU s of symbolic proofs
def test_monotonicity_obligations_are_proved_and_can_fail():
    import sympy as sp

    for name in ("P-sigma-monotone", "P-q-monotone", "P-moments"):
        assert get(name).run().verdict == PROVED, name
    s = sp.Symbol("sigma", positive=True)
    # a wrong derivative (sign flipped) and a wrong moment are not proved
    assert get("P-sigma-monotone").run(claimed=lambda k: k * (k - 1) / s**3 * sp.exp(k * (k - 1) / (2 * s**2))).verdict != PROVED
    assert get("P-moments").run(claimed=lambda k: sp.exp(k * k / (2 * s**2))).verdict in ("false", UNDECIDED)
