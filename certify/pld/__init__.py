"""The certified privacy-loss-distribution ("lossless") accountant of DP-SGD.

Reads like the argument: :mod:`.pairs` (dominating pairs per contract, one-step hockey-stick curves in
balls), :mod:`.discretise` (a one-step measure that dominates the curve and one the curve dominates,
each checked in balls), :mod:`.compose` (exact integer polynomial powers with outward rounding and
truncation), :mod:`.readoff` (delta(eps) in balls, eps(delta) by bisection), :mod:`.accountant` (choices
and the deterministic run), :mod:`.certificates` (kind ``pld/dpsgd`` and its evaluator), :mod:`.commands`
(the ``certify dpsgd --accountant pld`` summary).

Python API (stable):

* ``certify_pld(contract, sampling_rate, noise_multiplier, steps, delta, grid="1e-4") -> Certificate``
  (``grid=None``: the accountant chooses the finest grid of ``accountant.GRID_LADDER`` that fits its limits
  and the checker's work budget, :mod:`certify.limits`, then refines it from the measured gap until
  eps_up / eps_low - 1 <= TIGHT_GAP = 1e-3 or the budget is met, :func:`_auto_grid`) with quantities ``epsilon_upper`` (the run is
  (epsilon_upper, delta)-DP), ``epsilon_lower`` (a certified lower bound on the exact eps(delta) of the
  composed dominating pair), ``delta_upper`` / ``delta_lower`` at those points; headline claim ``privacy``.
* ``delta_interval(contract, sampling_rate, noise_multiplier, steps, epsilon, grid="1e-4")
  -> (delta_low, delta_up)``: exact rationals with delta_low <= delta(epsilon) <= delta_up for the exact
  curve of the composed dominating pair (worst direction).
"""

from __future__ import annotations

from ..balls import InputError, UndecidedError, exact, exact_in, exact_str, fmpq, outward_rational, workprec
from ..certificate import Certificate
from ..contract import Contract, parse_contract
from . import readoff
from ..limits import BUDGET_SECONDS, CHECKER_SECONDS, check_produced
from .accountant import (
    DEFAULT_GRID,
    GRID_LADDER,
    MAX_ATOMS,
    MAX_ONE_STEP_POINTS,
    derives_add,
    parse_grid,
    parse_pld_delta,
    plan,
    run,
    run_seconds,
    use_fft,
)
from .certificates import KIND, make_certificate, parse_pld_sigma, parse_pld_steps, parse_rate
from .discretise import EXTRA_PREC

# registry hooks (see certify/registry.py); the command is an option of ``certify dpsgd`` (no COMMANDS)
KEY = "pld"
TITLE = "Certified PLD accountant: the algebra of its soundness argument"
KINDS = {"pld/dpsgd": "certify.pld.certificates"}
PROOFS = "certify.pld.proofs"

__all__ = ["certify_pld", "delta_interval", "gap", "tightness_note", "KIND", "DEFAULT_GRID"]


def _contract(contract) -> Contract:
    if isinstance(contract, Contract):
        return parse_contract(contract.sampling, contract.adjacency, "pld")
    if isinstance(contract, (tuple, list)) and len(contract) == 2:
        return parse_contract(contract[0], contract[1], "pld")
    raise InputError("contract", f"expected a Contract or (sampling, adjacency), got {contract!r}")


def _parse(contract, sampling_rate, noise_multiplier, steps, grid):
    c = _contract(contract)
    h = None if grid is None else parse_grid(grid, "--grid")
    return (c, parse_rate(sampling_rate, c), parse_pld_sigma(noise_multiplier), parse_pld_steps(steps), h)


def certify_pld(
    contract, sampling_rate, noise_multiplier, steps, delta, grid=DEFAULT_GRID, *, derive_add: bool | None = None, method: str | None = None
) -> Certificate:
    """Certified two-sided eps(delta) of DP-SGD by the PLD accountant (see the package docstring).

    ``grid`` None: the accountant chooses the finest grid of :data:`~.accountant.GRID_LADDER` (1e-4 first) whose
    run fits the one-step caps, the composition's width and the checker's work budget (:func:`certify.limits`),
    and certifies something there (no such grid is a refusal naming the parameter, exit 2); then refines the
    grid from the measured gap (:func:`_auto_grid`; :func:`tightness_note` says when the budget stopped it).
    ``derive_add`` (Poisson): None (default) reads the add direction off the remove chains when the float
    estimate of eps is at most about 19.4 (:data:`~.accountant.MAX_EPS_BITS`) and composes both directions
    beyond; True always derives, False never (the pre-issue-13 path; kept for comparison and old certificates).
    ``method``: the T-fold composition, "exact" (FLINT integer products along the addition chain), "fft" (the tilted
    float FFT with a proven error bound, :mod:`certify.pld.fft`; every direction composed itself, ``derive_add``
    must not be True), or None (default): the FFT for FFT_MIN_STEPS <= T <= FFT_MAX_STEPS (:func:`~.accountant.use_fft`),
    and the exact chain where the FFT stays undecided or its read-off range is too short at a grid."""
    c, q, sigma, T, h = _parse(contract, sampling_rate, noise_multiplier, steps, grid)
    delta = parse_pld_delta(delta)
    fft = use_fft(T, method) and not (derive_add and method is None)  # derive_add=True asks for the exact chain
    if fft and method is None:
        fft = "auto"  # where the FFT cannot certify (undecided, its read-off range too short), the exact chain
    if h is None:
        return _auto_grid(c, q, sigma, T, delta, derive_add, fft)
    return _certify_at(c, q, sigma, T, delta, h, derive_add, fft)


#: the tightness the auto grid aims at: eps_up / eps_low - 1 <= TIGHT_GAP (issue 24, item 4)
TIGHT_GAP = fmpq(1, 1000)
#: a user-given grid whose bracket is wider than this (or whose lower bound is 0) gets a warning line
COARSE_GAP = fmpq(1, 10)
#: the work cap of the refinement: at most MAX_REFINEMENTS refined runs after the first one, each within the
#: checker's budget (BUDGET_SECONDS by the work model), all of them together within AUTO_SECONDS (work model)
MAX_REFINEMENTS = 5
AUTO_SECONDS = 2 * BUDGET_SECONDS
#: measured (q = 1e-3, sigma = 0.6, T = 5000, delta = 1e-8, lifted lines): 2.5e-4, 9.9e-5, 1.9e-5, 4.1e-6 at
#: h = 4e-4 .. 5e-5 (where the loss floor log(1 - q) falls in a cell matters); without the lift it was
#: 2.2e-2, 8.2e-3, 2.6e-3, 7.0e-4 at h = 2e-4 .. 2.5e-5. The next grid assumes h^1.5, with a margin; when that falls
#: short, the next refinement starts from the new gap
GAP_EXPONENT = 1.5
GAP_MARGIN = 0.7
#: the grids the refinement picks from: h = m 10^-k for m in 1, 2, 2.5, 4, 5, 8 (written m 10 when m is 1 or 2.5)
_MANTISSAS = (10, 8, 5, 4, 25, 2)


def gap(cert: Certificate) -> fmpq | None:
    """eps_up / eps_low - 1 of a ``pld/dpsgd`` certificate (outward endpoints); 0 when eps_up = 0 (the bracket is
    [0, 0]), None when eps_low = 0 < eps_up (no lower bound)."""
    q = cert.quantities
    up, lo = q["epsilon_upper"].value.upper().fmpq(), q["epsilon_lower"].value.lower().fmpq()
    if up <= 0:
        return fmpq(0)
    return None if lo <= 0 else up / lo - 1


def _finer_grids(h: fmpq, want: float) -> list[fmpq]:
    """The decimal grids m 10^-k (m in 1, 2, 2.5, 4, 5, 8) strictly below h in the order tried: the coarsest one at or
    below ``want`` first, then the coarser ones up to h (cheaper, less tight)."""
    out = []
    for k in range(1, 12):
        for m in _MANTISSAS:
            g = fmpq(m, 10 ** (k + (1 if m >= 10 else 0)))
            if g < h:
                out.append(g)
    out = sorted(set(out), reverse=True)  # coarse to fine
    at_or_below = [g for g in out if float(g) <= want]
    first = at_or_below[0] if at_or_below else out[-1]
    return [first] + [g for g in reversed(out) if g > first]


def _run_estimate(c: Contract, q: fmpq, sigma: fmpq, T: int, delta: fmpq, h: fmpq, derive_add, fft: bool | str = False) -> float | None:
    """Estimated CPU seconds of a run at grid h by the work model (:func:`certify.pld.accountant.run_seconds`,
    pessimistic chains + one optimistic chain), None when it exceeds the one-step caps or the checker's budget:
    decided before any work."""
    try:
        pl = plan(c, q, sigma, T, delta, h, derive_add=derive_add, fft=bool(fft))
    except InputError:
        return None
    est = run_seconds(pl, T, len(pl.layouts) + 1)
    return est if est + CHECKER_SECONDS <= BUDGET_SECONDS else None


def _auto_grid(c: Contract, q: fmpq, sigma: fmpq, T: int, delta: fmpq, derive_add, fft: bool | str = False) -> Certificate:
    """:func:`certify_pld` with the grid chosen by the accountant (a choice, recorded as the input ``grid``).

    First the finest grid of GRID_LADDER that runs. Then, while eps_up / eps_low - 1 > TIGHT_GAP, at most
    MAX_REFINEMENTS times: the next grid from the measured gap (gap ~ h^GAP_EXPONENT, so
    h' = h (GAP_MARGIN TIGHT_GAP / gap)^(1/GAP_EXPONENT); h / 8 when eps_low = 0), rounded down to a decimal grid,
    or the finest decimal grid between it and h whose run fits the checker's budget and keeps the refinement's
    total within AUTO_SECONDS (the work cap: none fits, the last certificate is returned; :func:`tightness_note`
    says so). Every certificate is sound; refining only
    narrows the bracket (the lower bound's bias is about T h^2 times the mean deficit of the optimistic one-step
    curve, which the lifted lines keep small: :func:`certify.pld.discretise.optimistic`)."""
    last = None
    cert = None
    coarsest = None  # the coarsest grid's certificate, once a grid has had too many atoms (a finer grid has more)
    for g in GRID_LADDER:
        if coarsest is not None and g == GRID_LADDER[-1]:
            cert = coarsest
            break
        try:
            cert = _certify_at(c, q, sigma, T, delta, exact(g), derive_add, fft)
            break
        except InputError as err:
            if err.parameter not in ("--grid", "--steps"):
                raise
            last = err
        if last.parameter == "--steps" and coarsest is None and g != GRID_LADDER[-1]:
            try:  # if even the coarsest grid has too many atoms, no grid runs: refused at once, not after the whole ladder
                coarsest = _certify_at(c, q, sigma, T, delta, exact(GRID_LADDER[-1]), derive_add, fft)
            except InputError as err:
                if err.parameter not in ("--grid", "--steps"):
                    raise
                last = err
                break
    if cert is None:
        raise InputError(
            "--steps" if last is not None and last.parameter == "--steps" else "--noise-multiplier",
            f"no loss grid in [{GRID_LADDER[0]}, {GRID_LADDER[-1]}] certifies this run within the PLD accountant's limits "
            f"(at most {MAX_ONE_STEP_POINTS} one-step grid points, {MAX_ATOMS} atoms, {BUDGET_SECONDS:g} CPU s to check); "
            f"at the coarsest grid: {last.message if last is not None else '-'}",
        )
    spent = 0.0
    for _ in range(MAX_REFINEMENTS):
        g = gap(cert)
        if g is not None and g <= TIGHT_GAP:
            break
        h = exact(cert.inputs["grid"])
        want = float(h) / 8 if g is None else float(h) * (GAP_MARGIN * float(TIGHT_GAP) / float(g)) ** (1 / GAP_EXPONENT)
        nxt = None
        for x in _finer_grids(h, want):
            est = _run_estimate(c, q, sigma, T, delta, x, derive_add, fft)
            if est is not None and spent + est <= AUTO_SECONDS:
                nxt, spent = x, spent + est
                break
        if nxt is None:
            break
        try:
            cert = _certify_at(c, q, sigma, T, delta, nxt, derive_add, fft)
        except InputError as err:  # the work model erred low: keep the certificate in hand
            if err.parameter not in ("--grid", "--steps"):
                raise
            break
    return cert


def tightness_note(cert: Certificate, auto: bool) -> str | None:
    """One warning line (or None) about the bracket's width: a user-given grid too coarse for a useful lower
    bound (gap > COARSE_GAP or eps_low = 0), or an auto grid that stopped at the work cap above TIGHT_GAP."""
    g = gap(cert)
    h = cert.inputs["grid"]
    shown = "eps_low = 0" if g is None else f"eps_up/eps_low - 1 = {float(g):.3g}"
    if auto:
        if g is not None and g <= TIGHT_GAP:
            return None
        return (
            f"warning: the auto grid stopped at h = {h} with {shown} (aim {float(TIGHT_GAP):g}): a finer grid would exceed the "
            f"work cap ({BUDGET_SECONDS:g} CPU s to check a run, {MAX_REFINEMENTS} refinements, {AUTO_SECONDS:g} s in all); "
            "the bounds are certified, the bracket is wider"
        )
    if g is not None and g <= COARSE_GAP:
        return None
    return f"warning: --grid {h} is too coarse for a useful lower bound ({shown}); omit --grid to let the accountant choose a grid"


def _certify_at(c: Contract, q: fmpq, sigma: fmpq, T: int, delta: fmpq, h: fmpq, derive_add, fft: bool | str = False) -> Certificate:
    """One certificate at grid h. ``fft``: False (the exact chain), True (the FFT composition), "auto" (the FFT, and
    where it refuses or stays undecided at this grid, the exact chain)."""
    if fft == "auto":
        try:
            return _certify_at(c, q, sigma, T, delta, h, derive_add, True)
        except UndecidedError:
            pass
        except InputError as err:
            if err.parameter != "--grid":
                raise
        return _certify_at(c, q, sigma, T, delta, h, derive_add, False)
    pl = plan(c, q, sigma, T, delta, h, derive_add=derive_add, fft=bool(fft))
    names = tuple(p for p in pl.layouts)
    # the FFT composes both sides of every direction at once: the optimistic ones not chosen are dropped below
    r = run(c, q, sigma, T, pl, lower=None if fft else names[:1], delta=delta)
    eps_up = readoff.epsilon_pass(r.side(True), delta, h)
    if eps_up is None:
        raise InputError(
            "--grid",
            f"too coarse to certify anything: even the largest loss of the grid {exact_str(h)} does not bring delta below {exact_str(delta)}",
        )
    if len(names) > 1:  # the lower bound from the direction that decides eps_up (a choice, recorded)
        with workprec(pl.K + EXTRA_PREC):
            ups = {n: readoff.delta_at(r.composed[(n, True)], eps_up, h).mid() for n in names}
        lower = (max(names, key=lambda n: ups[n]),)
        if fft:
            r.composed = {k: v for k, v in r.composed.items() if k[1] or k[0] in lower}
        elif lower != names[:1]:
            r = run(c, q, sigma, T, pl, lower=lower)
    else:
        lower = names
    eps_low = readoff.epsilon_fail(r.side(False), delta, h, eps_up)
    inputs = {
        **c.to_inputs(),
        "sampling_rate": exact_str(q),
        "noise_multiplier": exact_str(sigma),
        "steps": str(T),
        "delta": exact_str(delta),
        "grid": exact_str(h),
    }
    cert = make_certificate(inputs, pl, r, delta, eps_up, eps_low, h, lower)
    check_produced(cert, "--grid")
    return cert


def delta_interval(
    contract, sampling_rate, noise_multiplier, steps, epsilon, grid=DEFAULT_GRID, delta_hint="1e-10", *, direction=None, derive_add=None
) -> tuple[fmpq, fmpq]:
    """(delta_low, delta_up), exact rationals bracketing the composed pair's exact delta(epsilon)
    (worst direction). ``delta_hint`` only sizes the window/truncation (smaller = tighter, slower).
    ``direction`` ("remove" or "add", Poisson only): that direction's curve alone (with ``derive_add``,
    "add" is read off the remove chains)."""
    c, q, sigma, T, h = _parse(contract, sampling_rate, noise_multiplier, steps, DEFAULT_GRID if grid is None else grid)
    eps = exact_in(epsilon, "epsilon", -1000, 1000, "[]")
    hint = parse_pld_delta(delta_hint, "delta_hint")
    pl = plan(c, q, sigma, T, hint, h, derive_add=derive_add, eps_hint=eps)
    r = run(c, q, sigma, T, pl)
    ups, lows = r.side(True), r.side(False)
    if direction is not None:
        if direction not in ("remove", "add") or not derives_add(c):
            raise InputError("direction", f"must be 'remove' or 'add' (Poisson add/remove only), got {direction!r}")
        k = ["remove", "add"].index(direction)  # side order: remove, then add (composed or derived)
        ups, lows = ups[k : k + 1], lows[k : k + 1]
    with workprec(pl.K + EXTRA_PREC):
        up = readoff.delta_upper(ups, eps, h)
        lo = readoff.delta_lower(lows, eps, h)
    if not (up.is_finite() and lo.is_finite()):
        raise UndecidedError("delta read-off not finite")
    low = outward_rational(lo, False, 4 * pl.K + 256)
    high = outward_rational(up, True, 4 * pl.K + 256)  # delta(eps) <= 1 for probability pairs
    return (low if low > 0 else fmpq(0)), (high if high < 1 else fmpq(1))
