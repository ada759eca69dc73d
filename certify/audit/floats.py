"""Float cross-checks from dp_accounting (optional): what the common library says for the same contract.

These values are floats, NOT certified: printed so that a disagreement with the certified bounds is
explained rather than hidden (e.g. Rényi at fractional orders vs our chord, or a PLD grid's bias). The
same contract is asked for: poisson + add-remove as ``PoissonSampledDpEvent`` under ADD_OR_REMOVE_ONE;
fixed-size + replace-one as ``SampledWithoutReplacementDpEvent(n, b, GaussianDpEvent(sigma/2))`` under
REPLACE_ONE (dp_accounting measures the noise multiplier against the replace-one sensitivity 2C, so our
sigma relative to C is 2z), with b/n the exact sampling rate in lowest terms. dp_accounting is never
required: without it the audit says so and goes on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .. import signals
from ..balls import float_of, fmpq
from .audit import MAX_PLD_STEPS
from .claim import AuditClaim


#: guard: the float accountants compose phase by phase (PLD: one convolution per phase)
MAX_FLOAT_PHASES = 200


@dataclass
class FloatValue:
    name: str  #: e.g. "RdpAccountant", "PLDAccountant (grid 1e-4)"
    epsilon: float | None
    seconds: float
    note: str = ""


def dp_accounting_version() -> str | None:
    try:
        import importlib.metadata as md
        import dp_accounting  # noqa: F401

        return md.version("dp-accounting")
    except Exception:  # not installed (or broken): no cross-check
        signals.raise_if_arrived()  # ... unless a signal broke the import
        return None


def _event(dpa, claim: AuditClaim):
    parts = []
    for ph in claim.schedule.phases:
        if claim.contract.sampling == "poisson":
            ev = dpa.PoissonSampledDpEvent(float_of(ph.sampling_rate), dpa.GaussianDpEvent(float_of(ph.noise_multiplier)))
        else:
            q = ph.sampling_rate
            z = float_of(ph.noise_multiplier) / 2
            ev = dpa.SampledWithoutReplacementDpEvent(int(q.q), int(q.p), dpa.GaussianDpEvent(z))
        parts.append(dpa.SelfComposedDpEvent(ev, ph.steps))
    return parts[0] if len(parts) == 1 else dpa.ComposedDpEvent(parts)


def cross_check(claim: AuditClaim, grid: fmpq, pld: bool = True) -> tuple[str | None, list[FloatValue]]:
    """(dp_accounting version or None, float epsilons of its RDP and PLD accountants at the claimed delta)."""
    version = dp_accounting_version()
    if version is None:
        return None, []
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    delta = float_of(claim.delta)
    if claim.ledger is not None:  # an event claim: dp_accounting's RdpAccountant on the same event
        return version, [_event_rdp(dpa, rdp_privacy_accountant, claim, delta)]
    rel = dpa.NeighboringRelation.ADD_OR_REMOVE_ONE if claim.contract.adjacency == "add-remove" else dpa.NeighboringRelation.REPLACE_ONE
    out = []
    accountants = [("RdpAccountant (default orders)", lambda: rdp_privacy_accountant.RdpAccountant(neighboring_relation=rel))]
    if len(claim.schedule.phases) > MAX_FLOAT_PHASES:
        return version, [FloatValue("dp_accounting", None, 0.0, f"not run: {len(claim.schedule.phases)} phases (guard: at most {MAX_FLOAT_PHASES})")]
    if pld and claim.schedule.total_steps <= MAX_PLD_STEPS:
        h = float_of(grid)
        accountants.append((f"PLDAccountant (grid {h:g})", lambda: pld_privacy_accountant.PLDAccountant(rel, value_discretization_interval=h)))
    for name, make in accountants:
        t0 = time.perf_counter()
        try:
            event = _event(dpa, claim)
            acc = make()
            if not acc.supports(event):
                out.append(FloatValue(name, None, time.perf_counter() - t0, "event not supported by this accountant"))
                continue
            acc.compose(event)
            eps = float(acc.get_epsilon(delta))
            out.append(FloatValue(name, eps, time.perf_counter() - t0))
        except Exception as err:  # a float library failing is reported, never fatal
            signals.raise_if_arrived()
            out.append(FloatValue(name, None, time.perf_counter() - t0, f"failed: {type(err).__name__}: {err}"[:200]))
    return version, out


def _library_event(dpa, obj):
    """dp_accounting's event object from the JSON form (class by name from ``dp_accounting.dp_event``)."""
    if isinstance(obj, list):
        return [_library_event(dpa, v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    cls = getattr(dpa.dp_event, obj["class_name"])
    return cls(**{k: _library_event(dpa, v) for k, v in obj.items() if k not in ("class_name", "module_name")})


def _event_rdp(dpa, rdp_module, claim: AuditClaim, delta: float) -> FloatValue:
    from ..events.mechanisms.base import DP_ACCOUNTING_NAMES

    name = "RdpAccountant (default orders)"
    t0 = time.perf_counter()
    try:
        rel = getattr(dpa.NeighboringRelation, DP_ACCOUNTING_NAMES[claim.ledger.relation])
        acc = rdp_module.RdpAccountant(neighboring_relation=rel)
        event = _library_event(dpa, claim.event)
        if not acc.supports(event):
            return FloatValue(name, None, time.perf_counter() - t0, "event not supported by this accountant")
        acc.compose(event)
        return FloatValue(name, float(acc.get_epsilon(delta)), time.perf_counter() - t0)
    except Exception as err:  # a float library failing is reported, never fatal
        signals.raise_if_arrived()
        return FloatValue(name, None, time.perf_counter() - t0, f"failed: {type(err).__name__}: {err}"[:200])
