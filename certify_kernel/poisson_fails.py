"""Kind ``dpsgd/renyi-poisson-fails``: the failing side of a calibration. One Poisson-sampled phase at noise
multiplier sigma does not meet a target epsilon by the Rényi accountant over a recorded grid G of integer orders:

  epsilon_min = min over alpha in G of  T eps_RDP(alpha) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)
  > epsilon_target,

with eps_RDP from (MTZ19 3.3-I) and the conversion of Balle20 Thm 21 (see ``poisson``). The grid is recorded as
text, ``integers A..B and x, y, ...``, and read here. The conclusion is a statement about this accountant only.
"""

import re
from fractions import Fraction
from .document import Derivation
from .numbers import Malformed, bounds, exact_input, working_precision
from .poisson import EQUATIONS, HYP_TEXTS, HYPOTHESES, epsilon, log_A, read_inputs
from .provenance import check_notes

KIND = "dpsgd/renyi-poisson-fails"
READS = ()  # derive reads no recorded quantity (see __init__._derive)
_GRID = re.compile(r"integers ([0-9]{1,4})\.\.([0-9]{1,4}) and ((?:[0-9]{1,4}, )*[0-9]{1,4})")
#: most terms of (MTZ19 3.3-I) evaluated for one certificate
MAX_TERMS = 200_000

def grid(text) -> list[int]:
    """The integer orders of ``integers A..B and x, y, ...`` (each in [2, 4096])."""
    m = _GRID.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise Malformed("inputs.orders: must read 'integers A..B and x, y, ...'")
    orders = list(range(int(m[1]), int(m[2]) + 1)) + [int(x) for x in m[3].split(", ")]
    if not orders or min(orders) < 2 or max(orders) > 4096 or sum(orders) > MAX_TERMS:
        raise Malformed("inputs.orders: orders must lie in [2, 4096] (and not too many)")
    return orders

def _eps(a: int, q: Fraction, sigma: Fraction, steps: int, delta: Fraction) -> tuple[Fraction, Fraction]:
    """(lo, hi) of T eps_RDP(a) converted by Balle20 Thm 21, at the integer order a."""
    return bounds(epsilon(steps * log_A(a, q, sigma) / (a - 1), Fraction(a), delta))

def minimum(orders: list, q: Fraction, sigma: Fraction, steps: int, delta: Fraction) -> tuple[Fraction, Fraction]:
    """[min lo, min hi] of the orders' enclosures: every order at 64 bits, then those that may be the minimum at the working precision."""
    with working_precision(64):
        coarse = {a: _eps(a, q, sigma, steps, delta) for a in orders}
    cut = min(hi for _, hi in coarse.values())
    each = {a: (_eps(a, q, sigma, steps, delta) if lo <= cut else (lo, hi)) for a, (lo, hi) in coarse.items()}
    return min(lo for lo, _ in each.values()), min(hi for _, hi in each.values())

def derive(doc: dict) -> Derivation:
    """Everything the kernel needs to judge a dpsgd/renyi-poisson-fails certificate."""
    inputs, der = doc["inputs"], Derivation()
    if doc["witnesses"] != {}:
        raise Malformed("witnesses: this kind records none")
    known = {"sampling", "adjacency", "sensitivity", "noise_multiplier_relative_to", "privacy_unit", "source", "phases", "delta"}
    known |= {"epsilon_target", "orders"} | {f"phase[0].{f}" for f in ("sampling_rate", "noise_multiplier", "steps")}
    unknown = sorted(k for k in inputs if (k[:-5] if k.endswith(".note") else k) not in known)
    if unknown or inputs.get("phases") != "1":
        raise Malformed(f"inputs: one phase only, and no unknown input ({', '.join(unknown)[:100]})")
    check_notes(inputs, der.failed)
    phases, delta = read_inputs(inputs, der.failed)
    target = exact_input(inputs, "epsilon_target", der.failed)
    orders = grid(inputs.get("orders"))
    if der.failed:
        return der
    ((q, sigma, steps),) = phases
    der.names, der.values = {"epsilon_min"}, {"epsilon_min": minimum(orders, q, sigma, steps, delta)}
    der.equations = {"epsilon_min": EQUATIONS["epsilon"]}
    _texts(der, inputs["orders"], len(orders), q, sigma, steps, delta, target)
    return der

def _texts(der: Derivation, orders: str, n: int, q: Fraction, sigma: Fraction, steps: int, delta: Fraction, target: Fraction) -> None:
    """The claims, the conclusion and the prose certify writes, re-derived from the exact inputs (never copied)."""
    for key, rel, rhs in HYPOTHESES:
        value = {"sampling_rate": q, "noise_multiplier": sigma, "steps": steps}[key]
        der.claim(f"hyp:{key}{rel}{rhs}", (str(value), rel, rhs), f"{HYP_TEXTS[key]} = {value} {rel} {rhs}")
    for name, rel, rhs in (("delta>0", ">", "0"), ("delta<1", "<", "1")):
        der.claim("hyp:" + name, (str(delta), rel, rhs), f"delta = {delta} {rel} {rhs}")
    hyps = tuple(der.claims)
    what = f"poisson sampling, add-remove adjacency, q = {q}, T = {steps}"
    der.claim("fails", ("epsilon_min", ">", str(target)),
              f"at sigma = {sigma} the Rényi accountant over the grid G certifies no epsilon <= {target} at delta = {delta}: every order of G "
              f"gives more ({what})")
    der.conclude("fails", "fails", hyps, f"sigma = {sigma} does not meet the target ({target}, {delta}) by this accountant")
    der.texts["quantity:epsilon_min"] = (f"min over alpha in G ({orders}) of T eps_RDP(alpha) + log((alpha-1)/alpha) - (log delta + log alpha)"
                                         "/(alpha-1) (MTZ19 Sec. 3, integer orders)")
    der.texts["budget"] = {"orders": f"{n} orders re-evaluated"}
