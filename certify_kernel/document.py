"""The certificate as a document: shape, digest, and the comparison of its entries with the kernel's numbers.

A kind module returns a :class:`Derivation` from the inputs and witnesses; then, in order (each step only when the earlier pass): 1. the outer
shape (:func:`load`, else exit 2); 2. the digest (sha256 of the canonical JSON of the checked keys); 3. each quantity: strict ball layout, decimals
the ball's 10-digit outward rounding, its equation, the kernel's enclosure inside the ball (disjoint: inconsistent; overlapping: cannot decide, but
see ``loose`` and ``sides``); 4. each claim, decided from the kernel's enclosures (never the recorded balls); 5. each conclusion: the claim and
hypotheses the kernel expects, ``holds`` as the kernel decided them. Prose is not parsed: every kind re-derives certify's words
(``Derivation.texts``), so a negated or reworded statement is inconsistent even where it quotes no new number."""

import hashlib
import json
from dataclasses import dataclass, field
from fractions import Fraction
from .numbers import Malformed, Undecided, dyadic, parse_exact, printed

SCHEMA = "certify/3"
CHECKED_KEYS = ("schema", "kind", "precision", "inputs", "quantities", "claims", "conclusions", "witnesses", "budget")
TOP_LEVEL_KEYS = frozenset(CHECKED_KEYS + ("digest", "software"))
QUANTITY_KEYS = frozenset({"equation", "description", "ball", "lower", "upper", "integer", "bound"})
CLAIM_KEYS = frozenset({"name", "statement", "lhs", "relation", "rhs", "holds", "equation"})
CONCLUSION_KEYS = frozenset({"name", "statement", "claim", "hypotheses", "holds"})
MAX_BYTES = 64 << 20
MAX_PRECISION = 4096

EXIT_OK, EXIT_INPUT, EXIT_UNDECIDED, EXIT_INCONSISTENT, EXIT_NOT_PROVED = 0, 2, 3, 4, 5

class Refused(Exception):
    """A verdict reached before the end: ``status`` (2, 3, 4 or 5) and the reason."""
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message

@dataclass
class Derivation:
    """What a kind module derived from the inputs and witnesses alone (a text differing from ``texts``, or one it lacks, is inconsistent)."""

    values: dict = field(default_factory=dict)  # quantity -> (lo, hi), exact rationals enclosing its true value
    names: set = field(default_factory=set)  # every quantity the certificate must record (those not in values: not checked)
    claims: dict = field(default_factory=dict)  # claim -> (lhs, relation, rhs) the recorded claim must state exactly
    conclusions: dict = field(default_factory=dict)  # conclusion -> (claim, hypotheses) it must rest on
    failed: list = field(default_factory=list)  # hypotheses on the inputs that fail (it proves nothing: exit 5)
    unsure: list = field(default_factory=list)  # what the kernel cannot decide (exit 3 unless refused otherwise)
    equations: dict = field(default_factory=dict)  # quantity -> the equation label it must record
    # quantities the kernel may enclose more loosely than certify's ball: overlapping is enough (disjoint is inconsistent),
    # since every claim is decided from the kernel's enclosure, never from the recorded ball
    loose: set = field(default_factory=set)
    # "quantity:NAME" description, "claim:NAME" / "conclusion:NAME" statement, "budget": the prose the kind re-derives
    texts: dict = field(default_factory=dict)
    # quantity -> 1 (-1): the recorded ball bounds the exact value from above (below), inconsistent only when wholly below
    # (above) the kernel's enclosure of it; 0: the kernel's number is its own (the ball is not compared)
    sides: dict = field(default_factory=dict)
    def claim(self, name: str, claim: tuple, text: str) -> None:
        """Expect the claim ``name`` to state ``claim`` = (lhs, relation, rhs), in the words ``text`` certify writes."""
        self.claims[name], self.texts[f"claim:{name}"] = claim, text
    def conclude(self, name: str, claim: str, hypotheses: tuple, text: str) -> None:
        """Expect the conclusion ``name`` to rest on ``claim`` and ``hypotheses``, in the words ``text`` certify writes."""
        self.conclusions[name], self.texts[f"conclusion:{name}"] = (claim, tuple(hypotheses)), text

def load(text: str | bytes) -> dict:
    """Parse the JSON text and check the outer shape; Refused(2) otherwise (never a traceback)."""
    if len(text) > MAX_BYTES:
        raise Refused(EXIT_INPUT, f"certificate: file too large ({len(text)} bytes; at most {MAX_BYTES})")
    try:
        doc = json.loads(text, object_pairs_hook=_unique)
    except (ValueError, RecursionError) as err:  # JSONDecodeError, bad UTF-8, over-long integers, deep nesting, a key twice
        raise Refused(EXIT_INPUT, f"certificate: not valid JSON ({str(err)[:100]})") from None
    return check_shape(doc)

def _unique(pairs: list) -> dict:
    """A JSON object whose keys are all distinct: a key written twice shows a reader one value and the parser another."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("a key is written twice in one object")
    return obj

def check_shape(doc) -> dict:
    """The top level: known keys only, schema certify/3, precision in [53, 4096], fields of the right types."""
    if not isinstance(doc, dict):
        raise Refused(EXIT_INPUT, "certificate: top level must be a JSON object")
    if doc.get("schema") != SCHEMA:
        raise Refused(EXIT_INPUT, f"certificate: schema must be {SCHEMA!r}")
    missing = [k for k in CHECKED_KEYS + ("digest",) if k not in doc]
    unknown = sorted(map(str, set(doc) - TOP_LEVEL_KEYS))
    if missing or unknown:
        raise Refused(EXIT_INPUT, f"certificate: missing field(s) {missing} or unknown field(s) {unknown[:5]}")
    p = doc["precision"]
    if type(p) is not int or not 53 <= p <= MAX_PRECISION:
        raise Refused(EXIT_INPUT, f"certificate: precision must be an integer in [53, {MAX_PRECISION}]")
    kinds = {"kind": str, "inputs": dict, "quantities": dict, "witnesses": dict, "budget": dict, "claims": list, "conclusions": list}
    for key, typ in kinds.items():
        if not isinstance(doc[key], typ):
            raise Refused(EXIT_INPUT, f"certificate: {key} must be a JSON {typ.__name__}")
    if not all(isinstance(v, str) for v in doc["inputs"].values()):
        raise Refused(EXIT_INPUT, "certificate: every input must be exact text")
    return doc

def canonical(obj) -> str:
    """Canonical JSON text: sorted keys, no spaces, ASCII escapes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)

def digest_of(doc: dict) -> str:
    """sha256 of the canonical JSON of the checked keys."""
    return "sha256:" + hashlib.sha256(canonical({k: doc[k] for k in CHECKED_KEYS}).encode()).hexdigest()

def check_digest(doc: dict) -> None:
    try:
        ok = doc["digest"] == digest_of(doc)
    except (ValueError, TypeError, RecursionError):
        ok = False
    if not ok:
        raise Refused(EXIT_INCONSISTENT, "digest does not match the content: the certificate was altered after it was written")

def recorded_ball(name: str, q) -> tuple[Fraction, Fraction]:
    """(lo, hi) of a recorded quantity, after checking its layout and that its decimals are its outward rounding."""
    if not isinstance(q, dict) or not q.keys() <= QUANTITY_KEYS or not {"equation", "ball", "lower", "upper"} <= q.keys():
        raise Malformed(f"quantity {name}: not a quantity entry")
    ball = q["ball"]
    if type(ball) is not dict or set(ball) != {"mid", "rad"}:
        raise Malformed(f"quantity {name}: ball must be {{'mid': ..., 'rad': ...}}")
    mid, rad = dyadic(ball["mid"], f"quantity {name}: mid"), dyadic(ball["rad"], f"quantity {name}: rad")
    if rad < 0:
        raise Malformed(f"quantity {name}: negative radius")
    lo, hi = mid - rad, mid + rad
    if q["lower"] != printed(lo, up=False) or q["upper"] != printed(hi, up=True):
        raise Malformed(f"quantity {name}: recorded decimals are not the outward rounding of its ball")
    if q.get("integer", False) is not True and "integer" in q or q.get("bound", "upper") != "upper":
        raise Malformed(f"quantity {name}: bad 'integer' or 'bound' field")
    return lo, hi

def compare_quantities(doc: dict, der: Derivation, problems: list, unsure: list) -> None:
    """The recorded set of quantities, their layout and decimals, descriptions, equations, and the kernel's enclosures."""
    recorded = doc["quantities"]
    if set(recorded) != der.names:
        diff = sorted(set(recorded) ^ der.names)
        problems.append(f"quantities: the recorded set differs from the kind's ({', '.join(diff)[:200]})")
        return
    if "budget" in der.texts and doc["budget"] != der.texts["budget"]:
        problems.append("budget: not the kind's budget (its keys and texts are re-derived)")
    for name in sorted(recorded):
        try:
            lo, hi = recorded_ball(name, recorded[name])
        except Malformed as err:
            problems.append(str(err))
            continue
        if name in der.equations and recorded[name]["equation"] != der.equations[name]:
            problems.append(f"quantity {name}: equation {str(recorded[name]['equation'])[:60]!r}, the kernel evaluates {der.equations[name]!r}")
            continue
        if not _same_text(recorded[name].get("description"), der, f"quantity:{name}"):
            problems.append(f"quantity {name}: its description is not the one the kernel re-derives")
            continue
        if name not in der.values:
            continue
        klo, khi = der.values[name]
        side = der.sides.get(name)
        if side is not None:
            if side > 0 and hi < klo or side < 0 and lo > khi:
                problems.append(f"quantity {name}: the recorded ball lies on the wrong side of the kernel's enclosure of the exact value")
        elif recorded[name].get("bound") == "upper":
            if khi > hi and klo > hi:
                problems.append(f"quantity {name}: recorded upper bound {recorded[name]['upper']} is below the kernel's enclosure")
            elif khi > hi and name not in der.loose:
                unsure.append(f"quantity {name}: the kernel's bound does not reach the recorded upper bound")
        elif khi < lo or klo > hi:
            problems.append(f"quantity {name}: recorded ball [{recorded[name]['lower']}, {recorded[name]['upper']}] misses the kernel's enclosure")
        elif (klo < lo or khi > hi) and name not in der.loose:
            unsure.append(f"quantity {name}: the kernel's enclosure is not inside the recorded ball")

def operand(text, der: Derivation) -> tuple[Fraction, Fraction]:
    if isinstance(text, str) and text in der.names:
        if text not in der.values:
            raise Undecided(f"the kernel does not re-derive quantity {text}")
        return der.values[text]
    v = parse_exact(text, "claim operand")
    return v, v

def decide(lhs, relation, rhs, der: Derivation) -> bool:
    """Decide ``lhs relation rhs`` from the kernel's enclosures; Undecided when they overlap."""
    (a, b), (c, d) = operand(lhs, der), operand(rhs, der)
    if relation in (">", ">="):
        (a, b), (c, d), relation = (c, d), (a, b), "<" if relation == ">" else "<="
    if relation == "<=":
        return tri(b <= c, a > d)
    if relation == "<":
        return tri(b < c, a >= d)
    raise Malformed(f"unknown relation {relation!r}")

def tri(true: bool, false: bool) -> bool:
    """A three-valued decision: ``true`` when it is proved, False when its negation ``false`` is, else Undecided."""
    if true or false:
        return true
    raise Undecided("the intervals overlap")

def compare_claims(doc: dict, der: Derivation, problems: list, unsure: list) -> dict:
    """Each recorded claim decided by the kernel; returns name -> holds (None: undecided)."""
    decided: dict = {}
    for i, c in enumerate(doc["claims"]):
        if not isinstance(c, dict) or set(c) != CLAIM_KEYS or not isinstance(c["name"], str) or c["name"] in decided:
            problems.append(f"claims[{i}]: malformed or repeated claim entry")
            continue
        name = c["name"]
        want = der.claims.get(name)
        if want is not None and (c["relation"] != want[1] or not _same(c["lhs"], want[0], der) or not _same(c["rhs"], want[2], der)):
            problems.append(f"claim {name}: states {c['lhs']} {c['relation']} {c['rhs']}, the kernel expects {' '.join(map(str, want))}")
            continue
        if not _same_text(c["statement"], der, f"claim:{name}"):
            problems.append(f"claim {name}: its statement is not the one the kernel re-derives")
            continue
        try:
            holds = decide(c["lhs"], c["relation"], c["rhs"], der)
        except Undecided as err:
            decided[name] = None
            unsure.append(f"claim {name}: {err}")
            continue
        except Malformed as err:
            problems.append(f"claim {name}: {err}")
            continue
        decided[name] = holds
        if c["holds"] is not holds:
            problems.append(f"claim {name} ({c['statement']}): recorded holds={c['holds']!r}, the kernel decides {holds}")
    missing = sorted(set(der.claims) - set(decided))
    if missing:
        problems.append(f"claims: missing {', '.join(missing)[:200]}")
    return decided

def _same_text(recorded, der: Derivation, key: str) -> bool:
    """The recorded prose is the text the kind re-derives (a text the kind does not re-derive is never accepted)."""
    return key in der.texts and recorded == der.texts[key]

def _same(recorded, wanted, der: Derivation) -> bool:
    """The recorded operand text is the operand the kernel expects (a quantity name or the same exact number)."""
    if wanted in der.names or recorded in der.names:
        return recorded == wanted
    try:
        return parse_exact(recorded, "claim operand") == parse_exact(wanted, "expected operand")
    except Malformed:
        return False

def compare_conclusions(doc: dict, der: Derivation, decided: dict, problems: list, unsure: list) -> list:
    """Each conclusion as the kernel expects it; returns the names of conclusions that do not hold."""
    seen, failing = set(), []
    for i, c in enumerate(doc["conclusions"]):
        if not isinstance(c, dict) or set(c) != CONCLUSION_KEYS or c.get("name") not in der.conclusions or c["name"] in seen:
            problems.append(f"conclusions[{i}]: malformed, repeated or not a conclusion of this kind")
            continue
        seen.add(c["name"])
        claim, hyps = der.conclusions[c["name"]]
        if c["claim"] != claim or c["hypotheses"] != list(hyps):
            problems.append(f"conclusion {c['name']}: rests on other claims than the kernel's ({claim}; {', '.join(hyps)})")
            continue
        if not _same_text(c["statement"], der, f"conclusion:{c['name']}"):
            problems.append(f"conclusion {c['name']}: its statement is not the one the kernel re-derives")
            continue
        parts = [decided.get(n) for n in (claim, *hyps)]
        holds = False if False in parts else (None if None in parts else True)
        if holds is None:
            unsure.append(f"conclusion {c['name']}: undecided by the kernel")
        elif c["holds"] is not holds:
            problems.append(f"conclusion {c['name']}: recorded holds={c['holds']!r}, the kernel decides {holds}")
        elif not holds:
            failing.append(f"conclusion does not hold: {c['statement']}")
    absent = sorted(set(der.conclusions) - seen)
    if absent:
        problems.append(f"conclusions: missing {', '.join(absent)}")
    return failing
