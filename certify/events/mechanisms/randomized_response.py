"""RandomizedResponseDpEvent(noise_parameter p, num_buckets k): keep the input with probability 1 - p, else uniform.

With a = 1 - p + p/k (the input's bucket) and b = p/k (any other bucket), the Rényi divergences at alpha > 1
(Mironov 2017, arXiv:1702.07476, Sec. 6; the formulas dp_accounting evaluates):
* REPLACE_ONE (two inputs swap buckets; symmetric):
      R(alpha) = log( a^alpha b^(1-alpha) + b^alpha a^(1-alpha) + (k - 2) b ) / (alpha - 1),
  pure epsilon log(a/b) = log(k/p - k + 1);
* REPLACE_SPECIAL (an input against the special record, whose output is uniform, U = 1/k everywhere):
      R(alpha) = max( log( (a k)^alpha/k + (k-1)(b k)^alpha/k ), log( (a k)^(1-alpha)/k + (k-1)(b k)^(1-alpha)/k ) ) / (alpha - 1),
  pure epsilon max(log(a k), -log(b k)).
Each sum is over the k outputs of P(y)^alpha Q(y)^(1-alpha) (obligation ``E-rr-sums``): exact RDP. p = 0 releases the
input (infinite RDP: refused); k = 1 or p = 1 gives 0.
"""

from __future__ import annotations

from ...balls import InputError, arb, ball, float_of, require_in
from .base import REPLACE_ONE, REPLACE_SPECIAL, Mechanism, integer_in

MAX_BUCKETS = 10**12


class RandomizedResponse(Mechanism):
    CLASS = "RandomizedResponseDpEvent"
    FIELDS = PARAMS = ("noise_parameter", "num_buckets")
    RELATIONS = frozenset({REPLACE_ONE, REPLACE_SPECIAL})
    EQUATION = "Mironov17 Sec. 6 (randomized response)"

    @classmethod
    def validate(cls, values, where):
        require_in(f"{where}.noise_parameter", values["noise_parameter"], 0, 1, "[]")
        if values["noise_parameter"] == 0:
            raise InputError(f"{where}.noise_parameter", "= 0 releases the input bucket (infinite Rényi divergence): must be in (0, 1]")
        integer_in(values, "num_buckets", where, 1, MAX_BUCKETS)
        return values

    def _ab(self):
        p, k = self["noise_parameter"], self["num_buckets"]
        return 1 - p + p / k, p / k, k

    def is_null(self) -> bool:
        return self._trivial()

    def _trivial(self) -> bool:
        return self["num_buckets"] == 1 or self["noise_parameter"] == 1

    def rdp(self, alpha, relation):
        if self._trivial():
            return arb(0)
        a, b, k = self._ab()
        al, A, B, K = ball(alpha), ball(a), ball(b), ball(k)
        if relation == REPLACE_ONE:
            s = (al * A.log() + (1 - al) * B.log()).exp() + (al * B.log() + (1 - al) * A.log()).exp() + ball((k - 2) * b)
            return s.log() / ball(alpha - 1)
        la, lb = (A * K).log(), (B * K).log()
        s1 = ((al * la).exp() + (K - 1) * (al * lb).exp()) / K
        s2 = (((1 - al) * la).exp() + (K - 1) * ((1 - al) * lb).exp()) / K
        r1, r2 = s1.log(), s2.log()
        top = r1 if r1 > r2 else (r2 if r2 > r1 else r1.union(r2))
        return top / ball(alpha - 1)

    def rdp_floats(self, alphas, relation):
        import numpy as np

        if self._trivial():
            return np.zeros(len(alphas))
        a, b, k = (float_of(x) for x in self._ab())
        la, lb = np.log(a), np.log(b)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if relation == REPLACE_ONE:
                terms = [alphas * la + (1 - alphas) * lb, alphas * lb + (1 - alphas) * la]
                s = np.logaddexp(*terms)
                if k > 2:
                    s = np.logaddexp(s, np.log((k - 2) * b))
                return s / (alphas - 1)
            lk = np.log(k)
            r = [np.logaddexp(x * (la + lk) - lk, np.log(k - 1) + x * (lb + lk) - lk) if k > 1 else x * 0 for x in (alphas, 1 - alphas)]
            return np.maximum(*r) / (alphas - 1)

    def pure_epsilon(self, relation):
        if self._trivial():
            return arb(0)
        a, b, k = self._ab()
        if relation == REPLACE_ONE:
            return (ball(a) / ball(b)).log()
        x, y = ball(a * k).log(), -ball(b * k).log()
        return x if x > y else (y if y > x else x.union(y))
