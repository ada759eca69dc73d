"""The regularized GLM of Watkins-Arora, Section 3 and Theorem 4.1: inputs and public constants.

A :class:`GLMProblem` is a frozen description made of exact rationals (dp_accounting's DpEvent
idea: the mechanism as data). :func:`constants` turns it into the balls every bound uses:

* Section 3.1: L = mu + L2 zeta^2 (Lemma B.1), M = L3 zeta^3 (Lemma B.2), Delta_H = 2 L2 zeta^2,
  G = 2 L1 zeta / n (Lemma B.5), d* = min{d, n+1} (2);
* Section 3.2: rho = 1 - eta mu;
* Theorem 4.1: r_u = sigma (sqrt(d*) + u), r' = r_u + 2 L G / mu, R-bar = (r' + L1 zeta)/mu,
  B = 1/mu (item 2 of Lemma A.9).

Everything exact stays an exact rational; only sqrt(d*) and the logistic L3 = 1/(6 sqrt 3) are
balls, evaluated at the working precision in force when :func:`constants` is called.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..balls import exact_in, InputError, arb, ball, exact, exact_str, fmpq


@dataclass(frozen=True)
class Loss:
    """Constants of Assumptions 2 and 3: |l'| <= L1, 0 <= l'' <= L2, l'' is L3-Lipschitz."""

    name: str
    L1: fmpq
    L2: fmpq
    L3: fmpq | None  # None: the logistic value 1/(6 sqrt 3), not rational

    def L3_ball(self) -> arb:
        if self.L3 is None:
            return 1 / (6 * arb(3).sqrt())
        return ball(self.L3)

    def L3_text(self) -> str:
        return "1/(6*sqrt(3))" if self.L3 is None else exact_str(self.L3)


def make_loss(name: str | None, L1=None, L2=None, L3=None) -> Loss:
    """A preset (``logistic``) or a custom loss from exact L1 > 0, L2 > 0, L3 > 0."""
    if name not in (None, "custom"):
        if name != "logistic":
            raise InputError("--loss", f"unknown loss {name!r}; choose 'logistic' or give --L1 --L2 --L3")
        if any(v is not None for v in (L1, L2, L3)):
            raise InputError("--loss", "a preset fixes L1, L2, L3; drop --L1/--L2/--L3 or use --loss custom")
        return Loss("logistic", fmpq(1), fmpq(1, 4), None)
    if L1 is None or L2 is None or L3 is None:
        raise InputError("--loss", "give --loss logistic, or all of --L1, --L2, --L3 for a custom loss")
    l1 = exact_in(L1, "--L1", 0, shown="> 0 (bound on |l'|)")
    l2 = exact_in(L2, "--L2", 0, shown="> 0 (bound on l'')")
    l3 = exact_in(L3, "--L3", 0, shown="> 0 (Lipschitz constant of l''; the threshold (7) divides by min{1, MG/L})")
    return Loss("custom", l1, l2, l3)


@dataclass(frozen=True)
class GLMProblem:
    """Public inputs of Theorem 4.1 (Watkins-Arora), all exact.

    ``sigma`` is the noise standard deviation; it may be given directly or as the noise multiplier
    sigma/G (``noise_multiplier``), in which case sigma = multiplier * G exactly.
    """

    n: int
    d: int
    mu: fmpq
    zeta: fmpq
    loss: Loss
    sigma: fmpq
    u: fmpq
    eta: fmpq  # step size, default 1/L
    noise_multiplier: fmpq | None = None  # recorded when sigma was given as sigma/G

    # ---- exact derived constants (Section 3.1) ----
    @property
    def L(self) -> fmpq:
        """Smoothness L = mu + L2 zeta^2 (Lemma B.1)."""
        return self.mu + self.loss.L2 * self.zeta**2

    @property
    def G(self) -> fmpq:
        """Gradient sensitivity G = 2 L1 zeta / n (Lemma B.5)."""
        return 2 * self.loss.L1 * self.zeta / self.n

    @property
    def Delta_H(self) -> fmpq:
        """Delta_H = 2 L2 zeta^2 (Section 3.1)."""
        return 2 * self.loss.L2 * self.zeta**2

    @property
    def d_star(self) -> int:
        """d* = min{d, n + 1} (2)."""
        return min(self.d, self.n + 1)

    @property
    def rho(self) -> fmpq:
        """Contraction factor rho = 1 - eta mu (Section 3.2)."""
        return 1 - self.eta * self.mu

    def inputs(self) -> dict[str, str]:
        """The exact inputs as text, as recorded in certificates."""
        d = {
            "n": str(self.n),
            "d": str(self.d),
            "mu": exact_str(self.mu),
            "zeta": exact_str(self.zeta),
            "loss": self.loss.name,
            "L1": exact_str(self.loss.L1),
            "L2": exact_str(self.loss.L2),
            "L3": self.loss.L3_text(),
            "sigma": exact_str(self.sigma),
            "u": exact_str(self.u),
            "eta": exact_str(self.eta),
        }
        if self.noise_multiplier is not None:
            d["noise_multiplier"] = exact_str(self.noise_multiplier)
        return d


def make_problem(*, n, d, mu, zeta, loss: Loss, u, sigma=None, noise_multiplier=None, eta=None) -> GLMProblem:
    """Parse and validate the inputs of Theorem 4.1; raise InputError naming the bad parameter."""
    n_, d_ = positive_int(n, "--n"), positive_int(d, "--d")
    mu_ = exact_in(mu, "--mu", 0, what="regularization")
    zeta_ = exact_in(zeta, "--zeta", 0, what="feature bound")
    u_ = exact_in(u, "--u", 0, None, "[)", what="truncation parameter")
    L = mu_ + loss.L2 * zeta_**2
    G = 2 * loss.L1 * zeta_ / n_
    if (sigma is None) == (noise_multiplier is None):
        raise InputError("--sigma", "give exactly one of --sigma and --noise-multiplier (sigma/G)")
    nm = None
    if sigma is not None:
        sigma_ = exact_in(sigma, "--sigma", 0, what="noise standard deviation")
    else:
        nm = exact_in(noise_multiplier, "--noise-multiplier", 0, what="sigma/G")
        sigma_ = nm * G
    if eta is None:
        eta_ = 1 / L
    else:
        eta_ = exact_in(eta, "--eta", 0, 1 / L, "(]", shown=f"in (0, 1/L] = (0, {exact_str(1 / L)}] with eta*mu < 1")
        if eta_ <= 0 or eta_ > 1 / L:
            also = f"; also eta*mu = {exact_str(eta_ * mu_)} >= 1" if eta_ * mu_ >= 1 else ""
            raise InputError(
                "--eta",
                f"step size must satisfy 0 < eta <= 1/L = {exact_str(1 / L)} "
                f"(L = mu + L2 zeta^2 = {exact_str(L)}) and eta*mu < 1, "
                f"got {exact_str(eta_)}{also}",
            )
    if eta_ * mu_ >= 1:
        raise InputError("--eta", f"eta*mu must be < 1 (Section 3.2), got eta*mu = {exact_str(eta_ * mu_)}")
    return GLMProblem(n_, d_, mu_, zeta_, loss, sigma_, u_, eta_, nm)


#: the loss names a certificate may record: a preset whose constants the evaluator knows, or "custom" (the
#: constants L1, L2, L3 recorded beside it are the user's; nothing is proved about which loss has them)
LOSS_NAMES = ("logistic", "custom")


def loss_from_inputs(inputs: dict[str, str]) -> Loss:
    """The loss of a certificate's recorded inputs: ``logistic`` with exactly its constants, or ``custom``."""
    name = inputs.get("loss")
    if name not in LOSS_NAMES:
        raise InputError("loss", f"must be one of {', '.join(LOSS_NAMES)} (a preset, or custom constants), got {str(name)[:40]!r}")
    if name == "logistic":
        if (inputs.get("L1"), inputs.get("L2"), inputs.get("L3")) != ("1", "1/4", "1/(6*sqrt(3))"):
            raise InputError("loss", "the logistic loss has L1 = 1, L2 = 1/4, L3 = 1/(6*sqrt(3)): its constants were altered")
        return make_loss("logistic")
    return make_loss("custom", inputs["L1"], inputs["L2"], inputs["L3"])


def problem_from_inputs(inputs: dict[str, str]) -> GLMProblem:
    """Rebuild a problem from a certificate's recorded inputs (the checker's entry point)."""
    loss = loss_from_inputs(inputs)
    problem = make_problem(
        n=inputs["n"], d=inputs["d"], mu=inputs["mu"], zeta=inputs["zeta"], loss=loss, u=inputs["u"], sigma=inputs["sigma"], eta=inputs["eta"]
    )
    if "noise_multiplier" in inputs:
        nm = exact(inputs["noise_multiplier"], "noise_multiplier")
        if nm * problem.G != problem.sigma:
            raise InputError("inputs", "noise_multiplier does not equal sigma/G")
        problem = GLMProblem(problem.n, problem.d, problem.mu, problem.zeta, problem.loss, problem.sigma, problem.u, problem.eta, nm)
    return problem


def positive_int(value, name: str) -> int:
    """An exact integer >= 1 (sizes n, d and iteration counts N)."""
    return exact_in(value, name, 1, None, "[)", integer=True, shown=">= 1")


@dataclass(frozen=True)
class Constants:
    """Balls of the public constants of Theorem 4.1 at one working precision."""

    L: arb
    M: arb
    G: arb
    Delta_H: arb
    eta: arb
    mu: arb
    rho: arb
    sigma: arb
    r_u: arb
    r_prime: arb
    R_bar: arb
    B: arb
    L1_zeta: arb
    min_1_MG_over_L: arb


def constants(problem: GLMProblem) -> Constants:
    """The constants of Section 3 and Theorem 4.1 as balls (exact where the value is rational)."""
    L, G, mu = ball(problem.L), ball(problem.G), ball(problem.mu)
    M = problem.loss.L3_ball() * ball(problem.zeta**3)  # Lemma B.2: M = L3 zeta^3
    sigma = ball(problem.sigma)
    r_u = sigma * (arb(problem.d_star).sqrt() + ball(problem.u))  # r_u = sigma (sqrt(d*) + u)
    r_prime = r_u + ball(2 * problem.L * problem.G / problem.mu)  # r' = r_u + 2 L G / mu
    L1_zeta = ball(problem.loss.L1 * problem.zeta)
    R_bar = (r_prime + L1_zeta) / mu  # R-bar = (r' + L1 zeta)/mu
    B = ball(1 / problem.mu)  # B = 1/mu
    return Constants(
        L=L,
        M=M,
        G=G,
        Delta_H=ball(problem.Delta_H),
        eta=ball(problem.eta),
        mu=mu,
        rho=ball(problem.rho),
        sigma=sigma,
        r_u=r_u,
        r_prime=r_prime,
        R_bar=R_bar,
        B=B,
        L1_zeta=L1_zeta,
        min_1_MG_over_L=arb(1).min(M * G / L),
    )
