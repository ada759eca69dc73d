"""Kind ``objpert/theorem-4.1``: Watkins & Arora (2026), Theorem 4.1 and, with a target delta, Theorem C.13.

Written from the paper (/work/shared/papers/watkins-arora-2026-gd-on-perturbed-objectives.txt):

  constants   L = mu + L2 zeta^2 (Lemma B.1), M = L3 zeta^3 (Lemma B.2), G = 2 L1 zeta/n (Lemma B.5),
              Delta_H = 2 L2 zeta^2 (Sec. 3.1), rho = 1 - eta mu (Sec. 3.2), d* = min{d, n+1} (2), B = 1/mu (Lemma A.9);
  Thm 4.1     r_u = sigma (sqrt(d*) + u), r' = r_u + 2LG/mu, R-bar = (r' + L1 zeta)/mu;
  (7)         N >= (2/(eta mu)) log max{2 mu R-bar r'/(G sigma), 8 L M B R-bar/(e rho mu min{1, MG/L}), 4};
  (8)         tau* = log(1 + Delta_H/(2 n mu)) + (e eta mu/2) min{1, MG/L} N rho^(N/2);
  (9)         eps_0 = (G/sigma) rho^(N/2) + G^2 (1 + rho^(N/2))^2/(2 sigma^2) + tau*;
  (10)        delta(eps) = e^(-u^2/2) + (2G/sigma) Q1((sigma/G)(eps - eps_0)),  Q1(t) = phi(t) - t Q(t) (44);
  Thm C.13    gamma_N = (1 - (1 - eta L)^N)/L (Lemma A.9), nu~_N = sum_{k<N} (1 - rho^(N-k))(1 - rho^k) (22)
              = N (1 + rho^N) - (1 + rho)(1 - rho^N)/(eta mu), g-bar_N = sup_[mu, L] g_N of (36) (attained at
              h = L, since g_N = 1 - N a^(N-1)/sum_{j<N} a^j decreases in a = 1 - eta h), tau^(0) = g-bar_N
              log(1 + Delta_H/(2 n mu)) (41); alpha-bar = gamma_N - eta M R-bar B nu~_N rho^(N-1) and
              r' >= r + G (1 - rho^N)/(mu alpha-bar) (47); Delta_xi = 2 mu rho^N R-bar,
              tau = tau^(0) + 2 eta M R-bar B nu~_N rho^(N-1)/alpha-bar (48);
              s_N = r Delta_xi/sigma^2 + (G + Delta_xi)^2/(2 sigma^2) + tau (49, C.4), delta_N(eps) =
              e^(-u^2/2) + (2G/sigma) Q1((sigma/G)(eps - s_N)) (50, C.4), at r = r_u, r' = r_u + 2LG/mu (C.4).
A count N fails C.13 for the first of, in the order of Appendix C.4: alpha-bar <= 0, (47) fails, eps < s_N,
delta_N(eps) > target. The utility bounds (inputs delta_S, ...) are not re-derived: "cannot decide".
"""

from fractions import Fraction
from mpmath import iv
from .document import Derivation, tri
from .numbers import Malformed, Undecided, bounds, exact_input, interval, iv_max, iv_min, normal_tail, parse_exact, parse_int, span, working_precision

KIND = "objpert/theorem-4.1"
READS = ()  # derive reads no recorded quantity (see __init__._derive)
PROBLEM = ("n", "d", "mu", "zeta", "loss", "L1", "L2", "L3", "sigma", "u", "eta")
UTILITY = ("delta_S", "comparator_norm", "beta", "gradient_norm")
LOGISTIC = {"L1": "1", "L2": "1/4", "L3": "1/(6*sqrt(3))"}
RULE_GIVEN, RULE_SMALLEST = "given", "smallest integer satisfying (7)"
RADII = "r = r_u, r' = r_u + 2LG/mu (Appendix C.4)"
REASONS = ("alpha_bar <= 0", "radius condition (47) fails", "eps < s_N", "delta_N(eps) > target")
#: most counts N the kernel re-checks for Theorem C.13 (about 1-5 ms each; else: cannot decide)
MAX_COUNTS = 10_000
#: largest |t| at which Q1(t) is evaluated (the series needs about 0.72 t^2 extra bits)
MAX_T = 60

def _q1_series(ti, nonnegative: bool, magnitude: float, prec: int):
    """Q1 = phi - t Q (44) over an interval (or exact point) ti of one sign (phi - tQ cancels about 2 log2 t bits)."""
    with working_precision(prec + 2 * int(magnitude).bit_length() + 40):
        ti = interval(ti) if isinstance(ti, Fraction) else ti
        return phi_interval(ti) - ti * normal_tail(ti)

def phi_interval(t):
    """The standard normal density phi(t) = e^(-t^2/2)/sqrt(2 pi)."""
    return iv.exp(-t * t / 2) / iv.sqrt(2 * iv.pi)

def q1_point(t: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """(lo, hi) enclosing Q1(t) (44) at an exact point t. Beyond |t| = MAX_T: 0 <= Q1(s) <= phi(s) for s >= 0 (Q1 = phi - sQ, sQ >= 0), and
    Q1(-s) = s + Q1(s) (Q1(t) = E[(W - t)_+] and E[(W + s)_+] = s + E[(-W - s)_+])."""
    if abs(t) > MAX_T:
        phi = bounds(phi_interval(interval(abs(t))))[1]
        return (Fraction(0), phi) if t > 0 else (abs(t), abs(t) + phi)
    return bounds(_q1_series(t, t >= 0, float(abs(t)), prec))

def q1(t):
    """Q1 over an interval t: one evaluation when t has one sign and |t| <= MAX_T, else [Q1(hi), Q1(lo)] (Q1' = -Q < 0)."""
    lo, hi = bounds(t)
    if abs(lo) <= MAX_T and abs(hi) <= MAX_T and (lo >= 0 or hi <= 0):
        return _q1_series(t, lo >= 0, float(max(abs(lo), abs(hi))), iv.prec)
    return span(q1_point(hi, iv.prec)[0], q1_point(lo, iv.prec)[1])

def _exact(inputs: dict, key: str, failed: list, positive: bool = True) -> Fraction | None:
    v = exact_input(inputs, key, failed)
    if v is not None and (positive and v <= 0 or v < 0):
        failed.append(f"inputs.{key}: must be {'> 0' if positive else '>= 0'}, got {v}")
    return v

def read_problem(inputs: dict, failed: list) -> dict:
    """The exact inputs (L3 None: the logistic 1/(6 sqrt 3)) with the theorem's hypotheses checked:
    n, d >= 1, mu, zeta, sigma > 0, u >= 0, L1, L2, L3 > 0 (logistic: its exact constants), 0 < eta <= 1/L, eta mu < 1."""
    p = {k: _exact(inputs, k, failed, positive=k != "u") for k in ("n", "d", "mu", "zeta", "sigma", "u", "eta", "epsilon")}
    if inputs.get("loss") == "logistic":
        if any(inputs.get(k) != v for k, v in LOGISTIC.items()):
            failed.append("inputs: the logistic loss constants must be L1 = 1, L2 = 1/4, L3 = 1/(6*sqrt(3))")
        p.update(L1=Fraction(1), L2=Fraction(1, 4), L3=None)
    elif inputs.get("loss") == "custom":
        p.update({k: _exact(inputs, k, failed) for k in ("L1", "L2", "L3")})
    else:
        failed.append(f"inputs.loss: must be 'logistic' or 'custom', got {str(inputs.get('loss'))[:30]!r}")
    failed += [f"inputs.{k}: must be an integer" for k in ("n", "d") if p[k] is not None and p[k].denominator != 1]
    if failed:
        return p
    p["L"], p["G"] = p["mu"] + p["L2"] * p["zeta"] ** 2, 2 * p["L1"] * p["zeta"] / p["n"]
    if not 0 < p["eta"] <= 1 / p["L"] or p["eta"] * p["mu"] >= 1:
        failed.append(f"inputs.eta: must satisfy 0 < eta <= 1/L = {1 / p['L']} and eta mu < 1 (Sec. 3.2)")
    if "noise_multiplier" in inputs:
        nm = _exact(inputs, "noise_multiplier", failed)
        if nm is not None and nm * p["G"] != p["sigma"]:
            failed.append("inputs.noise_multiplier: must equal sigma/G")
    return p

def constants(p: dict) -> dict:
    """The intervals of Sec. 3.1-3.2, Lemmas B.1, B.2, B.5, A.9 and the radii of Theorem 4.1."""
    c = {k: interval(p[k]) for k in ("mu", "zeta", "sigma", "u", "eta", "L", "G", "L1")}
    c["d_star"] = interval(Fraction(min(p["d"], p["n"] + 1)))
    L3 = 1 / (6 * iv.sqrt(3)) if p["L3"] is None else interval(p["L3"])
    c.update(M=L3 * c["zeta"] ** 3, Delta_H=interval(2 * p["L2"] * p["zeta"] ** 2), rho=interval(1 - p["eta"] * p["mu"]), B=interval(1 / p["mu"]))
    c["r_u"] = c["sigma"] * (iv.sqrt(c["d_star"]) + c["u"])
    c["radius_gap"] = 2 * c["L"] * c["G"] / c["mu"]
    c["r_prime"] = c["r_u"] + c["radius_gap"]
    c["R_bar"] = (c["r_prime"] + c["L1"] * c["zeta"]) / c["mu"]
    c["minMG"] = iv_min(c["M"] * c["G"] / c["L"], 1)
    c["log_det"] = iv.log(1 + c["Delta_H"] / (2 * interval(p["n"]) * c["mu"]))
    return c

def threshold_7(c: dict):
    """The right-hand side of (7)."""
    em = c["eta"] * c["mu"]
    first = 2 * c["mu"] * c["R_bar"] * c["r_prime"] / (c["G"] * c["sigma"])
    second = 8 * c["L"] * c["M"] * c["B"] * c["R_bar"] / (iv.e * c["rho"] * c["mu"] * c["minMG"])
    return 2 / em * iv.log(iv_max(first, second, 4))

def theorem_4_1(p: dict, c: dict, N: int, eps: Fraction) -> dict:
    """The intervals of (8), (9), (10) at N iterations and eps."""
    v = {"rho_half_N": iv.exp(N * iv.log(c["rho"]) / 2)}
    r2 = v["rho_half_N"]
    v["tau_star"] = c["log_det"] + iv.e * c["eta"] * c["mu"] / 2 * c["minMG"] * N * r2
    g_s = c["G"] / c["sigma"]
    v["epsilon0_gaussian"] = g_s * r2 + g_s * g_s * (1 + r2) ** 2 / 2
    v["epsilon0"] = v["epsilon0_gaussian"] + v["tau_star"]
    v["delta_truncation"] = iv.exp(-c["u"] * c["u"] / 2)
    v["delta_divergence"] = 2 * g_s * q1((interval(eps) - v["epsilon0"]) / g_s)
    v["delta"] = v["delta_truncation"] + v["delta_divergence"]
    return v

def _power(base: Fraction, k: int):
    """base^k for an exact base in [0, 1) and an integer k >= 0 (0^0 = 1)."""
    if base == 0:
        return iv.mpf(1 if k == 0 else 0)
    return iv.exp(k * iv.log(interval(base)))

def c13_at(p: dict, c: dict, N: int) -> dict:
    """gamma_N, nu~_N, g-bar_N, alpha-bar, (47), Delta_xi, tau (48) and s_N (49) at the count N."""
    a0 = 1 - p["eta"] * p["L"]  # a = 1 - eta h at h = L, in [0, rho]
    rN, rN1 = _power(1 - p["eta"] * p["mu"], N), _power(1 - p["eta"] * p["mu"], N - 1)
    v = {"gamma_N": (1 - _power(a0, N)) / c["L"]}
    nu = N * (1 + rN) - (1 + c["rho"]) * (1 - rN) / (c["eta"] * c["mu"])
    v["nu_tilde_N"] = iv_max(nu, 0)  # a sum of nonnegative terms (22)
    if N == 1 or a0 == 0:
        v["g_bar_N"] = iv.mpf(0 if N == 1 else 1)
    else:
        v["g_bar_N"] = 1 - N * _power(a0, N - 1) * interval(1 - a0) / (1 - _power(a0, N))
    corr = c["eta"] * c["M"] * c["R_bar"] * c["B"] * v["nu_tilde_N"] * rN1
    v["alpha_bar"] = v["gamma_N"] - corr
    v["radius_step"] = c["G"] * (1 - rN) / (c["mu"] * v["alpha_bar"])
    v["radius_gap"] = c["radius_gap"]
    v["Delta_xi"] = 2 * c["mu"] * rN * c["R_bar"]
    v["tau"] = v["g_bar_N"] * c["log_det"] + 2 * corr / v["alpha_bar"]
    s2 = c["sigma"] * c["sigma"]
    v["s_N"] = c["r_u"] * v["Delta_xi"] / s2 + (c["G"] + v["Delta_xi"]) ** 2 / (2 * s2) + v["tau"]
    return v

def delta_N(c: dict, eps: Fraction, s_N):
    """delta_N(eps) of Appendix C.4: e^(-u^2/2) + (2G/sigma) Q1((sigma/G)(eps - s_N))."""
    g_s = c["G"] / c["sigma"]
    return iv.exp(-c["u"] * c["u"] / 2) + 2 * g_s * q1((interval(eps) - s_N) / g_s)

def _certainly(x, y) -> bool:
    """x <= y decided on intervals (Undecided when they overlap)."""
    return tri(x.b <= y.a, x.a > y.b)

def c13_reason(p: dict, c: dict, N: int, eps: Fraction, target: Fraction) -> tuple[str, dict]:
    """The first condition of Appendix C.4 that fails at N ("passes" if none), and the values at N."""
    v = c13_at(p, c, N)
    if _certainly(v["alpha_bar"], iv.mpf(0)):
        return REASONS[0], v
    if not _certainly(v["radius_step"], v["radius_gap"]):
        return REASONS[1], v
    if not _certainly(v["s_N"], interval(eps)):
        return REASONS[2], v
    v["delta_N"] = delta_N(c, eps, v["s_N"])
    if not _certainly(v["delta_N"], interval(target)):
        return REASONS[3], v
    return "passes", v

#: the equation (of the paper) each recorded quantity evaluates: Theorem 4.1's quantities (Q41), then Theorem C.13's (QC13)
Q41 = {"d_star": "(2)", "L": "Lemma B.1", "M": "Lemma B.2", "G": "Lemma B.5", "Delta_H": "Section 3.1", "eta": "Section 3.2"}
Q41.update(rho="Section 3.2", sigma="Theorem 4.1", r_u="Theorem 4.1", r_prime="Theorem 4.1", R_bar="Theorem 4.1", B="Lemma A.9")
Q41.update(threshold7="(7)", iterations="(7)", rho_half_N="(9)", tau_star="(8)", epsilon0_gaussian="(9)", epsilon0="(9)")
Q41.update(delta_truncation="(10)", delta_divergence="(10)", delta="(10)")
QC13 = {"witnessed_failures": "Theorem C.13", "first_passing_iterations": "Theorem C.13", "gamma_N": "Lemma A.9", "nu_tilde_N": "(22)"}
QC13.update(g_bar_N="Lemma C.5 (36)", alpha_bar="(47)", radius_step="(47)", radius_gap="(47)", Delta_xi="(48)", tau="(48)", s_N="C.4")
QC13.update(delta_N="(50)")
EQUATIONS = Q41 | QC13 | {"delta_N_previous": "(50)"}
#: the descriptions certify writes (iterations, delta, delta_N and delta_N_previous quote numbers: _plan_4_1, _c13)
DESCRIPTIONS = {"d_star": "d* = min{d, n+1}", "L": "smoothness L = mu + L2 zeta^2", "M": "Hessian Lipschitz constant M = L3 zeta^3"}
DESCRIPTIONS.update(G="gradient sensitivity G = 2 L1 zeta / n", Delta_H="Delta_H = 2 L2 zeta^2", eta="step size", sigma="noise standard deviation")
DESCRIPTIONS.update(rho="contraction rho = 1 - eta mu", r_u="r_u = sigma (sqrt(d*) + u)", r_prime="r' = r_u + 2 L G / mu", B="B = 1/mu")
DESCRIPTIONS.update(R_bar="R-bar = (r' + L1 zeta)/mu", threshold7="right-hand side of the iteration threshold", rho_half_N="rho^(N/2)")
DESCRIPTIONS.update(tau_star="log-determinant term tau*", epsilon0="smallest certified epsilon eps_0", delta_truncation="truncation mass e^(-u^2/2)")
DESCRIPTIONS.update(epsilon0_gaussian="Gaussian-ratio part of eps_0: (G/sigma) rho^(N/2) + G^2 (1 + rho^(N/2))^2/(2 sigma^2)")
DESCRIPTIONS.update(delta_divergence="divergence term (2G/sigma) Q1((sigma/G)(eps - eps_0))", delta="upper bound on the privacy profile")
DESCRIPTIONS.update(witnessed_failures="number of smaller counts N re-checked to fail, each for its recorded reason", nu_tilde_N="nu~_N")
DESCRIPTIONS.update(first_passing_iterations="first N certified by Theorem C.13", gamma_N="gamma_N = (1 - (1 - eta L)^N)/L")
DESCRIPTIONS.update(
    g_bar_N="sup of g_N over [mu, L]", alpha_bar="alpha-bar = gamma_N - eta M R-bar B nu~_N rho^(N-1)", tau="log-determinant bound tau"
)
DESCRIPTIONS.update(radius_step="G (1 - rho^N)/(mu alpha-bar)", radius_gap="r' - r = 2 L G / mu", Delta_xi="Delta_xi = 2 mu rho^N R-bar")
DESCRIPTIONS.update(s_N="t-independent part of eps_total (49)")
#: what a conclusion rests on about the loss, as certify states it
LOSSES = {"logistic": "logistic loss: L1 = 1, L2 = 1/4, L3 = 1/(6*sqrt(3))"}
LOSSES["custom"] = "custom loss: its constants L1, L2, L3 are the user's, as recorded, and are not checked"

def _iterations(doc: dict) -> tuple[int, str, str]:
    """(N, rule, reported delta text) from the witnesses, checked against the inputs."""
    w, inputs = doc["witnesses"], doc["inputs"]
    allowed = {"iterations", "iterations_rule", "reported_delta"} | ({"theorem_C13"} if "target_delta" in inputs else set())
    if set(w) != allowed:
        raise Malformed(f"witnesses: must be exactly {sorted(allowed)}")
    N, rule = _int_witness(w["iterations"], "witnesses.iterations"), w["iterations_rule"]
    if "iterations" in inputs:
        if rule != RULE_GIVEN or parse_int(inputs["iterations"], "inputs.iterations") != N:
            raise Malformed("witnesses.iterations: must be the given iteration count (rule 'given')")
    elif rule != RULE_SMALLEST:
        raise Malformed(f"witnesses.iterations_rule: must be {RULE_SMALLEST!r} when N is not an input")
    if not 1 <= N <= 10**15:
        raise Malformed("witnesses.iterations: must be in [1, 1e15]")
    if not isinstance(w["reported_delta"], str) or parse_exact(w["reported_delta"], "witnesses.reported_delta") <= 0:
        raise Malformed("witnesses.reported_delta: must be exact text > 0")
    return N, rule, w["reported_delta"]

def _plan_4_1(doc: dict, der: Derivation, N: int, rule: str, reported: str) -> None:
    """Theorem 4.1's claims and conclusions, with the statements certify writes (document.Derivation.texts)."""
    eps, der.names, loss = doc["inputs"]["epsilon"], set(Q41), LOSSES[doc["inputs"]["loss"]]
    e = parse_exact(eps, "inputs.epsilon")
    der.claim("threshold7_holds", ("iterations", ">=", "threshold7"), f"N = {N} satisfies (7)")
    der.claim("epsilon_admissible", (eps, ">=", "epsilon0"), f"eps = {e} >= eps_0")
    der.claim("dp_4_1", ("delta", "<=", reported), f"the release is ({e}, {reported})-DP by Theorem 4.1 (delta <= {reported})")
    text = f"after N = {N} iterations the release is ({e}, {reported})-DP (Theorem 4.1; {loss})"
    der.conclude("dp_theorem_4_1", "dp_4_1", ("threshold7_holds", "epsilon_admissible"), text)
    if rule == RULE_SMALLEST:
        der.claim("threshold7_smallest", ("threshold7", ">", str(N - 1)), f"N - 1 = {N - 1} does not satisfy (7)")
        der.conclude("iterations_smallest", "threshold7_smallest", ("threshold7_holds",), f"N = {N} is the smallest iteration count satisfying (7)")
    if "target_delta" in doc["inputs"]:
        t = doc["inputs"]["target_delta"]
        der.claim("target_4_1", ("delta", "<=", t), f"Theorem 4.1 at N = {N}: delta(eps) <= target {parse_exact(t, 'inputs.target_delta')}")
    der.texts.update({f"quantity:{k}": text for k, text in DESCRIPTIONS.items()})
    der.texts.update({"quantity:iterations": f"iteration count N ({rule})", "quantity:delta": f"delta(eps) at eps = {e}: {DESCRIPTIONS['delta']}"})

def _values_4_1(doc: dict, der: Derivation, p: dict, c: dict, N: int) -> None:
    v = theorem_4_1(p, c, N, p["epsilon"])
    v.update({k: c[k] for k in ("d_star", "L", "M", "G", "Delta_H", "eta", "rho", "sigma", "r_u", "r_prime", "R_bar", "B")})
    v["threshold7"], v["iterations"] = threshold_7(c), iv.mpf(N)
    der.values.update({k: bounds(x) for k, x in v.items()})

def _failure_runs(w: dict, N1: int) -> list:
    """The recorded runs {from, to, reason} covering 1..N1-1 in order (layout only)."""
    runs, expected = w.get("failures"), 1
    if not isinstance(runs, list):
        raise Malformed("witnesses.theorem_C13.failures: must be a list of runs")
    out = []
    for run in runs:
        if not isinstance(run, dict) or set(run) != {"from", "to", "reason"} or run["reason"] not in REASONS:
            raise Malformed("witnesses.theorem_C13.failures: runs are {from, to, reason} with a known reason")
        lo, hi = parse_int(str(run["from"]), "from"), parse_int(str(run["to"]), "to")
        if lo != expected or hi < lo:
            raise Malformed("witnesses.theorem_C13.failures: runs must cover 1..N-1 in order")
        out.append((lo, hi, run["reason"]))
        expected = hi + 1
    if expected != N1:
        raise Malformed(f"witnesses.theorem_C13.failures: runs end at {expected - 1}, not at N - 1 = {N1 - 1}")
    return out

def _reason(p: dict, c: dict, N: int, eps: Fraction, target: Fraction) -> tuple[str, dict]:
    """c13_reason, first at 64 bits (a failure needs a decision, not a tight enclosure), else at full precision."""
    full = iv.prec
    try:
        with working_precision(64):
            return c13_reason(p, c, N, eps, target)  # (c's intervals stay valid at any precision)
    except Undecided:
        with working_precision(full):
            return c13_reason(p, c, N, eps, target)

def _int_witness(x, name: str) -> int:
    if type(x) is not int and type(x) is not str:
        raise Malformed(f"{name}: must be an integer")
    return parse_int(str(x), name)

def _c13(doc: dict, der: Derivation, p: dict, c: dict, N: int) -> None:
    """Theorem C.13: every witnessed failure re-checked, the first passing count N1 evaluated (values, claims)."""
    w, target, eps = doc["witnesses"]["theorem_C13"], parse_exact(doc["inputs"]["target_delta"], "inputs.target_delta"), p["epsilon"]
    if not 0 < target < 1:
        der.failed.append(f"inputs.target_delta: must be in (0, 1), got {target}")
        return
    if not isinstance(w, dict) or not {"first_passing_iterations", "failures"} <= set(w) <= {"first_passing_iterations", "failures", "radii"}:
        raise Malformed("witnesses.theorem_C13: must be {first_passing_iterations, failures[, radii]}")
    if w.get("radii", RADII) != RADII:
        raise Malformed(f"witnesses.theorem_C13.radii: must be {RADII!r}")
    N1 = _int_witness(w["first_passing_iterations"], "witnesses.theorem_C13.first_passing_iterations")
    if not 1 <= N1 <= max(20 * N, 1000):
        raise Malformed("witnesses.theorem_C13.first_passing_iterations: outside the search range [1, max(20 N, 1000)]")
    if N1 > MAX_COUNTS:
        raise Undecided(f"Theorem C.13 at more than {MAX_COUNTS} counts is not re-checked by the kernel")
    reason = None
    for lo, hi, reason in _failure_runs(w, N1):
        for k in range(lo, hi + 1):
            got = _reason(p, c, k, eps, target)[0]
            if got != reason:
                raise Malformed(f"witnesses.theorem_C13: at N = {k} the recorded reason {reason!r} is not the first failing condition ({got})")
    v = c13_at(p, c, N1)
    v["delta_N"] = delta_N(c, eps, v["s_N"])
    v["witnessed_failures"], v["first_passing_iterations"] = iv.mpf(N1 - 1), iv.mpf(N1)
    names = list(QC13)
    if reason == REASONS[3]:  # the count just below fails the target: its delta_N is recorded too
        v["delta_N_previous"] = delta_N(c, eps, c13_at(p, c, N1 - 1)["s_N"])
        names.append("delta_N_previous")
    der.names |= set(names)
    der.values.update({k: bounds(v[k]) for k in names})
    t, e = doc["inputs"]["target_delta"], doc["inputs"]["epsilon"]
    der.claim("c13_first", ("witnessed_failures", ">=", str(N1 - 1)), f"every N in 1..{N1 - 1} fails Theorem C.13 (witnessed)")
    der.claim("alpha_bar_positive", ("alpha_bar", ">", "0"), f"alpha-bar > 0 at N = {N1}")
    der.claim("radius_condition", ("radius_step", "<=", "radius_gap"), f"(47) holds at N = {N1}")
    der.claim("epsilon_above_s_N", (e, ">=", "s_N"), f"eps = {eps} >= s_N")
    der.claim("dp_C13", ("delta_N", "<=", t), f"Theorem C.13: the release at N = {N1} is ({eps}, delta_N)-DP with delta_N <= {target}")
    hyps = ("c13_first", "alpha_bar_positive", "radius_condition", "epsilon_above_s_N")
    text = f"the first N certified by Theorem C.13 (radii of C.4) is N = {N1}: the release is ({eps}, {target})-DP there and every smaller N"
    der.conclude("first_passing_c13", "dp_C13", hyps, f"{text} fails ({LOSSES[doc['inputs']['loss']]})")
    der.texts.update(
        {"quantity:delta_N": f"delta_N(eps) at N = {N1}", "quantity:delta_N_previous": f"delta_N(eps) at N = {N1 - 1} (fails the target)"}
    )

def derive(doc: dict) -> Derivation:
    """Everything the kernel needs to judge an objpert/theorem-4.1 certificate (see document.Derivation)."""
    inputs, der = doc["inputs"], Derivation()
    known = set(PROBLEM) | {"noise_multiplier", "epsilon", "iterations", "target_delta"} | set(UTILITY)
    unknown = sorted(set(inputs) - known)
    if unknown:
        raise Malformed(f"inputs: unknown input(s) {', '.join(unknown)[:200]}")
    if any(k in inputs for k in UTILITY):
        raise Undecided("the utility bounds (inputs delta_S, comparator_norm, beta) are not re-derived by the kernel")
    p = read_problem(inputs, der.failed)
    if der.failed:
        return der
    N, rule, reported = _iterations(doc)
    c = constants(p)
    _plan_4_1(doc, der, N, rule, reported)
    _values_4_1(doc, der, p, c, N)
    if "target_delta" in inputs:
        _c13(doc, der, p, c, N)
    der.equations = {k: EQUATIONS[k] for k in der.names}
    return der
