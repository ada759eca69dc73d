"""Certificate kind ``events/pld``: a dp_accounting event ledger, certified by the generic PLD engine, and its checker.

Inputs (exact text): the ledger (:func:`certify.events.ledger.ledger_inputs`), ``grid`` (the loss-grid spacing h) and
one query: ``target_delta`` (epsilon at delta) or ``target_epsilon`` (delta at epsilon). Witnesses (choices, never
re-made): ``K``, ``tau``, ``layouts`` (one per entry and direction, named ``<i>/remove`` and ``<i>/add``, i the
ledger's index; the add direction only when some pair is not symmetric; the Gaussian entries are folded into one exact
Gaussian entry named ``gaussian``, :func:`certify.pld.ledger.fold_gaussians`, re-derived from the events), and for
``target_delta`` the read-off points ``epsilon_upper`` (eps_pass) and ``epsilon_lower`` (eps_fail).

The evaluator re-runs :func:`certify.pld.ledger.run` (each mechanism's curve, :mod:`certify.events.pld_pairs`,
discretised both ways with its checks in balls; the per-direction products, exact with outward rounding) and reads
off at the recorded points (:mod:`certify.pld.readoff`). Quantities: ``margin_upper[<i>/<dir>]`` /
``margin_lower[<i>/<dir>]`` (the one-step checks), ``epsilon_upper``, ``epsilon_lower`` (exact; for
``target_epsilon`` both are the target), ``delta_upper`` (worst direction, pessimistic products, at epsilon_upper)
and ``delta_lower`` (optimistic, at epsilon_lower): the two-sided bracket of the exact optimal value of the
composed dominating pairs. Claims: ``dominates[...]`` / ``dominated[...]`` (margins >= 0), then ``privacy``
(delta_upper <= target delta; for ``target_epsilon``: delta_upper <= the recorded decimal ``bound``) and
``tightness`` (delta_lower > target delta, when epsilon_lower > 0). Conclusions: ``dp`` "(eps, delta)-DP" (resting
on every ``dominates``), ``tightness`` (on every ``dominated``).
"""

from __future__ import annotations

import re

from ..balls import InputError, ball, exact, exact_str, fmpq, upper_decimal, workprec
from ..certificate import Budget, Certificate, Evaluation, exact_operand, witness_field
from ..limits import BUDGET_SECONDS, CHECKER_SECONDS
from ..provenance import check_notes
from ..verify import register
from .ledger import Ledger, is_ledger_input, ledger_from_inputs, ledger_inputs
from .pld_pairs import entries_of

KIND = "events/pld"
QUERIES = ("target_delta", "target_epsilon")
FLAGS = {"target_delta": "--delta", "target_epsilon": "--epsilon"}


def parse_target_delta(value, name: str = "--delta") -> fmpq:
    from ..pld.accountant import parse_pld_delta

    return parse_pld_delta(value, name)


def parse_target_epsilon(value, name: str = "--epsilon") -> fmpq:
    from ..balls import require_in

    return require_in(name, exact(value, name), 0, 1000, "[]")


PARSERS = {"target_delta": parse_target_delta, "target_epsilon": parse_target_epsilon}

_OTHER = re.compile(r"(target_delta|target_epsilon|grid)(\.note)?")


def is_input(name: str) -> bool:
    return is_ledger_input(name) or _OTHER.fullmatch(name) is not None


def parse_inputs(inputs: dict) -> tuple[Ledger, str, fmpq, fmpq, list]:
    """(ledger, query, target, h, entries) from a certificate's inputs; InputError naming the field otherwise."""
    from ..pld.accountant import parse_grid

    if not isinstance(inputs, dict):
        raise InputError("inputs", "must be an object")
    given = [q for q in QUERIES if q in inputs]
    if len(given) != 1:
        raise InputError("target_delta", "exactly one of target_delta, target_epsilon must be recorded")
    query = given[0]
    target = PARSERS[query](inputs[query], query)
    h = parse_grid(inputs.get("grid"), "grid")
    check_notes({k: v for k, v in inputs.items() if _OTHER.fullmatch(k)}, {query})
    ledger = ledger_from_inputs(inputs)
    return ledger, query, target, h, entries_of(ledger)


def gaussian_note(ledger: Ledger) -> str:
    """The statement's words for the folded Gaussian entries (:func:`certify.pld.ledger.fold_gaussians`), or ""."""
    from ..pld.ledger import GAUSSIAN
    from .pld_pairs import gaussian_fold

    g = gaussian_fold(ledger)
    if g is None:
        return ""
    n, k, m2 = g
    f = 2 ** (n.bit_length() - 1)
    return (
        f"; Gaussian: the {n} event(s) of the {k} mechanism(s) whose pair is the Gaussian N(Delta_i, 1) vs N(0, 1) composed exactly"
        f" into one Gaussian of shift M = sqrt(M^2), M^2 = sum_i c_i Delta_i^2 = {exact_str(m2)}, discretised as {f} factor(s) of"
        f" shift sqrt({exact_str(m2 / f)}) (layouts '{GAUSSIAN}/...')"
    )


def caveats(ledger: Ledger) -> str:
    dl = [m for m, _ in ledger.entries if m.CLASS == "DiscreteLaplaceDpEvent"]
    dg = [m for m, _ in ledger.entries if m.CLASS == "DiscreteGaussianDpEvent"]
    out = "; DiscreteLaplace: the pair of a shift by the sensitivity (as dp_accounting)" if dl else ""
    if dg:
        out += (
            "; DiscreteGaussian: the exact one-dimensional pair N_Z(0, sigma^2) vs N_Z(D, sigma^2) (lattice sums with an explicit"
            " tail bound; not the continuous Gaussian's bound), as dp_accounting"
        )
    if any(m.CLASS == "TruncatedSubsampledGaussianDpEvent" for m, _ in ledger.entries):
        out += (
            "; TruncatedSubsampledGaussian: certify's dominating labelled-mixture pair (1 - w) PSG(q, z) + w PSG(q, z/2),"
            " w = P(Bin(n, q) >= B): its exact epsilon is an upper bound of the mechanism's"
        )
    return out + gaussian_note(ledger)


def fill(
    ev: Evaluation,
    ledger: Ledger,
    r,
    query: str,
    target: fmpq,
    eps_up: fmpq,
    eps_low: fmpq,
    h: fmpq,
    bound: str | None = None,
    low: str | None = None,
) -> tuple[str, str | None]:
    """Quantities, claims, conclusions of a ledger run (producer and checker alike). Returns the decimals of the
    delta bracket of a target_epsilon query (recorded as the witnesses ``bound`` and ``lower``)."""
    from ..pld import readoff
    from ..pld.discretise import EXTRA_PREC

    K = r.plan.K
    for (name, pess), s in r.one_step.items():
        tag = "upper" if pess else "lower"
        bits = K + 64
        m = fmpq(int((s.checks["margin"] * (fmpq(1) * 2**bits)).floor()), 2**bits)
        ev.add(
            f"margin_{tag}[{name}]",
            ball(m),
            "discretise: pessimistic check" if pess else "discretise: optimistic check",
            "min over the used grid points of " + ("g_up - upper(curve) (>= 0: dominates)" if pess else "lower(tangent) - g_low (>= 0: dominated)"),
        )
    with workprec(K + EXTRA_PREC):  # the certificate's precision (a non-dyadic epsilon's ball at the checker's precision)
        ev.add("epsilon_upper", ball(eps_up), "readoff: eps_pass" if query == "target_delta" else "query", "epsilon of the upper bound (exact)")
        ev.add("epsilon_lower", ball(eps_low), "readoff: eps_fail" if query == "target_delta" else "query", "epsilon of the lower bound (exact)")
        du = readoff.delta_upper(r.side(True), eps_up, h)
        dl = readoff.delta_lower(r.side(False), eps_low, h)
    fft = r.plan.fft is not None  # the method the run used (re-derived by the checker's own run, never copied)
    if fft:
        ev.add(
            "delta_upper",
            du,
            "fft: pessimistic products",
            "upper bound of m_inf + sum m_i (1 - e^(eps - l_i))_+ of the composed pessimistic measures (worst direction), "
            "by the tilted float FFT with its proven error bound (certify.pld.fft)",
        )
        ev.add(
            "delta_lower",
            dl,
            "fft: optimistic products",
            "lower bound of the same read-off of the composed optimistic measures (worst direction), by the tilted float FFT",
        )
    else:
        ev.add(
            "delta_upper",
            du,
            "readoff: pessimistic products",
            "m_inf + sum m_i (1 - e^(eps - l_i))_+ of the composed pessimistic measures (worst direction)",
        )
        ev.add("delta_lower", dl, "readoff: optimistic products", "the same read-off of the composed optimistic measures (worst direction)")
    for name, pess in r.one_step:
        tag = "upper" if pess else "lower"
        ev.claim(
            f"{'dominates' if pess else 'dominated'}[{name}]",
            f"the {'pessimistic' if pess else 'optimistic'} one-step measure of {name} "
            + ("dominates the pair's curve" if pess else "is dominated by the pair's curve")
            + " for every gamma >= 0",
            f"margin_{tag}[{name}]",
            ">=",
            "0",
            "discretise",
        )
    n, total, rel = len(ledger.entries), ledger.total, ledger.relation
    how = ", composed by a tilted float FFT with a proven error bound" if fft else ""
    what = f"the composition of {total} event(s) ({n} distinct mechanism(s); {rel}; certified PLD, grid {exact_str(h)}{how})" + caveats(ledger)
    eu, el = exact_str(eps_up), exact_str(eps_low)
    if query == "target_delta":
        d = exact_str(target)
        ev.claim("privacy", f"delta_up(epsilon_upper) <= {d}: {what} is ({eu}, {d})-DP", "delta_upper", "<=", d, "readoff")
        ev.conclude("dp", f"the release is ({eu}, {d})-DP under {rel}", "privacy", [c.name for c in ev.claims if c.name.startswith("dominates[")])
        if eps_low > 0:
            ev.claim(
                "tightness",
                f"delta_low(epsilon_lower) > {d}: the exact eps({d}) of the composed pairs exceeds {el}",
                "delta_lower",
                ">",
                d,
                "readoff",
            )
            ev.conclude(
                "tightness",
                f"the exact epsilon at delta = {d} of the composed dominating pairs exceeds {el}",
                "tightness",
                [c.name for c in ev.claims if c.name.startswith("dominated[")],
            )
    else:
        bound = upper_decimal(du, 10) if bound is None else bound
        ev.claim("privacy", f"delta_up({eu}) <= {bound}: {what} is ({eu}, {bound})-DP", "delta_upper", "<=", bound, "readoff")
        ev.conclude("dp", f"the release is ({eu}, {bound})-DP under {rel}", "privacy", [c.name for c in ev.claims if c.name.startswith("dominates[")])
        low = (_lower_decimal(dl) if dl > 0 else "0") if low is None else low
        if low != "0":
            ev.claim(
                "tightness", f"delta_low({el}) >= {low}: the exact delta of the composed pairs is at least {low}", "delta_lower", ">=", low, "readoff"
            )
            ev.conclude(
                "tightness",
                f"the exact delta at epsilon = {el} of the composed dominating pairs is at least {low}",
                "tightness",
                [c.name for c in ev.claims if c.name.startswith("dominated[")],
            )
    if fft:
        ev.budget = Budget.of(
            {
                "fft_points": {d: str(p.N) for d, p in sorted(r.plan.fft.items())},
                "width": "one-step discretisation (connect-the-dots vs tangents) + the FFT's a-priori error bound and alias (certify.pld.fft)"
                " + bisection 2^-24",
            }
        )
    else:
        ev.budget = Budget.of(
            {
                "composed_atoms": {f"{d}/{'pessimistic' if s else 'optimistic'}": str(c.atoms) for (d, s), c in sorted(r.composed.items())},
                "width": "one-step discretisation (connect-the-dots vs tangents) + 2^-K rounding + truncation (<= tau per product) + bisection 2^-24",
            }
        )
    return bound, low


def _lower_decimal(x) -> str:
    from ..balls import lower_decimal

    return lower_decimal(x, 10)


#: the delta a target_epsilon query plans for (window, K, tau): a choice, re-derived by the checker
EPSILON_QUERY_DELTA = fmpq(1, 10**10)


def plan_delta(query: str, target: fmpq) -> fmpq:
    """The delta the plan (:func:`certify.pld.ledger.plan`) is made for: the target delta, or EPSILON_QUERY_DELTA."""
    return target if query == "target_delta" else EPSILON_QUERY_DELTA


def _plan_from(h: fmpq, witnesses: dict):
    from ..pld.accountant import Plan
    from ..pld.ledger import LedgerPlan

    if not isinstance(witnesses, dict):
        raise InputError("witnesses", "must be an object")
    p = Plan.from_json(h, {k: witnesses[k] for k in ("K", "tau", "layouts", "chain", "fft") if k in witnesses})  # Plan's own reader
    if p.fft is not None and p.chain is not None:
        raise InputError("witnesses.chain", "an FFT certificate (witness fft) records no addition chain: it belongs to the exact products")
    return LedgerPlan(h, p.K, p.tau, p.layouts, p.chain, p.fft)


WITNESSES_DELTA = {"K", "tau", "layouts", "lower_directions", "epsilon_upper", "epsilon_lower"}
WITNESSES_EPS = {"K", "tau", "layouts", "lower_directions", "bound", "lower"}
#: witnesses a certificate may carry besides: ``chain`` (the exact products' addition chain; absent before the
#: left-to-right chain) or ``fft`` ({direction: FftPlan}: the FFT composition, :mod:`certify.pld.fft`)
WITNESSES_OPTIONAL = {"chain", "fft"}


def evaluate_events_pld(inputs: dict, witnesses: dict) -> Evaluation:
    """The checker's evaluator: re-derives the plan's layouts (:func:`certify.pld.certificates.check_layouts`), re-runs
    the recorded plan, reads off at the recorded points (never searches)."""
    from ..pld.certificates import check_layouts
    from ..pld.ledger import plan, run

    ledger, query, target, h, entries = parse_inputs(inputs)
    need = WITNESSES_DELTA if query == "target_delta" else WITNESSES_EPS
    if not isinstance(witnesses, dict) or set(witnesses) - WITNESSES_OPTIONAL != need:
        raise InputError("witnesses", f"must be exactly {{{', '.join(sorted(need))}}} (and chain or fft)")
    pl = _plan_from(h, witnesses)
    bound = low = None
    if query == "target_delta":
        eps_up = exact(witness_field(witnesses, "epsilon_upper", "witnesses.epsilon_upper", str), "epsilon_upper")
        eps_low = exact(witness_field(witnesses, "epsilon_lower", "witnesses.epsilon_lower", str), "epsilon_lower")
        if eps_up < 0 or eps_low < 0 or eps_up > 10**6 or eps_low > eps_up:
            raise InputError("witnesses", "read-off points must satisfy 0 <= epsilon_lower <= epsilon_upper <= 10^6")
    else:
        eps_up = eps_low = target
        bound, low = witnesses["bound"], witnesses["lower"]
        for name, text in (("bound", bound), ("lower", low)):
            if not isinstance(text, str):
                raise InputError(name, "must be exact text")
            exact_operand(text)
    lower = witnesses["lower_directions"]
    if not (isinstance(lower, list) and lower and all(isinstance(d, str) for d in lower)):
        raise InputError("witnesses.lower_directions", "must be a nonempty list of direction names")
    want = plan(entries, plan_delta(query, target), h)  # exact K and tau (no floats), the layouts' rule (either method)
    if (pl.K, pl.tau) != (want.K, want.tau):
        raise InputError("witnesses", f"K and tau must be the ones certify chooses for this query (K = {want.K}, tau = {want.tau})")
    check_layouts(pl.layouts, lambda hh: want.layouts if hh == h else plan(entries, plan_delta(query, target), hh).layouts, h)
    r = run(entries, pl, BUDGET_SECONDS, lower=tuple(lower), delta=plan_delta(query, target))
    _check_searched(entries, r, query, target, eps_up, eps_low, h, tuple(lower))
    ev = Evaluation()
    derived = fill(ev, ledger, r, query, target, eps_up, eps_low, h)
    if query == "target_epsilon" and (bound, low) != derived:  # the decimals certify writes, never the file's own
        raise InputError("witnesses", "bound and lower must be the decimals of the re-derived delta bracket, as certify writes them")
    return ev


def _check_searched(entries, r, query: str, target: fmpq, eps_up: fmpq, eps_low: fmpq, h: fmpq, lower: tuple) -> None:
    """The read-off points and the lower direction are the ones the producer's searches leave
    (:func:`certify_events_pld`): the exact bisections of :mod:`certify.pld.readoff` and the deciding direction,
    re-run on the re-derived products (deterministic at the recorded precision). A bracket the balls merely confirm,
    but no search leaves, is a file certify never writes."""
    from ..pld import readoff

    if query == "target_delta" and readoff.epsilon_pass(r.side(True), target, h) != eps_up:
        raise InputError("witnesses", "epsilon_upper is not the point the read-off search leaves (readoff.epsilon_pass)")
    if lower != (_decider(entries, r, eps_up, h),):
        raise InputError("witnesses.lower_directions", "must name the one direction that decides the upper bound, as certify writes it")
    if query == "target_delta" and readoff.epsilon_fail(r.side(False), target, h, eps_up) != eps_low:
        raise InputError("witnesses", "epsilon_lower is not the point the read-off search leaves (readoff.epsilon_fail)")


def _decider(entries, r, eps: fmpq, h: fmpq) -> str:
    """The direction whose pessimistic delta at ``eps`` is the largest (a choice on midpoints; any direction gives a
    valid lower bound, so it is recorded and re-derived, never trusted)."""
    from ..pld import readoff
    from ..pld.discretise import EXTRA_PREC
    from ..pld.ledger import directions

    dirs = directions(entries)
    if len(dirs) == 1:
        return dirs[0]
    with workprec(r.plan.K + EXTRA_PREC):
        ups = {d: readoff.delta_at(r.composed[(d, True)], eps, h).mid() for d in dirs}
    return max(dirs, key=lambda d: ups[d])


#: the default composition of a ledger: the FFT (:mod:`certify.pld.fft`) from this many events in all (a choice;
#: measured in docs/theory/pld.md, "The FFT composition"), up to certify.pld.accountant.FFT_MAX_STEPS; the exact
#: products below, and wherever the FFT is undecided
LEDGER_FFT_MIN_EVENTS = 1000


def uses_fft(ledger: Ledger, composition: str | None) -> bool:
    """The composition method of a ledger: ``composition`` "fft" / "exact", or None (default): the FFT for
    LEDGER_FFT_MIN_EVENTS <= the ledger's number of events <= FFT_MAX_STEPS."""
    from ..pld.accountant import FFT_MAX_STEPS

    if composition not in (None, "fft", "exact"):
        raise InputError("--composition", f'must be "fft" or "exact", got {composition!r}'[:200])
    return composition == "fft" or (composition is None and LEDGER_FFT_MIN_EVENTS <= ledger.total <= FFT_MAX_STEPS)


def _produce(entries, query: str, target: fmpq, h: fmpq, fft: bool):
    """(plan, run, eps_up) at grid h by the given method (the optimistic side kept for the deciding direction)."""
    from ..balls import UndecidedError
    from ..pld import readoff
    from ..pld.ledger import plan, run

    if fft and sum(e.count for e in entries) < 2:
        raise InputError("--composition", "the FFT composition needs at least 2 events in all")
    pl = plan(entries, plan_delta(query, target), h, fft=fft)
    r = run(entries, pl, BUDGET_SECONDS - CHECKER_SECONDS, lower=(), delta=plan_delta(query, target))  # the optimistic side once eps_up is known
    if query == "target_delta":
        eps_up = readoff.epsilon_pass(r.side(True), target, h)
        if eps_up is None:
            raise InputError(
                "--delta",
                f"no epsilon certifies delta = {exact_str(target)}: the pessimistic bound stays above it up to the largest loss "
                f"of the grid (an (epsilon, delta) event's own delta, or a grid too coarse: try a finer --grid or a larger --delta)",
            )
    else:
        eps_up = target
        if fft and not all(readoff.delta_at(d, target, h).is_finite() for d in r.side(True)):
            raise UndecidedError(f"epsilon = {exact_str(target)} is below the FFT composition's read-off range")
    return pl, r, eps_up


def certify_events_pld(
    ledger: Ledger, delta=None, epsilon=None, grid="1e-3", notes: dict | None = None, composition: str | None = None
) -> Certificate:
    """The producer: plan, run, search the read-off points (target_delta), certificate. ``grid`` None: the finest
    grid of :data:`certify.pld.accountant.GRID_LADDER` that fits the limits (a choice, recorded). ``notes``:
    provenance notes of the target (``target_delta.note``), recorded as inputs. ``composition``: "fft", "exact" or
    None (:func:`uses_fft`; the default falls back to the exact products where the FFT is undecided)."""
    from ..balls import UndecidedError
    from ..limits import check_produced
    from ..pld import readoff
    from ..pld.accountant import GRID_LADDER, parse_grid
    from ..pld.discretise import EXTRA_PREC

    if (delta is None) == (epsilon is None):
        raise InputError("--delta", "give exactly one of --delta, --epsilon")
    query = "target_delta" if delta is not None else "target_epsilon"
    target = PARSERS[query](delta if delta is not None else epsilon, FLAGS[query])
    entries = entries_of(ledger)
    fft = uses_fft(ledger, composition)
    grids = [parse_grid(grid, "--grid")] if grid is not None else [exact(g) for g in GRID_LADDER]
    last = None
    for h in grids:
        try:
            try:
                pl, r, eps_up = _produce(entries, query, target, h, fft)
            except UndecidedError:
                if composition is not None:
                    raise
                pl, r, eps_up = _produce(entries, query, target, h, False)  # the default: the exact products instead
        except InputError as err:
            if grid is not None or err.parameter not in ("--grid", "--steps"):
                raise
            last = err
            continue
        break
    else:
        raise InputError(
            "--grid", f"no grid in [1e-4, 1/2] certifies this ledger within the PLD accountant's limits: {last.message if last else '-'}"
        )
    inputs = {**ledger_inputs(ledger), query: exact_str(target), "grid": exact_str(h), **(notes or {})}
    w = pl.to_json()
    _lower_from_decider(entries, r, eps_up, h)  # the optimistic product of the direction deciding the upper bound
    w["lower_directions"] = [d for (d, s) in r.composed if not s]
    if query == "target_delta":
        eps_low = readoff.epsilon_fail(r.side(False), target, h, eps_up)
        w["epsilon_upper"], w["epsilon_lower"] = exact_str(eps_up), exact_str(eps_low)
    else:
        eps_low = target
    ev = Evaluation()
    bound, low = fill(ev, ledger, r, query, target, eps_up, eps_low, h)
    if query == "target_epsilon":
        w["bound"], w["lower"] = bound, low
    cert = Certificate(KIND, inputs, ev, w, None, precision=pl.K + EXTRA_PREC)
    check_produced(cert, "--grid")
    return cert


def _lower_from_decider(entries, r, eps: fmpq, h: fmpq) -> None:
    """Keep the optimistic product of the direction whose pessimistic delta at ``eps`` is the largest (a choice on
    midpoints, recorded as ``lower_directions``; any direction gives a valid lower bound)."""
    from ..pld.ledger import add_lower

    add_lower(entries, r, _decider(entries, r, eps, h))


def work(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``events/pld``: :func:`certify.pld.ledger.run_seconds` of the recorded plan (exact products), or
    :func:`certify.pld.ledger.fft_run_seconds` of its recorded FFT plans."""
    from ..pld.ledger import fft_run_seconds, run_seconds

    _, _, _, h, entries = parse_inputs(inputs)
    pl = _plan_from(h, witnesses)
    if pl.fft:  # the field named: the direction with the longest transform
        return fft_run_seconds(pl, len(entries)), f"witnesses.fft.{max(pl.fft, key=lambda d: pl.fft[d].N)}"
    return run_seconds(entries, pl), "witnesses.layouts"


work.fallback_cost = False

WORK = {KIND: work}


def recorded_precision(witnesses: dict) -> int:
    from ..pld.discretise import EXTRA_PREC

    K = witnesses["K"]
    if type(K) is not int:
        raise ValueError("K must be an integer")
    return K + EXTRA_PREC


def validate(inputs: dict) -> None:
    parse_inputs(inputs)


def _example() -> Certificate:
    from .ledger import ledger_of

    event = {
        "class_name": "ComposedDpEvent",
        "events": [
            {"class_name": "SelfComposedDpEvent", "count": 10, "event": {"class_name": "LaplaceDpEvent", "noise_multiplier": "20"}},
            {"class_name": "GaussianDpEvent", "noise_multiplier": "5"},
            {
                "class_name": "PoissonSampledDpEvent",
                "sampling_probability": "1/100",
                "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"},
            },
        ],
    }
    return certify_events_pld(ledger_of(event, "add-remove"), delta="1e-6", grid="1e-2")


register(
    KIND,
    evaluate_events_pld,
    validate,
    is_input,
    WITNESSES_DELTA | WITNESSES_EPS | WITNESSES_OPTIONAL,
    example=_example,
    fields={"--delta": "target_delta", "--epsilon": "target_epsilon", "--grid": "grid"},
    precision_of=recorded_precision,
)


def summary_pld(cert: Certificate, seconds: float) -> str:
    """The human summary of ``certify account --accountant pld``."""
    from ..balls import lower_decimal

    ins, q = cert.inputs, cert.quantities
    n = sum(1 for k in ins if k.endswith(".class"))
    from ..pld.commands import composition_text

    head = f"certify account: {n} distinct mechanism(s), {ins['neighboring']} (kind {cert.kind}, grid h = {ins['grid']}"
    lines = [f"{head}, {composition_text(cert)}, {seconds:.2f} s)"]
    for i in range(n):
        lines.append(f"  event[{i}] x {ins[f'event[{i}].count']}: {ins[f'event[{i}].class']}")
    if "target_delta" in ins:
        lines.append(f"  epsilon <= {upper_decimal(q['epsilon_upper'].value, 8)}   (certified: the release is (epsilon, {ins['target_delta']})-DP)")
        lines.append(f"  epsilon >= {lower_decimal(q['epsilon_lower'].value, 8)}   (certified lower bound on the exact eps of the composed pairs)")
    else:
        lines.append(f"  delta <= {upper_decimal(q['delta_upper'].value, 8)}   (certified at epsilon = {ins['target_epsilon']})")
        lines.append(f"  delta >= {lower_decimal(q['delta_lower'].value, 8)}   (certified lower bound on the exact delta of the composed pairs)")
    for c in cert.conclusions:
        lines.append(f"conclusion: {c.statement}")
    return "\n".join(lines) + "\n"
