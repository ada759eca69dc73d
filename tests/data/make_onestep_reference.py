"""Regenerate tests/data/onestep_reference.json and tests/data/pld_cert_*.json from a checkout's code.

Run ONCE with the code before the one-step / composition speed work (the main checkout at b4cbac2):
    cd /work/main && python /work/wt/onestep/tests/data/make_onestep_reference.py /work/wt/onestep/tests/data
The test tests/test_pld_speed_invariance.py then requires today's code to reproduce these digests bit for
bit (one-step masses, +inf mass, lo, checks; composed polynomials) and the certificates byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

sys.path.insert(0, os.getcwd())

from certify.balls import exact  # noqa: E402
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE  # noqa: E402
from certify.pld import accountant, certify_pld, compose  # noqa: E402
from certify.pld.accountant import parse_grid, parse_pld_delta, plan, run  # noqa: E402

#: (contract, q, sigma, T, delta, grid): small grids, tails clamped by tiny_bits, the add cut, large K
CASES = [
    ("poisson", "0.01", "2", 1000, "1e-6", "1e-3"),
    ("poisson", "0.5", "4", 100, "1e-6", "1e-3"),
    ("poisson", "0.001", "1", 10, "1e-100", "1e-3"),
    ("poisson", "1/7", "5/3", 3, "1e-9", "1/512"),
    ("poisson", "0.9", "30", 5, "1e-6", "1e-2"),
    ("poisson", "0.2", "0.8", 50, "1e-12", "1e-3"),
    ("fixed-size", "0.01", "2", 1000, "1e-6", "1e-3"),
    ("fixed-size", "0.3", "2", 7, "1e-5", "1e-3"),
    ("fixed-size", "0.05", "1", 20, "1e-40", "1e-2"),
    ("poisson", "0.01", "2", 10000, "1e-6", "1e-4"),
]

CERTS = [
    ("poisson", "0.01", "2", 1000, "1e-6", "1e-3"),
    ("fixed-size", "0.3", "2", 7, "1e-5", "1e-3"),
    ("poisson", "0.2", "0.8", 50, "1e-12", "1e-3"),
]


def _contract(name):
    return POISSON_ADD_REMOVE if name == "poisson" else FIXED_SIZE_REPLACE_ONE


def _h(obj) -> str:
    return hashlib.sha256(repr(obj).encode()).hexdigest()


def one_step_digest(s) -> str:
    return _h((s.profile, s.pessimistic, s.K, s.lo, [int(m) for m in s.masses], int(s.inf), sorted((k, str(v)) for k, v in s.checks.items())))


def pld_digest(p) -> str:
    return _h(([int(c) for c in p.poly.coeffs()], p.offset, int(p.inf), p.K, p.pessimistic))


def case_record(case) -> dict:
    cname, q, sigma, T, delta, grid = case
    c = _contract(cname)
    qq, ss, dd, hh = exact(q), exact(sigma), parse_pld_delta(delta), parse_grid(grid)
    pl = plan(c, qq, ss, T, dd, hh)
    r = run(c, qq, ss, T, pl)
    return {
        "case": list(case),
        "plan": pl.to_json(),
        "one_step": {f"{n}/{'pess' if p else 'opt'}": one_step_digest(s) for (n, p), s in r.one_step.items()},
        "composed": {f"{n}/{'pess' if p else 'opt'}": pld_digest(v) for (n, p), v in r.composed.items()},
    }


def main(out: str) -> None:
    recs = []
    for case in CASES:
        compose.clear_cache()
        accountant._one_steps.cache_clear()
        recs.append(case_record(case))
        print(case, flush=True)
    with open(os.path.join(out, "onestep_reference.json"), "w") as f:
        json.dump(recs, f, indent=1)
    for k, (cname, q, sigma, T, delta, grid) in enumerate(CERTS):
        cert = certify_pld(_contract(cname), q, sigma, T, delta, grid)
        with open(os.path.join(out, f"pld_cert_{k}.json"), "w") as f:
            f.write(cert.dumps())


if __name__ == "__main__":
    main(sys.argv[1])
