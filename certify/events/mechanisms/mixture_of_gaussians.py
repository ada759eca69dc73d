"""MixtureOfGaussiansDpEvent(standard_deviation sigma, sensitivities c_i, sampling_probs p_i): the Gaussian mechanism
whose sensitivity is a random variable (c_i with probability p_i); certified by the PLD accountant only.

dp_accounting's definition (``dp_event.MixtureOfGaussiansDpEvent``, ``MixtureGaussianPrivacyLoss``): given D the
mechanism outputs N(0, sigma^2), given the neighbour D' it outputs sum_i p_i N(c_i, sigma^2) (Choquette-Choo, Ganesh,
Steinke, Thakurta 2023, arXiv:2310.15526, Sec. 4: the scalar mixture that dominates a vector-valued one, their
Corollary 4.7, replacing each sensitivity vector by its norm). Both ordered pairs are composed (add and remove):
:class:`certify.events.pld_pairs.GaussianMixtureCurve`. Relations: ADD_OR_REMOVE_ONE and REPLACE_SPECIAL (as
dp_accounting's PLDAccountant; the event itself names the pair of outputs).

Inputs (decided before any work): standard_deviation in (0, 10^30]; the two lists of equal length in [1, MAX_COMPONENTS];
every sensitivity in [0, 10^30] (a negative one is refused: the likelihood ratio is then not monotone, and
dp_accounting refuses it too), every probability in [0, 1], their EXACT sum 1 (binary floats rarely sum to 1
exactly: write exact decimals, e.g. ``["9/10", "1/10"]``); max c_i / sigma <= MAX_SHIFT. The mechanism is null
(dropped like a NoOp) when every sensitivity of positive probability is 0 (then both outputs are N(0, sigma^2)).

Recorded texts: ``standard_deviation`` as usual; each list as its exact elements joined by ``,`` (``"0,1,2"``); a list
element that came as a binary float is recorded at its exact binary value without a per-element provenance note (the
ledger's notes name scalar fields only); the standard deviation keeps its note. No Rényi bound is evaluated here
(dp_accounting's RdpAccountant has none either): the Rényi accountant refuses the event, naming it.
"""

from __future__ import annotations

from ...balls import InputError, exact, exact_str, fmpq, require_in
from ...event_tree import from_library
from .base import ADD_REMOVE, MAX_PARAM, REPLACE_SPECIAL, Mechanism, positive

#: the most components (sensitivity, probability) of one mixture: each costs about three exps and an erfc per curve
#: point (measured at K = 64: 150-570 us per point for 1-16 components, 950-1450 us at 32-64), and the PLD engine's
#: work model assumes 150 us per point; at 16 its estimate is low by a factor of 4 at most
MAX_COMPONENTS = 16
#: the largest standardised shift c_i / sigma (losses of order shift^2 / 2: a larger one spans no grid anyway)
MAX_SHIFT = fmpq(10) ** 4
LISTS = ("sensitivities", "sampling_probs")
#: the longest recorded list text: MAX_COMPONENTS exact rationals of at most 700,000-bit numerator and denominator
#: (certify.balls' input bound: about 2 x 210,722 digits each) and their separators
MAX_TEXT = MAX_COMPONENTS * 421_450


def _list_of(value, where: str) -> list:
    """A list field's elements (a list, tuple or numpy array), its length checked before any element is read."""
    if hasattr(value, "tolist") and not isinstance(value, (list, tuple)):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        raise InputError(where, f"must be a list of numbers, got {type(value).__name__}")
    if not 1 <= len(value) <= MAX_COMPONENTS:
        raise InputError(where, f"must hold between 1 and {MAX_COMPONENTS} numbers, got {len(value)}")
    return list(value)


class MixtureOfGaussians(Mechanism):
    CLASS = "MixtureOfGaussiansDpEvent"
    FIELDS = PARAMS = ("standard_deviation", "sensitivities", "sampling_probs")
    RELATIONS = frozenset({ADD_REMOVE, REPLACE_SPECIAL})
    EQUATION = "PLD only (certify.events.pld_pairs.GaussianMixtureCurve; Choquette-Choo et al. 2023, arXiv:2310.15526)"
    NO_RDP = "MixtureOfGaussiansDpEvent has no certified Rényi bound here (dp_accounting's RdpAccountant has none either); use --accountant pld"

    @classmethod
    def validate(cls, values, where):
        positive(values, "standard_deviation", where)
        c, p = values["sensitivities"], values["sampling_probs"]
        for name, v in (("sensitivities", c), ("sampling_probs", p)):
            if not 1 <= len(v) <= MAX_COMPONENTS:
                raise InputError(f"{where}.{name}", f"must hold between 1 and {MAX_COMPONENTS} numbers, got {len(v)}")
        if len(c) != len(p):
            raise InputError(f"{where}.sampling_probs", f"must have as many entries as sensitivities ({len(c)}), got {len(p)}")
        for k, x in enumerate(c):
            require_in(f"{where}.sensitivities[{k}]", x, 0, MAX_PARAM, "[]", what="a sensitivity (a negative one makes the loss non-monotone)")
        for k, x in enumerate(p):
            require_in(f"{where}.sampling_probs[{k}]", x, 0, 1, "[]")
        total = sum(p, fmpq(0))
        if total != 1:
            raise InputError(
                f"{where}.sampling_probs",
                f'must sum to exactly 1, got {exact_str(total)[:80]} (binary floats rarely do: write exact decimals such as "9/10")',
            )
        sigma = values["standard_deviation"]
        if max(c) / sigma > MAX_SHIFT:
            raise InputError(f"{where}.standard_deviation", f"max(sensitivities) / standard_deviation must be <= {exact_str(MAX_SHIFT)}")
        return values

    @classmethod
    def read(cls, view):
        view.check_fields(cls.FIELDS)
        sigma, note = view.number("standard_deviation")
        values = {"standard_deviation": sigma}
        for name in LISTS:
            where = f"{view.where}.{name}"
            values[name] = tuple(from_library(x, f"{where}[{k}]", "dp_accounting")[0] for k, x in enumerate(_list_of(view.field(name), where)))
        return cls.make(values, {"standard_deviation": note}, view.where)

    @classmethod
    def from_texts(cls, texts, where):
        values = {"standard_deviation": exact(texts.get("standard_deviation"), f"{where}.standard_deviation")}
        for name in LISTS:
            t = texts.get(name)
            if not isinstance(t, str) or len(t) > MAX_TEXT:
                raise InputError(f"{where}.{name}", "must be text: the exact numbers joined by ','")
            parts = t.split(",")
            if not 1 <= len(parts) <= MAX_COMPONENTS:
                raise InputError(f"{where}.{name}", f"must hold between 1 and {MAX_COMPONENTS} numbers, got {len(parts)}")
            values[name] = tuple(exact(s, f"{where}.{name}[{k}]") for k, s in enumerate(parts))
        return cls.make(values, {}, where)

    def texts(self) -> dict:
        out = {"standard_deviation": exact_str(self["standard_deviation"])}
        for name in LISTS:
            out[name] = ",".join(exact_str(x) for x in self[name])
        return out

    def components(self) -> tuple[fmpq, tuple]:
        """(p0, ((d, p), ...)): the total probability of the shift 0 and the positive standardised shifts d = c / sigma
        with their merged probabilities (zero probabilities dropped), d increasing: the pair of
        :class:`certify.events.pld_pairs.GaussianMixtureCurve` (the same measures as the event's)."""
        sigma = self["standard_deviation"]
        p0, merged = fmpq(0), {}
        for c, p in zip(self["sensitivities"], self["sampling_probs"]):
            if p == 0:
                continue
            if c == 0:
                p0 += p
            else:
                merged[c / sigma] = merged.get(c / sigma, fmpq(0)) + p
        return p0, tuple(sorted(merged.items()))

    def is_null(self) -> bool:
        return not self.components()[1]

    def rdp(self, alpha, relation):
        raise InputError("event", self.NO_RDP)

    def rdp_floats(self, alphas, relation):
        raise InputError("event", self.NO_RDP)
