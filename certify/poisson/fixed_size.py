"""Certificate kind ``dpsgd/renyi-bok-schedule``: a fixed-size, replace-one DP-SGD run of several phases.

Phase i runs T_i steps with fixed-size batches at sampling rate p_i = b_i/n and noise multiplier sigma_i
(fixed-size sampling, replace-one adjacency: Bok 2026's setting). At one integer Rényi order alpha:

  ``phase[i].rho``  Bok's certified one-step bound rho(alpha, p_i, 2/sigma_i) of (5) (Theorem 1), with
                    every quantity and claim of its ``dpsgd/rho-bok`` evaluation prefixed ``phase[i].``
                    (the witness of phase i is the search witness of that kind, re-checked, never re-run);
  ``rdp_total``     sum_i T_i rho_i: Rényi composition over all steps of all phases (Mironov 2017,
                    Prop. 1: RDP at one order adds up under adaptive composition);
  ``epsilon``       rdp_total + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1), the conversion of
                    Bok's (6) (Corollary 1) applied to the composed bound; its upper endpoint is the
                    certified epsilon.

alpha is chosen by floats (a choice: any admissible integer alpha gives a valid bound) and recorded as a
witness; the checker re-evaluates at the recorded alpha only. The conclusion ``dp`` rests on the range
hypotheses of every phase and of delta and alpha, and on each phase's method claims (Proposition 2 (a)/(b),
small-p). A phase whose branch-and-bound stopped at its budget gives a valid, looser bound and the claim
``phase[i].search_met_gamma`` false (``certify verify`` exit 6).
"""

from __future__ import annotations

import math
import time

from ..balls import InputError, arb, ball_endpoints, escalate, exact, exact_str, fmpq, lower_decimal, upper_decimal, exact_int
from ..certificate import Budget, Certificate, Claim, Evaluation, Quantity, reported_bound, witness_field
from ..contract import FIXED_SIZE_REPLACE_ONE
from ..dpsgd.accountant import find_rho_witness
from ..dpsgd.certificates import (
    METHOD_CLAIMS,
    REPORT_DIGITS,
    SEARCH_WITNESSES,
    _extra_bits_estimate,
    check_gamma,
    check_leaf_keys,
    eps_ball,
    fill_rho,
    parse_gamma,
    rho_work,
    witness_json,
    witness_from_json,
)
from ..balls import log_float
from ..dpsgd.estimate import argmin_unimodal, rho_float
from ..dpsgd.problem import ALPHA_MAX, ALPHA_MIN, Problem, max_alpha, parse_alpha, parse_p
from ..limits import cap, refuse_above
from ..verify import register
from .schedule import Schedule, is_schedule_input, parse_delta, schedule_from_inputs, schedule_inputs

KIND = "dpsgd/renyi-bok-schedule"
EQ_COMPOSE = "Mironov17 Prop. 1"
EQ_CONVERT = "Bok26 (6)"
#: most phases a fixed-size schedule may have: each phase carries its own rho witness (a branch-and-bound
#: search to produce, about a millisecond per phase to check)
MAX_FIXED_SIZE_PHASES = cap("fixed_size_phases")


def _check_schedule(schedule: Schedule) -> None:
    """The contract is fixed-size + replace-one and every phase's rate is below 1 (a batch is a strict subset)."""
    if schedule.contract != FIXED_SIZE_REPLACE_ONE:
        raise InputError(
            "sampling", f"kind {KIND} certifies fixed-size + replace-one only, got {schedule.contract.sampling} + {schedule.contract.adjacency}"
        )
    if len(schedule.phases) > MAX_FIXED_SIZE_PHASES:
        raise InputError(
            "phases",
            f"a fixed-size + replace-one schedule may have at most {MAX_FIXED_SIZE_PHASES} "
            f"phases (each needs its own rho search), got {len(schedule.phases)}: merge phases with the "
            "same sampling rate and noise multiplier (their steps add up)",
        )
    for i, ph in enumerate(schedule.phases):
        parse_p(ph.sampling_rate, f"phase[{i}].sampling_rate")


def admissible_alpha_max(schedule: Schedule) -> int:
    """The largest integer alpha that Bok's bounds admit at every phase's sigma (:func:`max_alpha`)."""
    return min(ALPHA_MAX, *(max_alpha(ph.noise_multiplier) for ph in schedule.phases))


def choose_alpha(schedule: Schedule, delta: fmpq) -> int:
    """Integer alpha minimising the float estimate of sum_i T_i rho_i(alpha) + conversion: a choice only.

    Binary search on the sign of eps(alpha + 1) - eps(alpha), as for one phase (each phase's estimate is
    unimodal, Bok's Proposition 3; for the sum this is a heuristic, which is all a choice needs).
    """
    lo, hi = ALPHA_MIN, max(ALPHA_MIN, admissible_alpha_max(schedule))
    log_delta = log_float(delta)
    memo: dict[int, float] = {}

    def eps(a: int) -> float:
        if a not in memo:
            with_steps = 0.0
            for ph in schedule.phases:
                r = rho_float(Problem(a, ph.sampling_rate, ph.noise_multiplier))
                with_steps += float(ph.steps) * r if math.isfinite(r) else math.inf
            memo[a] = with_steps + math.log1p(-1 / a) - (log_delta + math.log(a)) / (a - 1)
        return memo[a]

    return argmin_unimodal(eps, lo, hi)


def _merge(ev: Evaluation, sub: Evaluation, prefix: str, budget: dict) -> None:
    """Copy a phase's quantities and claims into ``ev`` and its budget into ``budget``, under ``prefix``
    (claim operands renamed)."""

    def ref(name: str) -> str:
        return prefix + name if name in sub.quantities else name

    for name, q in sub.quantities.items():
        ev.quantities[prefix + name] = Quantity(prefix + name, q.value, q.equation, q.description, q.integer, q.bound)
    for c in sub.claims:
        ev.claims.append(Claim(prefix + c.name, c.statement, ref(c.lhs), c.relation, ref(c.rhs), c.holds, c.equation))
    for k, v in sub.budget.to_json().items():
        budget[f"{prefix}{k}"] = v


def _hyp(ev: Evaluation, name: str, statement: str, lhs: str, rel: str, rhs: str) -> str:
    if not ev.claim(name, statement, lhs, rel, rhs, "hypothesis"):
        raise InputError(name[4:], f"hypothesis fails: {statement}")
    return name


def _evaluate(
    schedule: Schedule,
    delta: fmpq,
    alpha: int,
    results: list,
    epsilon_bound: str | None = None,
    gamma_inputs: dict | None = None,
    caches: list | None = None,
) -> tuple[Evaluation, list[dict]]:
    """Every quantity and claim of the certificate at the current precision (producer and checker).

    ``results`` holds each phase's rho search witness (:class:`certify.dpsgd.search.SearchResult`) at
    ``alpha``; ``gamma_inputs`` the recorded ``gamma`` input (if any), against which each witness's gamma is
    checked. ``epsilon_bound`` None (producer): the headline bound is the epsilon ball's upper endpoint
    rounded up to 10 significant digits. Raises InputError when a hypothesis or a witness fails.
    """
    _check_schedule(schedule)
    if len(results) != len(schedule.phases):
        raise InputError("witnesses", f"one rho witness per phase: {len(schedule.phases)} phase(s), {len(results)} witness(es)")
    ev = Evaluation()
    hyps = []
    for i, ph in enumerate(schedule.phases):
        p, s = exact_str(ph.sampling_rate), exact_str(ph.noise_multiplier)
        hyps += [
            _hyp(ev, f"hyp:phase[{i}].sampling_rate>0", f"phase {i}: sampling rate p = {p} > 0", p, ">", "0"),
            _hyp(ev, f"hyp:phase[{i}].sampling_rate<1", f"phase {i}: sampling rate p = {p} < 1", p, "<", "1"),
            _hyp(ev, f"hyp:phase[{i}].noise_multiplier>0", f"phase {i}: noise multiplier sigma = {s} > 0", s, ">", "0"),
            _hyp(ev, f"hyp:phase[{i}].steps>=1", f"phase {i}: steps T = {ph.steps} >= 1", str(ph.steps), ">=", "1"),
        ]
    d, a = exact_str(delta), str(alpha)
    hyps += [
        _hyp(ev, "hyp:delta>0", f"delta = {d} > 0", d, ">", "0"),
        _hyp(ev, "hyp:delta<1", f"delta = {d} < 1", d, "<", "1"),
        _hyp(ev, f"hyp:alpha>={ALPHA_MIN}", f"Rényi order alpha = {a} >= {ALPHA_MIN}", a, ">=", str(ALPHA_MIN)),
        _hyp(ev, f"hyp:alpha<={ALPHA_MAX}", f"Rényi order alpha = {a} <= {ALPHA_MAX}", a, "<=", str(ALPHA_MAX)),
    ]
    total = arb(0)
    facts = []
    budget = {}
    for i, (ph, res) in enumerate(zip(schedule.phases, results)):
        prob = Problem(alpha, ph.sampling_rate, ph.noise_multiplier)  # InputError if alpha is inadmissible here
        check_gamma(prob, gamma_inputs or {}, res)
        sub = Evaluation()
        facts.append(fill_rho(prob, res, sub, None if caches is None else caches[i]))
        prefix = f"phase[{i}]."
        _merge(ev, sub, prefix, budget)
        hyps += [prefix + c.name for c in sub.claims if c.name in METHOD_CLAIMS]
        total = total + ph.steps * sub.quantities["rho"].value
    ev.add("rdp_total", total, EQ_COMPOSE, "sum over phases of T_i rho_i(alpha) (Rényi composition over all steps)")
    eps = ev.add(
        "epsilon",
        eps_ball(total, alpha, 1, delta),
        EQ_CONVERT,
        "rdp_total + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1); upper endpoint is the certified epsilon",
    )
    bound = (
        upper_decimal(eps, REPORT_DIGITS)
        if epsilon_bound is None
        else reported_bound(epsilon_bound, eps, REPORT_DIGITS, "epsilon_bound")  # (no producer of this kind restates a claim)
    )
    ev.claim("dp", f"epsilon <= {bound}", "epsilon", "<=", bound, EQ_CONVERT)
    ev.conclude(
        "dp",
        f"the DP-SGD run ({len(schedule.phases)} phase(s), {schedule.total_steps} steps; fixed-size "
        f"batches, replace-one adjacency, sensitivity 2C, noise sigma*C, privacy unit one example) is "
        f"({bound}, {d})-DP (Bok 2026 Theorem 1 per phase at alpha = {a}, Rényi composition over phases, "
        "conversion (6))",
        "dp",
        hyps,
    )
    lo, hi = ball_endpoints(eps)
    budget["alpha"] = "recorded witness (any admissible integer alpha gives a valid bound; the checker never searches)"
    budget["epsilon width (upper - lower)"] = upper_decimal(hi - lo, 3)
    ev.budget = Budget.of(budget)
    return ev, facts  # facts: each phase's RhoFacts (its leaf keys go into the witness)


def work(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``dpsgd/renyi-bok-schedule``: the sum over phases of
    :func:`certify.dpsgd.certificates.rho_work` of each phase's witness (at most 256 phases)."""
    items = witnesses["phases"]
    refuse_above("fixed_size_phases", len(items), "witnesses.phases")
    alpha = exact_int(witnesses["alpha"], "alpha")
    total, field, top = 0.0, "witnesses.phases", -1.0
    for i, w in enumerate(items):
        ins = {"sampling_rate": inputs[f"phase[{i}].sampling_rate"], "noise_multiplier": inputs[f"phase[{i}].noise_multiplier"]}
        sec, f = rho_work(alpha, _extra_bits_estimate(ins), w, prec)
        total += sec
        if sec > top:
            top, field = sec, f"witnesses.phases[{i}].{f.split('.')[-1]}"
    return total, field


def _witness_list(witnesses: dict) -> list:
    items = witnesses.get("phases")
    if not isinstance(items, list):
        raise InputError("witnesses.phases", "must be a list of rho search witnesses, one per phase")
    out = []
    for i, w in enumerate(items):
        if not isinstance(w, dict) or set(w) - set(SEARCH_WITNESSES):
            raise InputError(f"witnesses.phases[{i}]", f"must be a search witness with keys among {SEARCH_WITNESSES}")
        res = witness_from_json(w)
        check_leaf_keys(res)
        out.append(res)
    return out


def evaluate_renyi_bok_schedule(inputs: dict, witnesses: dict) -> Evaluation:
    """The checker's evaluator: re-evaluates every phase's rho at the recorded alpha from its witness."""
    schedule, delta, gamma_inputs = validate(inputs)
    if not isinstance(witnesses, dict) or set(witnesses) != {"alpha", "phases", "epsilon_bound"}:
        raise InputError("witnesses", "must be {'alpha': ..., 'phases': [...], 'epsilon_bound': ...}")
    alpha = parse_alpha(witness_field(witnesses, "alpha", "witnesses.alpha", str), "alpha")
    bound = witnesses["epsilon_bound"]
    if not isinstance(bound, str):
        raise InputError("epsilon_bound", "must be exact text")
    exact(bound, "epsilon_bound")
    return _evaluate(schedule, delta, alpha, _witness_list(witnesses), bound, gamma_inputs)[0]


def validate(inputs: dict) -> tuple[Schedule, fmpq, dict]:
    """The producer's validators, applied by ``certify verify`` before evaluating: (schedule, delta, gamma)."""
    schedule = schedule_from_inputs({k: v for k, v in inputs.items() if k != "gamma"})
    _check_schedule(schedule)
    delta = parse_delta(inputs.get("delta"), "delta")
    gamma_inputs = {}
    if "gamma" in inputs:
        parse_gamma(inputs["gamma"], "gamma")
        gamma_inputs["gamma"] = inputs["gamma"]
    return schedule, delta, gamma_inputs


def certify_fixed_size_schedule(schedule: Schedule, delta, alpha=None, gamma=None) -> Certificate:
    """Certificate ``dpsgd/renyi-bok-schedule`` for a fixed-size + replace-one run of one or more phases.

    ``alpha`` (integer in [2, 256], admissible at every phase's sigma) fixes the Rényi order; by default it is
    chosen by floats. ``gamma`` is the branch-and-bound tolerance of every phase's rho search (default: the
    search's own). Each phase's rho search is memoised like ``certify dpsgd``'s (same witness for the same
    (alpha, p, sigma)).
    """
    _check_schedule(schedule)
    delta = parse_delta(delta, "delta")
    if alpha is None:
        alpha = choose_alpha(schedule, delta)
    else:
        alpha = parse_alpha(alpha, "alpha")
        top = admissible_alpha_max(schedule)
        if alpha > top:
            raise InputError(
                "--alpha", f"must be at most {top} at these noise multipliers (Bok's bounds need sigma large enough for alpha), got {alpha}"
            )
    gamma = None if gamma is None else parse_gamma(gamma, "gamma")
    gamma_inputs = {} if gamma is None else {"gamma": exact_str(gamma)}

    def compute(prec):
        results, caches = [], []
        for ph in schedule.phases:
            prob = Problem(alpha, ph.sampling_rate, ph.noise_multiplier)
            res, _ = find_rho_witness(prob, gamma)
            cache = {}
            for u, pb in res.point_bounds.items():  # reuse what the search computed
                if u == 0 or res.rules.get(u) == pb.rule:
                    cache[(u, pb.rule)] = pb
            results.append(res)
            caches.append(cache)
        ev, facts = _evaluate(schedule, delta, alpha, results, None, gamma_inputs, caches)
        return ev, facts, results, prec

    ev, facts, results, prec = escalate(compute, what=f"the fixed-size schedule at alpha = {alpha}")
    inputs = schedule_inputs(schedule)
    inputs["delta"] = exact_str(delta)
    inputs.update(gamma_inputs)
    witnesses = {"alpha": str(alpha), "phases": [witness_json(res, f.keys) for res, f in zip(results, facts)], "epsilon_bound": ev.claims[-1].rhs}
    return Certificate(KIND, inputs, ev, witnesses, None, prec)


def summary(cert: Certificate, schedule: Schedule, seconds: float, chosen: bool) -> str:
    eps = cert.quantities["epsilon"].value
    lo, hi = ball_endpoints(eps)
    rows = [
        f"    phase {i}: p={exact_str(ph.sampling_rate)}, sigma={exact_str(ph.noise_multiplier)}, T={ph.steps}: "
        f"rho <= {upper_decimal(cert.quantities[f'phase[{i}].rho'].value, 6)}"
        for i, ph in enumerate(schedule.phases)
    ]
    lines = [
        f"DP-SGD ({len(schedule.phases)} phases, {schedule.total_steps} steps in all) is (epsilon, delta={cert.inputs['delta']})-DP with",
        f"  epsilon <= {upper_decimal(eps, 6)}   (certified upper bound; ball [{lower_decimal(lo, 10)}, {upper_decimal(hi, 10)}])",
        f"  accountant: Bok's certified one-step Rényi bound rho (Theorem 1) per phase, composed over phases "
        f"at alpha = {cert.witnesses['alpha']} ({'chosen by float estimates' if chosen else 'fixed by --alpha'}), "
        "converted by (6)",
        *rows,
        f"  {schedule.contract.statement()}",
        "  not covered: shuffled batches; hyperparameter search on private data",
        f"  ({seconds * 1e3:.1f} ms)",
    ]
    return "\n".join(lines) + "\n"


def _example() -> Certificate:
    from .schedule import parse_schedule

    phases = [{"sampling_rate": "1/100", "noise_multiplier": "2", "steps": 600}, {"sampling_rate": "1/50", "noise_multiplier": "3", "steps": 200}]
    return certify_fixed_size_schedule(parse_schedule(phases, contract=FIXED_SIZE_REPLACE_ONE), "1e-6")


#: the work model of the kind (:func:`certify.limits.check_work`)
WORK = {KIND: work}

register(
    KIND,
    evaluate_renyi_bok_schedule,
    validate,
    lambda name: is_schedule_input(name, ("gamma",)),
    ("alpha", "phases", "epsilon_bound"),
    example=_example,
)


def run(args, schedule: Schedule) -> int:
    """``certify dpsgd --schedule FILE`` under fixed-size + replace-one: certify, print, write (exit 0; 6 when a
    phase's rho search stopped at its budget)."""
    from .. import cli

    if args.accountant not in (None, "bok"):
        raise InputError(
            "--accountant",
            f"{args.accountant!r} takes one phase; a fixed-size schedule of "
            f"{len(schedule.phases)} phases is certified by Bok's accountant (the default)",
        )
    if getattr(args, "cache_dir", None):
        raise InputError("--cache-dir", "is not used for fixed-size schedules (each phase's search is memoised in the process only)")
    t0 = time.perf_counter()
    cert = certify_fixed_size_schedule(schedule, args.delta, args.alpha, getattr(args, "gamma", None))
    text = summary(cert, schedule, time.perf_counter() - t0, args.alpha is None)
    stopped = [c.name.split(".")[0] for c in cert.claims if c.name.endswith(".search_met_gamma") and not c.holds]
    if stopped:
        text += (
            f"  STOPPED EARLY: the rho search of {', '.join(stopped)} stopped at its budget before its tolerance "
            "gamma (the bound is valid, only looser; exit 6)\n"
        )
    from .commands import emit

    emit(cert, text, args)
    return cli.EXIT_STOPPED_EARLY if stopped else 0
