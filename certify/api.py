"""The Python API of ``certify`` for DP-SGD practitioners: certified epsilons with their certificates.

Every function returns a :class:`Result`: the certified upper bound on epsilon as an exact rational
(``result.epsilon``, a ``fractions.Fraction``: the upper endpoint of an Arb ball that provably contains
the accountant's value), that ball, the accounting contract, and the JSON :class:`~certify.certificate.
Certificate` that ``certify verify`` re-checks. ``result.epsilon_float`` is a convenience float rounded
UP (never below the certified bound).

Exact inputs: :func:`dpsgd_epsilon` takes strings (``"0.01"``, ``"1e-5"``, ``"1/3"``), ints, Fractions;
a plain Python float is refused (0.01 is not 1/100). The library-shaped interfaces
(:class:`OpacusAccountant`, :func:`dp_event_epsilon`, :func:`from_dp_event`) take the floats those
libraries hold: each float is converted to its exact binary value and the certificate notes it
(``"<field>.note": "binary float 0.01 from Opacus; exact binary value ..."``); NaN and inf are refused.

Contracts (see :mod:`certify.contract`): ``poisson`` + ``add-remove`` is certified by the Rényi
accountant of the Poisson-subsampled Gaussian (:mod:`certify.poisson`, certificate kind
``dpsgd/renyi-poisson``, schedules of several phases allowed); ``fixed-size`` + ``replace-one`` by
Bok's accountant (``dpsgd/renyi-bok``, default; several phases: ``dpsgd/renyi-bok-schedule``) or the
Wang / Birrell baselines (one phase). Any other
combination, and shuffling, is refused with :class:`~certify.balls.InputError`.

Examples::

    >>> from certify import api
    >>> r = api.dpsgd_epsilon(sampling="poisson", adjacency="add-remove", sampling_rate="0.01",
    ...                       noise_multiplier="1.1", steps=1000, delta="1e-5")
    >>> r.epsilon_float                      # certified epsilon, rounded up
    1.7252295590317...
    >>> open("eps.json", "w").write(r.certificate.dumps())   # then: certify verify eps.json

    >>> acc = api.OpacusAccountant()         # shaped like opacus.accountants.RDPAccountant
    >>> for _ in range(1000):
    ...     acc.step(noise_multiplier=1.1, sample_rate=0.01)
    >>> acc.history
    [(1.1, 0.01, 1000)]
    >>> acc.get_epsilon(delta=1e-5).epsilon_float

    >>> import dp_accounting as dpa          # optional
    >>> ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000)
    >>> api.dp_event_epsilon(ev, 1e-5, dpa.NeighboringRelation.ADD_OR_REMOVE_ONE).epsilon
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .balls import InputError, arb, ball_endpoints, exact, float_above, fmpq, upper_decimal
from .certificate import Certificate
from .contract import Contract, parse_contract
from .poisson.accountant import certify_poisson
from .poisson.ecosystem import from_dp_event, from_library, opacus_history
from .poisson.schedule import Schedule, parse_delta, parse_schedule

__all__ = ["Result", "dpsgd_epsilon", "certify_schedule", "OpacusAccountant", "from_dp_event", "dp_event_epsilon"]


def _fraction(q: fmpq) -> Fraction:
    return Fraction(int(q.p), int(q.q))


@dataclass(frozen=True)
class Result:
    """A certified epsilon: exact upper bound, its ball, and the certificate that proves it."""

    epsilon: Fraction  #: certified upper bound (exact upper endpoint of ``ball``)
    ball: arb  #: Arb ball containing the accountant's epsilon at the recorded order
    certificate: Certificate
    delta: Fraction
    contract: Contract
    accountant: str  #: "renyi" (Poisson) or "bok" / "wang" / "birrell" (fixed-size)
    alpha: Fraction  #: the Rényi order the bound is evaluated at

    @property
    def epsilon_float(self) -> float:
        """Convenience float, rounded UP: the smallest double >= the certified epsilon."""
        return float_above(self.epsilon)

    @property
    def statement(self) -> str:
        return (
            f"({upper_decimal(self.ball, 6)}, {self.delta})-DP [certified upper bound rounded up, "
            f"accountant {self.accountant}, alpha = {self.alpha}]; {self.contract.statement()}"
        )

    def dumps(self) -> str:
        """The certificate as JSON text (write it to a file; ``certify verify FILE`` re-checks it)."""
        return self.certificate.dumps()

    def _run_text(self) -> str:
        i = self.certificate.inputs
        if i.get("phases") == "1":
            return f"q={i['phase[0].sampling_rate']}, sigma={i['phase[0].noise_multiplier']}, T={i['phase[0].steps']}"
        if "phases" in i:
            return f"{i['phases']} phases"
        return ", ".join(f"{k}={i[k]}" for k in ("sampling_rate", "noise_multiplier", "steps") if k in i)

    def __repr__(self) -> str:
        """One readable line: the certified bound (outward decimal, rounded up), delta, accountant, order, contract, run."""
        c = self.contract
        return (
            f"Result(epsilon <= {upper_decimal(self.ball, 6)}, delta={self.delta}, accountant={self.accountant}, "
            f"alpha={self.alpha}, contract={c.sampling} + {c.adjacency}, {self._run_text()}, kind={self.certificate.kind})"
        )

    def _repr_html_(self) -> str:
        """Jupyter's rendering: a small table (every text escaped), the bound first."""
        from html import escape

        c = self.contract
        rows = [
            ("epsilon", f"&le; {escape(upper_decimal(self.ball, 10))} (certified upper bound, rounded up)"),
            ("delta", escape(str(self.delta))),
            ("run", escape(self._run_text())),
            ("accountant", escape(f"{self.accountant} (alpha = {self.alpha})")),
            ("contract", escape(f"{c.sampling} + {c.adjacency}: {c.statement()}")),
            ("certificate", escape(f"kind {self.certificate.kind}; Result.dumps() is the JSON `certify verify` re-checks")),
        ]
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>" for k, v in rows)
        return f"<table class='certify-result'>{body}</table>"


def _result(cert: Certificate, delta: fmpq, contract: Contract, accountant: str) -> Result:
    eps = cert.quantities["epsilon"].value
    if accountant == "renyi":
        alpha = exact(cert.witnesses["alpha"], "alpha")
    elif accountant == "bok":
        alpha = exact(cert.inputs["alpha"] if "alpha" in cert.inputs else cert.witnesses["alpha"], "alpha")
    else:
        alpha = ball_endpoints(cert.quantities["alpha"].value)[1]
    return Result(_fraction(ball_endpoints(eps)[1]), eps, cert, _fraction(delta), contract, accountant, _fraction(alpha))


def certify_schedule(
    schedule: Schedule, delta, *, accountant: str | None = None, alpha=None, notes: dict | None = None, fractional: str | None = None
) -> Result:
    """Certify a :class:`~certify.poisson.schedule.Schedule` under its own contract (exact delta).

    ``fractional`` (poisson only): None (default: "integral", as tight as the float libraries, unless the schedule
    has so many distinct phases that checking would be long), "chord" or "integral";
    see :func:`certify.poisson.accountant.certify_poisson`.
    """
    c = schedule.contract
    parse_contract(c.sampling, c.adjacency, accountant, sampling_name="sampling", adjacency_name="adjacency", accountant_name="accountant")
    d = parse_delta(delta, "delta")
    if accountant == "pld":
        raise InputError(
            "accountant", "the certified PLD accountant is not available through certify.api yet (use accountant=None for the Rényi accountant)"
        )
    if c.sampling == "poisson":
        return _result(certify_poisson(schedule, d, alpha, notes=notes, fractional=fractional), d, c, "renyi")
    # fixed-size + replace-one: several phases by Bok's rho per phase composed at one alpha; one phase as below
    if len(schedule.phases) != 1:
        if accountant not in (None, "bok"):
            raise InputError(
                "accountant",
                f"{accountant!r} takes one phase; a fixed-size schedule of "
                f"{len(schedule.phases)} phases is certified by Bok's accountant (accountant=None)",
            )
        if notes:
            raise InputError("notes", "schedules record their notes per phase (Schedule.notes)")
        from .poisson.fixed_size import certify_fixed_size_schedule

        return _result(certify_fixed_size_schedule(schedule, d, alpha), d, c, "bok")
    ph = schedule.phases[0]
    if ph.sampling_rate >= 1:
        raise InputError("sampling_rate", "must be in (0, 1) under fixed-size sampling (b < n)")
    extra = dict(c.to_inputs())
    for k, v in schedule.notes:  # "phase[0].sampling_rate" -> "sampling_rate.note" (the one-phase input names)
        extra[k.split(".", 1)[1] + ".note"] = v
    extra.update(notes or {})
    name = accountant or "bok"
    if name == "bok":
        from .dpsgd.accountant import certify_dpsgd
        from .dpsgd.problem import parse_alpha as bok_alpha

        a = None if alpha is None else bok_alpha(alpha, "alpha")
        out = certify_dpsgd(ph.sampling_rate, ph.noise_multiplier, ph.steps, d, a, extra_inputs=extra)
        return _result(out.certificate, d, c, "bok")
    from .dpsgd.baselines.certificates import certify_baseline
    from .dpsgd.problem import parse_alpha as bok_alpha

    a = None if alpha is None else bok_alpha(alpha, "alpha")
    cert = certify_baseline(name, ph.sampling_rate, ph.noise_multiplier, ph.steps, d, a, extra)
    return _result(cert, d, c, name)


def dpsgd_epsilon(
    *,
    sampling: str,
    adjacency: str,
    sampling_rate=None,
    noise_multiplier=None,
    steps=None,
    delta,
    accountant: str | None = None,
    schedule=None,
    alpha=None,
    fractional: str | None = None,
) -> Result:
    """Certified epsilon of DP-SGD under an explicit accounting contract.

    Give either ``sampling_rate``, ``noise_multiplier``, ``steps`` (one phase) or ``schedule`` (a
    :class:`~certify.poisson.schedule.Schedule`, or a list of phase dicts / ``{"contract", "phases"}``
    object as in a schedule file). Numbers are exact: strings, ints, Fractions (plain floats are
    refused). ``accountant``: None (the default of the contract: "renyi" for poisson + add-remove, "bok"
    for fixed-size + replace-one), or one that certifies the contract. ``alpha`` fixes the Rényi order.
    ``fractional``: how a fractional order is bounded (poisson): None (default, the defining integral unless checking
    it would be long), "chord" or "integral" (:func:`certify.poisson.accountant.certify_poisson`).
    Raises InputError (naming the parameter) for bad input or an uncovered contract.
    """
    contract = parse_contract(sampling, adjacency, accountant, sampling_name="sampling", adjacency_name="adjacency", accountant_name="accountant")
    if schedule is not None:
        given = [n for n, v in (("sampling_rate", sampling_rate), ("noise_multiplier", noise_multiplier), ("steps", steps)) if v is not None]
        if given:
            raise InputError(given[0], "give either a schedule or sampling_rate/noise_multiplier/steps, not both")
        if isinstance(schedule, Schedule):
            if schedule.contract != contract:
                own = schedule.contract
                raise InputError(
                    "schedule",
                    f"its contract {own.sampling} + {own.adjacency} differs from "
                    f"{contract.sampling} + {contract.adjacency}: mixed contracts are refused",
                )
            sch = schedule
        else:
            sch = parse_schedule(schedule, contract=contract)
    else:
        for n, v in (("sampling_rate", sampling_rate), ("noise_multiplier", noise_multiplier), ("steps", steps)):
            if v is None:
                raise InputError(n, "required (or give schedule=)")
        from .poisson.schedule import parse_noise_multiplier, parse_sampling_rate, parse_steps

        sch = Schedule(
            contract,
            (
                _phase(
                    parse_sampling_rate(sampling_rate, "sampling_rate"),
                    parse_noise_multiplier(noise_multiplier, "noise_multiplier"),
                    parse_steps(steps, "steps"),
                ),
            ),
            source="certify.api",
        )
    return certify_schedule(sch, delta, accountant=accountant, alpha=alpha, fractional=fractional)


def _phase(q, s, t):
    from .poisson.schedule import Phase

    return Phase(q, s, t)


def _library_delta(delta, library: str) -> tuple[fmpq, dict]:
    d, note = from_library(delta, "delta", library)
    d = parse_delta(d, "delta")
    return d, ({"delta.note": note} if note else {})


# --------------------------------------------------------------------------------------------
# Opacus-shaped accountant
# --------------------------------------------------------------------------------------------
class OpacusAccountant:
    """An accountant shaped like Opacus's ``RDPAccountant`` whose ``get_epsilon`` is certified.

    ``step(noise_multiplier=, sample_rate=)`` records one step (floats accepted: converted exactly and
    noted in the certificate); ``history`` is a list of ``(noise_multiplier, sample_rate, num_steps)``
    with consecutive identical steps merged; ``get_epsilon(delta)`` returns a :class:`Result` (poisson +
    add-remove, the contract Opacus accounts); ``state_dict()`` / ``load_state_dict()`` carry the history.
    """

    def __init__(self) -> None:
        self.history: list[tuple] = []

    @classmethod
    def mechanism(cls) -> str:
        return "rdp"

    def step(self, *, noise_multiplier, sample_rate) -> None:
        from .poisson.schedule import parse_noise_multiplier, parse_sampling_rate

        parse_noise_multiplier(from_library(noise_multiplier, "noise_multiplier", "Opacus")[0], "noise_multiplier")
        parse_sampling_rate(from_library(sample_rate, "sample_rate", "Opacus")[0], "sample_rate")
        if self.history:
            nm, sr, n = self.history[-1]
            if nm == noise_multiplier and sr == sample_rate and type(nm) is type(noise_multiplier) and type(sr) is type(sample_rate):
                self.history[-1] = (nm, sr, n + 1)
                return
        self.history.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        return sum(n for _, _, n in self.history)

    def schedule(self) -> Schedule:
        return opacus_history(self.history, "history")

    def get_epsilon(self, delta, alpha=None, fractional: str | None = None) -> Result:
        """Certified epsilon at ``delta`` (float accepted, converted exactly) for the recorded history."""
        if not self.history:
            raise InputError("history", "is empty: call step() first")
        d, notes = _library_delta(delta, "the caller")
        return certify_schedule(self.schedule(), d, alpha=alpha, notes=notes, fractional=fractional)

    def state_dict(self) -> dict:
        return {"history": [tuple(e) for e in self.history], "mechanism": self.mechanism()}

    def load_state_dict(self, state_dict: dict) -> None:
        opacus_history(state_dict, "state_dict")  # validates (raises InputError naming the entry)
        self.history = [tuple(e) for e in state_dict["history"]]


# --------------------------------------------------------------------------------------------
# dp_accounting-shaped function
# --------------------------------------------------------------------------------------------
def dp_event_epsilon(event, delta, neighboring_relation, *, accountant: str | None = None, alpha=None, fractional: str | None = None) -> Result:
    """Certified epsilon of a dp_accounting ``DpEvent`` at ``delta`` under ``neighboring_relation``.

    Supported events: Gaussian, PoissonSampled (ADD_OR_REMOVE_ONE), SampledWithoutReplacement
    (REPLACE_ONE; dp_accounting's noise multiplier z is relative to the replace-one sensitivity, so sigma
    = 2z relative to C), SelfComposed, Composed, NoOp; anything else raises InputError naming its class.
    Floats are converted exactly and noted in the certificate.
    """
    schedule = from_dp_event(event, neighboring_relation)
    d, notes = _library_delta(delta, "the caller")
    return certify_schedule(schedule, d, accountant=accountant, alpha=alpha, notes=notes, fractional=fractional)
