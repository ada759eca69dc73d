"""Deciding a claim: holds, not certified, or refuted.

Given a claim "(epsilon, delta)-DP for this run under this contract" (:mod:`certify.audit.claim`):

1. **Rényi first** (cheap, milliseconds). Poisson + add/remove: the certified Rényi accountant of the
   Poisson-subsampled Gaussian (:func:`certify.poisson.accountant.certify_poisson`, kind
   ``dpsgd/renyi-poisson``) is asked to prove epsilon <= epsilon_claim at the claimed delta (its headline
   claim ``dp`` then states exactly the claim). Fixed-size + replace-one: Bok's accountant
   (``dpsgd/renyi-bok``; several phases: ``dpsgd/renyi-bok-schedule``, Bok's rho per phase composed at one
   alpha). If the certificate proves it, the claim **holds**.
2. **PLD next** (seconds), when Rényi does not prove it: the certified PLD accountant
   (:func:`certify.pld.certify_pld`, kind ``pld/dpsgd``) gives eps_low <= eps(delta) <= eps_up for the
   exact curve of the contract's composed dominating pair. It takes one phase: a schedule whose phases
   all have the same (q, sigma) is merged (composition is commutative), any other schedule is not sent to
   PLD (we say so). Grids are tried coarse to fine (100 h, 10 h, h; h = ``--grid``, default 1e-4): every
   grid gives valid bounds, coarse grids are 10-100x cheaper and often decide already.
   * eps_up <= epsilon_claim: the claim **holds** (the certificate proves (eps_up, delta)-DP, and
     (eps, delta)-DP implies (eps', delta)-DP for every eps' >= eps).
   * eps_low > epsilon_claim: the certificate's claim ``tightness`` proves delta_low(eps_low) > delta for
     the composed pair, and delta(eps) is non-increasing, so the pair's delta at epsilon_claim exceeds the
     claimed delta. Under poisson + add-remove that pair is attained (see below): the claim is
     **refuted**. Under fixed-size + replace-one the pair used is the pointwise maximum of two directions
     (Bok's Proposition 1 and more), not known to be attained: the claim is then only *not certified*,
     and the summary says that the lower bound does not refute it.
3. Otherwise **not certified**: the best certified upper bound exceeds the claim and nothing refutes it.

An **event claim** (a ``dp_event`` with a contract that states only the neighbouring relation; any event the
certified event accountant reads: :mod:`certify.events`) is decided by that accountant alone (kind ``events/rdp``):
its certified epsilon at the claimed delta within the claim, the claim **holds**; otherwise it is not certified.

Why a PLD lower bound refutes a Poisson + add/remove claim. The dominating pair of one step, remove
direction, is P = (1-q) N(0,1) + q N(1/sigma, 1) vs Q = N(0,1) (add: the other order). Take a dataset in
which every example but one has zero gradient and the remaining example x has the same clipped gradient
v, |v| = C, at every parameter (e.g. a linear loss), and D' = D without x. The noisy sums DP-SGD releases
(or the iterates, which are computed from them) are then, along v, exactly T independent draws of P (for
D) or Q (for D'), and orthogonal to v identically distributed: the hockey-stick divergence of the two
output distributions equals that of the T-fold product pair (remove direction), and the swapped pair of
datasets attains the add direction. So no pair of neighbouring datasets gives more than the composed pair
(it dominates) and a worst-case pair gives exactly it (it is attained): a certified lower bound on its
delta(epsilon_claim) above the claimed delta shows the claimed (epsilon, delta) guarantee is false for
DP-SGD under that contract (releasing the noisy gradients or all iterates; the accounting of Abadi et al.
2016 and Mironov, Talwar, Zhang 2019 covers exactly that release). The tightness of this pair is the
standard fact behind tight accounting (Zhu, Dong, Wang 2022, "Optimal accounting of differential privacy
via characteristic function", dominating pairs of the subsampled Gaussian; empirically attained by the
gradient-canary adversaries of Nasr, Song, Thakurta, Papernot, Carlini 2021, "Adversary instantiation:
lower bounds for differentially private machine learning"). It does NOT say that a release of the final
model only, or a particular dataset, leaks that much.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..balls import InputError, UndecidedError, ball_endpoints, exact_str, fmpq
from ..certificate import Certificate
from ..exits import EXIT_NOT_CERTIFIED, EXIT_OK, EXIT_REFUTED
from ..poisson.schedule import Phase, Schedule
from ..records import AuditOutcome
from .claim import AuditClaim

HOLDS, NOT_CERTIFIED, REFUTED = AuditOutcome.HOLDS, AuditOutcome.NOT_CERTIFIED, AuditOutcome.REFUTED
EXIT = {HOLDS: EXIT_OK, NOT_CERTIFIED: EXIT_NOT_CERTIFIED, REFUTED: EXIT_REFUTED}
DEFAULT_GRID = "1e-4"
MAX_GRID = fmpq(1, 2)
#: PLD is not tried beyond this many steps (guard: the certified PLD accountant's cost grows with T; at
#: T = 1e6 it takes minutes, far beyond it the composition does not finish in reasonable time)
MAX_PLD_STEPS = 10**6


@dataclass
class Attempt:
    """One certified accountant run: its bounds on epsilon at the claimed delta, and its certificate."""

    accountant: str  #: "renyi" (Poisson), "bok" (fixed-size) or "pld"
    seconds: float
    epsilon_upper: fmpq | None = None
    epsilon_lower: fmpq | None = None  #: PLD only: certified lower bound on the composed pair's eps(delta)
    certificate: Certificate | None = None
    grid: fmpq | None = None
    alpha: str | None = None
    proves: bool = False  #: the certificate proves the claim
    refutes: bool = False  #: the certificate's lower bound refutes the claim (attained pair)
    note: str = ""


@dataclass
class Verdict:
    claim: AuditClaim
    outcome: AuditOutcome
    attempts: list[Attempt] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  #: why an accountant was not tried

    @property
    def exit_code(self) -> int:
        return EXIT[self.outcome]

    @property
    def deciding(self) -> Attempt | None:
        for a in self.attempts:
            if (self.outcome == HOLDS and a.proves) or (self.outcome == REFUTED and a.refutes):
                return a
        return None

    @property
    def best_upper(self) -> Attempt | None:
        ups = [a for a in self.attempts if a.epsilon_upper is not None]
        return min(ups, key=lambda a: a.epsilon_upper) if ups else None

    @property
    def best_lower(self) -> Attempt | None:
        los = [a for a in self.attempts if a.epsilon_lower is not None and a.epsilon_lower > 0]
        return max(los, key=lambda a: a.epsilon_lower) if los else None

    @property
    def evidence(self) -> Certificate | None:
        """The certificate to show for a claim that does not hold: the refuting one, else the tightest."""
        d = self.deciding
        if d is not None:
            return d.certificate
        pld = [a for a in self.attempts if a.accountant == "pld" and a.certificate is not None]
        if pld:
            return pld[-1].certificate
        b = self.best_upper
        return b.certificate if b else None


def _claims_hold(cert: Certificate, names=None, prefixes=()) -> bool:
    """Every named claim (or every claim, if names is None) and every claim starting with a prefix holds."""
    found = False
    for c in cert.claims:
        if (names is None or c.name in names) or any(c.name.startswith(p) for p in prefixes):
            found = True
            if not c.holds:
                return False
    return found


# --------------------------------------------------------------------------------------------
# Rényi (Poisson: Mironov-Talwar-Zhang; fixed-size: Bok)
# --------------------------------------------------------------------------------------------
def _renyi(claim: AuditClaim) -> Attempt:
    t0 = time.perf_counter()
    eps_text = exact_str(claim.epsilon)
    if claim.contract.sampling == "poisson":
        from ..poisson.accountant import certify_poisson, epsilon_upper

        cert = certify_poisson(claim.schedule, claim.delta)  # headline: its own certified bound
        up = epsilon_upper(cert)
        proves = False
        if up <= claim.epsilon:  # restate the conclusion as exactly the claim (same alpha, same ball)
            try:
                cert = certify_poisson(claim.schedule, claim.delta, epsilon_bound=eps_text)
                proves = _claims_hold(cert) and cert.claims[-1].rhs == eps_text
            except InputError:  # the balls did not prove epsilon <= claim: keep the certificate above
                pass
        return Attempt("renyi", time.perf_counter() - t0, up, None, cert, alpha=cert.witnesses.get("alpha"), proves=proves)
    if len(claim.schedule.phases) > 1:  # Bok's rho per phase, composed at one alpha (dpsgd/renyi-bok-schedule)
        from ..poisson.fixed_size import certify_fixed_size_schedule

        cert = certify_fixed_size_schedule(claim.schedule, claim.delta)
        up = ball_endpoints(cert.quantities["epsilon"].value)[1]
        return Attempt(
            "bok",
            time.perf_counter() - t0,
            up,
            None,
            cert,
            alpha=cert.witnesses["alpha"],
            proves=all(c.holds for c in cert.claims) and up <= claim.epsilon,
        )
    from ..api import certify_schedule

    r = certify_schedule(claim.schedule, claim.delta)
    cert = r.certificate
    up = fmpq(r.epsilon.numerator, r.epsilon.denominator)
    # Bok's certificate may carry no claim (a branch-and-bound witness): its quantity epsilon is the bound
    every_claim = all(c.holds for c in cert.claims)
    return Attempt("bok", time.perf_counter() - t0, up, None, cert, alpha=str(r.alpha), proves=every_claim and up <= claim.epsilon)


class _Skip(Exception):
    """An accountant does not apply to this claim (the reason is reported, the audit goes on)."""


# --------------------------------------------------------------------------------------------
# PLD
# --------------------------------------------------------------------------------------------
def homogeneous(schedule: Schedule) -> Phase | None:
    """The single phase equivalent to ``schedule`` if all phases share (q, sigma), else None."""
    first = schedule.phases[0]
    if all(p.sampling_rate == first.sampling_rate and p.noise_multiplier == first.noise_multiplier for p in schedule.phases):
        return Phase(first.sampling_rate, first.noise_multiplier, sum(p.steps for p in schedule.phases))
    return None


def grid_ladder(grid) -> list[fmpq]:
    """Grids tried in turn, coarse to fine: 100 h and 10 h (when at most 1/2), then h."""
    from ..pld.accountant import parse_grid

    h = parse_grid(grid, "--grid")
    return [g for g in (100 * h, 10 * h) if g <= MAX_GRID] + [h]


def _pld(claim: AuditClaim, phase: Phase, h: fmpq) -> Attempt:
    from ..pld import certify_pld

    t0 = time.perf_counter()
    cert = certify_pld(
        claim.contract, exact_str(phase.sampling_rate), exact_str(phase.noise_multiplier), phase.steps, exact_str(claim.delta), grid=exact_str(h)
    )
    up = ball_endpoints(cert.quantities["epsilon_upper"].value)[1]
    lo = ball_endpoints(cert.quantities["epsilon_lower"].value)[0]
    sound_up = _claims_hold(cert, names=("privacy",), prefixes=("dominates[",))
    sound_lo = _claims_hold(cert, names=("tightness",), prefixes=("dominated[",))
    a = Attempt("pld", time.perf_counter() - t0, up if sound_up else None, lo if sound_lo else None, cert, grid=h)
    a.proves = sound_up and up <= claim.epsilon
    below = sound_lo and lo > claim.epsilon
    if below and claim.contract.sampling == "poisson":
        a.refutes = True
    elif below:
        a.note = (
            "the certified lower bound exceeds the claim for the pointwise-maximum pair used under "
            "fixed-size + replace-one, which is not known to be attained by a pair of datasets: this does "
            "not refute the claim"
        )
    return a


# --------------------------------------------------------------------------------------------
# an event claim: the certified Rényi accountant of the event algebra (certify.events)
# --------------------------------------------------------------------------------------------
def _events(claim: AuditClaim) -> Attempt:
    """The event accountant at the claimed delta; when its bound is within the claim, the certificate restated with
    the claimed epsilon as its headline bound (issued only if the balls prove it)."""
    from ..events.accountant import certified_value, certify_events

    t0 = time.perf_counter()
    delta = exact_str(claim.delta)
    cert = certify_events(claim.ledger, delta=delta)
    up = certified_value(cert)
    proves = False
    if up <= claim.epsilon:
        restated = certify_events(claim.ledger, delta=delta, bound=exact_str(claim.epsilon))
        if all(c.holds for c in restated.claims):
            cert, proves = restated, True
    alpha = cert.witnesses.get("alpha")
    return Attempt("events-rdp", time.perf_counter() - t0, up, None, cert, alpha=alpha, proves=proves)


def audit(claim: AuditClaim, grid=DEFAULT_GRID, use_pld: bool = True) -> Verdict:
    """Decide the claim (see the module docstring). Raises InputError for bad options, UndecidedError if
    a comparison stays undecided at every precision."""
    ladder = grid_ladder(grid) if use_pld else []
    v = Verdict(claim, NOT_CERTIFIED)
    if claim.ledger is not None:
        a = _events(claim)
        v.attempts.append(a)
        v.outcome = HOLDS if a.proves else NOT_CERTIFIED
        if not a.proves:
            v.skipped.append("PLD: an event claim is audited by the certified Rényi event accountant only")
        return v
    try:
        a = _renyi(claim)
        v.attempts.append(a)
        if a.proves:
            v.outcome = HOLDS
            return v
    except _Skip as s:
        v.skipped.append(str(s))
    except InputError as err:  # outside the Rényi accountant's own ranges: PLD may still apply
        v.skipped.append(f"Rényi: {err}")
    except UndecidedError as err:
        v.skipped.append(f"Rényi: undecided ({err})")
    if not use_pld:
        v.skipped.append("PLD: not tried (--no-pld)")
        return v
    phase = homogeneous(claim.schedule)
    if phase is None:
        v.skipped.append(
            f"PLD: the certified PLD accountant takes one phase (a homogeneous schedule); this schedule "
            f"has {len(claim.schedule.phases)} phases with different (q, sigma)"
        )
        return v
    if phase.sampling_rate >= 1:
        v.skipped.append("PLD: sampling rate q = 1 (no subsampling) is outside the PLD accountant's range (0, 1)")
        return v
    if phase.steps > MAX_PLD_STEPS:
        v.skipped.append(
            f"PLD: T = {phase.steps} steps exceeds {MAX_PLD_STEPS} (guard: the certified PLD accountant would not finish in reasonable time)"
        )
        return v
    for h in ladder:
        try:
            a = _pld(claim, phase, h)
        except InputError as err:
            v.skipped.append(f"PLD at grid {exact_str(h)}: {err}")
            if err.parameter == "--grid":  # too coarse or too fine for these parameters: try the next grid
                continue
            return v  # outside the PLD accountant's ranges: no grid helps
        except UndecidedError as err:
            v.skipped.append(f"PLD at grid {exact_str(h)}: undecided ({err})")
            continue
        v.attempts.append(a)
        if a.proves:
            v.outcome = HOLDS
            return v
        if a.refutes:
            v.outcome = REFUTED
            return v
        if a.note:  # fixed-size: a lower bound above the claim; a finer grid cannot change the verdict
            return v
    return v
