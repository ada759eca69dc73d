"""Checking Poisson Rényi certificates faster changed nothing a certificate states.

* certificates issued before the speed-ups (tests/poisson_issued/, written by commit b4cbac2: binary-float
  inputs from the benchmark queries and decimal inputs from `certify dpsgd`, chord and integral modes, one
  and three phases, q = 1) still verify, and the evaluator re-derives their balls bit for bit;
* the binomial sum is bit-identical to its first version (a copy of that loop is kept here as the reference);
* claims between two exact numbers are decided exactly (the same answer as the balls whenever they decide),
  and operands supplied as values must print as the recorded text;
* a resealed edit of an issued certificate is still rejected.
"""

from __future__ import annotations

import copy
import glob
import json
import os
import random

import pytest

from certify.balls import arb, ball, ball_to_json, ctx, fmpq
from certify.certificate import Evaluation, digest_of
from certify.poisson.certificates import evaluate_renyi_poisson
from certify.poisson.rdp import log_A_int, _log_A_int_cached
from certify.verify import verify_document, verify_text

HERE = os.path.dirname(os.path.abspath(__file__))
ISSUED = sorted(glob.glob(os.path.join(HERE, "poisson_issued", "*.json")))


def test_there_are_issued_certificates():
    assert len(ISSUED) >= 8


@pytest.mark.parametrize("path", ISSUED, ids=os.path.basename)
def test_issued_certificate_verifies_and_rederives_bit_for_bit(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert verify_text(text).exit_code == 0
    doc = json.loads(text)
    _log_A_int_cached.cache_clear()
    with ctx.workprec(doc["precision"]):
        ev = evaluate_renyi_poisson(doc["inputs"], doc["witnesses"])
    assert set(ev.quantities) == set(doc["quantities"])
    for name, q in ev.quantities.items():
        assert ball_to_json(q.value) == doc["quantities"][name]["ball"], name
    assert ev.budget.to_json() == doc["budget"]
    assert [c.to_json() for c in ev.claims] == doc["claims"]


def _first_version(alpha: int, q: fmpq, sigma: fmpq) -> arb:
    """The binomial sum as first written (before the speed-ups): the reference for bit identity."""
    if q == 1:
        return ball(fmpq(alpha * (alpha - 1), 2) / (sigma * sigma))
    c = 1 / ball(2 * sigma * sigma)
    E = (2 * c).exp()
    r = q / (1 - q)
    two_s2 = 2 * sigma * sigma
    w = ball(1 - q) ** alpha
    t = w
    g = arb(1)
    excess = arb(0)
    for k in range(alpha):
        ratio = ball(r * fmpq(alpha - k, k + 1))
        w = w * ratio
        t = t * g * ratio
        g = g * E
        j = k + 1
        if j >= 2:
            excess = excess + (w * (fmpq(j * (j - 1)) * c).expm1() if j * (j - 1) < two_s2 else t - w)
    return excess.log1p()


def _same(a: arb, b: arb) -> bool:
    return a.mid().man_exp() == b.mid().man_exp() and a.rad().man_exp() == b.rad().man_exp()


def test_sum_is_bit_identical_to_its_first_version():
    rng = random.Random(7)
    cases = [(2, fmpq(1, 100), fmpq(11, 10)), (9, fmpq(1, 100), fmpq(11, 10)), (5, fmpq(1), fmpq(2)), (3, fmpq(1, 2), fmpq(1))]
    cases += [(4, fmpq(1, 10), fmpq(1)), (7, fmpq(1, 3), fmpq(3, 2))]  # 2 sigma^2 an integer: the expm1 threshold exactly
    for _ in range(120):
        alpha = rng.choice([2, 3, 5, 9, 10, 17, 33, 64, 130, 256])
        q = min(fmpq(rng.randint(1, 1000), rng.choice([1000, 997, 2**20, 10**6])), fmpq(1))
        sigma = fmpq(rng.randint(1, 3000), rng.choice([100, 1000, 7]))
        cases.append((alpha, q, sigma))
    for alpha, q, sigma in cases:
        for prec in (128, 256):
            _log_A_int_cached.cache_clear()
            with ctx.workprec(prec):
                assert _same(log_A_int(alpha, q, sigma), _first_version(alpha, q, sigma)), (alpha, q, sigma, prec)


def test_claims_between_exact_numbers_are_decided_exactly():
    ev = Evaluation()
    with ctx.workprec(128):
        # balls of 1/3 overlap themselves: undecided in balls, decided exactly
        assert ev.claim("a", "1/3 <= 1/3", "1/3", "<=", "1/3") is True
        assert ev.claim("b", "1/3 < 1/3", "1/3", "<", "1/3") is False
        assert ev.claim("c", "q > 0", "1/100", ">", "0", values=(fmpq(1, 100), fmpq(0))) is True
        assert ev.claim("d", "T >= 1", "1000", ">=", "1", values=(1000, 1)) is True
        with pytest.raises(ValueError):
            ev.claim("e", "mismatch", "1/100", ">", "0", values=(fmpq(1, 10), fmpq(0)))
        with pytest.raises(ValueError):  # a text checked once keeps its value
            ev.claim("f", "mismatch again", "1/100", "<", "1", values=(fmpq(2, 100), fmpq(1)))
        with pytest.raises(ValueError):
            ev.claim("g", "unknown relation", "1", "==", "1")
        ev.add("x", arb(1) / 3, "x")
        assert ev.claim("h", "x <= 1/2", "x", "<=", "1/2", values=(None, fmpq(1, 2))) is True  # a quantity is its ball
    assert [c.holds for c in ev.claims] == [True, False, True, True, True]


def _reseal(doc):
    doc["digest"] = digest_of(doc)
    return doc


@pytest.mark.parametrize("path", [p for p in ISSUED if "chord" in p][:2], ids=os.path.basename)
def test_resealed_edits_of_issued_certificates_are_rejected(path):
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    edits = []
    d = copy.deepcopy(doc)  # the epsilon ball moved by one unit in its last place
    m = d["quantities"]["epsilon"]["ball"]["mid"]
    m[0] = str(int(m[0]) + 1)
    edits.append((d, 4))
    d = copy.deepcopy(doc)  # another alpha: every quantity differs
    d["witnesses"]["alpha"] = "7"
    edits.append((d, 4))
    d = copy.deepcopy(doc)  # a claimed epsilon below the certified one
    d["witnesses"]["epsilon_bound"] = "1e-3"
    edits.append((d, 4))
    d = copy.deepcopy(doc)  # a hypothesis that fails
    d["inputs"]["phase[0].noise_multiplier"] = "0"
    edits.append((d, 5))
    for d, code in edits:
        rep = verify_document(_reseal(d))
        assert rep.exit_code == code, rep.problems


@pytest.mark.parametrize(
    "key, value",
    [
        ("epsilon_bound", "abc"),
        ("epsilon_bound", "nan"),
        ("epsilon_bound", "inf"),
        ("epsilon_bound", "1e999999999"),
        ("epsilon_bound", "1/0"),
        ("epsilon_bound", 5),
        ("epsilon_bound", None),
        ("alpha", "nan"),
        ("alpha", 1.5),
        ("alpha", "4097"),
        ("alpha", "1"),
        ("alpha", "9" * 5000),
        ("alpha", [2]),
        ("fractional", "simpson"),
        ("fractional", None),
    ],
)
def test_forged_witnesses_are_rejected_without_a_traceback(key, value):
    with open(ISSUED[0], encoding="utf-8") as fh:
        doc = json.load(fh)
    doc["witnesses"][key] = value
    rep = verify_document(_reseal(doc))
    assert rep.exit_code in (4, 5), rep.problems
    assert rep.problems


def test_checking_and_the_cli_start_without_numpy():
    """numpy serves only the float choice of alpha (certify/poisson/choice.py): building the CLI and checking every
    issued Poisson certificate import none of it (about 0.1 s of every `certify verify`)."""
    import subprocess
    import sys

    code = (
        "import sys, glob\n"
        "from certify import cli\n"
        "from certify.verify import verify_text\n"
        "cli.build_parser()\n"
        f"files = sorted(glob.glob({os.path.join(HERE, 'poisson_issued', '*.json')!r}))\n"
        "assert files and all(verify_text(open(f).read()).exit_code == 0 for f in files)\n"
        "print('numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=os.path.dirname(HERE), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
