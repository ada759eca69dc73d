"""Kind ``dpsgd/renyi-bok``: Bok (2026), "Can Rényi accountants beat lossless accountants for DP-SGD?", from the paper (shared/papers), not certify:

  (5)   rho = max_{u in [0,1/2]} J(u), J = log F/(alpha-1), Delta = 2/sigma;  (6) eps = T rho + log(1 - 1/alpha) - (log delta + log alpha)/(alpha-1);
  (35)  F(u) = sum_k C(alpha,k)(1-p)^(alpha-k) p^k e^(k(k-1)Delta^2/2 - k^2 beta^2/8) I_k, beta = Delta sqrt(2u),
        I_k = int (1-p+p e^(beta v - beta^2/2))^(1-alpha) e^(k beta v/2) phi(v) dv (I_k = 1 at u = 0);
  (37)  Q(l,r) = max_t (1-t) Jbar(l) + t Jbar(r) + kappa (r-l)^2 t(1-t)/2 >= max_[l,r] J for kappa >= max |J''|, indeed for kappa >= max(0, -J''):
        the paper's min(kappa1, kappa2) ((42) into (39)-(41); (45)), else kappa_neg: (38) -J'' = ((F'/F)^2 - F''/F)/(alpha-1) with F, F' (17)
        and F'' (18) enclosed over the piece by the kernel's quadrature (``moments``);
  (19)  Proposition 2 (a): p e^((alpha-1)(1-p) Delta^2/2) >= alpha/(alpha-1) puts the maximum of (5) at u = 0 (method ``prop2a``: rho = J(0)).

The quadrature is the kernel's own: the trapezoidal rule on h Z is exact up to 2M/(e^(2 pi a/h) - 1) for f analytic in |Im v| < a, int |f(x+iy)| dx
<= M (Trefethen & Weideman 2014, Thm 5.1). As beta a <= 3/2 < pi/2, Re(1-p+p e^(beta z-beta^2/2)) >= 1-p: M = (1-p)^(1-alpha) e^(a^2/2+k^2 beta^2/8).
The grid is cut outside [-W, alpha beta/2 + W]; as f <= (1-p)^(1-alpha) e^(k^2 beta^2/8) phi(v - k beta/2), each cut tail is at most that factor times
phi(W)(h + 1/W) (monotone tail, Mills' bound). Every term is >= 0: F in [sum - disc, sum + disc + tails]. Review guide: docs/kernel.md.
"""

from fractions import Fraction
from math import ceil, comb, floor
from mpmath import iv
from .document import Derivation, recorded_ball
from .numbers import Malformed, Undecided, bounds, interval, log_interval, parse_exact, printed, span, working_precision
from . import poisson

KIND = "dpsgd/renyi-bok"
READS = ("leaf[", "J_lower(u*)")  # the recorded quantities derive reads (search_gap, B.2; see __init__._derive)
CONTRACT = poisson.CONTRACT | dict(sampling="fixed-size", adjacency="replace-one", sensitivity="2C")
INPUTS = frozenset(CONTRACT) | {"alpha", "delta", "noise_multiplier", "sampling_rate", "steps"}
KEY_DIGITS = 12  # significant digits of a leaf key as certify writes it in witnesses.leaves (upper decimal of the ball leaf[i])
POINT = ("u", "a", "b", "h", "strip")
WITNESSES = frozenset({"budget", "curvature", "gamma", "leaves", "method", "points", "reported_epsilon", "stopped_early", "u_lower"})
EQUATIONS = {"J(0)": "(5) at u = 0", "J_lower(u*)": "B.3.1", "gamma": "B.2", "search_gap": "B.2", "rho": "(5)", "alpha": "(5)", "epsilon": "(6)"}
#: evaluations (a point 1, kappa_neg KAPPA_COST), grid nodes x (alpha+1) per point and in all (about 15 s), leaves: beyond them, undecided
MAX_POINTS, KAPPA_COST, MAX_NODE_WORK, MAX_WORK, MAX_LEAVES = 400, 2, 40_000, 300_000, 4096
#: tails cut at |v - k beta/2| >= W, step h = a/STEPS (e^(-2 pi STEPS) = e^-56), at QUAD_BITS (keys are compared loosely; eps has 10 digits)
W, STEPS, QUAD_BITS = 11, 9, 160

def read(doc: dict, der: Derivation) -> tuple | None:
    """(alpha, p, Delta^2, T, delta) with the hypotheses of Thm 1, B.3 and Corollary 1 checked (else ``der.failed``)."""
    inputs = doc["inputs"]
    if set(inputs) == INPUTS | {"batch_size", "dataset_size"}:  # fixed-size batches of b out of n: p = b/n exactly
        b, n = (parse_exact(inputs.get(k), f"inputs.{k}") for k in ("batch_size", "dataset_size"))
        if b.denominator != 1 or n.denominator != 1 or not 1 <= b < n or parse_exact(inputs.get("sampling_rate"), "inputs.sampling_rate") != b / n:
            raise Malformed("inputs.sampling_rate: must be batch_size/dataset_size, integers with 1 <= b < n")
        inputs = {k: v for k, v in inputs.items() if k in INPUTS}
    if set(inputs) != INPUTS:
        raise Undecided(f"inputs {sorted(set(inputs) ^ INPUTS)[:4]}: this input layout is not re-checked by the kernel")
    for key, want in CONTRACT.items():
        if inputs[key] != want:
            der.failed.append(f"inputs.{key}: Bok's Theorem 1 is for fixed-size sampling + replace-one ({key} = {want!r})")
    alpha, p, sigma, t, delta = (parse_exact(inputs.get(k), f"inputs.{k}") for k in ("alpha", "sampling_rate", "noise_multiplier", "steps", "delta"))
    if alpha.denominator != 1 or not 2 <= alpha <= 256:
        der.failed.append(f"inputs.alpha: an integer in [2, 256] (B.3), got {alpha}")
    if not 0 < p < 1 or not Fraction(1, 10**6) <= sigma <= 10**6:
        der.failed.append("inputs.sampling_rate in (0, 1) and inputs.noise_multiplier in [1e-6, 1e6]")
    if t.denominator != 1 or not 1 <= t <= 10**15 or not 0 < delta < 1:
        der.failed.append("inputs.steps an integer in [1, 1e15] and inputs.delta in (0, 1)")
    if max(x.numerator.bit_length() + x.denominator.bit_length() for x in (p, sigma, delta)) > 4000:
        der.failed.append("inputs: numbers longer than 4000 bits")
    return None if der.failed else (int(alpha), p, 4 / sigma**2, int(t), delta)

def read_leaves(w: dict) -> tuple[list, Fraction, Fraction]:
    """The recorded partition of [0, 1/2] (checked to be one), u* and gamma; Undecided for searches not re-checked."""
    if not isinstance(w, dict) or w.get("method") != "branch-and-bound" or w.get("stopped_early") is not False:
        raise Undecided(f"witnesses.method {str(w.get('method'))[:30]!r}: only a finished branch-and-bound is re-checked by the kernel")
    if set(w) != WITNESSES:
        raise Malformed("witnesses: not the layout of a dpsgd/renyi-bok search")
    leaves = w["leaves"]
    if not isinstance(leaves, list) or not 1 <= len(leaves) <= MAX_LEAVES:
        raise Undecided(f"witnesses.leaves: 1 to {MAX_LEAVES} leaves are re-checked")
    cuts = [Fraction(0)]
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, list) or len(leaf) != 3:
            raise Malformed(f"witnesses.leaves[{i}]: must be [l, r, key]")
        lo, hi = parse_exact(leaf[0], "leaf l"), parse_exact(leaf[1], "leaf r")
        if lo != cuts[-1] or not lo < hi:
            raise Malformed(f"witnesses.leaves[{i}]: the leaves do not partition [0, 1/2] in order")
        cuts.append(hi)
    if cuts[-1] != Fraction(1, 2):
        raise Malformed("witnesses.leaves: the leaves do not reach u = 1/2")
    u_star, gamma = parse_exact(w["u_lower"], "witnesses.u_lower"), parse_exact(w["gamma"], "witnesses.gamma")
    if not 0 <= u_star <= Fraction(1, 2) or gamma <= 0:
        raise Malformed("witnesses.u_lower in [0, 1/2] and witnesses.gamma > 0")
    read_points(w, cuts, u_star)
    return cuts, u_star, gamma

def read_points(w: dict, cuts: list, u_star: Fraction) -> None:
    """The layout (values unused: the kernel has its own quadrature) of certify's points, one well-formed rule per leaf end and u* but 0, in
    increasing u, and of the budget of a search that met gamma and evaluated every leaf end (at most max(2, max_evaluations) points)."""
    points, budget, want = w["points"], w["budget"], sorted((set(cuts) | {u_star}) - {0})
    if not isinstance(points, list) or len(points) != len(want) or not all(isinstance(x, dict) and set(x) == set(POINT) for x in points):
        raise Malformed("witnesses.points: one {u, a, b, h, strip} per leaf end and u* (u > 0), in increasing u")
    for x, u in zip(points, want):
        got, a, b, h, strip = (parse_exact(x[k], f"witnesses.points.{k}") for k in POINT)
        if got != u or h <= 0 or strip <= 0 or not a <= 0 <= b or (a / h).denominator != 1 or (b / h).denominator != 1:
            raise Malformed(f"witnesses.points: the rule at u = {u} is not a point certify writes (u, h, strip > 0, a <= 0 <= b on the grid)")
    if not isinstance(budget, dict) or set(budget) != {"max_evaluations", "max_seconds", "stopped_by"} or budget["stopped_by"] != "":
        raise Malformed("witnesses.budget: must be {max_evaluations, max_seconds, stopped_by: ''} after a search that met gamma")
    n, _ = parse_exact(budget["max_evaluations"], "max_evaluations"), parse_exact(budget["max_seconds"], "max_seconds")
    if n.denominator != 1 or len(cuts) > max(2, n):
        raise Malformed("witnesses.budget: max_evaluations an integer, at least the number of leaf ends")

def grid(alpha: int, d2: Fraction, lo: Fraction, hi: Fraction) -> tuple:
    """(beta, a, h, j0, j1): beta over u in [lo, hi], the strip half-width a (beta a <= 3/2), the step h = a/STEPS, nodes j h, j0 <= j <= j1."""
    beta = iv.sqrt(span(2 * lo * d2, 2 * hi * d2))
    a = min(Fraction(4), Fraction(3, 2) / (bhi := bounds(beta)[1]))
    return beta, a, a / STEPS, floor(-W * STEPS / a), ceil((alpha * bhi / 2 + W) * STEPS / a)

def point(alpha: int, p: Fraction, d2: Fraction, u: Fraction) -> tuple[Fraction, Fraction]:
    """(lower, upper) of J(u) = log F(u)/(alpha-1): at u = 0 (beta = 0, I_k = 1) F = sum_k C(alpha,k)(1-p)^(alpha-k) p^k e^(k(k-1)Delta^2/2)."""
    if u == 0:
        q, pp = interval(1 - p), interval(p)
        f = sum(comb(alpha, k) * q ** (alpha - k) * pp**k * iv.exp(interval(d2 * k * (k - 1) / 2)) for k in range(alpha + 1))
        return bounds(iv.log(f) / (alpha - 1))
    with working_precision(min(iv.prec, QUAD_BITS)):
        f = moments(alpha, p, d2, u, u, 0)[0, 0]  # F >= 1 (a Rényi divergence is >= 0)
        return bounds(log_interval(max(bounds(f)[0], Fraction(1))) / (alpha - 1))[0], bounds(iv.log(f) / (alpha - 1))[1]

def moments(alpha: int, p: Fraction, d2: Fraction, lo: Fraction, hi: Fraction, jmax: int) -> dict:
    """{(i, j): intervals holding N_ij(u) = E[v^i w^j h(X, Y)] (A.2) for every u in [lo, hi]} (i <= 2, j <= jmax; i = 0 if jmax = 0). As (35):
    N_ij = sum_m C(alpha-i, m-i)(1-p)^(alpha-m) p^m e^(m(m-1)Delta^2/2 - m^2 beta^2/8) S_mj, S_mj = int w^j D^(1-alpha) e^(m beta v/2) phi(v) dv,
    D = 1-p+pe^y, w = pe^y/D, y = beta v - beta^2/2: S_m0 = I_m, and I_m's error bounds hold for S_mj as |w| <= 1 on the strip (Re pe^y >= 0)."""
    beta, a, h, j0, j1 = grid(alpha, d2, lo, hi)
    beta2, q, pp, hh = beta * beta, interval(1 - p), interval(p), interval(h)
    sums = [[iv.mpf(0)] * (jmax + 1) for _ in range(alpha + 1)]
    for j in range(j0, j1 + 1):
        v = hh * j
        e = pp * iv.exp(beta * v - beta2 / 2)
        t, w, g = iv.exp(-v * v / 2) / (q + e) ** (alpha - 1), 1 / (1 + q / e), iv.exp(beta * v / 2)
        for row in sums:
            row[0], x = row[0] + t, t
            for k in range(1, jmax + 1):
                x *= w
                row[k] += x
            t *= g
    root, ia, top, out = iv.sqrt(2 * iv.pi), interval(a), iv.mpf(beta2.b), {}
    for m, row in enumerate(sums):  # the error bounds at the largest beta of the piece (they increase with beta)
        g = q ** (1 - alpha) * iv.exp(m * m * top / 8)
        disc = 2 * g * iv.exp(ia * ia / 2) / (iv.exp(2 * iv.pi * STEPS) - 1)
        tail = 2 * g * iv.exp(interval(Fraction(-W * W, 2))) / root * (hh + interval(Fraction(1, W)))
        wm = q ** (alpha - m) * pp**m * iv.exp(interval(d2 * m * (m - 1) / 2) - m * m * beta2 / 8)
        for i, k in ((i, k) for i in range(min(m, 2 if jmax else 0) + 1) for k in range(jmax + 1)):
            s = hh * row[k] / root
            out[i, k] = out.get((i, k), 0) + comb(alpha - i, m - i) * wm * iv.mpf([(s - disc).a, (s + disc + tail).b])
    return out

#: c_ij of (18) as c2 alpha^2 + c1 alpha + c0: F'' = Delta^4 alpha(alpha-1) E[sum c_ij v^i w^j h]
C18 = {(0, 4): (1, 3, 2), (1, 3): (-2, -2, 0), (2, 2): (1, -1, 0), (0, 3): (0, -4, -4), (1, 2): (0, 5, 0), (2, 1): (0, -1, 1), (0, 2): (0, 0, 2),
       (1, 1): (0, 0, -1)}

def kappa_neg(alpha: int, p: Fraction, d2: Fraction, lo: Fraction, hi: Fraction) -> Fraction:
    """max(0, -J'') <= kappa_neg on [lo, hi], by (38): -J'' = ((F'/F)^2 - F''/F)/(alpha-1) with F (>= 1), F' = Delta^2 alpha(alpha-1)
    E[(w^2 - vw) h] (17) and F'' (18) enclosed over the piece by moments."""
    n, a = moments(alpha, p, d2, lo, hi, 4), alpha
    f = iv.mpf([max(n[0, 0].a, 1), n[0, 0].b])
    f1 = interval(d2) * a * (a - 1) * (n[0, 2] - n[1, 1]) / f
    f2 = interval(d2 * d2) * a * (a - 1) * sum((c2 * a * a + c1 * a + c0) * n[ij] for ij, (c2, c1, c0) in C18.items()) / f
    return max(Fraction(0), bounds((f1**2 - f2) / (a - 1))[1])

def key(jl: Fraction, jr: Fraction, kap: Fraction, width: Fraction) -> Fraction:
    """(37) from upper bounds: max over t in [0, 1] of (1-t) jl + t jr + c t(1-t), c = kap width^2/2 (exact)."""
    c = kap * width * width / 2
    t = Fraction(jr > jl) if c == 0 else min(max((jr - jl + c) / (2 * c), Fraction(0)), Fraction(1))
    return (1 - t) * jl + t * jr + c * t * (1 - t)

def kappa(alpha: int, p: Fraction, d2: Fraction, r: Fraction) -> Fraction:
    """kappa1 ^ kappa2 >= max |J''| on [l, r] (B.3.2): the moments (42) (u <= r) into (39), (40) (the |c_ij| of (18)), (41); (45)."""
    q, pp, a = interval(1 - p), interval(p), alpha
    def m(i: int, j: int):  # (42): the smaller of its two bounds, term by term
        total = iv.mpf(0)
        for k in range(a - i + 1):
            base = (i + k) * (i + k - 1)
            one = q ** (1 - i - j - k) * pp ** (i + j + k) * iv.exp(interval(d2 * (base + 2 * r * j * (i + j + k - 1)) / 2))
            two = q ** (a - i - k) * pp ** (1 + k + i - a) * iv.exp(interval(d2 * (base + 2 * r * (a - 1) * (a - i - k)) / 2))
            total += comb(a - i, k) * (one if one.b <= two.b else two)
        return total
    f1 = interval(d2) * a * (a - 1) * (m(1, 1) + m(0, 2))
    f2 = interval(d2 * d2) * a * (a - 1) * sum(abs(c2 * a * a + c1 * a + c0) * m(*ij) for ij, (c2, c1, c0) in C18.items())
    return min(bounds((f2 + f1 * f1) / (a - 1))[1], 2 * d2 * d2 * a * (4 * a * a + 5 * a + 4))

class Points:
    """J-bounds at the points of u and kappa_neg of the pieces evaluated so far (a budget of MAX_POINTS, a piece counting KAPPA_COST)."""
    def __init__(self, alpha: int, p: Fraction, d2: Fraction, budget: int):
        self.alpha, self.p, self.d2, self.budget, self.done, self.kappas = alpha, p, d2, budget, {}, {}
    def used(self) -> int:
        return len(self.done) + KAPPA_COST * sum(len(k) == 2 for k in self.kappas)
    def __call__(self, u: Fraction) -> tuple[Fraction, Fraction]:
        if u not in self.done:
            self.done[u] = point(self.alpha, self.p, self.d2, u)
        return self.done[u]
    def kappa(self, *piece: Fraction) -> Fraction:
        """The paper's kappa (B.3.2) at r (one argument; not counted in the budget) or kappa_neg of the piece [l, r] (two)."""
        if piece not in self.kappas:
            with working_precision(min(iv.prec, QUAD_BITS)):  # an upper bound: its precision only moves its tightness
                self.kappas[piece] = (kappa_neg if len(piece) == 2 else kappa)(self.alpha, self.p, self.d2, *piece)
        return self.kappas[piece]

def leaf_bound(ev: Points, lo: Fraction, hi: Fraction, target: Fraction) -> tuple[Fraction, Fraction]:
    """(a lower bound, an upper bound) of max J on [lo, hi]: (37) on pieces, bisected while a key exceeds target, with the paper's kappa, then
    kappa_neg: (37) needs only kappa >= max(0, -J'') (J minus its chord minus kappa (u-l)(r-u)/2 is convex and 0 at l and r, so <= 0)."""
    pieces, worst = [(lo, hi)], Fraction(0)
    while pieces:
        a, b = pieces.pop()
        jl, jr = ev(a)[1], ev(b)[1]
        q = key(jl, jr, ev.kappa(b), b - a)
        hopeless = max(ev(a)[0], ev(b)[0]) > target  # J itself exceeds the target: the claimed epsilon is false anyway
        if q > target and not hopeless and ev.used() + len(pieces) + KAPPA_COST < ev.budget:
            q = min(q, key(jl, jr, ev.kappa(a, b), b - a))
        if q <= target or hopeless or ev.used() + len(pieces) + 1 >= ev.budget or b - a < Fraction(1, 2**40):
            worst = max(worst, q)
        else:
            pieces += [(a, (a + b) / 2), ((a + b) / 2, b)]
    return max(ev(lo)[0], ev(hi)[0]), worst

def _plan(doc: dict, der: Derivation, n: int, bound: str) -> None:
    """The quantities, claims and conclusion this kind records: n leaves of a branch-and-bound, or (n = 0) Proposition 2 (a)."""
    inputs = doc["inputs"]
    eqs = {k: EQUATIONS[k] for k in ("J(0)", "rho", "alpha", "epsilon")} | dict.fromkeys(PROP2A, "(19)") if n == 0 else dict(EQUATIONS)
    der.equations = eqs | {f"leaf[{i}]": "(37)" for i in range(n)}
    der.names = set(der.equations)
    a, t, d = inputs["alpha"], inputs["steps"], inputs["delta"]
    hyps = {"alpha_at_least_2": (a, ">=", "2"), "alpha_at_most_256": (a, "<=", "256"), "steps_positive": (t, ">=", "1")}
    hyps |= {"delta_positive": (d, ">", "0"), "delta_below_1": (d, "<", "1")}
    search = {"prop2a": ("prop2a_lhs", ">=", "prop2a_rhs")} if n == 0 else {"search_met_gamma": ("search_gap", "<=", "gamma")}
    der.claims = {**search, **hyps, "dp": ("epsilon", "<=", bound)}
    der.conclusions["dp"] = ("dp", tuple(hyps) + (("prop2a",) if n == 0 else ()))
    der.loose = {"rho", "epsilon", "J_lower(u*)", "search_gap"} | {f"leaf[{i}]" for i in range(n)}
    _texts(doc, der, n, bound)

#: the descriptions certify writes for the quantities of a finished branch-and-bound (leaf[i], J_lower(u*): _texts) or of Proposition 2 (a)
DESCRIPTIONS = {
    "J(0)": "closed form: log(sum_k C(alpha,k)(1-p)^(alpha-k) p^k exp(k(k-1)Delta^2/2))/(alpha-1)", "alpha": "Rényi order",
    "search_gap": "largest leaf key minus J-lower(u*)", "rho": "one-step Rényi bound rho(alpha, p, 2/sigma) = max_u J(u)",
    "gamma": "branch-and-bound tolerance gamma (witness)",
    "epsilon": "Corollary 1: T rho + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1); upper endpoint is the certified epsilon"}
PROP2A = {"prop2a_lhs": "p exp((alpha-1)(1-p) Delta^2/2)", "prop2a_rhs": "alpha/(alpha-1)"}

def _texts(doc: dict, der: Derivation, n: int, bound: str) -> None:
    """The prose certify writes, re-derived from the numbers (never copied): a negated or reworded statement is inconsistent."""
    inputs, w = doc["inputs"], doc["witnesses"]
    a, p, s, t, d = (str(parse_exact(inputs.get(k), f"inputs.{k}")) for k in ("alpha", "sampling_rate", "noise_multiplier", "steps", "delta"))
    der.texts.update({f"quantity:{k}": v for k, v in (DESCRIPTIONS | PROP2A).items()})
    der.texts["quantity:J_lower(u*)"] = f"J-lower at u* = {parse_exact(w['u_lower'], 'witnesses.u_lower')}"
    curv = w["curvature"]
    if not isinstance(curv, list) or len(curv) != n or not all(isinstance(c, dict) and isinstance(c.get("level"), str) for c in curv):
        raise Malformed("witnesses.curvature: one {level, thetas} entry per leaf")
    for i, leaf in enumerate(w["leaves"][:n]):
        l, r, level = parse_exact(leaf[0], "leaf l"), parse_exact(leaf[1], "leaf r"), curv[i]["level"]
        der.texts[f"quantity:leaf[{i}]"] = (f"key Q(l, r) >= max J on the leaf [{l}, {r}] (kappa >= max(0, -J'') on the leaf, B.3.2 sharpened, "
                                            f"level {level})")
    names = {"alpha_at_least_2": "alpha", "alpha_at_most_256": "alpha", "steps_positive": "T", "delta_positive": "delta", "delta_below_1": "delta"}
    der.texts.update({f"claim:{h}": f"{v} = {parse_exact(der.claims[h][0], h)} {der.claims[h][1]} {der.claims[h][2]}" for h, v in names.items()})
    der.texts["claim:search_met_gamma"] = "the search stopped at its tolerance: largest key - J-lower(u*) <= gamma"
    der.texts["claim:prop2a"] = "Proposition 2 (a), (19): the maximum of (5) is at u = 0"
    der.texts["claim:dp"] = f"epsilon <= {bound}"
    what = f"DP-SGD with p = {p}, sigma = {s} (Bok 2026)"
    der.texts["conclusion:dp"] = f"{what}: T = {t} steps are ({bound}, {d})-DP (Corollary 1 / (6) at alpha = {a})"

def _recorded(doc: dict, n: int) -> tuple[Fraction, Fraction]:
    """search_gap = max recorded key - recorded J-lower(u*) (B.2: arithmetic on recorded numbers, a fact about the search), after checking that
    each leaf's key text is certify's: the recorded ball leaf[i]'s upper end rounded up to KEY_DIGITS digits (unused, but a reader sees it)."""
    keys = [recorded_ball(f"leaf[{i}]", doc["quantities"].get(f"leaf[{i}]")) for i in range(n)]
    for i, (text, (_, hi)) in enumerate(zip((leaf[2] for leaf in doc["witnesses"]["leaves"]), keys)):
        if text != printed(hi, up=True, digits=KEY_DIGITS):
            raise Malformed(f"witnesses.leaves[{i}]: key {str(text)[:40]!r} is not quantity leaf[{i}]'s upper end to {KEY_DIGITS} digits")
    jlo, jhi = recorded_ball("J_lower(u*)", doc["quantities"]["J_lower(u*)"])
    return max(k[0] for k in keys) - jhi, max(k[1] for k in keys) - jlo

def prop2a(doc: dict, der: Derivation, alpha: int, p: Fraction, d2: Fraction, t: int, delta: Fraction) -> Derivation:
    """Proposition 2 (a): if (19) p e^((alpha-1)(1-p) Delta^2/2) >= alpha/(alpha-1), (5) is maximised at u = 0, so rho = J(0) (closed form)."""
    w = doc["witnesses"]
    layout = {"leaves": [["0", "1/2"]], "points": [], "curvature": []}  # u* is not used (certify reads it no further either)
    if set(w) != WITNESSES - {"budget"} or any(w[k] != v for k, v in layout.items()) or w["stopped_early"] is not False:
        raise Malformed("witnesses: not the layout of a Proposition 2 (a) certificate (the single leaf [0, 1/2], no points)")
    if parse_exact(w["gamma"], "witnesses.gamma") <= 0 or not 0 <= parse_exact(w["u_lower"], "witnesses.u_lower") <= Fraction(1, 2):
        raise Malformed("witnesses.gamma > 0 and witnesses.u_lower in [0, 1/2]")
    _plan(doc, der, 0, w["reported_epsilon"])
    if (alpha - 1) * (1 - p) * d2 > 10**6:
        raise Undecided("(19): the exponent (alpha-1)(1-p) Delta^2/2 exceeds the kernel's range")
    der.values["prop2a_lhs"] = bounds(interval(p) * iv.exp(interval((alpha - 1) * (1 - p) * d2 / 2)))
    der.values["prop2a_rhs"], der.values["alpha"] = (Fraction(alpha, alpha - 1),) * 2, (Fraction(alpha),) * 2
    der.values["J(0)"] = der.values["rho"] = point(alpha, p, d2, Fraction(0))
    der.values["epsilon"] = bounds(poisson.epsilon(t * span(*der.values["rho"]), Fraction(alpha), delta))  # (6)
    return der

def derive(doc: dict) -> Derivation:
    """Everything the kernel needs to judge a dpsgd/renyi-bok certificate (see document.Derivation)."""
    der = Derivation()
    got = read(doc, der)
    if doc["witnesses"].get("method") == "prop2a":
        return prop2a(doc, der, *got) if got else der
    cuts, u_star, gamma = read_leaves(doc["witnesses"])
    gap = _recorded(doc, len(cuts) - 1)
    if got is None:
        return der
    alpha, p, d2, t, delta = got
    bound = doc["witnesses"]["reported_epsilon"]
    _plan(doc, der, len(cuts) - 1, bound)
    _, _, _, j0, j1 = grid(alpha, d2, Fraction(1, 2), Fraction(1, 2))  # the most nodes of a point evaluation (decided before the work)
    work = (j1 - j0 + 1) * (alpha + 1)
    budget = min(MAX_POINTS, MAX_WORK // work)
    if work > MAX_NODE_WORK or len(set(cuts) | {u_star}) > budget:
        raise Undecided(f"alpha = {alpha}, Delta^2 = {d2}, {len(cuts) - 1} leaves: the quadratures are too costly for the kernel")
    ev = Points(alpha, p, d2, budget)  # target: the largest rho whose epsilon (6) meets the claim (the refinement's aim, not soundness)
    target = bounds((interval(parse_exact(bound, "reported_epsilon")) - poisson.epsilon(iv.mpf(0), Fraction(alpha), delta)) / t)[0]
    der.values["alpha"], der.values["gamma"] = (Fraction(alpha),) * 2, (gamma, gamma)
    der.values["J(0)"] = ev(Fraction(0))
    # a lower bound of J(u*) is any number <= J(u*) (a dropped tail may make it negative): only one above Jbar(u*) is false
    der.values["J_lower(u*)"] = (-Fraction(10**9), ev(u_star)[1])
    rho_hi = max(ev(c)[1] for c in cuts)  # every leaf end and leaf first: the bisections share what is left of the budget
    for i in range(len(cuts) - 1):
        der.values[f"leaf[{i}]"] = leaf_bound(ev, cuts[i], cuts[i + 1], target)
        rho_hi = max(rho_hi, der.values[f"leaf[{i}]"][1])
    der.values["rho"] = (max(lo for lo, _ in ev.done.values()), rho_hi)
    der.values["epsilon"] = bounds(poisson.epsilon(t * span(*der.values["rho"]), Fraction(alpha), delta))  # (6), poisson's conversion
    der.values["search_gap"] = gap
    return der
