"""Certified Rényi accounting of Poisson-sampled DP-SGD under add/remove adjacency.

Modules follow the accounting: :mod:`.rdp` (Mironov, Talwar, Zhang 2019: the binomial sum in balls,
fractional orders by the convexity chord, float estimates for choosing alpha), :mod:`.schedule` (the run
as data: contract + phases, JSON/CSV files), :mod:`.certificates` (kind ``dpsgd/renyi-poisson`` and its
checker), :mod:`.accountant` (composition, conversion, choice of alpha), :mod:`.ecosystem` (Opacus
histories, dp_accounting events), :mod:`.commands` (the ``certify dpsgd`` contract options).
"""
from . import calibrate, certificates, fixed_size  # noqa: F401  (register the checker evaluators)
