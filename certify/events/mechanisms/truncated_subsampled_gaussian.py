"""TruncatedSubsampledGaussianDpEvent(dataset_size n, sampling_probability q, truncated_batch_size B, noise_multiplier z):
certified by the PLD accountant only, under ADD_OR_REMOVE_ONE, by certify's own dominating pair (an UPPER bound of the
mechanism's privacy curve; dp_accounting's construction rests on arXiv:2508.15089, which could not be checked here).

The mechanism (dp_accounting's docstring): Poisson-sample each record with probability q; if more than B are sampled,
keep a uniformly random B-subset; release the sum of the kept records' contributions g(.) (norm <= 1) + N(0, z^2 I).

**Theorem.** Under ADD_OR_REMOVE_ONE, in both directions, the mechanism is dominated by the labelled mixture

    (1 - w) PSG(q, z)  (+)  w PSG(q, z/2),        w = P(Bin(n, q) >= B),

PSG(r, s) the Poisson-subsampled Gaussian pair at rate r and noise s ((1 - r) N(0, 1) + r N(1/s, 1) vs N(0, 1) and the
reverse: :class:`certify.pld.pairs.MixtureCurve`), "(+)" the labelled mixture (the label is released):
H_gamma = (1 - w) H_gamma(PSG(q, z)) + w H_gamma(PSG(q, z/2)) for every gamma >= 0 (obligation
``E-pld-labelled-mixture``; :class:`certify.pld.curves.WeightedCurve`).

*Proof.* 1. Let D' = D + {x}, S ~ Poisson(q) the sampled subset of D and I ~ Bern(q) x's indicator, independent. Given
S = s let P_s be the law of M(D) and R_s that of M(D') when x is sampled: M(D') given s is Q_s = (1 - q) P_s + q R_s
(x unsampled: the same batch). M(D) = E_s P_s and M(D') = E_s Q_s, so (M(D'), M(D)) is the post-processing "forget s" of
the labelled pair ((s, Q_s), (s, P_s)), whose H_gamma is E_s H_gamma(Q_s || P_s); by data processing
H_gamma(M(D') || M(D)) <= E_s H_gamma(Q_s || P_s), and the same with the two arguments swapped.
2. |s| < B: no truncation with or without x: P_s = N(f(s), z^2 I), R_s = N(f(s) + g(x), z^2 I), f(s) = sum of g over s.
The pair is PSG(q) at shift |g(x)| / z <= 1 / z (projected on the direction of g(x): the orthogonal coordinates have
the same law under both and are independent of the rest).
3. k = |s| >= B: T(s) is a uniform B-subset of s (T(s) = s when k = B) and T(s + x) holds x with probability
B / (k + 1), and is then x with a uniform (B - 1)-subset of s, else a uniform B-subset of s. A uniform B-subset of s is
t' + {y}, t' a uniform (B - 1)-subset and y uniform in s minus t' (each B-subset arises from B pairs, of equal
probability: obligation ``E-pld-tsg-subset``). With r = q B / (k + 1) <= q,
Q_s = (1 - q) P_s + q (B/(k+1)) E_t' N(f(t') + g(x)) + q (1 - B/(k+1)) P_s = E_{t',y}[(1 - r) N(f(t') + g(y)) + r N(f(t') + g(x))]
and P_s = E_{t',y} N(f(t') + g(y)) (obligation ``E-pld-tsg-decomposition``): a labelled mixture over (t', y) of
Poisson-subsampled Gaussian pairs at rate r with shift g(x) - g(y), of norm <= 2: PSG(r) at shift <= 2 / z.
4. Monotonicity. A smaller shift c Delta (0 <= c <= 1) is the post-processing of shift Delta by the channel
u -> c u + N(0, 1 - c^2) (applied to both measures), so PSG at a smaller shift is dominated, both directions. A smaller
rate r <= q: the pair at r is ((r/q) Q_q + (1 - r/q) P, P); by joint convexity of H_gamma,
H_gamma(Q_r || P) <= (r/q) H_gamma(Q_q || P) + (1 - r/q) H_gamma(P || P) and H_gamma(P || P) = (1 - gamma)_+ <=
H_gamma(Q_q || P) (every pair's curve is >= (1 - gamma)_+); the same for H_gamma(P || Q_r). Hence every component of
step 2 is dominated by PSG(q, z) and every one of step 3 by PSG(q, z/2) (shift 2/z = 1/(z/2)), which dominates
PSG(q, z) (a larger shift).
5. So H_gamma <= (1 - w_D) f_1 + w_D f_2 with w_D = P(|S| >= B) = P(Bin(|D|, q) >= B), f_1 <= f_2 the curves of
PSG(q, z) and PSG(q, z/2). (1 - w) f_1 + w f_2 is non-decreasing in w (f_2 >= f_1), and w_D <= w for any
|D| <= n (a binomial tail is non-decreasing in the number of trials): whether the dataset holding x has n or n + 1
records, w = P(Bin(n, q) >= B) gives a dominating pair. []

dp_accounting uses P(Bin(n - 1, q) >= B) (the dataset holding x has n records) and, for the truncated component, a
smaller averaged rate with its REPLACE_ONE pair at noise z/2 (the theorem of arXiv:2508.15089); certify's pair is its
own and may be looser or tighter (tests/test_events_tsg.py compares). The certificate's epsilon bracket is of the exact
epsilon of THIS pair: an upper bound of the mechanism's.

Not certified: REPLACE_SPECIAL (the special record occupies a batch slot: truncation then displaces a real record, and
the neighbouring outputs are no add/remove pair, so step 1 does not apply), REPLACE_ONE, and the Rényi accountant (no
Rényi bound is evaluated; dp_accounting's RdpAccountant has none). Edge cases as dp_accounting's PLDAccountant: q = 0,
B = 0 or n = 0 release nothing (null: dropped like a NoOp); z = 0 otherwise is refused (non-private).

Inputs: dataset_size and truncated_batch_size integers in [0, 10^18], sampling_probability in [0, 1], noise_multiplier
in [0, 10^30]; the work of the weight's enclosure (:class:`certify.events.pld_pairs.BinomialTail`) is decided when the
event is read: more than 10^6 binomial terms (B near the mean of a binomial with n q (1 - q) above about 10^9) is refused.
"""

from __future__ import annotations

from ...balls import InputError, exact_str, require_in
from .base import ADD_REMOVE, ANY, MAX_PARAM, Mechanism

#: the largest dataset_size and truncated_batch_size
MAX_SIZE = 10**18


def _integer(values: dict, name: str, where: str) -> None:
    v = values[name]
    if v.q != 1 or not 0 <= v <= MAX_SIZE:
        raise InputError(f"{where}.{name}", f"must be an integer in [0, 10^18], got {exact_str(v)}"[:200])


class TruncatedSubsampledGaussian(Mechanism):
    CLASS = "TruncatedSubsampledGaussianDpEvent"
    FIELDS = PARAMS = ("dataset_size", "sampling_probability", "truncated_batch_size", "noise_multiplier")
    #: read under any relation so that the refusal of the others names why (:meth:`read_nested`)
    RELATIONS = ANY
    NESTED = True
    EQUATION = "PLD only (certify's labelled-mixture pair: certify.events.mechanisms.truncated_subsampled_gaussian)"
    UPPER_ONLY = "TruncatedSubsampledGaussian: certify's dominating labelled-mixture pair (an upper bound)"
    NO_RDP = (
        "TruncatedSubsampledGaussianDpEvent has no certified Rényi bound here (dp_accounting's RdpAccountant has none either); use --accountant pld"
    )
    NOT_ADD_REMOVE = (
        "TruncatedSubsampledGaussianDpEvent is certified under add-remove only (by certify's labelled-mixture pair, an upper "
        "bound); not under {rel}: a replaced or special record occupies a batch slot, so truncation can displace another "
        "record and the neighbouring outputs are no add/remove pair"
    )

    @classmethod
    def validate(cls, values, where):
        from ..pld_pairs import BinomialTail

        _integer(values, "dataset_size", where)
        require_in(f"{where}.sampling_probability", values["sampling_probability"], 0, 1, "[]")
        _integer(values, "truncated_batch_size", where)
        require_in(f"{where}.noise_multiplier", values["noise_multiplier"], 0, MAX_PARAM, "[]")
        n, q, B = values["dataset_size"], values["sampling_probability"], values["truncated_batch_size"]
        if q == 0 or B == 0 or n == 0:
            return values
        if values["noise_multiplier"] == 0:
            raise InputError(
                f"{where}.noise_multiplier", "is 0 with a positive sampling probability: the release is non-private (its epsilon is infinite)"
            )
        BinomialTail(int(n.p), q, int(B.p)).check_work(f"{where}.truncated_batch_size")
        return values

    @classmethod
    def read_nested(cls, view, relation: str):
        if relation != ADD_REMOVE:
            raise InputError(view.where, cls.NOT_ADD_REMOVE.format(rel=relation))
        return cls.read(view)

    def is_null(self) -> bool:
        return self["sampling_probability"] == 0 or self["truncated_batch_size"] == 0 or self["dataset_size"] == 0

    def rdp(self, alpha, relation):
        raise InputError("event", self.NO_RDP)

    def rdp_floats(self, alphas, relation):
        raise InputError("event", self.NO_RDP)
