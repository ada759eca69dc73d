"""Bok (2026), "Can Rényi accountants beat lossless accountants for DP-SGD?": certified accountant.

Modules follow the paper: :mod:`.problem` (inputs of (5)), :mod:`.mixture` (point bounds, B.3.1),
:mod:`.curvature` (kappa, B.3.2), :mod:`.search` (Proposition 2 and branch-and-bound, B.2),
:mod:`.estimate` (float estimates to choose alpha, Proposition 3), :mod:`.accountant`
(Corollary 1 / (6), memo and disk cache), :mod:`.certificates` (kinds `dpsgd/rho-bok` and
`dpsgd/renyi-bok` and their checker evaluators), :mod:`.commands` (`certify rho`, `certify dpsgd`).
"""
from . import certificates  # noqa: F401  (registers the checker evaluators)
from .baselines import certificates as _baseline_certificates  # noqa: F401,E402  (dpsgd/renyi-wang, -birrell)
from ..poisson import certificates as _poisson_certificates  # noqa: F401,E402  (dpsgd/renyi-poisson)
