"""The certified PLD accountant: choices (recorded), the deterministic run, and the read-off.

``plan`` makes every choice (K, the truncation threshold tau, the one-step grid layout per profile); it
uses floats only to place the window. ``run`` is deterministic given the exact inputs and the plan: the
checker (:mod:`certify.pld.certificates`) calls the same function on the recorded plan and chooses
nothing. Costs: one-step discretisation O(grid points) ball evaluations per profile and side; composition
floor(log2 T) squarings + popcount(T) - 1 products of FLINT integer polynomials per profile and side, along the
recorded addition chain (``chain``, :mod:`certify.pld.compose`).

Poisson add/remove (since issue 13's speed work): only the ``remove`` profile is sampled, discretised and
composed (pessimistic and optimistic chains); the ``add`` direction is read off from the same chains by
H_gamma(Q||P) = 1 - gamma + gamma H_(1/gamma)(P||Q) (:mod:`certify.pld.readoff`, :class:`~.readoff.Swapped`),
recorded as the witness ``add_from: "remove"``. About 40% less work than composing both directions
(one profile sampled instead of two, two chains instead of three). Plans that record an ``add`` layout
(older certificates) still run the old way: both directions composed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from ..balls import exact_in, InputError, exact, exact_str, fmpq
from ..limits import BUDGET_SECONDS, CHECKER_SECONDS, OverCap, cap
from ..contract import Contract
from ..validators import parse_delta
from . import compose, discretise
from .discretise import Layout
from .curves import CurveProfile
from .pairs import Profile, bind, profiles, shift

DEFAULT_GRID = "1e-4"
#: the grids the accountant tries, finest first, when none is given (:func:`choose_grid`)
GRID_LADDER = ("1e-4", "2e-4", "5e-4", "1e-3", "2e-3", "5e-3", "1e-2", "2e-2", "5e-2", "1/10", "1/5", "1/2")
#: guards (no huge allocation): one-step grid points per profile, atoms of any composed measure
MAX_ONE_STEP_POINTS = cap("pld_one_step_points")
MAX_ONE_STEP_SPAN = cap("pld_one_step_span")
MAX_ATOMS = cap("pld_atoms")
MAX_GRID = fmpq(1, 2)


def parse_grid(value, name: str = "--grid") -> fmpq:
    """The loss-grid spacing h: exact, 0 < h <= 1/2 (how fine a grid may be depends on q and sigma: the one-step
    layout's point and span caps and the work budget decide, :func:`plan`)."""
    h = exact_in(value, name, 0, MAX_GRID, "(]", shown=f"in (0, {exact_str(MAX_GRID)}] (the published column uses 1e-4)")
    return h


def grid_arg(text: str) -> str:
    """argparse ``type=`` of ``--grid``: the text kept (parsed exactly later), refused at once when empty or outside
    (0, 1/2] (argparse names the flag); an empty value is never read as the default."""
    import argparse

    if not text.strip():
        raise argparse.ArgumentTypeError(f"empty value: must be a loss-grid spacing h in (0, {exact_str(MAX_GRID)}] (or omit the option)")
    try:
        parse_grid(text, "--grid")
    except InputError as err:
        raise argparse.ArgumentTypeError(err.message) from None
    return text


@dataclass
class Plan:
    """Every choice of a run, recorded exactly in the certificate."""

    h: fmpq
    K: int
    tau: int
    layouts: dict[str, Layout]
    #: Poisson: the profile whose composed chains also give the add direction by (*) (None: composed itself)
    add_from: str | None = None
    #: the addition chain of the T-fold powers (:func:`certify.pld.compose.power`): certify writes
    #: ``compose.LEFT_TO_RIGHT``; None (no ``chain`` witness) is the right-to-left chain of older certificates
    chain: str | None = None
    #: the FFT composition (issue 24, :mod:`certify.pld.fft`): {profile: FftPlan}, recorded as the witness ``fft``;
    #: None: the exact chain. The producer's plan holds {} and :func:`run` fills it with the plans it derives
    fft: dict | None = None

    def to_json(self) -> dict:
        out = {"K": self.K, "tau": str(self.tau), "layouts": {k: v.to_json() for k, v in self.layouts.items()}}
        if self.add_from is not None:
            out["add_from"] = self.add_from
        if self.chain is not None:
            out["chain"] = self.chain
        if self.fft is not None:
            out["fft"] = {k: v.to_json() for k, v in self.fft.items()}
        return out

    @staticmethod
    def from_json(h: fmpq, w: dict) -> "Plan":
        if not isinstance(w, dict):
            raise InputError("witnesses", "must be an object")
        K = w.get("K")
        if not isinstance(K, int) or isinstance(K, bool) or not 32 <= K <= MAX_K:
            raise InputError("witnesses.K", f"must be an integer in [32, {MAX_K}], got {K!r}"[:200])
        if not isinstance(w.get("tau"), str):  # certify writes tau as exact text (a JSON string), never a JSON number
            raise InputError("witnesses", "tau must be an integer >= 0 written as text, as certify writes it")
        t = exact(w.get("tau"), "tau")
        if t.q != 1 or t < 0:
            raise InputError("witnesses", "tau must be an integer >= 0")
        tau = int(t.p)
        layouts = w.get("layouts")
        if not isinstance(layouts, dict):
            raise InputError("witnesses", "layouts must be an object {profile: layout}")
        lays = {}
        for name, lj in layouts.items():
            try:
                if not isinstance(lj, dict):
                    raise TypeError(f"a layout is an object, got {type(lj).__name__}")
                bands = lj.get("bands", [])
                if not isinstance(bands, list) or len(bands) > MAX_BANDS:
                    raise ValueError(f"bands must be a list of at most {MAX_BANDS} [lo, hi, stride]")
                bands = tuple(_band(b) for b in bands)
                tangents = lj.get("tangents", "ends")
                if "tangents" in lj and tangents != "lifted":  # certify writes "lifted" or nothing
                    raise ValueError(f'tangents must be "lifted" (or absent), got {tangents!r}'[:200])
                lay = Layout(*(_int(lj[k]) for k in ("lo", "hi", "core_lo", "core_hi", "stride")), bands, tangents == "lifted")
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as err:
                raise InputError("witnesses", f"layout {name!r} malformed: {err}") from None
            _check_layout(lay, "witnesses.layouts")
            if lay.to_json() != lj:  # no key certify never writes ("junk", an empty "bands"), no other spelling
                raise InputError("witnesses.layouts", f"layout {name!r} is not written as certify writes it: {_show_keys(lj)}")
            lays[name] = lay
        add_from = w.get("add_from")
        if add_from is not None and add_from != "remove":
            raise InputError("witnesses", f'add_from must be "remove" (or absent), got {add_from!r}')
        return Plan(h, K, tau, lays, add_from, read_chain(w), read_fft(w))


#: the keys of a recorded FFT plan (:meth:`certify.pld.fft.FftPlan.to_json`): integers, and exact rationals as text
FFT_INT_KEYS = ("T", "base", "N", "a", "j0", "j1")
FFT_RATIONAL_KEYS = ("h", "lam", "threshold", "s_alias_hi", "s_alias_lo", "s_top")


def read_fft(w: dict) -> dict | None:
    """The recorded FFT plans {profile: FftPlan} (witness ``fft``), or None when absent (the exact chain). Only the
    shape is checked here (each entry an object with exactly the FftPlan keys, integers as JSON integers, rationals as
    the text certify writes, N a power of two <= fft.MAX_N): the checker then requires each plan to EQUAL the one
    the producer's :func:`certify.pld.fft.fft_plan` derives (:func:`run`). Refusals name ``witnesses.fft...``."""
    if "fft" not in w:
        return None
    from .fft import MAX_N, FftPlan

    f = w["fft"]
    if not isinstance(f, dict) or not f:
        raise InputError("witnesses.fft", "must be a nonempty object {profile: plan}, as certify writes it")
    out = {}
    for name, pj in f.items():
        where = f"witnesses.fft.{str(name)[:40]}"
        if not isinstance(pj, dict):
            raise InputError(where, f"must be an object, got {type(pj).__name__}")
        want = set(FFT_INT_KEYS + FFT_RATIONAL_KEYS)
        if set(pj) != want:
            raise InputError(where, f"must have exactly the keys {sorted(want)}, got {_show_keys(pj)}")
        vals = {}
        for k in FFT_INT_KEYS:
            v = pj[k]
            if isinstance(v, bool) or not isinstance(v, int) or abs(v) > 2**64:
                raise InputError(f"{where}.{k}", f"must be a JSON integer, got {str(v)[:60]!r}")
            vals[k] = v
        for k in FFT_RATIONAL_KEYS:
            v = pj[k]
            try:
                x = fmpq(v) if isinstance(v, str) and len(v) <= 400 else None
            except (ValueError, TypeError, ZeroDivisionError):
                x = None
            if x is None or str(x) != v:
                raise InputError(f"{where}.{k}", f"must be an exact rational written as certify writes it (p/q), got {str(v)[:60]!r}")
            vals[k] = x
        N = vals["N"]
        if N < 2 or N & (N - 1) or N > MAX_N:
            raise InputError(f"{where}.N", f"must be a power of two in [2, {MAX_N}], got {N}")
        out[name] = FftPlan(**{k: vals[k] for k in FftPlan.__dataclass_fields__})
    return out


def require_plan(recorded, want, name: str) -> None:
    """A recorded FFT plan must EQUAL the one :func:`certify.pld.fft.fft_plan` derives (refused naming the first key
    that differs, ``witnesses.fft.<name>.<key>``)."""
    if recorded == want:
        return
    got, wj = recorded.to_json(), want.to_json()
    key = next(k for k in wj if wj[k] != got[k])
    raise InputError(
        f"witnesses.fft.{name}.{key}",
        f"must be {str(wj[key])[:80]}, the value certify's FFT plan (fft.fft_plan) derives for these inputs, got {str(got[key])[:80]}",
    )


def read_chain(w: dict) -> str | None:
    """The recorded addition chain: ``"left-to-right"`` as certify writes it, or absent (None: the right-to-left
    chain of certificates written before it). Anything else is refused naming the witness."""
    if "chain" not in w:
        return None
    if w["chain"] != compose.LEFT_TO_RIGHT:
        raise InputError("witnesses.chain", f"must be {compose.LEFT_TO_RIGHT!r} (or absent), got {w['chain']!r}"[:200])
    return compose.LEFT_TO_RIGHT


def _show_keys(lj: dict) -> str:
    return "keys " + ", ".join(sorted(str(k)[:20] for k in lj)[:10])


#: at most this many graded bands in a layout
MAX_BANDS = cap("pld_bands")


def _int(x) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"a layout or band entry must be a JSON integer, got {type(x).__name__}")
    return x


def _band(b) -> tuple[int, int, int]:
    if not isinstance(b, list) or len(b) != 3:
        raise ValueError(f"a band is a list [lo, hi, stride], got a {type(b).__name__} of length {len(b) if isinstance(b, list) else '-'}")
    return tuple(_int(x) for x in b)


def _check_layout(lay: Layout, name: str = "--grid") -> None:
    if not (lay.lo <= lay.core_lo <= lay.core_hi <= lay.hi) or lay.stride < 1:
        raise InputError(name, f"malformed grid layout {lay}")
    a, b = lay.core_lo, lay.core_hi
    for blo, bhi, bs in lay.bands:  # nested from the core outwards, inside the window
        if not (lay.lo <= blo <= a and b <= bhi <= lay.hi) or bs < 1:
            raise InputError(name, f"malformed grid layout {lay}")
        a, b = blo, bhi
    span = lay.hi - lay.lo + 1
    points = lay.points()
    if span > MAX_ONE_STEP_SPAN or points > MAX_ONE_STEP_POINTS:
        raise OverCap(  # a count above its cap: refused before any work (exit 2 in certify verify)
            name,
            f"too fine for the loss range of this mechanism (its noise and sampling rate set it): "
            f"one step would need {points} grid points over "
            f"{span} grid cells (at most {MAX_ONE_STEP_POINTS} / {MAX_ONE_STEP_SPAN}); use a coarser grid",
        )


#: the smallest target delta the PLD accountant takes: K = bits_for(delta) must stay within the checker's
#: admissible K (at most 512 bits: delta >= 2^-462, about 8e-140)
MIN_DELTA = fmpq(1, 10**130)


def parse_pld_delta(value, name: str = "--delta") -> fmpq:
    """A target delta for the PLD accountant: exact, in [1e-130, 1) (K, the bits of the masses, grows as log2(1/delta))."""
    delta = parse_delta(value, name)
    if delta < MIN_DELTA:
        raise InputError(name, "the PLD accountant needs delta in [1e-130, 1) (the masses carry log2(1/delta) + 50 bits), got a smaller delta")
    return delta


def bits_for(delta: fmpq) -> int:
    """K = max(64, 50 + ceil(log2(1/delta))): the ceiling rounding adds at most atoms * 2^-K of mass per
    product, and with at most 2^22 atoms and 2^7 products that is <= delta 2^-21."""
    return max(64, 50 + int(math.ceil(-math.log2(float(delta)))))


#: largest K a plan chooses (the checker admits K <= 512)
MAX_K = cap("pld_bits")


def derives_add(contract: Contract) -> bool:
    """Poisson add/remove: the add direction is read off from the remove chains (module docstring)."""
    return [p.name for p in profiles(contract)] == ["remove", "add"]


#: Rényi orders of the float eps estimate (any order gives an upper bound; a subset only loosens the choice)
_ORDERS = tuple(range(2, 33)) + (40, 48, 64, 80, 96, 128, 160, 192, 256, 384, 512)


def _renyi_eps_float(q: float, sigma: float, steps: int, delta: float) -> float:
    """Float estimate of eps(delta) by the Poisson subsampled-Gaussian Rényi bound (Mironov-Talwar-Zhang 2019,
    integer orders; the conversion of :mod:`certify.poisson`): an upper bound of the true eps up to float
    error, used only as a choice. Pure Python (importing numpy would cost 0.15 s per run)."""
    lq, l1q, c = math.log(max(q, 1e-300)), math.log1p(-min(q, 1.0 - 1e-16)), 1.0 / (2.0 * sigma * sigma)
    ld, best = math.log(delta), math.inf
    for a in _ORDERS:
        if q >= 1:
            logA = a * (a - 1) * c
        else:
            lg = math.lgamma(a + 1)
            terms = [lg - math.lgamma(k + 1) - math.lgamma(a - k + 1) + (a - k) * l1q + k * lq + k * (k - 1) * c for k in range(a + 1)]
            m = max(terms)
            logA = m + math.log(sum(math.exp(t - m) for t in terms))
        e = steps * logA / (a - 1) + math.log1p(-1 / a) - (ld + math.log(a)) / (a - 1)
        best = min(best, e)
    return best


#: the derived path's window: tail mass eta = delta 2^-14 / T per step (2^-20 otherwise): T eta <= delta 2^-14
#: of mass moved to +inf at worst; measured at q = 0.01, sigma = 2, delta = 1e-6, T = 1e3..1e5: the same
#: eps_up / eps_low to 7 digits as 2^-20, with 20-25% fewer one-step grid points (about 10% of the run)
DERIVED_ETA_BITS = 14

#: the add direction is derived only when eps_est log2(e) <= MAX_EPS_BITS (eps_est <= ~19.4): beyond, the
#: extra bits of K and the longer low tail (tau 2^-K shrinks like e^-eps) cost more than a second profile.
#: Measured (CPU, grid 1e-4, delta 1e-6): q = 0.1, sigma = 0.8, T = 100 (eps_est 15.5): derived 9.8 s vs both
#: 13.1 s; T = 300 (eps_est 23.5): 14.8 s vs 14.9 s (and 536 vs 281 MiB); q = 0.01, sigma = 2, T = 1e6
#: (eps_est 40.8): 19.3 s vs 10.6 s (1 GiB vs 383 MiB)
MAX_EPS_BITS = 28


def eps_bits(q: fmpq, sigma: fmpq, steps: int, delta: fmpq) -> int:
    """ceil(eps_est log2(e)) for a float estimate eps_est of eps(delta) that is never below the true one:
    the Poisson Rényi accountant's float epsilon (:func:`_renyi_eps_float`, an upper bound of the exact eps;
    floats, a choice). The derived add direction amplifies the pessimistic excess mass by e^eps and loses
    Q-mass e^(-l) times the truncated P-mass: K gains these bits and tau (units 2^-K) keeps its integer
    value, so tau 2^-K shrinks by about e^(-eps_est)."""
    try:
        e = _renyi_eps_float(float(q), float(sigma), steps, float(delta))
    except (ValueError, OverflowError, ZeroDivisionError):
        e = math.inf
    if not math.isfinite(e) or e > 1000:
        e = 1000.0
    return max(0, int(math.ceil(max(e, 0.0) * math.log2(math.e))))


#: new plans lift the optimistic lines to 1 - gamma (:attr:`certify.pld.discretise.Layout.lift`: a lower end about
#: 400 times closer at the audit's pair, no extra work); plans recorded without it re-run as they were written
LIFT = True


def plan(
    contract: Contract,
    q: fmpq,
    sigma: fmpq,
    steps: int,
    delta: fmpq,
    h: fmpq,
    K: int | None = None,
    derive_add: bool | None = None,
    eps_hint: fmpq | None = None,
    fft: bool = False,
) -> Plan:
    """The choices: tail mass eta = delta 2^-20 / T per step for the window (derived path: DERIVED_ETA_BITS),
    tau = delta 2^(K-30) per product, K from :func:`bits_for`. Poisson (``derive_add``: None = when eps_est <= MAX_EPS_BITS / log2(e), True =
    always, False = never): one ``remove`` layout, K raised by :func:`eps_bits` (at most MAX_K) with tau's
    integer value kept (tau 2^-K = delta e^(-eps_est) 2^-30), ``add_from``. ``eps_hint``: an epsilon at which
    the curve will be read (``delta_interval``): the extra bits cover it too (the derived direction's
    excess-mass term is amplified by e^eps at the eps actually read). ``fft``: the FFT composition (every direction
    composed from its own one-step measures: no ``add_from``, no ``chain``; :func:`run` derives the FFT plans)."""
    if fft and derive_add:
        raise InputError("derive_add", "the FFT composition composes every direction itself (derive_add must be False or None)")
    if fft:
        derive_add = False
    derive = derives_add(contract) and derive_add is not False
    base = bits_for(delta)
    extra = eps_bits(q, sigma, steps, delta) if derive else 0
    if derive and eps_hint is not None:
        extra = max(extra, int(math.ceil(max(float(eps_hint), 0.0) * math.log2(math.e))))
    if extra > MAX_EPS_BITS and derive_add is None:  # large eps: compose both directions (a choice, recorded)
        derive, extra = False, 0
    K = min(base + extra, MAX_K) if K is None else K
    d = shift(contract, sigma)
    eta = max(float(delta) * 2.0 ** -(DERIVED_ETA_BITS if derive else 20) / steps, 1e-300)
    lays = {}
    for prof in profiles(contract):
        if derive and prof.name != "remove":
            continue
        lay = discretise.layout(prof, q, d, h, eta, steps=steps, target=float(delta), lift=LIFT)  # a choice, recorded
        _check_layout(lay)
        lays[prof.name] = lay
    tau = int((delta * (fmpq(1) * 2 ** max(K - extra, 0)) / 2**30).floor())  # tau 2^-K = delta 2^-(30 + extra)
    pl = Plan(h, K, tau, lays, "remove" if derive else None, None if fft else compose.LEFT_TO_RIGHT, {} if fft else None)
    check_run_seconds(pl, sample_seconds(pl))  # the sampling alone; :func:`run` checks the whole before composing
    return pl


def check_run_seconds(pl: Plan, est: float) -> None:
    """InputError naming --grid when ``est`` (seconds of :func:`run_seconds`) exceeds the checker's budget: the
    producer writes nothing its checker would refuse (:func:`certify.limits.check_work`)."""
    if est + CHECKER_SECONDS > BUDGET_SECONDS:
        raise InputError(
            "--grid",
            f"at h = {exact_str(pl.h)} one step needs {sum(lay.points() for lay in pl.layouts.values())} grid points and the run would "
            f"take about {est:.3g} CPU s to check (budget {BUDGET_SECONDS:g} s); use a coarser grid, or omit --grid (the accountant then chooses)",
        )


def sample_seconds(pl: Plan) -> float:
    """Upper estimate of the one-step sampling of :func:`run`: one curve evaluation per used grid point and profile
    at K + 96 bits, measured 72 us at K = 67 (145,885 points: 10.5 s); model 150 us x (K + 96)/163."""
    return sum(lay.points() for lay in pl.layouts.values()) * 1.5e-4 * max(1.0, (pl.K + 96) / 163)


def run_seconds(pl: Plan, steps: int, chains: int) -> float:
    """Upper estimate of the CPU seconds of :func:`run` on the plan ``pl`` with ``chains`` composed chains (the
    pessimistic measure of every profile and the optimistic one of the lower-bound profiles); the work model of
    the checker (:func:`certify.limits.check_work`) and of the producer (:func:`plan`).

    Sampling: :func:`sample_seconds`. Composition: ceil(log2 T) squarings and
    popcount(T) - 1 products per chain; the 2^j-th power has at most min(span 2^j, MAX_ATOMS) atoms; measured
    0.3e-8 to 1e-8 s per atom of a product at K <= 71; model 2e-8 s x K/64 per atom."""
    lays = list(pl.layouts.values())
    sample = sample_seconds(pl)
    span = max((lay.hi - lay.lo + 1 for lay in lays), default=1)
    if pl.fft is not None:
        return sample + len(lays) * fft_seconds(_fft_n(pl, span, steps))
    atoms = 0
    for j in range(max(steps, 1).bit_length()):
        a = MAX_ATOMS if j > 40 else min(MAX_ATOMS, span << j)
        atoms += a * (2 if (steps >> j) & 1 else 1)
    return sample + chains * atoms * 2e-8 * max(1.0, pl.K / 64)


#: FFT work model: seconds per transform point per direction (two transforms, powers, read-off; measured about
#: 0.4 us per point at N = 2^20, T = 1e6 on this machine; x 4 margin) and for the refinement (step 4')
FFT_SECONDS_PER_POINT = 1.6e-6
FFT_SECONDS_FIXED = 0.5


def fft_seconds(N: int) -> float:
    return FFT_SECONDS_FIXED + FFT_SECONDS_PER_POINT * N


def _fft_n(pl: Plan, span: int, steps: int) -> int:
    """The recorded transform length (the largest), or before the FFT plans exist an upper estimate: the one-step
    span times (1 + sqrt(T)), a power of two, at most fft.MAX_N."""
    from .fft import MAX_N

    if pl.fft:
        return max(p.N for p in pl.fft.values())
    est = int(span * (1 + math.sqrt(max(steps, 1))))
    return min(MAX_N, 1 << max(est - 1, 1).bit_length())


#: the default composition: the FFT for FFT_MIN_STEPS <= T <= FFT_MAX_STEPS, the exact chain otherwise (a choice;
#: measured (docs/theory/pld.md, "The FFT composition"), FFT / exact seconds: Poisson q = 0.01, sigma = 2, grid 1e-4:
#: 1.73x at T = 1e3, 1.30x at 5e3, 0.86-0.93x at 1e4, 0.40-0.46x at 1e5, 0.20-0.22x at 1e6 (Poisson composes both directions by FFT,
#: one derived by the exact chain); fixed-size grid 1e-3: 2.8x at 1e3, 1.2x at 1e4, 0.75x at 1e5; grid 1e-4: 0.73x at
#: 1e4, 0.43x at 1e5. Beyond 1e7 steps, where the exact chain refuses most
#: grids as too wide, the FFT's transform reaches its MAX_N and its read-off range gets short: the exact chain's
#: quick refusals are kept there)
FFT_MIN_STEPS = 10_000
FFT_MAX_STEPS = 10**7


def use_fft(steps: int, method: str | None) -> bool:
    """The composition method: ``method`` "fft" / "exact", or None (default): the FFT for FFT_MIN_STEPS <= T <=
    FFT_MAX_STEPS."""
    if method not in (None, "fft", "exact"):
        raise InputError("method", f'must be "fft", "exact" or None, got {method!r}'[:200])
    return method == "fft" or (method is None and FFT_MIN_STEPS <= steps <= FFT_MAX_STEPS)


@lru_cache(maxsize=8)
def one_steps(profile: CurveProfile, h: fmpq, lay: Layout, K: int):
    """(pessimistic, optimistic) one-step measures of a profile of curves (any mechanism's dominating pair,
    :mod:`certify.pld.curves`), from one shared set of curve samples; memoised on the profile's exact identity."""
    sm = discretise.sample_of(profile, h, lay, K)
    return discretise.pessimistic(sm, K), discretise.optimistic(sm, K)


def _one_steps(members: tuple, name: str, q: fmpq, d: fmpq, h: fmpq, lay: Layout, K: int):
    """:func:`one_steps` of a DP-SGD profile (member names) of the pair (q, Delta)."""
    return one_steps(bind(Profile(name, members), q, d), h, lay, K)


@dataclass
class Run:
    plan: Plan
    one_step: dict = field(default_factory=dict)  # (profile, side) -> OneStep
    composed: dict = field(default_factory=dict)  # (profile, side) -> Pld
    derived: dict = field(default_factory=dict)  # side -> readoff.Swapped (the add direction by (*))

    def side(self, pessimistic: bool) -> list:
        """The directions whose max bounds the worst-direction curve: composed measures, then derived ones."""
        out = [v for (n, s), v in self.composed.items() if s == pessimistic]
        if pessimistic in self.derived:
            out.append(self.derived[pessimistic])
        return out


def run(contract: Contract, q: fmpq, sigma: fmpq, steps: int, pl: Plan, lower: tuple | None = None, delta: fmpq | None = None) -> Run:
    """Discretise each profile both ways (checked), compose T times (exact, outward). Deterministic.

    ``lower``: the profiles whose optimistic measure is composed (default: all). A lower bound on the
    worst direction needs only one direction (the max over a subset is still below the max), so the
    producer composes the optimistic side only for the direction that decides eps_up (recorded).

    ``pl.fft`` not None: the FFT composition (:mod:`certify.pld.fft`) of each profile's one-step measures, by the plan
    :func:`certify.pld.fft.fft_plan` derives for the target ``delta``: an empty ``pl.fft`` (the producer) is filled
    with it; a recorded one (the checker) must equal it, profile by profile (refused naming ``witnesses.fft...``)."""
    if pl.fft is not None:
        return _run_fft(contract, q, sigma, steps, pl, lower, delta)
    d = shift(contract, sigma)
    profs = profiles(contract)
    if pl.add_from is not None:  # the derived path: only the source profile is composed
        if not derives_add(contract) or set(pl.layouts) != {pl.add_from}:
            raise InputError(
                "witnesses", f"add_from is for Poisson add/remove with exactly one layout {pl.add_from!r}, got layouts {sorted(pl.layouts)}"
            )
        profs = tuple(p for p in profs if p.name == pl.add_from)
    names = [p.name for p in profs]
    if lower is not None and (not lower or any(n not in names for n in lower) or len(set(lower)) != len(lower)):
        raise InputError("witnesses", f"lower-bound profiles must be a nonempty subset of {names}, each listed once, got {lower!r}")
    if set(pl.layouts) - set(names):  # certify records a layout for each composed profile only
        raise InputError("witnesses", f"layouts {sorted(set(pl.layouts) - set(names))} belong to no composed profile (composed: {names})")
    out = Run(pl)
    chains = []  # every chain is checked for size (compose.check_width) before any is composed
    for prof in profs:
        if prof.name not in pl.layouts:
            raise InputError("witnesses", f"no grid layout recorded for profile {prof.name!r}")
        lay = pl.layouts[prof.name]
        both = _sample(out, prof, q, d, pl)
        for pess, s in zip((True, False), both):
            if pess:
                _guard_width(s, steps)
            elif lower is not None and prof.name not in lower:
                continue
            one = compose.from_one_step(s)
            compose.check_width(one, steps, pl.tau, pl.chain)
            chains.append(((prof.name, pess), one, (bind(prof, q, d), str(pl.h), lay, pl.K, pess)))
    check_run_seconds(pl, run_seconds(pl, steps, len(chains)))  # after the width guards, before composing
    for name, one, key in chains:
        out.composed[name] = compose.power(one, steps, pl.tau, key, pl.chain)
    if pl.add_from is not None:
        from .readoff import Swapped

        for pess in (True, False):
            if (pl.add_from, pess) in out.composed:
                out.derived[pess] = Swapped(out.composed[(pl.add_from, pess)])
    return out


def _sample(out: Run, prof, q: fmpq, d: fmpq, pl: Plan) -> tuple:
    """The profile's pessimistic and optimistic one-step measures on its recorded layout, recorded in ``out``."""
    try:
        both = _one_steps(prof.members, prof.name, q, d, pl.h, pl.layouts[prof.name], pl.K)
    except discretise.DiscretisationError as err:
        raise InputError("--grid", f"cannot discretise at this grid: {err}") from None
    for pess, s in zip((True, False), both):
        out.one_step[(prof.name, pess)] = s
    return both


def _run_fft(contract: Contract, q: fmpq, sigma: fmpq, steps: int, pl: Plan, lower: tuple | None, delta: fmpq | None) -> Run:
    from . import fft

    if delta is None:
        raise InputError("delta", "the FFT composition needs the target delta (its plan is made for it)")
    if pl.add_from is not None or pl.chain is not None:
        raise InputError(
            "witnesses.chain" if pl.chain is not None else "witnesses.add_from",
            "an FFT certificate composes every direction itself: it records neither add_from nor chain (those belong to the exact chain)",
        )
    if steps < 2:
        raise InputError("--steps", "the FFT composition needs at least 2 steps")
    d = shift(contract, sigma)
    profs = profiles(contract)
    names = [p.name for p in profs]
    if set(pl.layouts) != set(names):
        raise InputError("witnesses.layouts", f"an FFT run records a layout for every profile {names}, got {sorted(pl.layouts)}")
    if pl.fft and set(pl.fft) != set(names):
        raise InputError("witnesses.fft", f"must hold a plan for every profile {names}, got {sorted(str(k)[:20] for k in pl.fft)[:8]}")
    if lower is not None and (not lower or any(n not in names for n in lower) or len(set(lower)) != len(lower)):
        raise InputError("witnesses", f"lower-bound profiles must be a nonempty subset of {names}, each listed once, got {lower!r}")
    out = Run(pl)
    measures = {}
    for prof in profs:
        both = _sample(out, prof, q, d, pl)
        _guard_width(both[0], steps)  # the exact chain's refusals of a composition too wide, kept: the same refusals
        pess_m, opt_m = compose.from_one_step(both[0]), compose.from_one_step(both[1])  # either way (and fast ones)
        compose.check_width(pess_m, steps, pl.tau, compose.LEFT_TO_RIGHT)
        want = fft.fft_plan([(pess_m, opt_m, steps)], delta, pl.h)
        if pl.fft and prof.name in pl.fft:
            require_plan(pl.fft[prof.name], want, prof.name)
        measures[prof.name] = (pess_m, opt_m, want)
    for name, (_, _, want) in measures.items():
        pl.fft[name] = want  # the producer's (empty) plan is filled; the checker's already equals it
    check_run_seconds(pl, run_seconds(pl, steps, len(names)))
    for name, (pess_m, opt_m, want) in measures.items():
        up, lo = fft.compose_pair([(pess_m, opt_m, steps)], want)
        out.composed[(name, True)] = up
        if lower is None or name in lower:
            out.composed[(name, False)] = lo
    return out


def _guard_width(s, steps: int) -> None:
    """Refuse before composing when the T-fold measure cannot fit MAX_ATOMS: its bulk spans about
    24 standard deviations of the summed loss, sqrt(T) times the one-step one (float estimate, used only
    to refuse; the composition still refuses exactly if a product outgrows MAX_ATOMS). Kept beside
    :func:`certify.pld.compose.check_width` (which predicts every chain's products from the truncation
    threshold): where the threshold cuts little relative to 24 std (T = 1e9 at grid 1e-3), this one refuses
    at once and that one does not."""
    drop = max(0, max((int(m).bit_length() for m in s.masses), default=0) - 60)  # K may exceed a float's range
    masses = [float(int(m) >> drop) for m in s.masses]
    total = sum(masses) or 1.0
    mean = sum(i * m for i, m in enumerate(masses)) / total
    var = sum((i - mean) ** 2 * m for i, m in enumerate(masses)) / total
    est = 24 * math.sqrt(steps * var)
    if est > compose.MAX_ATOMS:
        raise InputError(
            "--steps",
            f"the {steps}-fold composition would need about {est:.3g} atoms at this grid "
            f"(at most {compose.MAX_ATOMS}); use a coarser --grid or fewer steps",
        )


_one_steps.cache_clear = one_steps.cache_clear  # the memo is one_steps'; callers that clear it by the old name keep working
