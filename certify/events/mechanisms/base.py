"""What every mechanism of the event algebra provides to the Rényi accountant (one module per mechanism).

A mechanism is a frozen dataclass of exact parameters (``params``: (name, value) pairs in the order of ``PARAMS``,
each value an fmpq, or a tuple of ints for a list field; ``notes``: provenance notes of values that came as binary
floats). Its class attributes say what dp_accounting event it reads (``CLASS``, ``FIELDS``), under which
neighbouring relations it is certified (``RELATIONS``), which theorem gives its bound (``EQUATION``) and, when the
bound is only an upper bound on the mechanism's exact RDP, why (``UPPER_ONLY``: the certificate's statement quotes
it). Its methods:

* :meth:`rdp` ``(alpha, relation) -> arb``: a ball whose upper endpoint bounds the Rényi divergence of order
  ``alpha > 1`` of the mechanism's worst neighbouring pair, both orders (rounding: outward, by Arb);
* :meth:`rdp_floats`: the same in floats on an array of orders (numpy, imported only to choose an order);
* :meth:`pure_epsilon` ``(relation) -> arb | None``: the epsilon of (epsilon, 0)-DP for a pure mechanism;
* :attr:`extra_delta`: the delta an (epsilon, delta) event adds outside its Rényi curve (0 for all others);
* :meth:`work_seconds`: the estimated cost of :meth:`rdp` (decided before any sum).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...balls import InputError, arb, ball, exact, exact_str, fmpq, require_in

ADD_REMOVE, REPLACE_ONE, REPLACE_SPECIAL = "add-remove", "replace-one", "replace-special"
RELATIONS = (ADD_REMOVE, REPLACE_ONE, REPLACE_SPECIAL)
ANY = frozenset(RELATIONS)
#: dp_accounting's names of the relations
DP_ACCOUNTING_NAMES = {ADD_REMOVE: "ADD_OR_REMOVE_ONE", REPLACE_ONE: "REPLACE_ONE", REPLACE_SPECIAL: "REPLACE_SPECIAL"}
_ZERO = fmpq(0)
#: the largest parameter magnitude accepted (a noise scale of 10^30 is private enough to be 0)
MAX_PARAM = fmpq(10) ** 30


@dataclass(frozen=True)
class Mechanism:
    params: tuple
    notes: tuple = ()

    CLASS: ClassVar[str] = ""
    FIELDS: ClassVar[tuple] = ()  # dp_accounting's fields of the event
    OPTIONAL: ClassVar[dict] = {}  # fields with dp_accounting defaults
    PARAMS: ClassVar[tuple] = ()  # recorded parameters (FIELDS, or the flattened fields of a nested event)
    RELATIONS: ClassVar[frozenset] = ANY
    EQUATION: ClassVar[str] = ""
    UPPER_ONLY: ClassVar[str] = ""

    def __hash__(self) -> int:
        """Hashed once per object (a mechanism keys the float-curve memo on every query; hashing fmpq costs microseconds)."""
        h = self.__dict__.get("_hash")
        if h is None:  # (an fmpq hashes through a Fraction, 6 us: its numerator and denominator instead, 0.4 us each;
            # the notes by their fields only: equal mechanisms have equal notes, and a FloatNote is written when hashed)
            h = hash((type(self).__name__, tuple((k, _hash_key(v)) for k, v in self.params), tuple(k for k, _ in self.notes)))
            object.__setattr__(self, "_hash", h)
        return h

    def __getitem__(self, name: str):
        for k, v in self.params:
            if k == name:
                return v
        raise KeyError(name)

    # ---- reading -------------------------------------------------------------------------------
    @classmethod
    def validate(cls, values: dict, where: str) -> dict:
        """The parameters, range-checked (InputError naming ``where.<param>`` and the range)."""
        return values

    @classmethod
    def make(cls, values: dict, notes: dict, where: str) -> Mechanism:
        v = cls.validate(dict(values), where)
        return cls(tuple((k, v[k]) for k in cls.PARAMS), tuple(sorted((k, n) for k, n in notes.items() if n)))

    @classmethod
    def read(cls, view) -> Mechanism:
        """From an event view (:class:`certify.event_tree.EventView`): fields checked, numbers exact, notes kept."""
        view.check_fields(cls.FIELDS, cls.OPTIONAL)
        values, notes = {}, {}
        for k in cls.PARAMS:
            values[k], notes[k] = view.number_noted(k, default=cls.OPTIONAL[k]) if k in cls.OPTIONAL else view.number_noted(k)
        return cls.make(values, notes, view.where)

    @classmethod
    def from_texts(cls, texts: dict, where: str) -> Mechanism:
        """From the certificate's recorded texts (``texts[param]``), the same validators."""
        return cls.make({k: exact(texts.get(k), f"{where}.{k}") for k in cls.PARAMS}, {}, where)

    def texts(self) -> dict:
        """The recorded text of each parameter."""
        return {k: exact_str(v) for k, v in self.params}

    def describe(self) -> str:
        return f"{self.CLASS}(" + ", ".join(f"{k}={t}" for k, t in self.texts().items()) + ")"

    # ---- the accountant's view --------------------------------------------------------------------
    def rdp(self, alpha: fmpq, relation: str) -> arb:  # pragma: no cover - every mechanism defines it
        raise NotImplementedError

    def rdp_floats(self, alphas, relation: str):  # pragma: no cover
        raise NotImplementedError

    def rdp_floats_fine(self, alphas, relation: str):
        """A finer float estimate near the chosen order (default: :meth:`rdp_floats`)."""
        return self.rdp_floats(alphas, relation)

    def pure_epsilon(self, relation: str) -> arb | None:
        return None

    def is_null(self) -> bool:
        """True when the mechanism releases nothing about the data (a NoOp: sampling probability 0, epsilon 0, ...)."""
        return False

    @property
    def extra_delta(self) -> fmpq:
        return _ZERO

    def work_seconds(self, alpha: fmpq, prec: int) -> float:
        return 2e-5 * max(1.0, prec / 256) ** 1.5


def _hash_key(v):
    """A key of a parameter value whose hash is consistent with ``==`` (fmpq equality is equality of the lowest-terms
    pair; an integral fmpq keys as its numerator, whose hash is the int's, as ``fmpq(3) == 3``)."""
    if type(v) is fmpq:
        return v.p if v.q == 1 else (v.p, v.q)
    return v


class PureEpsilon(Mechanism):
    """A mechanism read as one field ``epsilon`` >= 0 of an eps-DP guarantee (pure: its epsilon; null at 0); a
    subclass gives its RDP bound."""

    FIELDS = PARAMS = ("epsilon",)

    @classmethod
    def validate(cls, values, where):
        nonnegative(values, "epsilon", where)
        return values

    def is_null(self) -> bool:
        return self["epsilon"] == 0

    def pure_epsilon(self, relation):
        return ball(self["epsilon"])


def positive(values: dict, name: str, where: str, hi=MAX_PARAM) -> fmpq:
    return require_in(f"{where}.{name}", values[name], 0, hi, "(]")


def nonnegative(values: dict, name: str, where: str, hi=MAX_PARAM) -> fmpq:
    return require_in(f"{where}.{name}", values[name], 0, hi, "[]")


def integer_in(values: dict, name: str, where: str, lo: int, hi: int) -> fmpq:
    v = values[name]
    if v.q != 1 or not (lo <= v <= hi):
        raise InputError(f"{where}.{name}", f"must be an integer in [{lo}, {hi}], got {exact_str(v)}"[:200])
    return v


# --------------------------------------------------------------------------------------------
# The Rényi divergence of binary randomized response with ratio e^eps: the worst pure eps-DP pair
# --------------------------------------------------------------------------------------------
def rr_eps_rdp(alpha: fmpq, eps: fmpq) -> arb:
    """R(alpha) = log((e^(alpha eps) + e^((1-alpha) eps)) / (1 + e^eps)) / (alpha - 1), both orders alike.

    The Rényi divergence of the pair P = (e^eps, 1)/(1 + e^eps), Q = (1, e^eps)/(1 + e^eps) (Mironov 2017,
    arXiv:1702.07476, Sec. 6 / Prop. 5: randomized response). Every (eps, 0)-DP mechanism is, for each neighbouring
    pair, a post-processing of this pair (Kairouz, Oh, Viswanath 2015: the privacy region of randomized response, at delta = 0), so by the data
    processing inequality of the Rényi divergence R(alpha) bounds its RDP (the bound dp_accounting applies to
    EpsilonDeltaDpEvent). Identity: obligation ``E-rr-eps`` (:mod:`certify.events.proofs`). Ball: upper endpoint
    valid (Arb, outward)."""
    if eps == 0:
        return arb(0)
    a, e = ball(alpha), ball(eps)
    k = ((a * e).exp() + ((1 - a) * e).exp()).log() - e.exp().log1p()
    return k / ball(alpha - 1)


def rr_eps_floats(alphas, eps: float):
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        k = np.logaddexp(alphas * eps, (1 - alphas) * eps) - np.logaddexp(0.0, eps)
        return k / (alphas - 1)
