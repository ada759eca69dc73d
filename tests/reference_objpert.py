"""Independent 60-digit mpmath references for Watkins-Arora (not using certify's code).

Written from the paper's displays with different evaluation routes where there is one:
nu~_N by its defining sum (22) instead of the closed form, g-bar_N by maximising g_N (36) over a
grid of h in [mu, L] plus the endpoints instead of the monotonicity argument, Q1 by quadrature
of the Gaussian tail (or phi - tQ at high precision), M from L3 written as sqrt(3)/18.
"""

from fractions import Fraction

import mpmath as mp

DPS = 60


def F(x):
    x = Fraction(x)
    return mp.mpf(x.numerator) / x.denominator


def Q(t):
    return mp.erfc(t / mp.sqrt(2)) / 2


def Q1(t):
    """Integrated tail: phi(t) - t Q(t) at extra precision (cancellation-safe for moderate t)."""
    with mp.workdps(DPS + 40):
        t = mp.mpf(t)
        return +(mp.npdf(t) - t * Q(t))


def Q1_quad(t):
    return mp.quad(lambda s: Q(s), [t, t + 1, t + 10, mp.inf])


class Ref:
    """All quantities of Theorem 4.1 / C.13 for exact inputs (Fractions / ints / decimal strings)."""

    def __init__(self, n, d, mu, zeta, L1, L2, L3, sigma, u, eta=None, logistic=False):
        mp.mp.dps = DPS
        self.n, self.d = int(n), int(d)
        self.mu, self.zeta = F(mu), F(zeta)
        self.L1, self.L2 = F(L1), F(L2)
        self.L3 = mp.sqrt(3) / 18 if logistic else F(L3)
        self.L = self.mu + self.L2 * self.zeta**2
        self.eta = 1 / self.L if eta is None else F(eta)
        self.M = self.L3 * self.zeta**3
        self.G = 2 * self.L1 * self.zeta / self.n
        self.DH = 2 * self.L2 * self.zeta**2
        self.sigma = F(sigma)
        self.u = F(u)
        self.rho = 1 - self.eta * self.mu
        self.dstar = min(self.d, self.n + 1)
        self.r_u = self.sigma * (mp.sqrt(self.dstar) + self.u)
        self.r_p = self.r_u + 2 * self.L * self.G / self.mu
        self.Rbar = (self.r_p + self.L1 * self.zeta) / self.mu
        self.B = 1 / self.mu
        self.m1 = min(mp.mpf(1), self.M * self.G / self.L)

    def threshold7(self):
        a = 2 * self.mu * self.Rbar * self.r_p / (self.G * self.sigma)
        b = 8 * self.L * self.M * self.B * self.Rbar / (mp.e * self.rho * self.mu * self.m1)
        return 2 / (self.eta * self.mu) * mp.log(max(a, b, mp.mpf(4)))

    def tau_star(self, N):
        return mp.log(1 + self.DH / (2 * self.n * self.mu)) + mp.e * self.eta * self.mu / 2 * self.m1 * N * self.rho ** (mp.mpf(N) / 2)

    def eps0(self, N):
        h = self.rho ** (mp.mpf(N) / 2)
        return self.G / self.sigma * h + self.G**2 * (1 + h) ** 2 / (2 * self.sigma**2) + self.tau_star(N)

    def delta(self, N, eps):
        eps = F(eps)
        return mp.exp(-(self.u**2) / 2) + 2 * self.G / self.sigma * Q1(self.sigma / self.G * (eps - self.eps0(N)))

    # ---- Theorem C.13 ----
    def gamma(self, N):
        return (1 - (1 - self.eta * self.L) ** N) / self.L

    def nu_tilde(self, N):
        return mp.fsum((1 - self.rho ** (N - k)) * (1 - self.rho**k) for k in range(N))

    def g(self, N, h):
        a = 1 - self.eta * h
        D = mp.fsum(a**j for j in range(N))
        return (D - N * a ** (N - 1)) / D  # mpmath: 0**0 = 1, so g_1 = 0

    def g_bar(self, N, grid=200):
        hs = [self.mu + (self.L - self.mu) * mp.mpf(k) / grid for k in range(grid + 1)]
        return max(self.g(N, h) for h in hs)

    def c13(self, N, eps, gbar=None):
        rN = self.rho**N
        gb = self.g_bar(N) if gbar is None else gbar
        corr = self.eta * self.M * self.Rbar * self.B * self.nu_tilde(N) * self.rho ** (N - 1)
        abar = self.gamma(N) - corr
        step = self.G * (1 - rN) / (self.mu * abar)
        dxi = 2 * self.mu * rN * self.Rbar
        tau = gb * mp.log(1 + self.DH / (2 * self.n * self.mu)) + 2 * corr / abar
        s = self.r_u * dxi / self.sigma**2 + (self.G + dxi) ** 2 / (2 * self.sigma**2) + tau
        eps = F(eps)
        delta = mp.exp(-(self.u**2) / 2) + 2 * self.G / self.sigma * Q1((eps - s) * self.sigma / self.G)
        return {
            "alpha_bar": abar,
            "radius_step": step,
            "Delta_xi": dxi,
            "tau": tau,
            "s_N": s,
            "delta_N": delta,
            "gamma_N": self.gamma(N),
            "nu_tilde_N": self.nu_tilde(N),
            "g_bar_N": gb,
        }


def gaussian_profile(s, eps):
    mp.mp.dps = DPS
    s, eps = F(s), F(eps)
    Phi = mp.ncdf
    return Phi(1 / (2 * s) - eps * s) - mp.exp(eps) * Phi(-1 / (2 * s) - eps * s)


def integrated_tail(s, eps):
    mp.mp.dps = DPS
    s, eps = F(s), F(eps)
    return 2 / s * Q1(s * (eps - 1 / (2 * s**2)))


def utility(ref: Ref, N, delta_S, W, beta, grad=None):
    """Section 4.3 bounds from the displays (12), Thms 4.10/4.9/4.7 and Corollary 4.11."""
    mp.mp.dps = DPS
    Ll = ref.L1 * ref.zeta
    aR = (Ll if grad is None else F(grad)) / ref.mu
    bR = 1 / ref.mu
    s, d = ref.sigma, ref.d
    rN = ref.rho**N
    eopt = ref.L / 2 * rN**2 * (bR**2 * d * s**2 + 2 * aR * bR * s * mp.sqrt(d) + aR**2) + rN * (bR * d * s**2 + aR * s * mp.sqrt(d))
    emp = d * s**2 / (2 * ref.mu) + eopt
    sample = 16 * Ll**2 * (32 + mp.log(1 / F(delta_S))) / (ref.mu * ref.n)
    pop = 2 * emp + sample
    unreg = pop + ref.mu / 2 * F(W) ** 2
    rb = s * (mp.sqrt(d) + mp.sqrt(2 * mp.log(1 / F(beta))))
    Rb = (Ll + rb) / ref.mu
    UN = rb**2 / (2 * ref.mu) + ref.L / 2 * rN**2 * Rb**2 + rN * rb * Rb
    return {
        "E_opt": eopt,
        "empirical_excess": emp,
        "sample_term": sample,
        "population_excess": pop,
        "unregularized_excess": unreg,
        "r_beta": rb,
        "R_beta": Rb,
        "U_N": UN,
        "single_release_population": 2 * UN + sample,
        "single_release_unregularized": 2 * UN + sample + ref.mu / 2 * F(W) ** 2,
    }


def corollary_4_13(eps, delta, delta_S, W, n, d, zeta, L1, L2, sigma):
    """u, mu_priv, A, mu_util of Corollary 4.13 (sigma as published)."""
    mp.mp.dps = DPS
    eps, delta, delta_S, W, zeta = F(eps), F(delta), F(delta_S), F(W), F(zeta)
    Ll = F(L1) * zeta
    u = mp.sqrt(2 * mp.log(2 / delta))
    mu_priv = F(L2) * zeta**2 / (n * (mp.exp(eps / 4) - 1))
    A = d * F(sigma) ** 2 + 16 * Ll**2 * (32 + mp.log(1 / delta_S)) / n
    return {"u": u, "mu_priv": mu_priv, "A": A, "mu_util": mp.sqrt(2 * A) / W}
