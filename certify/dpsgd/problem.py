"""The one-step problem of Bok (2026), Theorem 1 / (5): exact inputs (alpha, p, sigma).

``Problem`` is a frozen description in exact numbers (dp_accounting style: data, not behaviour);
the certifiers in :mod:`certify.dpsgd.mixture`, :mod:`certify.dpsgd.curvature` and
:mod:`certify.dpsgd.search` consume it. Delta = 2/sigma is the replace-one sensitivity in units of
the noise standard deviation (Section 2 of the paper).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..limits import cap
from ..balls import exact_in, InputError, exact_int, exact_str, fmpq, require_in
from ..validators import SIGMA_MIN, parse_delta, parse_sigma, parse_steps  # noqa: F401  (re-exported: their home is certify.validators)

ALPHA_MIN, ALPHA_MAX = 2, cap("renyi_order_bok")

#: Admissible noise: (alpha - 1) Delta^2 <= NOISE_BUDGET with Delta = 2/sigma, i.e.
#: sigma >= 2 sqrt((alpha - 1)/10^6) (0.002 at alpha = 2, 0.0053 at alpha = 8, 0.032 at alpha = 256).
#: The witnesses of the u = 0 closed form grow like exp((alpha - 1) Delta^2 / 2); beyond the budget they
#: leave the range 2^-2^20 .. 2^2^20 that certificates hold exactly (see certify.balls.MAX_EXPONENT).
NOISE_BUDGET = 10**6


#: The baseline columns (Wang, Birrell) evaluate alternating sums whose cancellation grows with sigma
#: (seconds at 10^6, minutes beyond); their admissible noise is SIGMA_MIN <= sigma <= BASELINE_SIGMA_MAX.
BASELINE_SIGMA_MAX = 10**6


def check_baseline_sigma(sigma: fmpq, name: str = "--noise-multiplier") -> None:
    if sigma > BASELINE_SIGMA_MAX:
        raise InputError(
            name,
            f"the Wang and Birrell columns need sigma in [{exact_str(SIGMA_MIN)}, 10^6] "
            f"(their bound is the delta floor long before), got {_short(sigma)}",
        )


def max_alpha(sigma: fmpq) -> int:
    """The largest admissible integer alpha <= ALPHA_MAX at this sigma ((alpha - 1) * 4/sigma^2 <= NOISE_BUDGET)."""
    a = int((1 + NOISE_BUDGET * sigma * sigma / 4).floor())
    return max(ALPHA_MIN - 1, min(ALPHA_MAX, a))


def check_noise(alpha: int, sigma: fmpq, name: str = "--noise-multiplier") -> None:
    """InputError unless (alpha - 1) (2/sigma)^2 <= NOISE_BUDGET (the admissible range of sigma at alpha)."""
    if 4 * (alpha - 1) > NOISE_BUDGET * sigma * sigma:
        need = 2 * ((alpha - 1) / NOISE_BUDGET) ** 0.5  # the message only; the test above is exact
        raise InputError(
            name,
            f"at alpha = {alpha} the noise multiplier must be >= 2 sqrt((alpha-1)/10^6) "
            f"~ {need:.4g} (the certified quantities would exceed 2^(2^20)), got "
            f"{_short(sigma)}; smaller alphas admit smaller sigma, down to {exact_str(SIGMA_MIN)}",
        )


def _short(q: fmpq) -> str:
    t = exact_str(q)
    return t if len(t) <= 40 else t[:37] + "..."


@dataclass(frozen=True)
class Problem:
    """rho(alpha, p, Delta) of (5) with Delta = 2/sigma: integer 2 <= alpha <= 256, 0 < p < 1, sigma > 0.

    Bok's symbols: ``p`` is the sampling rate b/n and ``sigma`` the noise multiplier (the noise standard
    deviation is sigma C for clipping norm C), not the standard deviation ``sigma`` of
    :class:`certify.objpert.problem.GLMProblem`.
    """

    alpha: int
    p: fmpq  # sampling rate b/n
    sigma: fmpq  # noise multiplier

    def __post_init__(self):
        check_noise(self.alpha, self.sigma)

    def __hash__(self) -> int:  # cached: Problem keys many lru caches on hot paths
        try:
            return self._hash
        except AttributeError:
            h = hash((self.alpha, self.p, self.sigma))
            object.__setattr__(self, "_hash", h)
            return h

    @property
    def delta_sens(self) -> fmpq:
        """Delta = 2/sigma (exact)."""
        return fmpq(2) / self.sigma

    def key(self) -> tuple[str, str, str]:
        return (str(self.alpha), exact_str(self.p), exact_str(self.sigma))

    def inputs(self) -> dict[str, str]:
        return {"alpha": str(self.alpha), "sampling_rate": exact_str(self.p), "noise_multiplier": exact_str(self.sigma)}


def parse_alpha(value, name: str = "--alpha") -> int:
    try:
        a = exact_int(value, name)
    except InputError as err:
        raise InputError(name, f"must be an integer in [{ALPHA_MIN}, {ALPHA_MAX}] ({err.message})") from None
    require_in(name, a, ALPHA_MIN, ALPHA_MAX, "[]", integer=True)
    return a


#: smallest admissible sampling rate: rho ~ p^2 and the search tolerance gamma ~ 1e-7 rho are recorded as
#: exact text, which stays under the 100000-digit limit of the dpsgd package down to here
P_MIN = fmpq(1, 10**40000)


def parse_p(value, name: str = "--sampling-rate") -> fmpq:
    p = exact_in(value, name, 0, 1, shown="in (0, 1), at least 1e-40000")
    if not (0 < p < 1):
        raise InputError(name, f"must be in (0, 1), got {_short(p)}")
    if p < P_MIN:
        raise InputError(name, f"must be at least 1e-40000 (the certificate records rho ~ p^2 and its tolerance as exact text), got {_short(p)}")
    return p


def parse_batch(batch, dataset, bname: str = "--batch-size", nname: str = "--dataset-size") -> fmpq:
    """p = b/n exactly, 1 <= b < n (b = n would make p = 1, outside (0, 1))."""
    b = exact_in(batch, bname, 1, None, "[)", integer=True)
    n = exact_in(dataset, nname, 2, None, "[)", integer=True)
    if b >= n:
        raise InputError(bname, f"must be smaller than the dataset size {n} (p = b/n must be in (0, 1)), got {b}")
    return fmpq(b, n)


def make_problem(alpha, p, sigma) -> Problem:
    """Parse and validate (alpha, p, sigma); the Problem itself checks the noise budget at alpha."""
    return Problem(parse_alpha(alpha), parse_p(p), parse_sigma(sigma))
