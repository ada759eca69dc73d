"""SingleEpochTreeAggregationDpEvent(noise_multiplier z, step_counts): DP-FTRL's tree aggregation, one epoch.

Kairouz, McMahan, Song, Thakkar, Thakurta, Xu (2021), arXiv:2103.00039, App. D (each record in at most one leaf
across all trees; a record's contribution reaches one node per level of its tree, so the released node sums are a
Gaussian mechanism of sensitivity sqrt(depth) relative to the per-node noise): under REPLACE_SPECIAL
    R(alpha) = alpha depth / (2 z^2),   depth = ceil(log2(max(step_counts) + 1)) = (max step count).bit_length(),
exact (the Gaussian closed form; depth is an integer computed exactly). Not pure.
"""

from __future__ import annotations

from ...balls import InputError, ball, exact, exact_str, float_of
from .base import REPLACE_SPECIAL, Mechanism, positive

MAX_TREES = 100_000
MAX_STEPS = 10**18


class TreeAggregation(Mechanism):
    CLASS = "SingleEpochTreeAggregationDpEvent"
    FIELDS = PARAMS = ("noise_multiplier", "step_counts")
    RELATIONS = frozenset({REPLACE_SPECIAL})
    EQUATION = "KMSTTX21 App. D"

    @classmethod
    def validate(cls, values, where):
        positive(values, "noise_multiplier", where)
        steps = values["step_counts"]
        if not steps or len(steps) > MAX_TREES:
            raise InputError(f"{where}.step_counts", f"must be a non-empty list of at most {MAX_TREES} step counts")
        for s in steps:
            if not (0 <= s <= MAX_STEPS):
                raise InputError(f"{where}.step_counts", f"each step count must be an integer in [0, 10^18], got {s}"[:200])
        return values

    @staticmethod
    def _steps(raw, where: str) -> tuple:
        items = raw if isinstance(raw, (list, tuple)) else [raw]
        out = []
        for i, v in enumerate(items[: MAX_TREES + 1]):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            q = exact(v, f"{where}.step_counts") if not isinstance(v, (bool, list, dict, type(None))) else None
            if q is None or q.q != 1:
                raise InputError(f"{where}.step_counts", f"entry {i} must be an integer, got {str(v)[:40]}")
            out.append(int(q.p))
        return tuple(out)

    @classmethod
    def read(cls, view):
        view.check_fields(cls.FIELDS)
        z, zn = view.number("noise_multiplier")
        return cls.make(
            {"noise_multiplier": z, "step_counts": cls._steps(view.field("step_counts"), view.where)}, {"noise_multiplier": zn}, view.where
        )

    @classmethod
    def from_texts(cls, texts, where):
        raw = texts.get("step_counts")
        if not isinstance(raw, str) or len(raw) > 25 * MAX_TREES:
            raise InputError(f"{where}.step_counts", "must be text: comma-separated integers")
        z = exact(texts.get("noise_multiplier"), f"{where}.noise_multiplier")
        return cls.make({"noise_multiplier": z, "step_counts": cls._steps(raw.split(","), where)}, {}, where)

    def texts(self):
        return {"noise_multiplier": exact_str(self["noise_multiplier"]), "step_counts": ",".join(map(str, self["step_counts"]))}

    def depth(self) -> int:
        return max(self["step_counts"]).bit_length()

    def rdp(self, alpha, relation):
        z = self["noise_multiplier"]
        return ball(alpha * self.depth() / (2 * z * z))

    def rdp_floats(self, alphas, relation):
        z = float_of(self["noise_multiplier"])
        return alphas * self.depth() / (2 * z * z)
