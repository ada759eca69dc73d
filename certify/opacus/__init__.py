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

The same call registers ``"certified-pld"`` (:class:`~certify.opacus.accountant.CertifiedPldAccountant`): the
certified PLD accountant (:mod:`certify.pld`, kind ``pld/dpsgd``) of a one-phase history, 4-7% tighter than the
Rényi bound and slower (a query takes from a fraction of a second to about a minute at small noise).

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
#: the name of the certified PLD variant (``PrivacyEngine(accountant=MECHANISM_PLD)``), registered by the same call
MECHANISM_PLD = "certified-pld"

__all__ = ["MECHANISM", "MECHANISM_PLD", "register", "CertifiedAccountant", "CertifiedPldAccountant"]


def register() -> type:
    """Register :class:`CertifiedAccountant` in Opacus's accountant registry under ``"certified"``, and
    :class:`CertifiedPldAccountant` (the certified PLD, one phase) under ``"certified-pld"``.

    Idempotent (a second call does nothing). Raises ``ImportError`` naming the ``opacus`` extra when Opacus
    is not installed, and ``ValueError`` when another class already holds one of the names (nothing is then
    registered under the other). Returns the Rényi class.
    """
    try:
        from opacus.accountants import create_accountant, register_accountant
    except ImportError as err:  # pragma: no cover - exercised only without Opacus
        raise ImportError(f"certify.opacus needs Opacus: pip install 'certify[opacus]' ({err})") from None
    from .accountant import CertifiedAccountant, CertifiedPldAccountant

    ours = {MECHANISM: CertifiedAccountant, MECHANISM_PLD: CertifiedPldAccountant}
    free = []
    for name, cls in ours.items():  # every name checked before any is registered
        try:
            held = type(create_accountant(mechanism=name))
        except ValueError:  # not registered yet
            free.append(name)
            continue
        if held is not cls:
            raise ValueError(f"Opacus accountant name {name!r} is already registered to {held.__module__}.{held.__qualname__}")
    for name in free:
        register_accountant(name, ours[name])
    return CertifiedAccountant


def __getattr__(name: str):
    if name in ("CertifiedAccountant", "CertifiedPldAccountant"):  # imports Opacus (and torch) only when asked for
        from . import accountant

        return getattr(accountant, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
