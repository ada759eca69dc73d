"""The certified Rényi accountant of Bok (2026): Corollary 1 / (6) on top of the one-step rho (5).

    eps = T rho(alpha, p, 2/sigma) + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1)

alpha is chosen by float estimates with a binary search that relies on the unimodality of
Proposition 3 (:mod:`certify.dpsgd.estimate`); the certificate is produced at that alpha only (any
alpha gives a valid bound; optimality needs no proof). ``alpha`` may also be fixed by the caller.

rho depends on (alpha, p, sigma, gamma) only. It is memoised in-process and, optionally, on disk
(``cache_dir``, or the environment variable ``CERTIFY_CACHE_DIR``) keyed by the exact inputs. A disk
entry holds only the *witness* of the search (leaves and trapezoidal rules); it is re-evaluated by
the checker's own evaluator before use, so a stale or tampered cache can cost time but never
soundness.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass

from ..balls import InputError, ctx, escalate, exact_str, fmpq, upper_decimal
from ..certificate import Certificate, Evaluation
from ..inputfile import load_json, warn_discarded
from .certificates import (
    KIND_RENYI,
    KIND_RHO,
    REPORT_DIGITS,
    conclude_dp,
    conclude_rho,
    fill_renyi,
    fill_rho,
    fixed_size_inputs,
    RhoFacts,
    method_hypotheses,
    parse_delta,
    parse_gamma,
    parse_steps,
    witness_from_json,
    witness_json,
)
from .estimate import choose_alpha
from .problem import Problem, parse_alpha, parse_p, parse_sigma
from .search import SearchResult, rho_search

_MEMO: dict[tuple, SearchResult] = {}
_POINTS: dict[tuple, dict] = {}


def clear_memo() -> None:
    """Forget every memoised rho (for cold-cache measurements and tests)."""
    _MEMO.clear()
    _POINTS.clear()


def _cache_dir(cache_dir: str | None) -> str | None:
    return cache_dir or os.environ.get("CERTIFY_CACHE_DIR") or None


def _disk_key(prob: Problem, gamma: fmpq | None, prec: int) -> str:
    text = json.dumps(
        {"kind": "dpsgd-rho-witness/2", "inputs": prob.inputs(), "gamma": None if gamma is None else exact_str(gamma), "prec": prec}, sort_keys=True
    )
    return hashlib.sha256(text.encode()).hexdigest()


#: what a malformed cached witness can raise while it is read or evaluated: it is discarded, never a crash
BAD_CACHE_ENTRY = (InputError, ValueError, KeyError, TypeError, IndexError, AttributeError, ArithmeticError, RecursionError)


def _disk_load(cache_dir: str, key: str) -> SearchResult | None:
    """The cached witness (read as a regular file by the one reader), or None; a bad entry is discarded with a warning."""
    path = os.path.join(cache_dir, f"rho-{key}.json")
    if not os.path.lexists(path):
        return None
    try:
        return witness_from_json(load_json(path, "--cache-dir"))
    except BAD_CACHE_ENTRY as err:
        warn_discarded(path, err)
        return None


def _disk_store(cache_dir: str, key: str, res: SearchResult) -> None:
    from ..cli import write_atomically  # the one atomic-write helper (umask mode, temp removed on error)

    os.makedirs(cache_dir, exist_ok=True)
    write_atomically(os.path.join(cache_dir, f"rho-{key}.json"), json.dumps(witness_json(res)), "--cache-dir")


def find_rho_witness(prob: Problem, gamma: fmpq | None = None, cache_dir: str | None = None) -> tuple[SearchResult, str]:
    """The search witness for rho at the current precision: memo, then disk cache, then search.

    Returns (witness, source) with source in {"memo", "disk", "search"}. A disk witness is not
    trusted: the caller evaluates it with the checker's evaluator (which rejects a bad one).
    A search that stopped early at its budget is never reused (a later call may have a larger budget).
    """
    prec = ctx.prec
    mkey = (prob, gamma, prec)
    cdir = _cache_dir(cache_dir)
    dkey = _disk_key(prob, gamma, prec)
    if mkey in _MEMO:
        if cdir and not os.path.exists(os.path.join(cdir, f"rho-{dkey}.json")):
            _store(cdir, dkey, _MEMO[mkey])  # the caller asked for an on-disk cache: fill it from the memo
        return _MEMO[mkey], "memo"
    if cdir:
        res = _disk_load(cdir, dkey)
        if res is not None and not getattr(res, "recorded_stopped_early", False):
            return res, "disk"
    res = rho_search(prob, gamma)
    if res.stopped_early:
        return res, "search"
    _MEMO[mkey] = res
    if cdir:
        _store(cdir, dkey, res)
    return res, "search"


def _store(cdir: str, dkey: str, res: SearchResult) -> None:
    try:
        _disk_store(cdir, dkey, res)
    except (OSError, InputError):  # e.g. the entry's path is not a regular file: the cache is optional
        pass


@dataclass
class AccountantRun:
    """What :func:`certify_rho` and :func:`certify_dpsgd` return: the certificate, plus what the command's summary
    prints and the certificate does not record (search facts, the witness object, where it came from, timings)."""

    certificate: Certificate
    facts: RhoFacts
    witness: SearchResult
    source: str
    seconds: float
    alpha_evaluations: int = 0


def _produce(prob: Problem, gamma, cache_dir, build) -> tuple[Evaluation, dict, SearchResult, str, int]:
    """Run ``build(ev, res, cache)`` on the witness, escalating precision when undecided.

    A disk-cached witness that the evaluator rejects is discarded and the search is re-run.
    """

    def compute(prec):
        res, source = find_rho_witness(prob, gamma, cache_dir)
        cache = _POINTS.setdefault((prob, prec), {})
        for u, pb in res.point_bounds.items():  # reuse what this process's search computed
            if u == 0 or res.rules.get(u) == pb.rule:
                cache[(u, pb.rule)] = pb
        ev = Evaluation()
        try:
            facts = build(ev, res, cache)
        except BAD_CACHE_ENTRY as err:
            if source != "disk":
                raise
            sys.stderr.write(
                f"certify: warning: cached rho witness for alpha={prob.alpha}, p={exact_str(prob.p)}, "
                f"sigma={exact_str(prob.sigma)} rejected by the checker ({err}); recomputing\n"
            )
            res, source = rho_search(prob, gamma), "search"
            ev = Evaluation()
            facts = build(ev, res, cache)
        if not res.stopped_early:
            _MEMO[(prob, gamma, prec)] = res
        return ev, facts, res, source, prec

    return escalate(compute, what=f"rho(alpha={prob.alpha}, p={exact_str(prob.p)}, sigma={exact_str(prob.sigma)})")


def _validated_problem(prob: Problem) -> Problem:
    """A Problem built directly (not by make_problem) is validated like the CLI's inputs."""
    if not isinstance(prob, Problem):
        raise InputError("prob", "must be a certify.dpsgd.problem.Problem (see make_problem)")
    return Problem(parse_alpha(prob.alpha, "alpha"), parse_p(prob.p, "p"), parse_sigma(prob.sigma, "sigma"))


def certify_rho(prob: Problem, gamma=None, cache_dir: str | None = None) -> AccountantRun:
    """Certificate `dpsgd/rho-bok` for rho(alpha, p, 2/sigma) of (5).

    ``gamma`` (exact: str, int, Fraction or fmpq; floats refused) is validated like ``--gamma``.
    """
    t0 = time.perf_counter()
    prob = _validated_problem(prob)
    gamma = None if gamma is None else parse_gamma(gamma, "gamma")
    ev, facts, res, source, prec = _produce(prob, gamma, cache_dir, lambda ev, res, cache: fill_rho(prob, res, ev, cache))
    rho_text = upper_decimal(ev.quantities["rho"].value, REPORT_DIGITS)
    conclude_rho(ev, prob, rho_text)
    wit = witness_json(res, facts.keys)
    wit["reported_rho"] = rho_text
    inputs = prob.inputs()
    if gamma is not None:
        inputs["gamma"] = exact_str(gamma)
    cert = Certificate(KIND_RHO, inputs, ev, wit, None, prec)
    return AccountantRun(cert, facts, res, source, time.perf_counter() - t0)


def certify_dpsgd(p, sigma, steps, delta, alpha=None, gamma=None, cache_dir: str | None = None, extra_inputs: dict | None = None) -> AccountantRun:
    """Certificate `dpsgd/renyi-bok`: (eps, delta)-DP of T steps of DP-SGD by Corollary 1 / (6).

    Every number is exact (str such as "0.01" or "1/100", int, fractions.Fraction or fmpq; a float is
    refused) and validated like the CLI: 0 < p < 1, sigma > 0, integer steps >= 1, 0 < delta < 1,
    integer alpha in [2, 256], 0 < gamma <= 1; ``extra_inputs`` may only record batch_size and
    dataset_size (which must give p = b/n), the contract fields (fixed-size + replace-one; always recorded)
    and provenance notes.
    """
    t0 = time.perf_counter()
    p, sigma = parse_p(p, "p"), parse_sigma(sigma, "sigma")
    steps, delta = parse_steps(steps, "steps"), parse_delta(delta, "delta")
    alpha = None if alpha is None else parse_alpha(alpha, "alpha")
    gamma = None if gamma is None else parse_gamma(gamma, "gamma")
    extra = fixed_size_inputs(extra_inputs, p)
    n_eval = 0
    if alpha is None:
        alpha, n_eval = choose_alpha(p, sigma, steps, delta)
    prob = Problem(alpha, p, sigma)
    ev, facts, res, source, prec = _produce(prob, gamma, cache_dir, lambda ev, res, cache: fill_renyi(prob, steps, delta, res, ev, cache))
    eps_text = upper_decimal(ev.quantities["epsilon"].value, REPORT_DIGITS)
    hyps = method_hypotheses(ev)
    conclude_dp(ev, f"DP-SGD with p = {exact_str(p)}, sigma = {exact_str(sigma)} (Bok 2026)", alpha, steps, delta, eps_text, hyps)
    inputs = prob.inputs()
    inputs.update({"steps": str(steps), "delta": exact_str(delta)})
    if gamma is not None:
        inputs["gamma"] = exact_str(gamma)
    inputs.update(extra)
    wit = witness_json(res, facts.keys)
    wit["reported_epsilon"] = eps_text
    cert = Certificate(KIND_RENYI, inputs, ev, wit, None, prec)
    return AccountantRun(cert, facts, res, source, time.perf_counter() - t0, n_eval)
