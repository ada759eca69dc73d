"""The referee report on arXiv:2411.13682: the objective-perturbation Renyi curve (Corollary 5.2)
as a certified accountant (``certify objpert-rdp``).

Modules: ``curve`` (the Renyi bound, its zCDP constant and (eps, delta) profile in balls),
``certificates`` (producer and evaluator of the ``referee/objpert-rdp`` certificate), ``commands``
(the CLI). The hand calculations behind the curve are checked in :mod:`certify.proofs.referee`.
"""
from . import certificates  # noqa: F401  (registers the certificate kind with the checker)
