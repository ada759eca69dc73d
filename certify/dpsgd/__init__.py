"""Bok (2026), "Can Rényi accountants beat lossless accountants for DP-SGD?": certified accountant.

Modules follow the paper: :mod:`.problem` (inputs of (5)), :mod:`.mixture` (point bounds, B.3.1),
:mod:`.curvature` (kappa, B.3.2), :mod:`.search` (Proposition 2 and branch-and-bound, B.2),
:mod:`.estimate` (float estimates to choose alpha, Proposition 3), :mod:`.accountant`
(Corollary 1 / (6), memo and disk cache), :mod:`.certificates` (kinds `dpsgd/rho-bok` and
`dpsgd/renyi-bok` and their checker evaluators), :mod:`.commands` (`certify rho`, `certify dpsgd`),
:mod:`.small_p` (the p^2 term of Proposition 5 with a rigorous remainder, for tiny p), :mod:`.proofs` (the
proof obligations of the paper's hand calculations), :mod:`.tables_hook` (Tables 1-6 for ``certify tables``).
"""

# registry hooks (see certify/registry.py)
KEY = "bok"
TITLE = "Bok (2026), Renyi vs lossless accountants for DP-SGD"
COMMANDS = {"rho": "certify.dpsgd.commands", "dpsgd": "certify.dpsgd.commands"}
KINDS = {
    "dpsgd/rho-bok": "certify.dpsgd.certificates",
    "dpsgd/renyi-bok": "certify.dpsgd.certificates",
    "dpsgd/renyi-wang": "certify.dpsgd.baselines.certificates",
    "dpsgd/renyi-birrell": "certify.dpsgd.baselines.certificates",
}
PROOFS = "certify.dpsgd.proofs"
TABLES = "certify.dpsgd.tables_hook"
