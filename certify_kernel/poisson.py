"""Kind ``dpsgd/renyi-poisson``: Rényi DP of Poisson-subsampled DP-SGD, one phase or a schedule.

Written from Mironov, Talwar, Zhang (2019), "Rényi Differential Privacy of the Sampled Gaussian Mechanism" (MTZ19), Sec. 3.3 Case I, as transcribed
in /work/shared/notes/practitioner-accounting.md:

  (MTZ19 3.3-I)  A_n = sum_{k=0..n} C(n,k) (1-q)^(n-k) q^k exp(k(k-1)/(2 sigma^2)),  integer n >= 2,
                 eps_RDP(n) = log(A_n)/(n-1)   (the remove order; MTZ19 Sec. 3: it dominates the add order);
  (chord)        K(a) = log A_a is a cumulant generating function, convex in a, K(1) = 0: for n < a < n+1,
                 K(a) <= (n+1-a) K(n) + (a-n) K(n+1) (the recorded fractional mode "chord");
  (Mironov17 Prop. 1)  RDP composes additively: rdp_total = sum_i T_i eps_RDP_i(alpha);
  (Balle20 Thm 21)     eps = rdp_total + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1), alpha > 1.

A_n - 1 = sum_{k>=2} w_k (exp(k(k-1)c) - 1), w_k = C(n,k)(1-q)^(n-k) q^k, c = 1/(2 sigma^2): all terms >= 0, so
log A_n = log1p(A_n - 1) keeps its relative accuracy for tiny q. Mode "integral" records min(MTZ19 Sec. 3.3's integral
(``fractional``), the chord), both upper bounds of eps_RDP; compared ``loose`` (document.Derivation).
"""

import re
from fractions import Fraction
from mpmath import iv
from . import fractional
from .document import Derivation, recorded_ball
from .provenance import check_notes
from .numbers import Malformed, Undecided, bounds, exact_input, expm1_interval, interval, log1p_interval, log_interval, parse_exact, parse_int

KIND = "dpsgd/renyi-poisson"
#: the recorded quantities derive reads (rdp[i]: which bound certify took; see __init__._derive)
READS = ("rdp[",)
CONTRACT = dict(sampling="poisson", adjacency="add-remove", sensitivity="C", noise_multiplier_relative_to="clip norm C", privacy_unit="one example")
#: ranges certify's producer admits (guards against meaningless magnitudes); outside them: hypothesis fails
SIGMA_RANGE = (Fraction(1, 10**6), Fraction(10**12))
MAX_STEPS, MAX_PHASES, ALPHA_MAX, MAX_BITS = 10**15, 100_000, 4096, 8000
#: most (terms of (MTZ19 3.3-I)) x (working bits) the kernel evaluates for one certificate (about 8 s; else:
#: cannot decide), decided before any sum
MAX_WORK = 50_000 * 320
EQUATIONS = {"rdp_int": "MTZ19 Sec. 3", "rdp_chord": "MTZ19 Sec. 3 + convexity chord", "rdp_integral": "MTZ19 Sec. 3 integral (or chord if smaller)"}
EQUATIONS |= {"rdp_total": "Mironov17 Prop. 1", "epsilon": "Balle20 Thm 21"}
_PHASE_KEY = re.compile(r"phase\[(0|[1-9][0-9]{0,5})\]\.(sampling_rate|noise_multiplier|steps)")

def _known_input(name: str, n: int) -> bool:
    """An input this kind records for n phases (a provenance ``.note`` is checked by provenance.check_notes)."""
    base = name[:-5] if name.endswith(".note") else name
    m = _PHASE_KEY.fullmatch(base)
    return base in CONTRACT or base in ("phases", "source", "delta") + OPACUS or m is not None and int(m.group(1)) < n

#: inputs recording how q and T were counted the way Opacus counts them (one phase only)
OPACUS = ("batch_size", "dataset_size", "epochs")

def check_opacus_counting(inputs: dict, phases: list) -> None:
    """Opacus's counting, re-derived (Malformed if the recorded q, T disagree): a DataLoader of n examples in batches
    of b becomes Poisson sampling at q = 1/ceil(n/b) (DPDataLoader), and E epochs are T = floor(E/q) steps."""
    given = [k for k in OPACUS if k in inputs]
    if not given:
        return
    if len(phases) != 1 or ("batch_size" in inputs) != ("dataset_size" in inputs):
        raise Malformed(f"inputs.{given[0]}: recorded only for one phase, batch_size with dataset_size")
    q, _, t = phases[0]
    if "batch_size" in inputs:
        b, n = parse_int(inputs["batch_size"], "inputs.batch_size"), parse_int(inputs["dataset_size"], "inputs.dataset_size")
        if not 1 <= b <= n or q != Fraction(1, -(-n // b)):
            raise Malformed("inputs.phase[0].sampling_rate: must be 1/ceil(dataset_size/batch_size) (Opacus's rule)")
    if "epochs" in inputs:
        e = parse_int(inputs["epochs"], "inputs.epochs")
        if e < 1 or t != e * q.denominator // q.numerator:
            raise Malformed("inputs.phase[0].steps: must be floor(epochs/sampling_rate) (Opacus's rule)")

def _phase(inputs: dict, i: int, failed: list) -> tuple | None:
    """(q, sigma, T) of phase i, with the hypotheses q in (0, 1], sigma > 0, T >= 1 (integer) checked."""
    q, s, t = (exact_input(inputs, f"phase[{i}].{k}", failed) for k in ("sampling_rate", "noise_multiplier", "steps"))
    if q is not None and not 0 < q <= 1:
        failed.append(f"phase[{i}].sampling_rate: must be in (0, 1], got {q}")
    if s is not None and not SIGMA_RANGE[0] <= s <= SIGMA_RANGE[1]:
        failed.append(f"phase[{i}].noise_multiplier: must be in [1e-6, 1e12], got {s}")
    if t is not None and (t.denominator != 1 or not 1 <= t <= MAX_STEPS):
        failed.append(f"phase[{i}].steps: must be an integer in [1, 1e15], got {t}")
    return None if failed else (q, s, int(t))

def read_inputs(inputs: dict, failed: list) -> tuple[list, Fraction | None]:
    """The phases and delta; every violated hypothesis is appended to ``failed``."""
    for key, want in CONTRACT.items():
        if inputs.get(key) != want:
            failed.append(f"inputs.{key}: this kind certifies poisson sampling + add-remove adjacency ({key} = {want!r}), got {inputs.get(key)!r}")
    try:
        n = parse_int(inputs.get("phases"), "inputs.phases")
    except Malformed as err:
        failed.append(str(err))
        return [], None
    if not 1 <= n <= MAX_PHASES:
        failed.append(f"inputs.phases: must be in [1, {MAX_PHASES}], got {n}")
        return [], None
    phases = [_phase(inputs, i, failed) for i in range(n)]
    delta = exact_input(inputs, "delta", failed)
    if delta is not None and not 0 < delta < 1:
        failed.append(f"inputs.delta: must be in (0, 1), got {delta}")
    return phases, delta

def log_A(n: int, q: Fraction, sigma: Fraction):
    """K(n) = log A_n of (MTZ19 3.3-I) as an interval, for an integer n >= 1 (K(1) = 0)."""
    c = Fraction(1) / (2 * sigma * sigma)
    if n == 1:
        return iv.mpf(0)
    if q == 1:  # only k = n survives: A_n = exp(n(n-1)c)
        return interval(n * (n - 1) * c)
    qi, pi, ci = interval(q), interval(1 - q), interval(c)
    excess, weight = iv.mpf(0), pi**n  # weight = w_k, from w_0 = (1-q)^n by the ratio (n-k)/(k+1) q/(1-q)
    ratio = qi / pi
    for k in range(1, n + 1):
        weight = weight * (n - k + 1) / k * ratio
        if k >= 2:
            excess = excess + weight * expm1_interval(ci * (k * (k - 1)))
    return log1p_interval(excess)

def rdp(alpha: Fraction, q: Fraction, sigma: Fraction):
    """eps_RDP(alpha) as an interval: (MTZ19 3.3-I) at an integer alpha, its (chord) upper bound between integers."""
    n = alpha.numerator // alpha.denominator
    if alpha.denominator == 1:
        return log_A(n, q, sigma) / (n - 1)
    lo, hi = interval(n + 1 - alpha), interval(alpha - n)
    return (lo * log_A(n, q, sigma) + hi * log_A(n + 1, q, sigma)) / interval(alpha - 1)

def rdp_integral(alpha: Fraction, q: Fraction, sigma: Fraction, precision: int):
    """eps_RDP(alpha) = log(A_alpha)/(alpha-1) by the defining integral (MTZ19 Sec. 3.3; q = 1: A_alpha = exp(alpha(alpha-1)c))."""
    if q == 1:
        return interval(alpha / (2 * sigma * sigma))
    key = (alpha, q, sigma, precision, iv.prec)
    if key not in _INTEGRALS:
        if len(_INTEGRALS) >= 32:
            _INTEGRALS.clear()
        bits = fractional.accuracy_bits(alpha, q, sigma, precision)
        _INTEGRALS[key] = fractional.log_A(alpha, q, sigma, bits) / interval(alpha - 1)
    return _INTEGRALS[key]

#: the last integrals evaluated (a pure function of their key; a certificate's ball edits re-use them)
_INTEGRALS: dict = {}

def _integral_or_chord(doc: dict, i: int, integral, chord):
    """The recorded min(integral, chord) of phase i: the chord's enclosure when the recorded ball misses the
    integral's but meets the chord's (certify took the chord), else the integral's (an upper bound either way)."""
    try:
        lo, hi = recorded_ball(f"rdp[{i}]", doc["quantities"][f"rdp[{i}]"])
    except (Malformed, KeyError, TypeError):
        return integral
    (ilo, ihi), (clo, chi) = bounds(integral), bounds(chord)
    return chord if (ihi < lo or ilo > hi) and not (chi < lo or clo > hi) else integral

def epsilon(total, alpha: Fraction, delta: Fraction):
    """(Balle20 Thm 21): eps = rdp_total + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)."""
    return total + log_interval((alpha - 1) / alpha) - (log_interval(delta) + log_interval(alpha)) / interval(alpha - 1)

def _witnesses(w: dict, der: Derivation) -> tuple[Fraction, str] | None:
    """(alpha, mode) from the witnesses (epsilon_bound must be exact text); malformed ones raise Malformed."""
    if not isinstance(w, dict) or set(w) - {"fractional"} != {"alpha", "epsilon_bound"}:
        raise Malformed("witnesses: must be {alpha, epsilon_bound[, fractional]}")
    mode = w.get("fractional", "chord")
    if mode not in ("chord", "integral"):
        raise Malformed(f"witnesses.fractional: must be 'chord' or 'integral', got {str(mode)[:20]!r}")
    alpha = parse_exact(w["alpha"], "witnesses.alpha")
    parse_exact(w["epsilon_bound"], "witnesses.epsilon_bound")
    if not 1 < alpha <= ALPHA_MAX or max(alpha.numerator.bit_length(), alpha.denominator.bit_length()) > MAX_BITS:
        der.failed.append(f"witnesses.alpha: must be in (1, {ALPHA_MAX}], got {alpha}")
        return None
    return alpha, mode

#: the hypotheses of each phase (claims "hyp:phase[i].<input><relation><bound>") and how certify's statements name them
HYPOTHESES = (("sampling_rate", ">", "0"), ("sampling_rate", "<=", "1"), ("noise_multiplier", ">", "0"), ("steps", ">=", "1"))
HYP_TEXTS = {"sampling_rate": "sampling rate q", "noise_multiplier": "noise multiplier sigma", "steps": "steps T"}

def _plan(doc: dict, der: Derivation, phases: list, delta: Fraction, alpha: Fraction, mode: str) -> None:
    """The quantities (with their equations), claims and conclusion this kind records, certify's statements re-derived (Derivation.texts)."""
    inputs, bound, n = doc["inputs"], doc["witnesses"]["epsilon_bound"], len(phases)
    der.names = {"alpha", "rdp_total", "epsilon"} | {f"rdp[{i}]" for i in range(n)}
    rdp_eq = EQUATIONS["rdp_int"] if alpha.denominator == 1 else EQUATIONS["rdp_chord" if mode == "chord" else "rdp_integral"]
    der.equations = {"alpha": "witness", "rdp_total": EQUATIONS["rdp_total"], "epsilon": EQUATIONS["epsilon"]}
    der.equations.update({f"rdp[{i}]": rdp_eq for i in range(n)})
    for i in range(n):
        for key, rel, rhs in HYPOTHESES:
            lhs = inputs[f"phase[{i}].{key}"]
            der.claim(f"hyp:phase[{i}].{key}{rel}{rhs}", (lhs, rel, rhs), f"phase {i}: {HYP_TEXTS[key]} = {parse_exact(lhs, key)} {rel} {rhs}")
    d, a = inputs["delta"], doc["witnesses"]["alpha"]
    own = (("delta>0", d, ">", "0", "delta = {d} > 0"), ("delta<1", d, "<", "1", "delta = {d} < 1"))
    own += (("alpha>1", a, ">", "1", "Rényi order alpha = {a} > 1 (the conversion needs alpha > 1)"),)
    own += (("alpha<=4096", a, "<=", "4096", "Rényi order alpha = {a} <= 4096"),)
    for name, lhs, rel, rhs, text in own:
        der.claim("hyp:" + name, (lhs, rel, rhs), text.format(d=delta, a=alpha))  # the numbers, not their spellings
    hyps = tuple(der.claims)
    der.claims["dp"] = ("epsilon", "<=", bound)
    steps = sum(t for _, _, t in phases)
    der.conclusions["dp"] = ("dp", hyps)
    der.texts["claim:dp"] = (
        f"the DP-SGD run ({n} phase(s), {steps} steps; poisson sampling, add-remove adjacency, sensitivity C, noise sigma*C, "
        f"privacy unit one example) is (epsilon, delta)-DP with epsilon = {bound}, delta = {delta} (Rényi bound of MTZ19 at "
        f"alpha = {alpha}; the add direction is dominated by the remove direction, MTZ19 Sec. 3)"
    )
    der.texts["conclusion:dp"] = f"the run is ({bound}, {delta})-DP (poisson sampling, add-remove adjacency)"
    how = "" if alpha.denominator == 1 else HOW[mode]
    der.texts.update({f"quantity:rdp[{i}]": f"one-step eps_RDP(alpha) of phase {i}: {RDP}{how}" for i in range(n)} | DESCRIPTIONS)

#: the descriptions certify writes: rdp[i] (MTZ19 3.3-I, and how a fractional order is evaluated) and the fixed ones
RDP = "log(sum_k C(alpha,k)(1-q)^(alpha-k) q^k exp(k(k-1)/(2 sigma^2)))/(alpha-1)"
HOW = {"chord": ", by the chord of K = (alpha-1) eps_RDP between the integers around alpha"}
HOW["integral"] = ", by the defining integral in balls (Arb quadrature + Gaussian tail bounds), or the chord when that is smaller"
DESCRIPTIONS = {
    "quantity:alpha": "Rényi order (chosen by float estimates; any alpha > 1 is valid)",
    "quantity:rdp_total": "sum over phases of T_i eps_RDP_i(alpha) (Rényi composition)",
    "quantity:epsilon": "rdp_total + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1); upper endpoint is the certified epsilon",
}

def derive(doc: dict) -> Derivation:
    """Everything the kernel needs to judge a dpsgd/renyi-poisson certificate (see document.Derivation)."""
    der = Derivation()
    phases, delta = read_inputs(doc["inputs"], der.failed)
    unknown = sorted(k for k in doc["inputs"] if not _known_input(k, len(phases)))
    if unknown:
        raise Malformed(f"inputs: unknown input(s) {', '.join(unknown)[:200]}")
    check_notes(doc["inputs"], der.failed)
    if not der.failed:
        check_opacus_counting(doc["inputs"], phases)
    got = _witnesses(doc["witnesses"], der)
    if der.failed or got is None:
        return der
    alpha, mode = got
    _plan(doc, der, phases, delta, alpha, mode)
    der.values["alpha"] = (alpha, alpha)
    distinct = sorted({(q, s) for q, s, _ in phases})
    integral = alpha.denominator != 1 and mode == "integral"
    if not _affordable(distinct, alpha, doc["precision"], integral, der):
        return der
    chords = {pair: rdp(alpha, *pair) for pair in distinct}
    if integral:
        ints = {pair: rdp_integral(alpha, *pair, doc["precision"]) for pair in distinct}
        der.loose = {"rdp_total", "epsilon"} | {f"rdp[{i}]" for i in range(len(phases))}
    total = iv.mpf(0)
    for i, (q, s, t) in enumerate(phases):
        value = _integral_or_chord(doc, i, ints[(q, s)], chords[(q, s)]) if integral else chords[(q, s)]
        der.values[f"rdp[{i}]"] = bounds(value)
        total = total + t * value
    der.values["rdp_total"] = bounds(total)
    der.values["epsilon"] = bounds(epsilon(total, alpha, delta))
    return der

def _affordable(distinct: list, alpha: Fraction, precision: int, integral: bool, der: Derivation) -> bool:
    """Decide the work before doing it: terms x bits of (MTZ19 3.3-I), and the terms K of fractional (P) (else: cannot decide)."""
    work = len(distinct) * (alpha.numerator // alpha.denominator + 2) * iv.prec
    if integral:
        try:
            K = max(fractional.terms_needed(alpha, fractional.accuracy_bits(alpha, q, s, precision)) for q, s in distinct)
        except Undecided as err:
            der.unsure.append(str(err))
            return False
        work += len(distinct) * K * (K + 400) * 30  # about 2e6 (1 s) at K = 135
    if work > MAX_WORK:
        der.unsure.append(f"{len(distinct)} distinct phases at alpha = {alpha} and {iv.prec} bits: too much work, not evaluated")
        return False
    return True
