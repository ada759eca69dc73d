"""Certified Rényi accounting of Poisson-sampled DP-SGD under add/remove adjacency.

Modules follow the accounting: :mod:`.rdp` (Mironov, Talwar, Zhang 2019: the binomial sum in balls,
fractional orders by the convexity chord, float estimates for choosing alpha), :mod:`.schedule` (the run
as data: contract + phases, JSON/CSV files), :mod:`.certificates` (kind ``dpsgd/renyi-poisson`` and its
checker), :mod:`.accountant` (composition, conversion, choice of alpha), :mod:`.ecosystem` (Opacus
histories, dp_accounting events), :mod:`.commands` (the ``certify dpsgd`` contract options).
"""

# registry hooks (see certify/registry.py)
KEY = "mtz-poisson"
TITLE = "Mironov, Talwar, Zhang (2019), the sampled Gaussian mechanism (certify.poisson)"
COMMANDS = {"calibrate-dpsgd": "certify.poisson.commands"}
KINDS = {
    "dpsgd/renyi-poisson": "certify.poisson.certificates",
    "dpsgd/renyi-poisson-fails": "certify.poisson.calibrate",
    "dpsgd/renyi-bok-schedule": "certify.poisson.fixed_size",
}
PROOFS = "certify.poisson.proofs"
