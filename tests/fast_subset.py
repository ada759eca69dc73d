"""The fast suite's share of a parameter grid: every case runs in the full suite (`.ci/run`), only the
representative ones (edges, extremes) run in the fast suite (`pytest -m "not slow"`).

    @pytest.mark.parametrize("a,b", fast_subset(CASES, keep=[CASES[0], CASES[-1]]))

Each case keeps the id pytest would give it without the helper, so node ids do not change.
"""

from __future__ import annotations

import pytest


def fast_subset(cases, keep):
    """`cases` for ``pytest.mark.parametrize``, each one not in `keep` marked ``slow``."""
    keep = list(keep)
    missing = [k for k in keep if k not in cases]
    if missing:
        raise ValueError(f"fast_subset: {missing!r} are not cases of the grid")
    out = []
    for case in cases:
        if case in keep:
            out.append(case)
        else:
            out.append(pytest.param(*case, marks=pytest.mark.slow) if isinstance(case, tuple) else pytest.param(case, marks=pytest.mark.slow))
    return out
