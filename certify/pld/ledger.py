"""Heterogeneous composition: a ledger of different mechanisms' dominating pairs on one grid, composed by products.

A ledger is a list of :class:`Entry` (a mechanism's two ordered dominating pairs as curves, ``remove`` and ``add``,
the same object for a symmetric pair, and its count). Every one-step measure is built on the same grid h and the
same K (:func:`certify.pld.accountant.one_steps`), each entry's count by :func:`certify.pld.compose.power` and the
entries by :func:`certify.pld.compose.multiply`, with the same truncation threshold tau. Why the product bounds the
composition: domination of curves composes factor by factor, for any (also adaptive) sequence of mechanisms
(Zhu, Dong, Wang 2022, Theorem 10; :mod:`certify.pld.discretise`, "Why only curves matter": the identity there
holds for DIFFERENT pairs (P1, Q1), (P2, Q2)), and every rounding and truncation of the products moves the
read-off in the intended direction (:mod:`certify.pld.compose`).

Directions. Under add/remove the two neighbouring datasets differ in the same direction for every mechanism of
the release, so the release is dominated by the product of the ``remove`` pairs or by the product of the ``add``
pairs, and delta(eps) is the larger of the two (what dp_accounting's PLD does); when every entry is symmetric
(``remove is add``) both products are one and only ``remove`` is composed. Under replace-one every pair given
here is symmetric.

Gaussian entries: :func:`certify.events.pld_pairs.entries_of` folds them into one exact Gaussian entry
(:func:`fold_gaussians`, the proof there) before planning. Order of the products: :func:`_order`.

Plan (choices, recorded): K = :func:`certify.pld.accountant.bits_for` (delta), tau = delta 2^(K-30) per product,
per entry and direction a layout of tail mass eta = delta 2^-20 / T (T the ledger's total count), graded for the
entry's own count. ``run`` is deterministic given the plan (the checker re-runs it).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

from ..balls import InputError, UndecidedError, fmpq
from . import compose, direct, discretise
from .accountant import LIFT, _check_layout, bits_for, one_steps, require_plan, sample_seconds, MAX_K
from .curves import Curve, CurveProfile

DIRECTIONS = ("remove", "add")


@dataclass(frozen=True)
class Entry:
    """One distinct mechanism of a ledger: its ``remove`` and ``add`` curves (the same for a symmetric pair), its count,
    and ``name``: the prefix of its layouts (:func:`layout_name`; None: its index in the list of entries)."""

    remove: Curve
    add: Curve
    count: int
    name: str | None = None

    def curve(self, direction: str) -> Curve:
        return self.remove if direction == "remove" else self.add


def label(i: int, e: Entry) -> str:
    """The name of entry ``i`` in the layouts (its ``name``, else its index)."""
    return str(i) if e.name is None else e.name


#: the name of the folded Gaussian entry (:func:`fold_gaussians`) in the layouts and claims
GAUSSIAN = "gaussian"


def gaussian_m2(e: Entry):
    """Delta^2 (exact) when the entry's pair is the Gaussian pair N(Delta, 1) vs N(0, 1) (symmetric: one curve for both
    directions) and its count is positive, else None: :class:`certify.pld.pairs.MixtureCurve` "remove" at q = 1, or
    :class:`certify.pld.pairs.GaussianCurve` (M^2 itself)."""
    from .pairs import GaussianCurve, MixtureCurve

    c = e.remove
    if not (e.remove is e.add or e.remove == e.add) or e.count < 1:
        return None
    if isinstance(c, GaussianCurve):
        return c.m2
    if isinstance(c, MixtureCurve) and c.q == 1 and c.member == "remove" and c.delta > 0:
        return c.delta * c.delta
    return None


def fold_gaussians(entries) -> list:
    """The entries with every Gaussian entry (:func:`gaussian_m2`) folded into ONE entry, named :data:`GAUSSIAN`, at the
    place of the first: the Gaussian pair N(M, 1) vs N(0, 1) with the exact M^2 = sum_i c_i Delta_i^2, written as 2^k
    equal factors N(M_k, 1) vs N(0, 1), M_k^2 = M^2 / 2^k (exact; :class:`certify.pld.pairs.GaussianCurve`), 2^k the
    largest power of two <= n = sum_i c_i (the number of Gaussian events). The other entries keep their order, and their
    names are their indices in ``entries`` (a certificate's ``3/remove`` is still event[3]). No Gaussian entry:
    ``entries`` unchanged.

    Why 2^k factors and not one factor of shift M (a choice; both are the same curve by the identity below): a one-step
    measure costs one curve evaluation in balls per grid point (about 50-150 us), a product about 2e-8 s per atom, and
    the one-step of shift M spans about M/h points: the 1000-event ledger of benchmarks/bench_events.py at h = 1e-4
    (M^2 = 3/4) was modelled at 50 CPU s (refused by the budget) and took 1.2 s instead of 0.4 s at h = 1e-3. With 2^k
    factors the one-step is about as narrow as the entries' own (M_k^2 = (n / 2^k) M^2 / n, less than twice the mean
    squared shift M^2 / n), the power takes k squarings and no other product, and the read-off is no wider than the unfolded
    one's (fewer discretisations: 2^k <= n; more factors, 2^(k+1), widened it, measured).

    Why the folded entry composes to the same curve (an identity, not a bound: obligation ``E-pld-gaussian-fold`` of
    :mod:`certify.events.pld_proofs`). Write the Gaussian entries as n = sum_i c_i factors, factor j the pair
    (N(d_j, 1), N(0, 1)). Their product is the pair P = N(d, I_n), Q = N(0, I_n) on R^n, d = (d_1, ..., d_n), whose
    privacy loss log(dP/dQ)(x) = sum_j (d_j x_j - d_j^2/2) = <d, x> - |d|^2/2. Under P it is a sum of independent
    normals, N(|d|^2/2, |d|^2): the law under y ~ N(M, 1) of the loss M y - M^2/2 of the one-dimensional pair
    (N(M, 1), N(0, 1)) with M^2 = |d|^2 = sum_i c_i Delta_i^2 (equal moment generating functions, exp((t + t^2) M^2/2),
    for every real t). A hockey-stick curve is a function of the loss law under P alone (H_gamma(P || Q) =
    E_P[(1 - gamma e^(-L))_+] when Q << P, as for Gaussians; equivalently: rotate d onto the first axis, an invertible
    map of R^n that carries the pair to (N(M, 1), N(0, 1)) x (N(0, I_(n-1)), N(0, I_(n-1))), and hockey-stick
    divergences are invariant under invertible maps and under a product with an identical pair), so the two pairs
    have the same curve: each dominates the other (Dong, Roth, Su 2019, Cor. 3.3: mu_1-GDP composed with mu_2-GDP is
    exactly sqrt(mu_1^2 + mu_2^2)-GDP; Balle, Wang 2018). Domination of curves composes factor by factor for
    different pairs (the module docstring), so the product of the other entries with the folded pair dominates, and
    is dominated by, the product with the Gaussian factors: the composed curve is the same. Both directions: a
    Gaussian pair is symmetric, so the folded entry is the same curve in ``remove`` and ``add``.

    The same argument for 2^k factors of shift M_k: their product is the pair N(M_k (1, ..., 1), I) vs N(0, I) in
    R^(2^k), of squared shift 2^k M_k^2 = M^2, the same curve again.

    What it changes: one one-step discretisation (each side) instead of one per Gaussian entry, one power chain of
    squarings only (no popcount products, no product between the Gaussian entries' powers)."""
    from .pairs import GaussianCurve

    out: list = []
    m2, n, at = fmpq(0), 0, None
    for i, e in enumerate(entries):
        d2 = gaussian_m2(e)
        if d2 is None:
            out.append(Entry(e.remove, e.add, e.count, label(i, e)))
            continue
        m2, n = m2 + e.count * d2, n + e.count
        if at is None:
            at = len(out)
            out.append(None)
    if at is None:
        return list(entries)
    k = n.bit_length() - 1  # 2^k <= n < 2^(k+1)
    c = GaussianCurve(m2 / 2**k)
    out[at] = Entry(c, c, 2**k, GAUSSIAN)
    return out


def directions(entries) -> tuple[str, ...]:
    """("remove",) when every pair is symmetric, else ("remove", "add")."""
    return ("remove",) if all(e.remove is e.add or e.remove == e.add for e in entries) else DIRECTIONS


def layout_name(i, direction: str) -> str:
    """``<entry>/<direction>``: the entry's :func:`label` (or an index)."""
    return f"{i}/{direction}"


@dataclass
class LedgerPlan:
    h: fmpq
    K: int
    tau: int
    layouts: dict  # layout_name(i, direction) -> Layout
    chain: str | None = None  # the entries' addition chain (:class:`certify.pld.accountant.Plan`'s ``chain``)
    #: the FFT composition: {direction: FftPlan} (witness ``fft``; the producer's holds {} and :func:`run` fills it),
    #: None: the exact products
    fft: dict | None = None

    def to_json(self) -> dict:
        out = {"K": self.K, "tau": str(self.tau), "layouts": {k: v.to_json() for k, v in self.layouts.items()}}
        if self.chain is not None:
            out["chain"] = self.chain
        if self.fft is not None:
            out["fft"] = {k: v.to_json() for k, v in self.fft.items()}
        return out


def plan(entries, delta: fmpq, h: fmpq, fft: bool = False) -> LedgerPlan:
    """The choices of a ledger run (module docstring); layouts checked against the one-step caps. ``fft``: compose by
    the FFT (:func:`run` fills the plans; no addition chain), else by exact products."""
    K = min(bits_for(delta), MAX_K)
    total = sum(e.count for e in entries)
    eta = max(float(delta) * 2.0**-20 / total, 1e-300)
    lays = {}
    for i, e in enumerate(entries):
        for d in directions(entries):
            lay = discretise.layout_of(CurveProfile("pair", (e.curve(d),)), h, eta, steps=e.count, target=float(delta), lift=LIFT)
            _check_layout(lay)
            lays[layout_name(label(i, e), d)] = lay
    tau = int((delta * (fmpq(1) * 2**K) / 2**30).floor())
    if fft:
        return LedgerPlan(h, K, tau, lays, None, {})
    return LedgerPlan(h, K, tau, lays, compose.LEFT_TO_RIGHT)


def check_plan(entries, pl: LedgerPlan) -> None:
    """The recorded layouts must be exactly one per entry and direction (InputError naming the witness)."""
    want = {layout_name(label(i, e), d) for i, e in enumerate(entries) for d in directions(entries)}
    if set(pl.layouts) != want:
        raise InputError("witnesses.layouts", f"must hold exactly the layouts {sorted(want)[:8]}{'...' if len(want) > 8 else ''}")
    for lay in pl.layouts.values():
        _check_layout(lay, "witnesses.layouts")


def run_seconds(entries, pl: LedgerPlan) -> float:
    """Upper estimate of :func:`run`'s CPU seconds: the sampling (:func:`certify.pld.accountant.sample_seconds`),
    and per direction and side, each entry's power (as :func:`certify.pld.accountant.run_seconds` models it) plus
    one product with the running chain (at most the sum of the spans times the counts, capped at MAX_ATOMS atoms)."""
    from types import SimpleNamespace

    sample = sample_seconds(SimpleNamespace(layouts=pl.layouts, K=pl.K))
    dirs = directions(entries)
    atoms = 0
    for d in dirs:
        run_span = 0
        for i, e in enumerate(entries):
            lay = pl.layouts[layout_name(label(i, e), d)]
            span = lay.hi - lay.lo + 1
            for j in range(max(e.count, 1).bit_length()):
                a = compose.MAX_ATOMS if j > 40 else min(compose.MAX_ATOMS, span << j)
                atoms += a * (2 if (e.count >> j) & 1 else 1)
            run_span = min(compose.MAX_ATOMS, run_span + span * e.count)
            atoms += run_span
    return sample + 2 * atoms * 2e-8 * max(1.0, pl.K / 64)


@dataclass
class LedgerRun:
    plan: LedgerPlan
    one_step: dict = field(default_factory=dict)  # (layout name, pessimistic) -> OneStep
    composed: dict = field(default_factory=dict)  # (direction, pessimistic) -> Pld
    powers: dict = field(default_factory=dict)  # (profile, layout, count, side) -> power (shared by a symmetric pair's directions),
    # and ("chain", keys) -> the running product of those powers (shared by the directions)
    spare: dict = field(default_factory=dict)  # FFT: direction -> its optimistic side, until :func:`add_lower` keeps it

    def side(self, pessimistic: bool) -> list:
        return [v for (d, s), v in self.composed.items() if s == pessimistic]


def run(entries, pl: LedgerPlan, budget: float | None = None, lower: tuple | None = None, delta: fmpq | None = None) -> LedgerRun:
    """Discretise every entry and direction both ways (checked), compose each direction's pessimistic product and the
    optimistic product of the directions in ``lower`` (default: all). Deterministic.

    ``pl.fft`` not None: each direction's product by the FFT (:mod:`certify.pld.fft`, the entries' one-step measures
    as factors with their counts) for the plan :func:`certify.pld.fft.fft_plan` derives for ``delta``: an empty
    ``pl.fft`` (the producer) is filled; a recorded one (the checker) must equal it (refused naming
    ``witnesses.fft.<direction>.<key>``).

    A lower bound on the worst direction needs one direction only (the max over a subset is still below the max), so
    the producer composes the optimistic side of the direction that decides the upper bound (:func:`add_lower`),
    recorded as the witness ``lower_directions``. ``budget``: refuse (InputError naming --grid) before composing when
    :func:`run_seconds` exceeds it."""
    check_plan(entries, pl)
    dirs = directions(entries)
    if lower is not None and (len(set(lower)) != len(lower) or any(d not in dirs for d in lower)):
        raise InputError("witnesses.lower_directions", f"must list some of {list(dirs)} once each, got {list(lower)!r}"[:200])
    if budget is not None:
        _check_budget(pl, run_seconds(entries, pl), budget)
    if pl.fft is not None:
        return _run_fft(entries, pl, budget, lower, delta)
    out = LedgerRun(pl)
    for d in dirs:
        _compose(entries, out, d, True)
    for d in dirs if lower is None else lower:
        _compose(entries, out, d, False)
    return out


def _check_budget(pl: LedgerPlan, est: float, budget: float) -> None:
    """Refuse (InputError naming --grid) before composing when the estimate exceeds the budget."""
    if est > budget:
        raise InputError(
            "--grid", f"this ledger at h = {pl.h} would take about {est:.3g} CPU s to compose and check (budget {budget:g} s); use a coarser grid"
        )


def add_lower(entries, r: LedgerRun, direction: str) -> None:
    """Compose the optimistic product of ``direction`` into the run ``r`` (the producer's second step)."""
    if (direction, False) not in r.composed:
        if direction in r.spare:
            r.composed[(direction, False)] = r.spare.pop(direction)
        else:
            _compose(entries, r, direction, False)


@lru_cache(maxsize=16)
def _one_steps(prof: CurveProfile, h: fmpq, lay, K: int):
    """The one-step measures of a single-curve profile: from its loss law, losses rounded to the grid
    (:mod:`certify.pld.direct`), when the curve gives one (pairs with kinks: finite outputs, Laplace), else the
    tangent / connect-the-dots construction (:func:`certify.pld.accountant.one_steps`). Both are proved domination
    for every gamma >= 0; the layout only sizes the plan for a direct curve (its atoms lie inside the window)."""
    law = getattr(prof.members[0], "loss_law", None) if len(prof.members) == 1 else None
    law = law(K) if law is not None else None
    if law is None:
        return one_steps(prof, h, lay, K)
    if hasattr(law, "at"):  # a law whose grid CDF depends on h
        law = law.at(h)
    return direct.one_steps(prof.name, law, h, K)


def _sampled(entries, out: LedgerRun, i: int, e: Entry, d: str) -> tuple:
    """Entry ``i``'s one-step measures in direction ``d`` on its recorded layout (recorded in ``out``)."""
    pl = out.plan
    name = layout_name(label(i, e), d)
    prof = CurveProfile("pair", (e.curve(d),))  # one name for both directions: a symmetric pair's work is shared (memo)
    try:
        both = _one_steps(prof, pl.h, pl.layouts[name], pl.K)
    except discretise.DiscretisationError as err:
        raise InputError("--grid", f"cannot discretise entry {i} at this grid: {err}") from None
    for side, s in zip((True, False), both):
        out.one_step[(name, side)] = s
    return both


def fft_factors(entries, out: LedgerRun, d: str) -> list:
    """The factors of direction ``d`` for :mod:`certify.pld.fft`: per entry (in :func:`_order`) its pessimistic and
    optimistic one-step measures on the recorded layout and its count."""
    fs = []
    for i, e in _order(entries):
        both = _sampled(entries, out, i, e, d)
        fs.append((compose.from_one_step(both[0]), compose.from_one_step(both[1]), e.count))
    return fs


def fft_run_seconds(pl: LedgerPlan, factors: int) -> float:
    """Upper estimate of the FFT composition's CPU seconds: the sampling and, per direction, one transform per factor
    and the inverse (:func:`certify.pld.accountant.fft_seconds` at the recorded length)."""
    from types import SimpleNamespace

    from .accountant import fft_seconds

    sample = sample_seconds(SimpleNamespace(layouts=pl.layouts, K=pl.K))
    return sample + sum((factors + 1) * fft_seconds(p.N) for p in pl.fft.values())


@contextmanager
def _fft_overflow(producer: bool):
    """A float overflow or an undecided step of the FFT's plan or tilt (fft.py's float choices; found by tests/test_events_pld_fft_forger.py:
    a ledger of bounded-loss pairs whose largest composed loss still carries more than delta, e.g. Laplace x 2 or
    RandomizedResponse at a small noise parameter x 1000, drove the tilt to its cap and math.ldexp overflowed, a
    traceback of ``certify account``) is the FFT undecided here, never a crash: the producer's plan (empty) raises
    UndecidedError (the default composition then falls back to the exact products; ``--composition fft`` ends with
    exit 3), a recorded plan (``producer`` False) is refused naming the witness (certify never writes an FFT certificate for this ledger)."""
    try:
        yield
    except ArithmeticError as err:
        why = f"the FFT composition overflows for this ledger ({type(err).__name__}: {str(err)[:60]}); use the exact products"
        if producer:
            raise UndecidedError(why) from None
        raise InputError("witnesses.fft", f"{why}: certify never writes an FFT certificate for it") from None
    except UndecidedError as err:  # e.g. no tilt reaches delta (fft.fft_plan): the producer falls back, never writes it
        if producer:
            raise
        why = f"the FFT composition cannot decide this ledger ({str(err)[:120]})"
        raise InputError("witnesses.fft", f"{why}: certify never writes an FFT certificate for it") from None


def _run_fft(entries, pl: LedgerPlan, budget: float | None, lower: tuple | None, delta: fmpq | None) -> LedgerRun:
    from . import fft

    if delta is None:
        raise InputError("delta", "the FFT composition needs the target delta (its plan is made for it)")
    if pl.chain is not None:
        raise InputError("witnesses.chain", "an FFT certificate records no addition chain (it belongs to the exact products)")
    dirs = directions(entries)
    if pl.fft and set(pl.fft) != set(dirs):
        raise InputError("witnesses.fft", f"must hold a plan for every direction {list(dirs)}, got {sorted(str(k)[:20] for k in pl.fft)[:8]}")
    if sum(e.count for e in entries) < 2:
        raise InputError("event", "the FFT composition needs at least 2 events in all")
    producer = not pl.fft  # the producer's plan is empty until filled below
    out = LedgerRun(pl)
    factors = {}
    for d in dirs:
        fs = fft_factors(entries, out, d)
        with _fft_overflow(producer):
            want = fft.fft_plan(fs, delta, pl.h)
        if pl.fft:
            require_plan(pl.fft[d], want, d)
        factors[d] = (fs, want)
    for d, (_, want) in factors.items():
        pl.fft[d] = want  # the producer's (empty) plan is filled; the checker's already equals it
    if budget is not None:
        _check_budget(pl, fft_run_seconds(pl, len(entries)), budget)
    for d, (fs, want) in factors.items():
        with _fft_overflow(producer):
            up, lo = fft.compose_pair(fs, want)
        out.composed[(d, True)] = up
        if lower is None or d in lower:
            out.composed[(d, False)] = lo
        else:
            out.spare[d] = lo
    return out


def _order(entries) -> list:
    """The order of the products (a choice, deterministic): the symmetric entries first (their powers and their running
    product are the same in both directions: :func:`_compose` makes the product once), then the others, each group in
    list order."""
    idx = list(enumerate(entries))
    return [x for x in idx if x[1].remove is x[1].add] + [x for x in idx if x[1].remove is not x[1].add]


def _compose(entries, out: LedgerRun, d: str, pess: bool) -> None:
    pl = out.plan
    chain, keys = None, ()
    for i, e in _order(entries):
        name = layout_name(label(i, e), d)
        prof = CurveProfile("pair", (e.curve(d),))
        both = _sampled(entries, out, i, e, d)
        s = both[0] if pess else both[1]
        key = (prof, pl.layouts[name], e.count, pess)
        if key not in out.powers:
            one = compose.from_one_step(s)
            # a ledger has counts, not dpsgd's --steps: the width guard names the entry (power's own guard then passes)
            compose.check_width(one, e.count, pl.tau, pl.chain, f"event: entry {label(i, e)}", "a smaller count")
            out.powers[key] = compose.power(one, e.count, pl.tau, (prof, str(pl.h), pl.layouts[name], pl.K, pess), pl.chain)
        p = out.powers[key]
        keys += (key,)
        if chain is None:
            chain = p
        elif ("chain", keys) in out.powers:  # the same running product in another direction (symmetric entries)
            chain = out.powers[("chain", keys)]
        else:
            chain = out.powers[("chain", keys)] = compose.multiply(chain, p, pl.tau)
    out.composed[(d, pess)] = chain
