"""The accounting contract of a DP-SGD guarantee, as data.

An (epsilon, delta) figure for DP-SGD means nothing without the contract it was computed under, and
contract mismatches are the largest source of wrong epsilons in practice (replace-one sensitivity 2C
accounted as C, fixed-size or shuffled batches accounted as Poisson). Every DP-SGD certificate records:

* ``sampling``: how batches are formed. ``poisson``: each example joins each step's batch
  independently with probability q (the sampling rate). ``fixed-size``: each step's batch is a uniformly
  random subset of exactly b of the n examples (sampling rate p = b/n). Shuffling (a random permutation
  cut into consecutive batches) is **not covered** by any accountant here and is refused.
* ``adjacency``: which datasets are neighbours. ``add-remove``: one example added or removed;
  ``replace-one``: one example replaced by another.
* what the noise multiplier is relative to: the clip norm C. The noise added to the summed clipped
  gradients has standard deviation sigma*C; the sensitivity of that sum is C under add/remove and 2C
  under replace-one, so the one-step Gaussian shift in units of the noise is Delta = 1/sigma
  (add/remove) or Delta = 2/sigma (replace-one).
* the privacy unit: one example (example-level DP).

Which accountants certify which contract (anything else is refused, never answered under another
contract):

* ``poisson`` + ``add-remove``: the Rényi accountant of the Poisson-subsampled Gaussian (Mironov,
  Talwar, Zhang 2019) and the PLD accountant;
* ``fixed-size`` + ``replace-one``: Bok's accountant (2026, Theorem 1), the Wang and Birrell baselines,
  and the PLD accountant (Bok's Proposition 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from .balls import InputError

SAMPLINGS = ("poisson", "fixed-size")
ADJACENCIES = ("add-remove", "replace-one")
PRIVACY_UNIT = "one example"
NOISE_RELATIVE_TO = "the clip norm C (noise standard deviation sigma*C)"

_SHUFFLE = ("shuffle", "shuffling", "shuffled")
#: (sampling, adjacency) -> the accountants that certify it
CERTIFIED: dict[tuple[str, str], tuple[str, ...]] = {
    ("poisson", "add-remove"): ("renyi", "pld"),
    ("fixed-size", "replace-one"): ("bok", "wang", "birrell", "pld"),
}


@dataclass(frozen=True)
class Contract:
    """A DP-SGD accounting contract (see the module docstring)."""

    sampling: str
    adjacency: str

    @property
    def sensitivity(self) -> str:
        """Sensitivity of the summed clipped gradients, in units of the clip norm C."""
        return "C" if self.adjacency == "add-remove" else "2C"

    @property
    def shift_numerator(self) -> int:
        """k in the one-step Gaussian shift Delta = k/sigma (1 for add/remove, 2 for replace-one)."""
        return 1 if self.adjacency == "add-remove" else 2

    @property
    def accountants(self) -> tuple[str, ...]:
        return CERTIFIED.get((self.sampling, self.adjacency), ())

    def to_inputs(self) -> dict[str, str]:
        """The contract as certificate input fields (exact text): :data:`CONTRACT_FIELDS`."""
        return {
            "sampling": self.sampling,
            "adjacency": self.adjacency,
            "sensitivity": self.sensitivity,
            "noise_multiplier_relative_to": "clip norm C",
            "privacy_unit": PRIVACY_UNIT,
        }

    def statement(self) -> str:
        """One line for summaries: what is protected, under which contract."""
        batches = (
            "Poisson-sampled batches (each example joins each step independently with probability q)"
            if self.sampling == "poisson"
            else "fixed-size batches (a uniformly random subset of b of the n examples each step)"
        )
        return (
            f"contract: {self.sampling} sampling, {self.adjacency} adjacency; {batches}; noise multiplier "
            f"relative to {NOISE_RELATIVE_TO}, sensitivity {self.sensitivity}; privacy unit: {PRIVACY_UNIT}"
        )


#: the certificate input fields that record a contract (see :meth:`Contract.to_inputs`)
CONTRACT_FIELDS = ("sampling", "adjacency", "sensitivity", "noise_multiplier_relative_to", "privacy_unit")

FIXED_SIZE_REPLACE_ONE = Contract("fixed-size", "replace-one")
POISSON_ADD_REMOVE = Contract("poisson", "add-remove")


def parse_contract(
    sampling: str,
    adjacency: str,
    accountant: str | None = None,
    sampling_name: str = "--sampling",
    adjacency_name: str = "--adjacency",
    accountant_name: str = "--accountant",
) -> Contract:
    """Validate a contract (and, if given, that ``accountant`` certifies it); InputError otherwise."""
    s = str(sampling).strip().lower()
    a = str(adjacency).strip().lower()
    if s in _SHUFFLE:
        raise InputError(
            sampling_name, f"shuffled batches are not covered: no accountant here certifies shuffling (admissible: {', '.join(SAMPLINGS)})"
        )
    if s not in SAMPLINGS:
        raise InputError(sampling_name, f"must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
    if a not in ADJACENCIES:
        raise InputError(adjacency_name, f"must be one of {', '.join(ADJACENCIES)}, got {adjacency!r}")
    c = Contract(s, a)
    if not c.accountants:
        supported = "; ".join(f"{x} + {y}" for x, y in CERTIFIED)
        raise InputError(sampling_name, f"the contract {s} sampling + {a} adjacency is not certified by any accountant here (certified: {supported})")
    if accountant is not None and accountant not in c.accountants:
        raise InputError(
            accountant_name,
            f"accountant {accountant!r} does not certify {s} sampling + {a} adjacency (it is certified by: {', '.join(c.accountants)})",
        )
    return c


def contract_from_inputs(inputs: dict, expected: Contract | None = None) -> Contract:
    """The contract recorded in a certificate's inputs (the checker's validator); InputError naming the field.

    Every field of :data:`CONTRACT_FIELDS` must be present and consistent with the sampling and adjacency;
    with ``expected`` the contract must be that one (a kind certifies one contract).
    """
    c = parse_contract(inputs.get("sampling", ""), inputs.get("adjacency", ""), sampling_name="sampling", adjacency_name="adjacency")
    for k, v in c.to_inputs().items():
        if inputs.get(k) != v:
            raise InputError(k, f"must be {v!r} under {c.sampling} + {c.adjacency}, got {inputs.get(k)!r}")
    if expected is not None and c != expected:
        raise InputError("sampling", f"this kind certifies {expected.sampling} + {expected.adjacency} only, got {c.sampling} + {c.adjacency}")
    return c
