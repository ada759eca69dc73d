"""Certified accounting inside Opacus: ``PrivacyEngine(accountant="certified")``.

One call makes the accountant known to Opacus's own registry; a training script then changes one string::

    import certify.opacus
    certify.opacus.register()                      # once, before the PrivacyEngine is created

    from opacus import PrivacyEngine
    engine = PrivacyEngine(accountant="certified")
    ...                                            # make_private, train as usual
    eps = engine.get_epsilon(1e-5)                 # certified upper bound on epsilon, a float rounded up
    cert = engine.accountant.certificate(1e-5)     # certify's Certificate of the whole history
    open("run.json", "w").write(cert.dumps())      # then: certify verify run.json

``opacus.accountants.utils.get_noise_multiplier(..., accountant="certified")`` and
``PrivacyEngine.make_private_with_epsilon`` calibrate through it unchanged.

The accountant (:class:`~certify.opacus.accountant.CertifiedAccountant`) is the Rényi accountant of the
Poisson-subsampled Gaussian under add/remove adjacency (:mod:`certify.poisson`, certificate kind
``dpsgd/renyi-poisson``): the contract Opacus accounts. Opacus hands over binary floats; each is taken at
its exact binary value and the certificate notes it (:mod:`certify.poisson.ecosystem`).

Importing this package imports neither Opacus nor torch: :func:`register` and the accountant class do
(the class is loaded on first access of ``certify.opacus.CertifiedAccountant``).
"""

from __future__ import annotations

#: the name the accountant is registered under in Opacus (``PrivacyEngine(accountant=MECHANISM)``)
MECHANISM = "certified"

__all__ = ["MECHANISM", "register", "CertifiedAccountant"]


def register() -> type:
    """Register :class:`CertifiedAccountant` in Opacus's accountant registry under ``"certified"``.

    Idempotent (a second call does nothing). Raises ``ImportError`` naming the ``opacus`` extra when Opacus
    is not installed, and ``ValueError`` when another class already holds the name ``"certified"``.
    Returns the registered class.
    """
    try:
        from opacus.accountants import create_accountant, register_accountant
    except ImportError as err:  # pragma: no cover - exercised only without Opacus
        raise ImportError(f"certify.opacus needs Opacus: pip install 'certify[opacus]' ({err})") from None
    from .accountant import CertifiedAccountant

    try:
        register_accountant(MECHANISM, CertifiedAccountant)
    except ValueError:  # the name is taken: fine if it is ours (a second call), refused otherwise
        held = type(create_accountant(mechanism=MECHANISM))
        if held is not CertifiedAccountant:
            raise ValueError(f"Opacus accountant name {MECHANISM!r} is already registered to {held.__module__}.{held.__qualname__}") from None
    return CertifiedAccountant


def __getattr__(name: str):
    if name == "CertifiedAccountant":  # imports Opacus (and torch) only when the class is asked for
        from .accountant import CertifiedAccountant

        return CertifiedAccountant
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
