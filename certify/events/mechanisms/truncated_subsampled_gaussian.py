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

**Rényi bound** (dp_accounting's RdpAccountant has none). The same five steps hold for the functional
E_a(P || Q) = exp((a - 1) D_a(P || Q)), a > 1, in place of H_gamma: it is jointly convex (an f-divergence, f(t) = t^a) and
non-increasing under post-processing, E_a(P || P) = 1 <= E_a(Q || P), and the labelled mixture's is the weighted sum.
So D_a <= log((1 - w) e^((a-1) e_1) + w e^((a-1) e_2)) / (a - 1), e_1, e_2 the Rényi divergences of PSG(q, z) and
PSG(q, z/2) at order a (MTZ19 Sec. 3.3, :func:`certify.poisson.rdp.rdp_ball`, both directions: obligation
``P-remove-dominates-add``); increasing in w because e_2 >= e_1 (a larger shift), and in e_1, e_2 (balls: outward).

Not certified: REPLACE_SPECIAL (the special record occupies a batch slot: truncation then displaces a real record, and
the neighbouring outputs are no add/remove pair, so step 1 does not apply) and REPLACE_ONE. Edge cases: q = 0 or
B = 0 release nothing (null: dropped like a NoOp, as dp_accounting's PLDAccountant); z = 0 otherwise is refused
(non-private). n = 0 is NOT null here (dp_accounting drops it): when the dataset holding x may have n + 1 records, n = 0
is D = {}, D' = {x}, whose release is PSG(q, z) itself, and the theorem gives exactly that (w = P(Bin(0, q) >= B) = 0).

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
    EQUATION = "certify's labelled-mixture pair (certify.events.mechanisms.truncated_subsampled_gaussian; MTZ19 Sec. 3.3 per component)"
    UPPER_ONLY = (
        "the truncated subsampled Gaussian is bounded by certify's labelled-mixture pair (1 - w) PSG(q, z) + w PSG(q, z/2): an upper bound only"
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
        if q == 0 or B == 0:
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
        return self["sampling_probability"] == 0 or self["truncated_batch_size"] == 0

    # ---- the Rényi accountant (module docstring: "Rényi bound") --------------------------------------------
    def _parts(self):
        """(PSG(q, z), PSG(q, z/2)) as PoissonSampledGaussian mechanisms and the weight w (a BinomialTail)."""
        from ..pld_pairs import BinomialTail
        from .poisson_sampled import PoissonSampledGaussian

        q, z = self["sampling_probability"], self["noise_multiplier"]
        psg = [PoissonSampledGaussian.make({"sampling_probability": q, "noise_multiplier": s}, {}, "event") for s in (z, z / 2)]
        return psg, BinomialTail(int(self["dataset_size"].p), q, int(self["truncated_batch_size"].p))

    def rdp(self, alpha, relation):
        """log((1 - w) e^((a-1) e_1) + w e^((a-1) e_2)) / (a - 1), in balls (upper endpoint valid: increasing in e_1, e_2
        and, as e_2 >= e_1, in w; every ball outward)."""
        from ...balls import arb, ball

        (p1, p2), w = self._parts()
        e1, e2 = p1.rdp(alpha, relation), p2.rdp(alpha, relation)
        a1 = ball(alpha - 1)
        wb, cb = w.enclose(), type(w)(w.n, w.q, w.B, upper=False).enclose()
        k1, k2 = e1 * a1, e2 * a1
        top = k1.max(k2)
        return (top + (cb * (k1 - top).exp() + wb * (k2 - top).exp()).log()) / a1 if wb.upper() > 0 else e1 + arb(0)

    def _combine(self, c1, c2, alphas):
        import numpy as np

        from ...balls import workprec

        _, w = self._parts()
        with workprec(64):
            wf = float(w.enclose().upper().mid())  # a choice (the order); the bound is rdp()
        if wf <= 0:
            return c1
        wf = min(wf, 1.0)
        a1 = alphas - 1
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            lw, l1w = np.log(wf), (np.log1p(-wf) if wf < 1 else -np.inf)
            return np.logaddexp(l1w + a1 * c1, lw + a1 * c2) / a1

    def rdp_floats(self, alphas, relation):
        (p1, p2), _ = self._parts()
        return self._combine(p1.rdp_floats(alphas, relation), p2.rdp_floats(alphas, relation), alphas)

    def rdp_floats_fine(self, alphas, relation):
        (p1, p2), _ = self._parts()
        return self._combine(p1.rdp_floats_fine(alphas, relation), p2.rdp_floats_fine(alphas, relation), alphas)

    def work_seconds(self, alpha, prec):
        """Two Poisson-subsampled Gaussians' (certify.poisson.rdp.work_seconds) and the weight's terms (3 us each)."""
        (p1, _), w = self._parts()
        return 2 * p1.work_seconds(alpha, prec) + 3e-6 * w.terms(prec)
