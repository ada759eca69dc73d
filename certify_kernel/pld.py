"""Kind ``pld/dpsgd``: the certified PLD accountant, re-derived from /work/shared/notes/certified-pld.md (cited "N").

  (N0) a discrete measure, atoms m_i at losses l_i = i h and m_inf at +inf, has the curve
       delta(g) = m_inf + sum m_i (1 - g e^(-l_i))_+ (g = e^eps >= 0), non-decreasing in every mass and every loss;
  (N1) the pair: Poisson + add-remove, remove P = (1-q) N(0,1) + q N(mu,1) vs Q = N(0,1), mu = 1/sigma (MTZ19 Sec. 3);
       fixed-size + replace-one, the pointwise maximum of H_g(P||Q) and H_g(Q||P) at p, mu = 2/sigma (Bok, Prop. 1);
       the loss log(dP/dQ) is increasing in x, so H_g(P||Q) = P(x > x*) - g Q(x > x*), dH/dg = -Q(x > x*);
  (N1') add from remove: H_g(Q||P) = 1 - g + g H_(1/g)(P||Q) (probability measures), at every T (no add_from: composed apart);
  (N2) composition preserves domination for every g >= 0 (Zhu, Dong, Wang 2022, Thm 10; the proof by Fubini needs
       finite measures only, not total mass 1): T-fold power of the polynomial sum m_i x^i, m_inf as the rest;
  (N3) read-off: delta(eps) by (N0) at the composed measures.

Upper measure: the lower convex hull ("connect the dots", Doroshenko et al. 2022) of (0, 1) and (g_j, d_j), d_j >= H(g_j) at the
layout's points g_j = e^(j h), masses rounded up to 2^-K. The check makes it a proof, whatever the masses: a piecewise linear curve with kinks
at the g_j only, >= d_j at every g_j and >= 1 at 0, is >= the convex H on every segment, and m_inf >= d_last >= H beyond. Lower: per segment
a global minorant line of H (of one member, for the maximum: a tangent, a mean of two, or 1 - g, ``_line``); v_j = the smaller adjacent
line at g_j (1 - g on [0, g_0]; 0 from the first v_j < 0 on), masses rounded down; a curve with kinks at the g_j, <= v_j at each, is <= H.
Products exact (python-flint's fmpz_poly, exact integer products only), rounded up (down) to 2^-K; tails of mass <= tau go to +inf and
onto the first atom (are dropped). So [lower, upper] encloses the pair's exact composed delta: the claims are decided from it, the recorded
deltas checked to lie on their side of it, the margins are the kernel's own (``Derivation.sides``)."""

import math
from fractions import Fraction
from flint import fmpz_poly
from mpmath import iv
from .document import Derivation
from .numbers import Malformed, Undecided, bounds, exact_input, interval, normal_tail, parse_exact, span, working_precision
from .poisson import CONTRACT

KIND = "pld/dpsgd"
FIXED = dict(CONTRACT, sampling="fixed-size", adjacency="replace-one", sensitivity="2C")
INPUTS = frozenset(CONTRACT) | {"delta", "grid", "noise_multiplier", "sampling_rate", "steps"}
WITNESSES = {"K", "add_from", "epsilon_lower", "epsilon_upper", "layouts", "lower_profiles", "tau"}
#: work decided before it is done: grid points per profile, steps (products ~ 2 log2 T), atoms x bits of one product
MAX_POINTS, MAX_STEPS, MAX_CELLS = 25_000, 1 << 24, 200_000_000
GRID = "min over the used grid points (and gamma = 0) of "
TEXTS = {  # quantity: (equation, description), as certify writes them
    "margin_upper": ("discretise: pessimistic check", GRID + "g_up - upper(curve): >= 0 means the one-step measure's curve dominates the "
                     "profile for every gamma >= 0"),
    "margin_lower": ("discretise: optimistic check", GRID + "lower(tangent) - g_low: >= 0 means the profile dominates the one-step measure's curve"),
    "epsilon_upper": ("readoff: eps_pass", "certified epsilon: the run is (epsilon_upper, delta)-DP"),
    "epsilon_lower": ("readoff: eps_fail", "certified lower bound on the exact eps(delta) of the composed dominating pair"),
    "delta_upper": ("readoff: delta_up(epsilon_upper)", "m_inf + sum m_i (1 - e^(eps - l_i))_+ of the composed pessimistic measures "
                    "(worst direction)"),
    "delta_lower": ("readoff: delta_low(epsilon_lower)", "the same read-off of the composed optimistic measures (worst direction)"),
}  # certify's FFT composition (witness fft) words its deltas so; the kernel composes exactly whatever certify did (N2)
FFT = {"delta_upper": ("fft: delta_up(epsilon_upper)", "upper bound of m_inf + sum m_i (1 - e^(eps - l_i))_+ of the T-fold pessimistic measures "
       "(worst direction), by the tilted float FFT with its proven error bound (certify.pld.fft)"), "delta_lower": ("fft: delta_low(epsilon_lower)",
       "lower bound of the same read-off of the T-fold optimistic measures (worst direction), by the tilted float FFT")}

def curve(g, q: Fraction, mu, name: str) -> list:
    """[(H, dH/dg)] of (N1) at g > 0 (intervals): H_g(P||Q) ("remove"), H_g(Q||P) ("add") or both ("max": the larger)."""
    qi, m2, fl = interval(q), mu * mu / 2, iv.mpf(2) ** -iv.prec
    if name == "add":
        out = []
    elif g.b <= 1 - qi.b:
        out = [(1 - g, iv.mpf(-1))]
    elif g.a > 1 - qi.a:
        x = (iv.log((g - (1 - qi)) / qi) + m2) / mu  # x* of (N1): (1-q) + q e^(mu x - mu^2/2) = g
        t0, t1 = normal_tail(x, fl), normal_tail(x - mu, fl)
        out = [((1 - qi) * t0 + qi * t1 - g * t0, -t0)]
    else:
        raise Undecided("a grid point straddles 1 - q")
    if name == "remove":
        return out
    if g.a >= 1 / (1 - qi.a):
        return out + [(iv.mpf(0), iv.mpf(0))]
    if g.b >= 1 / (1 - qi.b):
        raise Undecided("a grid point straddles 1/(1 - q)")
    x = (iv.log((1 / g - (1 - qi)) / qi) + m2) / mu  # H_g(Q||P) = Q(x < x') - g P(x < x'), (1-q) + q e^(mu x' - mu^2/2) = 1/g
    c0, c1 = 1 - normal_tail(x, fl), 1 - normal_tail(x - mu, fl)
    p = (1 - qi) * c0 + qi * c1
    return out + [(c0 - g * p, -p)]

def points(lay) -> list:
    """The indices of a layout: [core_lo, core_hi]; per band [lo, hi, stride] outwards, every stride-th from the inner
    ends; then every ``stride``-th, and lo, hi. Any set is sound (checked at each point): it sets tightness and work."""
    lo, hi, a, b, s = (lay[k] for k in ("lo", "hi", "core_lo", "core_hi", "stride"))
    bands = [(bl, bh, st) for bl, bh, st in lay.get("bands", [])] + [(lo, hi, s)]
    if len(bands) > 17 or any(type(x) is not int for x in (lo, hi, a, b) + sum(bands, ())) or not lo <= a <= b <= hi or min(x[2] for x in bands) < 1:
        raise Malformed("witnesses.layouts: at most 16 bands, integer indices lo <= core_lo <= core_hi <= hi, positive strides")
    left, right, count = [], [], b - a + 1
    for blo, bhi, st in bands:
        l0, r0 = min(left + [a]), max(right + [b])
        if (count := count + max(0, l0 - blo) // st + max(0, bhi - r0) // st + 2) > MAX_POINTS:
            raise Undecided(f"a layout of more than {MAX_POINTS} grid points: too costly for the kernel")
        left, right = left + list(range(l0 - st, blo - 1, -st)), right + list(range(r0 + st, bhi + 1, st))
    return sorted(j for j in set(left + right + [lo, hi] + list(range(a, b + 1))) if lo <= j <= hi)

def _masses(gs: list, ys: list, K: int, up: bool) -> list:
    """Masses (units 2^-K) of the lower convex hull of (0, ys[0]), (g_i, ys[i+1]) (N0): g_i (slope right - slope left),
    rounded; the hull's vertices chosen at the g_i's lower ends, exactly (a choice: the checks decide)."""
    xs, vert = [Fraction(0)] + [bounds(g)[0] for g in gs], []
    for i, (x, y) in enumerate(zip(xs, ys)):
        while len(vert) > 1 and (xs[vert[-1]] - xs[vert[-2]]) * (y - ys[vert[-2]]) <= (ys[vert[-1]] - ys[vert[-2]]) * (x - xs[vert[-2]]):
            vert.pop()
        vert.append(i)
    xi, out = [iv.mpf(0)] + gs, [0] * len(gs)
    for k, v in enumerate(vert[1:], 1):
        left = (interval(ys[v] - ys[vert[k - 1]])) / (xi[v] - xi[vert[k - 1]])
        right = (interval(ys[vert[k + 1]] - ys[v])) / (xi[vert[k + 1]] - xi[v]) if k + 1 < len(vert) else iv.mpf(0)
        m = bounds(xi[v] * (right - left) * 2**K)
        out[v - 1] = max(0, math.ceil(m[1]) if up else math.floor(m[0]))
    return out

def curve_at(gs: list, ms: list, m_inf: int, K: int) -> list:
    """(N0) at every point g_j: m_inf + sum_(i>j) m_i - g_j sum_(i>j) m_i / g_i, exact sums and intervals, units 1."""
    out, a, b = [None] * len(gs), 0, iv.mpf(0)
    for j in range(len(gs) - 1, -1, -1):
        out[j] = (m_inf + a - gs[j] * b) / iv.mpf(2) ** K
        a, b = a + ms[j], b + ms[j] / gs[j]
    return out

def _line(a: tuple, b: tuple, m: tuple, ends: tuple) -> tuple:
    """Of global minorant lines (slope, intercept) of H on a segment (tangents a, b at its ends, m at its midpoint, their means, 1 - g),
    the one of least deficit below H at the ends, one below 1 - g weighing 10^6 times (the hull from (0, 1) would carry it to every g
    below), 4 times on a segment ending at g >= 1 (a node value 0 there cuts every larger loss): a choice, any such line is sound."""
    cands = [m, a, b, (iv.mpf(-1), iv.mpf(1))] + [((k[0] + l[0]) / 2, (k[1] + l[1]) / 2) for k, l in ((a, b), (m, b), (a, m))]
    ends = [(g, float((t[0] * g + t[1]).a), 1 - float(g.a)) for t, g in zip((a, b), ends)]  # (g, H, 1 - g)
    pen = 10**6 if ends[1][2] > 0 else 3
    return min(cands, key=lambda l: max(H - (v := float((l[0] * g + l[1]).a)) + pen * max(0.0, f - v) for g, H, f in ends))

def one_step(idx: list, h: Fraction, q: Fraction, mu, K: int, der: Derivation, name: str) -> tuple:
    """The upper and lower one-step measures at the points ``idx`` (dense (first index, masses, m_inf)), their checks."""
    gs = [iv.exp(interval(j * h)) for j in idx]
    cs = [curve(g, q, mu, name) for g in gs]
    d = [max(bounds(hj)[1] for hj, _ in c) for c in cs]
    for j in range(1, len(d)):
        d[j] = min(d[j], d[j - 1])  # H is non-increasing
    eta = Fraction(1, 2 ** (K + 4))  # the hulls' margin, far above the intervals' widths
    up, m_inf = _masses(gs, [1 + eta] + [x + eta for x in d], K, True), math.ceil((d[-1] + eta) * 2**K)
    f = curve_at(gs, up, m_inf, K)
    margin = min([bounds(f[j] - interval(d[j]))[0] for j in range(len(gs))] + [Fraction(m_inf + sum(up), 2**K) - 1])
    der.values.update({f"margin_upper[{name}]": (margin, margin)} if margin >= 0 else {})
    ms = [(g0 + g1) / 2 for g0, g1 in zip(gs, gs[1:])]  # tangents (slope, intercept) of the larger member at the points, the midpoints
    big = [max(c, key=lambda x: float(x[0].a)) for c in cs + [curve(m, q, mu, name) for m in ms]]
    t = [(s, v - s * g) for g, (v, s) in zip(gs + ms, big)]
    lines = [(iv.mpf(-1), iv.mpf(1))] + [_line(t[j], t[j + 1], t[len(gs) + j], gs[j : j + 2]) for j in range(len(ms))] + [None]
    v = [min(bounds(s * g + c)[0] for s, c in filter(None, lines[j : j + 2])) for j, g in enumerate(gs)]
    n = next((j for j in range(len(v)) if v[j] < 0), len(v) - 1)
    v = [Fraction(1)] + v[:n] + [Fraction(0)]  # G(0) <= 1; from the first negative v_j (or the last point) on, G = 0 <= H
    low = _masses(gs[: n + 1], [x - eta for x in v[:-1]] + [0], K, False)
    gl = curve_at(gs[: n + 1], low, 0, K)
    margin = min([bounds(interval(v[j + 1]) - gl[j])[0] for j in range(n + 1)] + [1 - Fraction(sum(low), 2**K)])
    der.values.update({f"margin_lower[{name}]": (margin, margin)} if margin >= 0 else {})
    at, below = dict(zip(idx, up)), dict(zip(idx, low))  # dense: (first index, masses at every index from it, m_inf)
    return (idx[0], [at.get(j, 0) for j in range(idx[0], idx[-1] + 1)], m_inf), (idx[0], [below.get(j, 0) for j in range(idx[0], idx[n] + 1)], 0)

def product(a: tuple, b: tuple, K: int, tau: int, up: bool) -> tuple:
    """(N2) one exact product (fmpz_poly), masses rounded up (down) to 2^-K, m_inf = a_inf (|b| + b_inf) + |a| b_inf; tails <= tau moved."""
    (i, x, xi), (j, y, yi) = a, b  # (first index, masses, m_inf)
    if (len(x) + len(y)) * (x and max(x).bit_length() + max(y).bit_length() + 1) > MAX_CELLS:
        raise Undecided("a composed measure is too large for the kernel's product bound")
    c = [(-(-int(t) >> K) if up else int(t) >> K) for t in (fmpz_poly(x) * fmpz_poly(y)).coeffs()] or [0]
    inf = -(-(xi * (sum(y) + yi) + sum(x) * yi) >> K)
    lo, acc, hi, cut = 0, 0, len(c), 0
    while lo < len(c) - 1 and acc + c[lo] <= tau:
        acc, lo = acc + c[lo], lo + 1
    while hi - 1 > lo and cut + c[hi - 1] <= tau:
        cut, hi = cut + c[hi - 1], hi - 1
    c, inf = c[lo:hi], inf + (cut if up else 0)
    c[0] += acc if up else 0
    return i + j + lo, c, inf

def power(m: tuple, T: int, K: int, tau: int, up: bool) -> tuple:
    """The T-fold composition (N2): the bits of T from the top, a squaring at each, a product with m at a set bit."""
    out = m
    for bit in bin(T)[3:]:
        out = product(out, out, K, tau, up)
        out = product(out, m, K, tau, up) if bit == "1" else out
    return out

def _horner(c: list, x: tuple, P: int) -> tuple:
    """(lo, hi) of sum_k c_k x^k, c_k >= 0 integers, 0 < x_lo <= x <= x_hi < 1 (fixed point 2^-P, floors / ceilings)."""
    xl, xh, lo, hi = math.floor(x[0] * 2**P), math.ceil(x[1] * 2**P), 0, 0
    for t in reversed(c):
        lo, hi = (lo * xl >> P) + (t << P), -(-(hi * xh) >> P) + (t << P)
    return Fraction(lo, 2**P), Fraction(hi, 2**P)

def readoff(m: tuple, eps: Fraction, h: Fraction, K: int, add: bool):
    """(N3) delta(eps) of a composed measure (an interval): remove m_inf + sum_(l_i > eps) m_i (1 - e^(eps - l_i));
    add by (N1'), 1 - g + g (m_inf + sum_(l_i > -eps) m_i) - sum_(l_i > -eps) m_i e^(-l_i), g = e^eps."""
    base, c, inf = m
    s = max(base, math.floor((-eps if add else eps) / h) + 1)
    c = c[s - base :]
    tilt = span(*_horner(c, bounds(iv.exp(interval(-h))), iv.prec))  # sum_k c_(s+k) e^(-k h)
    a, unit = interval(Fraction(inf + sum(c))), iv.mpf(2) ** K
    if add:
        return 1 - (g := iv.exp(interval(eps))) + (g * a - iv.exp(interval(-s * h)) * tilt) / unit
    return (a - iv.exp(interval(eps - s * h)) * tilt) / unit

def read(doc: dict, der: Derivation) -> tuple | None:
    """(profile, q, sigma, T, delta, h, epsilons, layout), the hypotheses checked (else ``der.failed``)."""
    inputs, w = doc["inputs"], doc["witnesses"]
    if set(inputs) != INPUTS:
        raise Undecided("inputs other than the kernel's set (batch and dataset sizes, epochs, notes) are not covered")
    fixed = inputs.get("sampling") == "fixed-size"
    for key, want in (FIXED if fixed else CONTRACT).items():
        if inputs[key] != want:
            der.failed.append(f"inputs.{key} must be {want!r} for this contract")
    q, sigma, T, delta, h = (exact_input(inputs, k, der.failed) for k in ("sampling_rate", "noise_multiplier", "steps", "delta", "grid"))
    if None in (q, sigma, T, delta, h) or der.failed:
        return None
    ok = {"0 < q < 1": 0 < q < 1, "sigma > 0": sigma > 0, "T >= 1 integer": T >= 1 and T.denominator == 1, "0 < delta < 1": 0 < delta < 1}
    der.failed += [f"inputs: {why} fails" for why, o in {**ok, "grid in (0, 1/2]": 0 < h <= Fraction(1, 2)}.items() if not o]
    if der.failed:
        return None
    names, fft = ("max",) if fixed else ("remove",) if "add_from" in w else ("remove", "add"), "fft" in w  # add: derived (N1') or apart
    bad = set(w) - {"chain", "fft"} != WITNESSES - ({"add_from"} if fixed or len(names) == 2 else set()) or set(w["layouts"]) != set(names)
    bad = bad or fft and ("chain" in w or not isinstance(w["fft"], dict) or set(w["fft"]) != set(names))  # an FFT run: apart, no chain
    if bad or w.get("add_from", "remove") != "remove" or w.get("chain", "left-to-right") != "left-to-right":  # K, tau, chain, fft: its own
        raise Undecided("pld/dpsgd witnesses not covered: the kernel reads the layouts of the max, the remove or both directions")
    eps = [parse_exact(w[k], f"witnesses.{k}") for k in ("epsilon_upper", "epsilon_lower")]
    if T > MAX_STEPS or max(abs(e) for e in eps) > 1000:
        raise Undecided(f"T above {MAX_STEPS} or |epsilon| above 1000: not covered")
    return names, q, sigma, int(T), delta, h, eps, w["layouts"], fft

def _texts(der: Derivation, names: tuple, delta: Fraction, h: Fraction, e_up: Fraction, e_low: Fraction, fft: bool) -> None:
    """The quantities, claims and conclusions in certify's words; the sides of the deltas, the margins the kernel's own."""
    keys = [f"{k}[{n}]" for n in names for k in TEXTS if k.startswith("margin")] + [k for k in TEXTS if not k.startswith("margin")]
    for key in keys:
        der.names.add(key)
        der.equations[key], der.texts[f"quantity:{key}"] = (FFT if fft and key in FFT else TEXTS)[key.split("[")[0]]
    der.sides.update({k: 0 for k in keys if k.startswith("margin")} | {"delta_upper": 1, "delta_lower": -1})
    der.values["epsilon_upper"], der.values["epsilon_lower"] = (e_up, e_up), (e_low, e_low)
    every, pair = " for every gamma >= 0", "the exact eps(delta) of the composed pair exceeds epsilon_lower"
    for n in names:
        der.claim(f"dominates[{n}]", (f"margin_upper[{n}]", ">=", "0"), f"the pessimistic one-step measure dominates the {n} profile{every}")
        der.claim(f"dominated[{n}]", (f"margin_lower[{n}]", ">=", "0"), f"the {n} profile dominates the optimistic one-step measure{every}")
    der.claim("privacy", ("delta_upper", "<=", str(delta)), "delta_up(epsilon_upper) <= delta: the run is (epsilon_upper, delta)-DP")
    dom = {k: tuple(f"{k}[{n}]" for n in names) for k in ("dominates", "dominated")}
    how = (", composed by a tilted float FFT with a proven error bound", " (FFT composition)") if fft else ("", "")
    der.conclude("privacy", "privacy", dom["dominates"], f"the run is ({e_up}, {delta})-DP (certified PLD accountant, grid {h}{how[0]})")
    if e_low > 0:  # at a coarse grid no lower bound may be found (epsilon_lower 0): certify then states no tightness
        der.claim("tightness", ("delta_lower", ">", str(delta)), f"delta_low(epsilon_lower) > delta: {pair}")
        der.conclude("tightness", "tightness", dom["dominated"],
                     f"the exact epsilon at delta = {delta} of the composed dominating pair exceeds {e_low}{how[1]}")

def derive(doc: dict) -> Derivation:
    """Everything the kernel needs to judge a pld/dpsgd certificate (see document.Derivation)."""
    der = Derivation()
    got = read(doc, der)
    if got is None:
        return der
    names, q, sigma, T, delta, h, (e_up, e_low), lays, fft = got  # then the work, decided before it is done: K, tau, the points
    _texts(der, names, delta, h, e_up, e_low, fft)
    idx = {n: points(lays[n]) for n in names}
    # units 2^-K: the excess mass (2^-K per atom and product) and the tails (tau) far below delta (N1': times e^eps)
    amp = 48 + 2 * T.bit_length() + (math.ceil(1.45 * float(max(e_up, 0))) if names == ("remove",) else 0)
    K = delta.denominator.bit_length() - delta.numerator.bit_length() + 1 + amp + max((i[-1] - i[0]).bit_length() for i in idx.values())
    tau = int(delta * 2**K) >> amp
    if K > 4096:
        raise Undecided(f"K = {K} bits per mass: too costly for the kernel")
    rd = []  # per direction, (upper, lower) read-offs at e_up and e_low; add from the remove chains (N1') when derived
    for n in names:
        with working_precision(K + 48):  # the one-step checks need 2^-(K+4) (eta), far above these intervals' widths
            up, low = one_step(idx[n], h, q, interval((2 if n == "max" else 1) / sigma), K, der, n)
        up, low = power(up, T, K, tau, True), power(low, T, K, tau, False)
        with working_precision(K + 128):
            rd += [[(readoff(up, e, h, K, a), readoff(low, e, h, K, a)) for e in (e_up, e_low)] for a in (False, True)[: 1 + (names == ("remove",))]]
    for j, key in enumerate(("delta_upper", "delta_lower")):
        der.values[key] = (max(bounds(r[j][1])[0] for r in rd), max(bounds(r[j][0])[1] for r in rd))
    return der
