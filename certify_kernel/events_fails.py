"""Kind ``events/rdp-fails``: the failing side of a calibration of an event ledger. At every integer order a of the calibration accountant's grid G
(``GRID``, named by the conclusion's re-derived statement), the ledger's Rényi bound converted at delta exceeds the target epsilon:

  epsilon(a) = sum_i c_i rdp_i(a) + log((a-1)/a) - (log delta + log a)/(a-1) > epsilon_target   for every a in G,

with rdp_i from ``events`` (Mironov17 Prop. 1 for the sum, Balle20 Thm 21 for the conversion), so the calibration accountant (the minimum over G)
does not certify (epsilon_target, delta). (epsilon, delta) events are not calibrated. Each order is evaluated at the kernel's working precision, so
that its enclosures sit inside certify's balls (an edited ball that excludes the value is then disjoint from them: inconsistent)."""

from fractions import Fraction
from mpmath import iv
from . import events
from .document import Derivation
from .numbers import Malformed, Undecided, bounds
from .poisson import MAX_WORK, epsilon
from .poisson_fails import grid

KIND = "events/rdp-fails"
READS = ()  # derive reads no recorded quantity (see __init__._derive)
#: the calibration accountant's grid (docs/events.md): a certificate over another grid is not the failing side of it
GRID = "integers 2..256 and 288, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 2048, 2560, 3072, 4096"

def _epsilon(entries: list, a: int, relation: str, delta: Fraction):
    """epsilon(a) of the module docstring at the integer order a."""
    alpha = Fraction(a)
    total = sum((c * events.rdp_of(cls, v, alpha, relation, None) for cls, c, v in entries), iv.mpf(0))
    return epsilon(total, alpha, delta)

def _plan(der: Derivation, orders: list, d: str, t: str, target: Fraction, delta: Fraction) -> None:
    der.names = {f"epsilon[{a}]" for a in orders}
    der.equations = {f"epsilon[{a}]": events.EQ["convert"] for a in orders}
    for name, rel, rhs in (("delta>0", ">", "0"), ("delta<1", "<", "1")):
        der.claim("hyp:" + name, (d, rel, rhs), f"delta = {d} {rel} {rhs}")
    der.claims.update({f"fails[{a}]": (f"epsilon[{a}]", ">", t) for a in orders})
    names = list(der.claims)
    der.conclusions["fails"] = (names[-1], tuple(names[:-1]))
    # the prose certify writes, re-derived (document.Derivation.texts)
    der.texts["budget"] = {"orders": f"all {len(orders)} orders of the grid re-evaluated (no search)"}
    der.texts.update({f"claim:fails[{a}]": f"at alpha = {a} the Rényi bound exceeds epsilon = {t}" for a in orders})
    der.texts.update({f"quantity:epsilon[{a}]": f"the Rényi bound at alpha = {a} (Mironov17 Prop. 1)" for a in orders})
    der.texts["conclusion:fails"] = f"the calibration accountant (min over {GRID} of the Rényi bound) does not certify ({t}, {d})-DP for this ledger"

def derive(doc: dict) -> Derivation:
    """Everything the kernel needs to judge an events/rdp-fails certificate."""
    der, inputs = Derivation(), doc["inputs"]
    if doc["witnesses"] != {} or "order" in inputs or "target_delta" not in inputs or "target_epsilon" not in inputs:
        raise Malformed("an events/rdp-fails certificate records target_delta and target_epsilon, and no witness")
    entries = events.read_ledger(inputs, der.failed)
    delta, target = events.spelt(inputs["target_delta"], "target_delta"), events.spelt(inputs["target_epsilon"], "target_epsilon")
    if not 0 < delta < 1 or not 0 <= target <= 10**6:
        der.failed.append("target_delta must be in (0, 1) and target_epsilon in [0, 1e6]")
    if any(cls == "EpsilonDeltaDpEvent" and v["delta"] != 0 for cls, _, v in entries):
        der.failed.append("calibration does not cover (epsilon, delta) events (their delta lies outside the Rényi curve)")
    orders = grid(GRID)
    if der.failed:
        return der
    _plan(der, orders, inputs["target_delta"], inputs["target_epsilon"], target, delta)
    pairs = {(v["sampling_probability"], v["noise_multiplier"]) for cls, _, v in entries if cls == "PoissonSampledDpEvent"}
    if len(pairs) * sum(orders) * iv.prec > 4 * MAX_WORK:
        raise Undecided(f"{len(pairs)} Poisson-sampled mechanisms at {len(orders)} orders: too much work, not evaluated")
    for a in orders:
        der.values[f"epsilon[{a}]"] = bounds(_epsilon(entries, a, inputs["neighboring"], delta))
    return der
