"""Helpers of the events/pld tests, written once: event builders (dp_accounting's named-tuple JSON), the certified
brackets of a ledger as mpmath numbers, and the exact T-fold delta of a finite-output pair by enumeration."""

from __future__ import annotations

import itertools

import mpmath as mp

from certify.balls import ball_endpoints
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld


def selfc(event, count):
    return {"class_name": "SelfComposedDpEvent", "count": count, "event": event}


def composed(*events):
    return {"class_name": "ComposedDpEvent", "events": list(events)}


def gauss(z):
    return {"class_name": "GaussianDpEvent", "noise_multiplier": z}


def laplace(b):
    return {"class_name": "LaplaceDpEvent", "noise_multiplier": b}


def poisson_gauss(q, z):
    return {"class_name": "PoissonSampledDpEvent", "sampling_probability": q, "event": gauss(z)}


def mp_of(x) -> mp.mpf:
    """An exact fmpq as an mpmath number (rounded at the working precision)."""
    return mp.mpf(int(x.p)) / int(x.q)


def bracket(cert, name_low, name_up):
    """(lower endpoint of the ball of ``name_low``, upper endpoint of that of ``name_up``) as mpmath numbers."""
    lo = ball_endpoints(cert.quantities[name_low].value)[0]
    hi = ball_endpoints(cert.quantities[name_up].value)[1]
    return mp_of(lo), mp_of(hi)


def eps_bracket(event, relation, delta, grid):
    """((epsilon_lower, epsilon_upper), certificate) of the ledger at ``delta``."""
    cert = certify_events_pld(ledger_of(event, relation), delta=delta, grid=grid)
    return bracket(cert, "epsilon_lower", "epsilon_upper"), cert


def delta_bracket(event, relation, eps, grid):
    """((delta_lower, delta_upper), certificate) of the ledger at ``eps``."""
    cert = certify_events_pld(ledger_of(event, relation), epsilon=eps, grid=grid)
    return bracket(cert, "delta_lower", "delta_upper"), cert


def ref_discrete_delta(atoms, T, eps):
    """Exact T-fold delta(eps) of a finite-output pair given by its P-loss atoms [(loss, P-mass)], by enumerating the
    multinomial counts: sum over outcomes of P(outcome) (1 - e^(eps - loss))_+."""
    eps = mp.mpf(eps)
    total = mp.mpf(0)
    for counts in itertools.product(range(T + 1), repeat=len(atoms)):
        if sum(counts) != T:
            continue
        coef = mp.factorial(T)
        loss, prob = mp.mpf(0), mp.mpf(1)
        for c, (l, m) in zip(counts, atoms):
            coef /= mp.factorial(c)
            loss += c * l
            prob *= m**c
        if loss > eps:
            total += coef * prob * (1 - mp.e ** (eps - loss))
    return total
