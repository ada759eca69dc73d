"""Kind ``events/rdp``: a release described by dp_accounting's event algebra, certified by Rényi DP.

The certificate records a ledger: the relation and, per distinct mechanism i, its class, count c_i and exact parameters; one query (``target_delta``,
``target_epsilon`` or ``order``); the witnessed order alpha. From the papers each mechanism cites (alpha > 1; D_alpha(P||Q) = log(sum P^alpha
Q^(1-alpha))/(alpha-1), Mironov 2017 Def. 3, for the finite ones; "RR(eps)": binary randomized response at eps, log((e^(alpha eps) +
e^((1-alpha) eps))/(1+e^eps))/(alpha-1), KOV15 Thm 2.1, bounding every eps-DP mechanism):

  GaussianDpEvent(z)               alpha/(2 z^2)                                      (Mironov17 Table II)
  LaplaceDpEvent(b)                log(alpha/(2alpha-1) e^((alpha-1)/b) + (alpha-1)/(2alpha-1) e^(-alpha/b))/(alpha-1) (Mironov17 Prop. 6); pure: 1/b
  RandomizedResponseDpEvent(p, k)  a = 1-p+p/k, b = p/k; replace-one: log(a^alpha b^(1-alpha) + b^alpha a^(1-alpha) + (k-2) b)/(alpha-1);
                                   replace-special (against the uniform output): the larger of log(((ak)^x + (k-1)(bk)^x)/k)/(alpha-1) at
                                   x = alpha, 1-alpha; pure: log(a/b), resp. max(log(ak), -log(bk))          (Mironov17 Sec. 6 and Def. 3)
  EpsilonDeltaDpEvent(eps, delta)  RR(eps), its delta outside the curve (KOV15 Thm 2.1); pure (delta = 0): eps
  ZCDpEvent(rho, xi)               xi + rho alpha                                     (BS16 Def. 1.1)
  PoissonSampledDpEvent(q, Gaussian(z))  MTZ19 Sec. 3.3 (``poisson``, ``fractional``); add-remove, replace-special
  DiscreteGaussianDpEvent(sigma, D)      alpha D^2/(2 sigma^2), an upper bound (CKS20 Prop. 5, Thm 15 for vectors)
  SingleEpochTreeAggregationDpEvent(z, steps)  alpha depth/(2 z^2), depth = (max steps).bit_length() = ceil(log2(max + 1)) (KMSTTX21 App. D:
                                   a Gaussian of sensitivity sqrt(depth)); replace-special only
  ExponentialMechanismDpEvent(eps)  min(alpha eps^2/8 (CR21 Sec. 3: eps-bounded range => eps^2/8-zCDP), RR(eps)); pure: eps
  PermuteAndFlipDpEvent(eps)       RR(eps) (MS20: eps-DP); pure: eps
  DiscreteLaplaceDpEvent(t, D)     P(x) = tanh(t/2) e^(-t|x|), D an integer l1 sensitivity; pure: t D. Our derivation (``_dlap``): for a shift by k,
                                   sum_x P(x)^alpha P(x-k)^(1-alpha) is three geometric sums (x <= 0, 0 < x < k, x >= k) = e^(t(alpha-1)k) B_k,
                                   B_k = (1 + r^k)/(1 + e^-t) + tanh(t/2) sum_{x=1}^{k-1} r^x, r = e^(-t(2alpha-1)): f(k) = t k + log(B_k)/(alpha-1);
                                   coordinates shifted by k_i with sum k_i <= D add: the maximum over partitions of D of sum_i f(k_i)

  (Mironov17 Prop. 1)  rdp = sum_i c_i rdp_i;  (KOV15) extra_delta = 1 - prod_i (1 - delta_i)^c_i;
  (Balle20 Thm 21)     epsilon = max(0, rdp + log((alpha-1)/alpha) - (log delta' + log alpha)/(alpha-1)), delta' = (delta-extra)/(1-extra);
                       delta = extra + (1 - extra) min(1, exp((alpha-1)(rdp - eps + log((alpha-1)/alpha)) - log alpha));
  (Dwork-Roth 2014 Sec. 3.5)  pure queries (target_delta = 0): epsilon = sum_i c_i eps_i.

Prose is re-derived word for word (``_texts``), numbers spelt as certify writes them (``spelt``); any other class: "cannot decide" (exit 3).
"""

import re
from fractions import Fraction
from mpmath import iv
from . import fractional
from .document import Derivation, recorded_ball
from .numbers import Malformed, Undecided, bounds, interval, iv_max, iv_min, log_interval, parse_exact, parse_int, printed
from .poisson import MAX_WORK, _integral_or_chord, log_A, rdp as chord_rdp, rdp_integral
from .provenance import check_notes

KIND = "events/rdp"
#: the recorded quantities derive reads (rdp[i]: which bound certify took; the head quantity: its upper decimal)
READS = ("rdp", "epsilon", "delta")
AR, R1, RS = "add-remove", "replace-one", "replace-special"
ANY = (AR, R1, RS)
DL = "discrete Laplace shift divergence (geometric sums), maximised over partitions of the sensitivity"
#: class -> (parameters in the recorded order, relations, equation label of rdp[i] / epsilon[i])
MECHANISMS = {
    "GaussianDpEvent": (("noise_multiplier",), ANY, "Mironov17 Table II"),
    "LaplaceDpEvent": (("noise_multiplier",), ANY, "Mironov17 Prop. 6"),
    "RandomizedResponseDpEvent": (("noise_parameter", "num_buckets"), (R1, RS), "Mironov17 Sec. 6 (randomized response)"),
    "EpsilonDeltaDpEvent": (("epsilon", "delta"), ANY, "KOV15 + Mironov17 (randomized response)"),
    "ZCDpEvent": (("rho", "xi"), ANY, "BS16 Def. 1.1"),
    "PoissonSampledDpEvent": (("sampling_probability", "noise_multiplier"), (AR, RS), "MTZ19 Sec. 3.3 (certify.poisson.rdp)"),
    "DiscreteGaussianDpEvent": (("sigma", "sensitivity"), ANY, "CKS20 Prop. 5 (upper bound)"),
    "SingleEpochTreeAggregationDpEvent": (("noise_multiplier", "step_counts"), (RS,), "KMSTTX21 App. D"),
    "ExponentialMechanismDpEvent": (("epsilon",), ANY, "CR21 Sec. 3 (eps-BR => eps^2/8-zCDP) and KOV15 (eps-DP); upper bound"),
    "PermuteAndFlipDpEvent": (("epsilon",), ANY, "MS20 (eps-DP) + KOV15; upper bound"),
    "DiscreteLaplaceDpEvent": (("noise_parameter", "sensitivity"), ANY, DL),
}
NEW = tuple(MECHANISMS)[6:]  # the five classes added on 2026-12-02
#: the sentences certify appends (sorted) to the headline claim of a ledger holding the class: its bound is an upper bound only
NOTES = {
    "DiscreteGaussianDpEvent": "the discrete Gaussian's RDP is bounded by the continuous Gaussian's (CKS20 Prop. 5): an upper bound only",
    "ExponentialMechanismDpEvent": "the exponential mechanism's RDP is bounded by min(alpha eps^2/8, randomized response's): an upper bound only",
    "PermuteAndFlipDpEvent": "permute-and-flip's RDP is bounded by that of randomized response with the same eps: an upper bound only",
}
EQ = {"rdp": "Mironov17 Prop. 1", "extra_delta": "KOV15 (delta outside the Rényi curve)", "convert": "Balle20 Thm 21"}
EQ_PURE = "Dwork-Roth 2014 Sec. 3.5 (basic composition)"
MAX_ENTRIES, MAX_COUNT, MAX_PARAM, MAX_BITS = 10_000, 10**18, Fraction(10**30), 8000
_KEY = re.compile(r"event\[(0|[1-9][0-9]{0,4})\]\.([a-z_]+)(\.note)?")

def _entry(inputs: dict, i: int, failed: list) -> tuple:
    """(class, count, {parameter: exact value}) of entry i, with its hypotheses checked (failures appended)."""
    cls = inputs.get(f"event[{i}].class")
    if not isinstance(cls, str) or not cls.endswith("DpEvent"):
        raise Malformed(f"inputs.event[{i}].class: missing or not an event class (entries are numbered 0, 1, ...)")
    if cls not in MECHANISMS:
        raise Undecided(f"event[{i}]: class {str(cls)[:40]!r} is not re-derived by the kernel")
    names, relations, _ = MECHANISMS[cls]
    count = parse_int(inputs.get(f"event[{i}].count"), f"inputs.event[{i}].count")
    values = {n: _read(inputs.get(f"event[{i}].{n}"), f"inputs.event[{i}].{n}") for n in names}
    spelt(inputs.get(f"event[{i}].count"), f"inputs.event[{i}].count")
    if any(max(v.numerator.bit_length(), v.denominator.bit_length()) > MAX_BITS for v in values.values() if type(v) is Fraction):
        raise Malformed(f"event[{i}]: a parameter longer than {MAX_BITS} bits")
    if not 1 <= count <= MAX_COUNT:
        failed.append(f"event[{i}].count: must be an integer in [1, 1e18]")
    if inputs.get("neighboring") not in relations:
        failed.append(f"event[{i}]: {cls} is certified under {', '.join(relations)} only")
    for n, v in values.items():
        if not _admissible(cls, n, v):
            failed.append(f"event[{i}].{n}: {v} is outside the mechanism's range")
    return cls, count, values

def spelt(text, name: str) -> Fraction:
    """An exact number in certify's one spelling (an integer or a fraction in lowest terms; not "0.01", "2/200", "1e2", "0100": Malformed)."""
    v = parse_exact(text, name)
    if text != str(v):
        raise Malformed(f"{name}: {str(text)[:40]!r} is not certify's spelling of {str(v)[:40]}")
    return v

def _read(text, name: str):
    """A parameter as certify spells it; ``step_counts``: integers joined by commas (a tuple)."""
    return tuple(spelt(x, name) for x in text.split(",")) if name.endswith("step_counts") and isinstance(text, str) else spelt(text, name)

def _admissible(cls: str, name: str, v) -> bool:
    """The parameter ranges of each theorem (noise > 0, probabilities in range, integers where counted)."""
    if name == "step_counts":
        return 1 <= len(v) <= 10**5 and all(s.denominator == 1 and 0 <= s <= 10**18 for s in v)
    if cls == "DiscreteLaplaceDpEvent" and name == "sensitivity":
        return v.denominator == 1 and 1 <= v <= 64
    if cls in NEW or name == "noise_multiplier":  # certify's range
        return 0 < v <= MAX_PARAM
    if name in ("noise_parameter", "sampling_probability"):
        return 0 < v < 1 if name == "noise_parameter" else 0 < v <= 1  # p = 1 or q = 0 releases nothing: not recorded
    if name == "num_buckets":
        return v.denominator == 1 and 1 <= v <= 10**12
    return 0 <= v < 1 if name == "delta" else 0 <= v <= MAX_PARAM  # delta; epsilon, rho, xi

def read_ledger(inputs: dict, failed: list) -> list:
    """The entries [(class, count, values)], every input key known; the relation is one of the three."""
    if inputs.get("neighboring") not in ANY:
        raise Malformed(f"inputs.neighboring: must be one of {', '.join(ANY)}")
    n = sum(1 for k in inputs if k.endswith("].class") and k.startswith("event["))
    if not 1 <= n <= MAX_ENTRIES:
        raise Malformed(f"inputs: 1 to {MAX_ENTRIES} mechanisms")
    entries = [_entry(inputs, i, failed) for i in range(n)]
    if len({(cls, tuple(sorted(v.items()))) for cls, _, v in entries}) != n:
        raise Malformed("inputs: two entries record the same mechanism (a ledger lists each once, with its count)")
    for key in inputs:
        m = _KEY.fullmatch(key)
        if key in ("neighboring", "target_delta", "target_epsilon", "order") or key[:-5] in ("target_delta", "target_epsilon", "order"):
            continue
        cls = entries[int(m.group(1))][0] if m and int(m.group(1)) < n else None
        if cls is None or m.group(2) not in MECHANISMS[cls][0] + ("class", "count") or m.group(3) and m.group(2) in ("class", "count"):
            raise Malformed(f"inputs: unknown input {key[:60]}")
    check_notes(inputs, failed)
    return entries

def _rr(alpha: Fraction, p: Fraction, k: int, relation: str):
    """Randomized response's Rényi divergence (Mironov17 Sec. 6, Def. 3), a = 1-p+p/k, b = p/k."""
    if k == 1 or p == 1:
        return iv.mpf(0)
    a, b, al = interval(1 - p + p / k), interval(p / k), interval(alpha)
    if relation == R1:
        s = iv.exp(al * iv.log(a) + (1 - al) * iv.log(b)) + iv.exp(al * iv.log(b) + (1 - al) * iv.log(a)) + (k - 2) * b
        return iv.log(s) / interval(alpha - 1)
    sides = [iv.log((iv.exp(x * iv.log(a * k)) + (k - 1) * iv.exp(x * iv.log(b * k))) / k) for x in (al, 1 - al)]
    return iv_max(*sides) / interval(alpha - 1)

def _rr_eps(e: Fraction, alpha: Fraction):
    """Binary randomized response at eps (KOV15 Thm 2.1): log((e^(alpha eps) + e^((1-alpha) eps))/(1+e^eps))/(alpha-1)."""
    al, e = interval(alpha), interval(e)
    return iv.log((iv.exp(al * e) + iv.exp((1 - al) * e)) / (1 + iv.exp(e))) / interval(alpha - 1)

def _dlap(t: Fraction, D: int, alpha: Fraction):
    """DiscreteLaplace(t, D) of the module docstring: f(k), k <= D, and g(n) = max(f(n), g(j) + g(n-j)); g(D) >= g(n <= D) as f >= 0."""
    al, tt = interval(alpha), interval(t)
    r, c, e = iv.exp(-tt * (2 * al - 1)), (1 - iv.exp(-tt)) / (1 + iv.exp(-tt)), 1 + iv.exp(-tt)  # c = tanh(t/2)
    g, power, middle = [iv.mpf(0)], iv.mpf(1), iv.mpf(0)  # in step k: middle = sum_{x=1}^{k-1} r^x, power = r^k
    for k in range(1, D + 1):
        middle, power = middle + (power if k > 1 else 0), power * r
        f = tt * k + iv.log((1 + power) / e + c * middle) / interval(alpha - 1)
        g.append(iv_max(f, *(g[j] + g[k - j] for j in range(1, k // 2 + 1))))
    return g[D]

def rdp_of(cls: str, v: dict, alpha: Fraction, relation: str, chosen):
    """rdp_i at alpha by the table of the module docstring (``chosen`` picks the recorded integral-or-chord bound)."""
    al = interval(alpha)
    if cls in ("GaussianDpEvent", "DiscreteGaussianDpEvent", "SingleEpochTreeAggregationDpEvent"):  # alpha D^2/(2 z^2)
        d2 = v["sensitivity"] ** 2 if "sigma" in v else int(max(v["step_counts"])).bit_length() if "step_counts" in v else 1  # depth (KMSTTX21)
        return interval(alpha * d2 / (2 * v.get("sigma", v.get("noise_multiplier")) ** 2))
    if cls == "LaplaceDpEvent":
        b = interval(v["noise_multiplier"])
        s = al / (2 * al - 1) * iv.exp((al - 1) / b) + (al - 1) / (2 * al - 1) * iv.exp(-al / b)
        return iv.log(s) / interval(alpha - 1)
    if cls == "RandomizedResponseDpEvent":
        return _rr(alpha, v["noise_parameter"], int(v["num_buckets"]), relation)
    if cls in ("EpsilonDeltaDpEvent", "PermuteAndFlipDpEvent"):
        return _rr_eps(v["epsilon"], alpha)
    if cls == "ExponentialMechanismDpEvent":
        return iv_min(interval(alpha * v["epsilon"] ** 2 / 8), _rr_eps(v["epsilon"], alpha))
    if cls == "DiscreteLaplaceDpEvent":
        return _dlap(v["noise_parameter"], int(v["sensitivity"]), alpha)
    if cls == "ZCDpEvent":
        return interval(v["xi"] + v["rho"] * alpha)
    q, z = v["sampling_probability"], v["noise_multiplier"]
    if q == 0:
        return iv.mpf(0)
    if alpha.denominator == 1:
        return log_A(int(alpha), q, z) / (int(alpha) - 1)
    return chosen(rdp_integral(alpha, q, z, PRECISION[0]), chord_rdp(alpha, q, z))

#: the certificate's recorded precision (set by derive; the integral's accuracy aims inside certify's balls)
PRECISION = [128]

def pure_of(cls: str, v: dict, relation: str):
    """The pure epsilon of one application, or None for a mechanism that is not pure."""
    if cls == "LaplaceDpEvent":
        return interval(1 / v["noise_multiplier"])  # exact rational first: an integer 1/b is exact
    if cls == "EpsilonDeltaDpEvent" and v["delta"] == 0 or cls in NOTES and cls != "DiscreteGaussianDpEvent":
        return interval(v["epsilon"])
    if cls == "DiscreteLaplaceDpEvent":
        return interval(v["noise_parameter"] * v["sensitivity"])
    if cls != "RandomizedResponseDpEvent":
        return None
    p, k = v["noise_parameter"], int(v["num_buckets"])
    if k == 1 or p == 1:
        return iv.mpf(0)
    a, b = 1 - p + p / k, p / k
    return log_interval(a / b) if relation == R1 else iv_max(log_interval(a * k), -log_interval(b * k))

def _query(inputs: dict, failed: list) -> tuple[str, Fraction]:
    given = [q for q in ("target_delta", "target_epsilon", "order") if q in inputs]
    if len(given) != 1:
        raise Malformed("inputs: exactly one of target_delta, target_epsilon, order")
    query, target = given[0], spelt(inputs[given[0]], f"inputs.{given[0]}")
    ok = {"target_delta": 0 <= target < 1, "target_epsilon": 0 <= target <= 10**6}.get(query, 1 < target <= 4096 and target.denominator < 10**12)
    if not ok:
        failed.append(f"inputs.{query}: {target} is outside its range")
    return query, target

def _plan(doc: dict, der: Derivation, entries: list, query: str, extra: bool) -> None:
    """Quantity names, equations, claims and the conclusion, as the kind records them (certify's layout)."""
    n, bound, t = len(entries), doc["witnesses"]["bound"], doc["inputs"][query]
    eqs = [MECHANISMS[e[0]][2] for e in entries]
    if query == "target_delta" and parse_exact(t, "target_delta") == 0:
        der.names = {"epsilon"} | {f"epsilon[{i}]" for i in range(n)}
        der.equations = {"epsilon": EQ_PURE} | {f"epsilon[{i}]": eq for i, eq in enumerate(eqs)}
        der.claims["bound"] = ("epsilon", "<=", bound)
        der.conclusions["dp"] = ("bound", ())
        return
    head = {"target_delta": "epsilon", "target_epsilon": "delta", "order": "rdp"}[query]
    a = doc["witnesses"]["alpha"] if query != "order" else t
    hyps = {"target_delta": [("hyp:delta>0", t, ">", "0"), ("hyp:delta<1", t, "<", "1")], "target_epsilon": [("hyp:epsilon>=0", t, ">=", "0")]}
    hyps = hyps.get(query, []) + [("hyp:alpha>1", a, ">", "1"), ("hyp:alpha<=4096", a, "<=", "4096")]
    if extra and query == "target_delta":
        hyps.append(("hyp:delta>extra_delta", t, ">", "extra_delta"))
    der.claims = {name: (lhs, rel, rhs) for name, lhs, rel, rhs in hyps} | {"bound": (head, "<=", bound)}
    der.conclusions["dp"] = ("bound", tuple(h[0] for h in hyps))
    der.names = {"rdp", head} | {f"rdp[{i}]" for i in range(n)} | ({"alpha"} if query != "order" else set()) | ({"extra_delta"} if extra else set())
    der.equations = {head: EQ["convert"], "rdp": EQ["rdp"], "extra_delta": EQ["extra_delta"], "alpha": "witness"}
    der.equations.update({f"rdp[{i}]": eq for i, eq in enumerate(eqs)})

#: the descriptions certify writes for the quantities whose names are fixed
DESCRIPTIONS = {
    "alpha": "Rényi order (chosen by float estimates; any alpha > 1 is valid)",
    "rdp": "sum_i count_i rdp[i] (Rényi composition); upper endpoint bounds the release's RDP at alpha",
    "extra_delta": "1 - prod_i (1 - delta_i)^count_i of the (epsilon, delta) events",
    "epsilon": "max(0, rdp + log((alpha-1)/alpha) - (log delta' + log alpha)/(alpha-1)), delta' the delta left to the Rényi curve; "
    "upper endpoint is the certified epsilon",
    "delta": "min(1, exp((alpha-1)(rdp - epsilon + log((alpha-1)/alpha)) - log alpha)) (+ extra_delta); upper endpoint is the certified delta",
}
PURE_EPSILON = "sum_i count_i epsilon[i]: the composition is (epsilon, 0)-DP; upper endpoint is the certified epsilon"
HYPOTHESES = {"hyp:delta>0": "delta = {t} > 0", "hyp:delta<1": "delta = {t} < 1", "hyp:epsilon>=0": "epsilon = {t} >= 0"}
HYPOTHESES |= {"hyp:alpha>1": "Rényi order alpha = {a} > 1", "hyp:alpha<=4096": "Rényi order alpha = {a} <= 4096"}
HYPOTHESES["hyp:delta>extra_delta"] = "delta = {t} > extra_delta (the (epsilon, delta) events' own delta)"

def _texts(doc: dict, der: Derivation, entries: list, query: str, pure: bool) -> None:
    """Certify's prose re-derived (Derivation.texts); the headline bound: the head's recorded upper decimal or (epsilon at delta) a claimed one."""
    inputs, w, rel = doc["inputs"], doc["witnesses"], doc["inputs"]["neighboring"]
    t, bound, n = inputs[query], w["bound"], len(entries)
    a = w.get("alpha", t)
    what = f"the composition of {sum(c for _, c, _ in entries)} event(s) ({n} distinct mechanism(s); {rel})"
    kinds = [f"{cls}(" + ", ".join(f"{k}={inputs[f'event[{i}].{k}']}" for k in MECHANISMS[cls][0]) + ")" for i, (cls, _, _) in enumerate(entries)]
    head = "epsilon" if pure else {"target_delta": "epsilon", "target_epsilon": "delta", "order": "rdp"}[query]
    notes = "".join(f"; {x}" for x in sorted({NOTES[cls] for cls, _, _ in entries if cls in NOTES}))
    if pure:
        der.texts.update({f"quantity:epsilon[{i}]": f"pure epsilon of one {k}" for i, k in enumerate(kinds)})
        der.texts.update({"quantity:epsilon": PURE_EPSILON, "claim:bound": f"{what} is ({bound}, 0)-DP (pure; basic composition){notes}"})
        der.texts["conclusion:dp"] = f"the release is ({bound}, 0)-DP under {rel}"
    else:
        der.texts.update({f"quantity:{q}": DESCRIPTIONS[q] for q in der.names if q in DESCRIPTIONS})
        der.texts.update({f"quantity:rdp[{i}]": f"Rényi divergence bound of one {k} at alpha" for i, k in enumerate(kinds)})
        der.texts.update({f"claim:{h}": HYPOTHESES[h].format(t=t, a=a) for h in der.claims if h in HYPOTHESES})
        at = f"(Rényi bound at alpha = {a})"
        said = {"order": f"satisfies (alpha, rdp)-RDP with alpha = {a}, rdp = {bound}"}
        said |= {"target_delta": f"is (epsilon, delta)-DP with epsilon = {bound}, delta = {t} {at}"}
        said["target_epsilon"] = f"is (epsilon, delta)-DP with epsilon = {t}, delta = {bound} {at}"
        der.texts["claim:bound"] = f"{what} {said[query]}{notes}"
        pair = {"order": f"({a}, {bound})-RDP", "target_delta": f"({bound}, {t})-DP", "target_epsilon": f"({t}, {bound})-DP"}[query]
        der.texts["conclusion:dp"] = f"the release is {pair} under {rel}"
    recorded = doc["quantities"].get(head)
    claimed = query == "target_delta" and not pure and bound == str(parse_exact(bound, "witnesses.bound"))
    if not isinstance(recorded, dict) or (bound != recorded.get("upper") and not claimed):
        raise Malformed(f"witnesses.bound: neither the recorded upper decimal of {head} nor a claimed exact bound")
    lo, hi = recorded_ball(head, recorded)
    width = {f"{head} width (upper - lower)": printed(hi - lo, up=True, digits=3)}
    der.texts["budget"] = width if pure else {"alpha": "recorded order (any alpha > 1 is valid; the checker never searches)"} | width

def _extra_delta(entries: list):
    """(KOV15) 1 - prod_i (1 - delta_i)^c_i, or None when no entry has a delta."""
    deltas = [(c, v["delta"]) for cls, c, v in entries if cls == "EpsilonDeltaDpEvent" and v["delta"] != 0]
    if not deltas:
        return None
    return 1 - iv.exp(sum((c * iv.log(interval(1 - d)) for c, d in deltas), iv.mpf(0)))

def _convert(query: str, target: Fraction, alpha: Fraction, rdp, extra):
    """(Balle20 Thm 21) epsilon at delta' (floored at 0), or delta at epsilon (capped at 1, then + extra_delta)."""
    al, shift = interval(alpha), log_interval((alpha - 1) / alpha)
    if query == "target_delta":
        d = interval(target) if extra is None else (interval(target) - extra) / (1 - extra)
        if d.a <= 0:
            raise Undecided("delta' = (delta - extra_delta)/(1 - extra_delta) is not provably positive")
        e = rdp + shift - (iv.log(d) + iv.log(al)) / (al - 1)
        return iv_max(e, 0)
    d = iv.exp((al - 1) * (rdp - interval(target) + shift) - iv.log(al))
    d = iv_min(d, 1)
    return d if extra is None else extra + (1 - extra) * d

def _affordable(entries: list, alpha: Fraction) -> None:
    """Decide the work before doing it: the Poisson-sampled entries' sums (MTZ19) and series (fractional)."""
    pairs = {(v["sampling_probability"], v["noise_multiplier"]) for cls, _, v in entries if cls == "PoissonSampledDpEvent"}
    work = len(pairs) * (alpha.numerator // alpha.denominator + 2) * iv.prec
    if alpha.denominator != 1 and pairs:
        work += len(pairs) * 30 * max(fractional.terms_needed(alpha, PRECISION[0] + 64) + 1, 1) * 600
    if work > MAX_WORK:
        raise Undecided(f"{len(pairs)} Poisson-sampled mechanisms at alpha = {alpha}: too much work, not evaluated")

def derive(doc: dict) -> Derivation:
    """Everything the kernel needs to judge an events/rdp certificate (see document.Derivation)."""
    der, inputs, w = Derivation(), doc["inputs"], doc["witnesses"]
    entries = read_ledger(inputs, der.failed)
    query, target = _query(inputs, der.failed)
    pure = query == "target_delta" and target == 0
    need = {"bound"} if pure or query == "order" else {"alpha", "bound"}
    if not isinstance(w, dict) or set(w) != need or not all(isinstance(x, str) for x in w.values()):
        raise Malformed(f"witnesses: must be exactly {sorted(need)} (text)")
    parse_exact(w["bound"], "witnesses.bound")
    alpha = target if query == "order" else (None if pure else spelt(w["alpha"], "witnesses.alpha"))
    if alpha is not None and not 1 < alpha <= 4096:
        der.failed.append(f"alpha: {alpha} must be in (1, 4096]")
    if der.failed:
        return der
    extra = _extra_delta(entries)
    _plan(doc, der, entries, query, extra is not None)
    _texts(doc, der, entries, query, pure)
    if pure:
        _pure(der, entries, inputs["neighboring"])
        return der
    PRECISION[0] = doc["precision"]
    _affordable(entries, alpha)
    if any(cls == "PoissonSampledDpEvent" for cls, _, _ in entries) and alpha.denominator != 1:
        der.loose = {"rdp", "epsilon", "delta", "extra_delta"} | {f"rdp[{i}]" for i in range(len(entries))}
    total = iv.mpf(0)
    for i, (cls, c, v) in enumerate(entries):
        # the recorded min(integral, chord) of entry i (poisson._integral_or_chord)
        r = rdp_of(cls, v, alpha, inputs["neighboring"], lambda integral, chord, i=i: _integral_or_chord(doc, i, integral, chord))
        der.values[f"rdp[{i}]"] = bounds(r)
        total = total + c * r
    der.values["rdp"] = bounds(total)
    if query != "order":
        der.values["alpha"] = (alpha, alpha)
        head = "epsilon" if query == "target_delta" else "delta"
        der.values[head] = bounds(_convert(query, target, alpha, total, extra))
    if extra is not None:
        der.values["extra_delta"] = bounds(extra)
    return der

def _pure(der: Derivation, entries: list, relation: str) -> None:
    """(Dwork-Roth 2014 Sec. 3.5) epsilon = sum_i c_i eps_i; a mechanism that is not pure: the hypothesis fails."""
    total = iv.mpf(0)
    for i, (cls, c, v) in enumerate(entries):
        e = pure_of(cls, v, relation)
        if e is None:
            der.failed.append(f"event[{i}]: {cls} is not a pure mechanism (target_delta = 0 asks for pure DP)")
            return
        der.values[f"epsilon[{i}]"] = bounds(e)
        total = total + c * e
    der.values["epsilon"] = bounds(total)
