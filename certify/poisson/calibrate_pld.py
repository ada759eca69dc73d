"""Certified calibration of the noise multiplier by the certified PLD accountant (``calibrate-dpsgd --accountant pld``).

The answer is a bracket of exact dyadics s_fail < s_pass, relative width <= 1e-3, each with a ``pld/dpsgd``
certificate (:func:`certify.pld.certify_pld`, re-checked by ``certify verify``):

* at s_pass the certified upper bound eps_up(delta) <= target: the run is (target, delta)-DP;
* at s_fail the certified *lower* bound eps_low(delta) > target: the exact eps(delta) of the composed dominating
  pair exceeds the target, so no accountant that bounds that pair (this one at any grid, Rényi, ...) certifies it.

eps(delta) of the pair is non-increasing in sigma: the pair at sigma' > sigma is the pair at sigma with independent
Gaussian noise of variance sigma'^2 - sigma^2 added to the output (a post-processing of both distributions, the same
for every step), and the hockey-stick divergence does not grow under post-processing. So every sigma <= s_fail
fails too, and s_pass is the smallest passing sigma of the PLD accountant up to the bracket and the grid's gap
(eps_up - eps_low). The bracket is found by bisection on certified queries (the PLD has no cheap float twin here),
started from the Rényi calibration's float estimate (which passes by the PLD, tighter, whenever the grid is fine).
"""

from __future__ import annotations

import math

from ..balls import InputError, ball_endpoints, exact, exact_str, float_of, fmpq, log_float
from ..bracket import PldCalibration
from ..certificate import Certificate
from ..contract import POISSON_ADD_REMOVE

REL_WIDTH = fmpq(1, 10**3)
MAX_QUERIES = 40


def _side(cert: Certificate, target: fmpq) -> str:
    """ "pass" (eps_up <= target), "fail" (eps_low > target) or "undecided" (the target lies in the PLD's bracket)."""
    up = ball_endpoints(cert.quantities["epsilon_upper"].value)[1]
    low = ball_endpoints(cert.quantities["epsilon_lower"].value)[0]
    return "pass" if up <= target else "fail" if low > target else "undecided"


def calibrate_pld(epsilon, delta, steps, sampling_rate, grid: str = "1e-4", progress=None) -> PldCalibration:
    """The certified PLD bracket (see the module docstring). ``progress(text)`` is called after each query."""
    from ..pld import certify_pld
    from .calibrate import _float_sigma, dyadic, parse_epsilon
    from .schedule import parse_delta, parse_sampling_rate, parse_steps

    target, delta, steps, q = parse_epsilon(epsilon), parse_delta(delta), parse_steps(steps), parse_sampling_rate(sampling_rate)
    s0 = _float_sigma(max(float_of(q), 1e-300), steps, log_float(delta), float_of(target), True)
    runs: list = []  # (s, grid, epsilon_lower, epsilon_upper) of every certified query, in order
    certs: dict[fmpq, tuple[str, Certificate]] = {}

    def query(s: fmpq) -> str:
        if s not in certs:
            if len(runs) >= MAX_QUERIES:
                raise InputError("--epsilon", f"no PLD bracket after {MAX_QUERIES} certified queries")
            cert = certify_pld(POISSON_ADD_REMOVE, exact_str(q), exact_str(s), steps, exact_str(delta), grid)
            lo, up = ball_endpoints(cert.quantities["epsilon_lower"].value)[0], ball_endpoints(cert.quantities["epsilon_upper"].value)[1]
            runs.append((s, exact(cert.inputs.get("grid", grid), "--grid"), lo, up))
            certs[s] = (_side(cert, target), cert)
            if progress:
                progress(f"calibrate-dpsgd --accountant pld: query {len(runs)}: sigma ~ {float_of(s):.6g} {certs[s][0]}")
        return certs[s][0]

    hi = dyadic(s0, up=True)
    while query(hi) != "pass":
        hi = dyadic(float_of(hi) * 1.05, up=True)
    lo = dyadic(float_of(hi) * 0.93, up=False)
    while query(lo) != "fail":
        if certs[lo][0] == "pass":
            hi = lo
        lo = dyadic(float_of(lo) * 0.93, up=False)
    undecided: list[fmpq] = [s for s, (side, _) in certs.items() if side == "undecided"]
    while (hi - lo) / hi > REL_WIDTH:
        inside = [u for u in undecided if lo < u < hi]
        if inside:  # the target lies in the grid's gap there: narrow from both sides of the undecided points
            gaps = [(lo, min(inside)), (max(inside), hi)]
            a, b = max(gaps, key=lambda g: g[1] / g[0])
        else:
            a, b = lo, hi
        if (b - a) / b <= REL_WIDTH / 4:
            break
        mid = dyadic(math.sqrt(float_of(a) * float_of(b)), up=True)
        if not a < mid < b:
            break
        side = query(mid)
        if side == "pass":
            hi = mid
        elif side == "fail":
            lo = mid
        else:
            undecided.append(mid)
    return PldCalibration(lo, hi, certs[hi][1], certs[lo][1], runs[list(certs).index(hi)][1], runs)


def summary(cal: PldCalibration, target: fmpq, delta: fmpq, steps: int, q: fmpq, seconds: float) -> str:
    from ..balls import lower_decimal, upper_decimal

    up = cal.passing.quantities["epsilon_upper"].value
    low = cal.failing.quantities["epsilon_lower"].value
    return (
        "\n".join(
            [
                f"noise multiplier for (epsilon={exact_str(target)}, delta={exact_str(delta)}), q={exact_str(q)}, T={steps}:",
                f"  s_pass = {exact_str(cal.s_pass)} ~ {upper_decimal(cal.s_pass, 8)}: epsilon <= {upper_decimal(up, 8)} (certified PLD upper bound)",
                f"  s_fail = {exact_str(cal.s_fail)} ~ {lower_decimal(cal.s_fail, 8)}: the exact epsilon of the composed dominating pair "
                f">= {lower_decimal(low, 8)} > target (certified PLD lower bound: no accountant of this pair meets the target)",
                f"  relative width (s_pass - s_fail)/s_pass = {upper_decimal(cal.relative_width, 3)} (<= 1e-3 unless the grid's gap stops it)",
                f"  accountant: certified PLD (lossless), grid h = {exact_str(cal.grid)}; eps(delta) of the pair is non-increasing in sigma "
                "(more noise is a post-processing), so s_pass is minimal up to the bracket",
                f"  {POISSON_ADD_REMOVE.statement()}",
                f"  ({cal.queries} certified queries, {seconds:.1f} s)",
            ]
        )
        + "\n"
    )
