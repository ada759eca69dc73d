"""The speed work on the one-step discretisation and the composition changes no result (bit for bit).

tests/data/onestep_reference.json was produced by the code BEFORE that work (main checkout at b4cbac2, by
tests/data/make_onestep_reference.py): for each case the recorded plan (K, tau, layouts) and SHA-256
digests of every one-step measure (masses, +inf mass, lo, K, checks) and of every composed measure
(polynomial coefficients, offset, +inf mass). Today's :mod:`certify.pld.discretise` and
:mod:`certify.pld.compose`, run on the same recorded plan, must reproduce every digest: the checker re-runs
this code on recorded plans, so any difference would break old certificates. The three certificates
tests/data/pld_cert_*.json were written by the same old code and must still verify.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from certify.balls import exact
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import compose, discretise
from certify.pld.discretise import Layout
from certify.pld.pairs import profiles, shift
from certify.verify import verify_text

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from make_onestep_reference import one_step_digest, pld_digest  # noqa: E402

REFS = json.loads((DATA / "onestep_reference.json").read_text())


def _params(refs):
    out = []
    for r in refs:
        c = r["case"]  # the benchmark's grid (about 10 s) and the heaviest 1e-3 cases: slow; the rest stay fast
        big = c[5] == "1e-4" or (c[5] == "1e-3" and (str(c[4]) == "1e-100" or str(c[2]) == "0.8" or (c[0] == "fixed-size" and str(c[1]) == "0.3")))
        out.append(pytest.param(r, id="-".join(map(str, r["case"])), marks=pytest.mark.slow if big else ()))
    return out


@pytest.mark.parametrize("ref", _params(REFS))
def test_one_step_and_composition_bit_identical(ref):
    cname, q, sigma, T, _delta, grid = ref["case"]
    contract = POISSON_ADD_REMOVE if cname == "poisson" else FIXED_SIZE_REPLACE_ONE
    q, h = exact(q), exact(grid)
    d = shift(contract, exact(sigma))
    K, tau = ref["plan"]["K"], int(ref["plan"]["tau"])
    for prof in profiles(contract):
        lay = Layout(**ref["plan"]["layouts"][prof.name])
        sm = discretise.sample(prof, q, d, h, lay, K)
        for side, s in (("pess", discretise.pessimistic(sm, K)), ("opt", discretise.optimistic(sm, K))):
            key = f"{prof.name}/{side}"
            assert one_step_digest(s) == ref["one_step"][key], key
            if key in ref["composed"]:
                got = compose.power(compose.from_one_step(s), T, tau)
                assert pld_digest(got) == ref["composed"][key], key


@pytest.mark.parametrize("k", [0, 1, 2])
def test_old_certificates_are_files_certify_no_longer_writes(k):
    """The three old certificates record ungraded layouts (written before the graded layout): the checker re-derives the
    layouts with today's plan function and refuses them (exit 4, naming witnesses.layouts, before any ball arithmetic;
    docs/reference/certificate.md, "Choices made with floats"); the re-run of their recorded plans is still bit-identical
    (the test above)."""
    text = (DATA / f"pld_cert_{k}.json").read_text()
    rep = verify_text(text)
    assert rep.exit_code == 4 and any("witnesses.layouts" in p and "certify chooses" in p for p in rep.problems), rep.problems
