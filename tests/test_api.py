"""certify.api: exact inputs in, certified epsilon + certificate out; Opacus- and dp_accounting-shaped inputs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import pytest

from certify import api
from certify.balls import InputError, ball_endpoints
from certify.verify import verify_document

POISSON = dict(sampling="poisson", adjacency="add-remove")


def _verified(result):
    rep = verify_document(result.certificate.to_json())
    assert rep.ok, rep.problems
    return result


def test_dpsgd_epsilon_poisson():
    r = _verified(api.dpsgd_epsilon(**POISSON, sampling_rate="0.01", noise_multiplier="1.1", steps=1000, delta="1e-5"))
    assert isinstance(r.epsilon, Fraction)
    hi = ball_endpoints(r.ball)[1]
    assert r.epsilon == Fraction(int(hi.p), int(hi.q))
    assert r.epsilon_float >= r.epsilon and r.epsilon_float - float(r.epsilon) < 1e-15
    assert r.certificate.kind == "dpsgd/renyi-poisson" and r.accountant == "renyi"
    assert 1.7117 < r.epsilon < 1.7118  # the default (a fractional order by its integral); dp_accounting's float: 1.71177
    assert "poisson sampling, add-remove adjacency" in r.statement


def test_dpsgd_epsilon_fixed_size_calls_bok():
    r = _verified(
        api.dpsgd_epsilon(
            sampling="fixed-size", adjacency="replace-one", sampling_rate="1/100", noise_multiplier=2, steps=100, delta=Fraction(1, 10**5), alpha=9
        )
    )
    assert r.certificate.kind == "dpsgd/renyi-bok" and r.accountant == "bok" and r.alpha == 9
    assert r.certificate.inputs["sampling"] == "fixed-size" and r.certificate.inputs["adjacency"] == "replace-one"
    w = api.dpsgd_epsilon(
        sampling="fixed-size",
        adjacency="replace-one",
        sampling_rate="0.01",
        noise_multiplier="2",
        steps=100,
        delta="1e-5",
        accountant="wang",
        alpha=9,
    )
    assert w.certificate.kind == "dpsgd/renyi-wang" and w.epsilon >= r.epsilon


@pytest.mark.parametrize(
    "kw,field",
    [
        (dict(sampling_rate=0.01), "sampling_rate"),  # plain floats are refused
        (dict(noise_multiplier=1.1), "noise_multiplier"),
        (dict(delta=1e-5), "delta"),
        (dict(sampling_rate="0"), "sampling_rate"),
        (dict(sampling_rate="1.01"), "sampling_rate"),
        (dict(noise_multiplier="0"), "noise_multiplier"),
        (dict(steps=0), "steps"),
        (dict(delta="1"), "delta"),
        (dict(sampling="shuffle"), "shuffl"),
        (dict(adjacency="replace-one"), "not certified"),
        (dict(sampling="fixed-size"), "not certified"),
        (dict(accountant="bok"), "accountant"),
        (dict(accountant="pld"), "accountant"),
    ],
)
def test_dpsgd_epsilon_refuses(kw, field):
    args = dict(POISSON, sampling_rate="0.01", noise_multiplier="1.1", steps=10, delta="1e-5")
    args.update(kw)
    with pytest.raises(InputError) as err:
        api.dpsgd_epsilon(**args)
    assert field in str(err.value)


def test_dpsgd_epsilon_schedule():
    phases = [{"sampling_rate": "0.01", "noise_multiplier": "1.1", "steps": 500}, {"sampling_rate": "0.02", "noise_multiplier": "0.9", "steps": 200}]
    r = _verified(api.dpsgd_epsilon(**POISSON, schedule=phases, delta="1e-5"))
    assert r.certificate.inputs["phases"] == "2"
    with pytest.raises(InputError, match="either a schedule"):
        api.dpsgd_epsilon(**POISSON, schedule=phases, steps=3, delta="1e-5")
    with pytest.raises(InputError, match="mixed contracts"):
        api.dpsgd_epsilon(**POISSON, schedule={"contract": {"sampling": "fixed-size", "adjacency": "replace-one"}, "phases": phases}, delta="1e-5")


def test_opacus_accountant_three_phases():
    acc = api.OpacusAccountant()
    for nm, sr, n in [(1.1, 0.01, 300), (0.9, 0.02, 200), (2.5, 0.1, 50)]:
        for _ in range(n):
            acc.step(noise_multiplier=nm, sample_rate=sr)
    assert acc.history == [(1.1, 0.01, 300), (0.9, 0.02, 200), (2.5, 0.1, 50)] and len(acc) == 550
    r = _verified(acc.get_epsilon(delta=1e-5))
    inp = r.certificate.inputs
    assert inp["phases"] == "3" and inp["delta.note"].startswith("binary float 1e-05")
    assert inp["phase[0].sampling_rate"] == "5764607523034235/576460752303423488"  # Fraction(0.01), not 1/100
    assert "binary float 0.01" in inp["phase[0].sampling_rate.note"]
    # the same run given exactly at the binary values certifies the same epsilon
    exact = api.dpsgd_epsilon(
        **POISSON,
        schedule=[{"sampling_rate": Fraction(sr), "noise_multiplier": Fraction(nm), "steps": n} for nm, sr, n in acc.history],
        delta=Fraction(1e-5),
    )
    assert exact.epsilon == r.epsilon
    other = api.OpacusAccountant()
    other.load_state_dict(acc.state_dict())
    assert other.history == acc.history


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_opacus_refuses_nan_inf(bad):
    acc = api.OpacusAccountant()
    with pytest.raises(InputError, match="NaN"):
        acc.step(noise_multiplier=bad, sample_rate=0.01)
    with pytest.raises(InputError, match="NaN"):
        acc.step(noise_multiplier=1.0, sample_rate=bad)
    acc.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(InputError, match="NaN"):
        acc.get_epsilon(bad)
    with pytest.raises(InputError, match="entry 0"):
        api.OpacusAccountant().load_state_dict({"history": [[bad, 0.01, 3]]})
    with pytest.raises(InputError, match="empty"):
        api.OpacusAccountant().get_epsilon(1e-5)


# duck-typed events (dp_accounting need not be installed for the API to read its events)
@dataclass
class GaussianDpEvent:
    noise_multiplier: float


@dataclass
class PoissonSampledDpEvent:
    sampling_probability: float
    event: object


@dataclass
class SelfComposedDpEvent:
    event: object
    count: int


@dataclass
class LaplaceDpEvent:
    noise_multiplier: float


def test_event_without_dp_accounting():
    ev = SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1)), 1000)
    r = _verified(api.dp_event_epsilon(ev, 1e-5, "ADD_OR_REMOVE_ONE"))
    assert 1.7117 < r.epsilon < 1.7118
    with pytest.raises(InputError, match="LaplaceDpEvent is not supported"):
        api.dp_event_epsilon(SelfComposedDpEvent(LaplaceDpEvent(1.0), 3), 1e-5, "ADD_OR_REMOVE_ONE")
    with pytest.raises(InputError, match="NaN"):
        api.from_dp_event(PoissonSampledDpEvent(math.nan, GaussianDpEvent(1.0)), "ADD_OR_REMOVE_ONE")


def test_nested_dp_event_certifies_and_verifies():
    dpa = pytest.importorskip("dp_accounting")
    ev = dpa.ComposedDpEvent(
        [
            dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 300),
            dpa.SelfComposedDpEvent(
                dpa.ComposedDpEvent(
                    [
                        dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(0.9)),
                        dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(2.5)), 2),
                    ]
                ),
                25,
            ),
            dpa.GaussianDpEvent(10.0),
            dpa.NoOpDpEvent(),
        ]
    )
    rel = dpa.NeighboringRelation.ADD_OR_REMOVE_ONE
    sch = api.from_dp_event(ev, rel)
    assert [p.steps for p in sch.phases] == [300, 25, 50, 1]
    r = _verified(api.dp_event_epsilon(ev, 1e-5, rel))
    # agrees with dp_accounting's own RDP accountant (its orders differ: ours is within a few percent)
    from dp_accounting import rdp

    acc = rdp.RdpAccountant(neighboring_relation=rel)
    acc.compose(ev)
    assert abs(float(r.epsilon) / acc.get_epsilon(1e-5) - 1) < 0.05


def test_dp_event_refusals():
    dpa = pytest.importorskip("dp_accounting")
    add, rep = dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, dpa.NeighboringRelation.REPLACE_ONE
    pois = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1))
    wor = dpa.SampledWithoutReplacementDpEvent(10000, 100, dpa.GaussianDpEvent(1.0))
    with pytest.raises(InputError, match="LaplaceDpEvent"):
        api.dp_event_epsilon(dpa.LaplaceDpEvent(1.0), 1e-5, add)
    with pytest.raises(InputError, match="not certified"):  # one relation cannot certify both samplings
        api.from_dp_event(dpa.ComposedDpEvent([wor, pois]), rep)
    with pytest.raises(InputError, match="not certified"):
        api.from_dp_event(pois, rep)  # poisson + replace-one
    with pytest.raises(InputError, match="not certified"):
        api.from_dp_event(wor, add)  # fixed-size + add-remove
    with pytest.raises(InputError, match="REPLACE_SPECIAL"):
        api.from_dp_event(pois, dpa.NeighboringRelation.REPLACE_SPECIAL)
    with pytest.raises(InputError, match="NaN|inf"):
        api.dp_event_epsilon(pois, math.inf, add)


def test_sampled_without_replacement_is_bok_with_sigma_2z():
    dpa = pytest.importorskip("dp_accounting")
    ev = dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(10000, 100, dpa.GaussianDpEvent(1.0)), 100)
    r = _verified(api.dp_event_epsilon(ev, 1e-5, dpa.NeighboringRelation.REPLACE_ONE, alpha=9))
    assert r.certificate.kind == "dpsgd/renyi-bok"
    inp = r.certificate.inputs
    assert inp["noise_multiplier"] == "2" and "sigma = 2z" in inp["noise_multiplier.note"]
    assert inp["sampling_rate"] == "1/100"


def test_shared_sub_events_are_walked_once():
    """A DAG of a few dozen dp_accounting events standing for 2^40 steps converts at once (an event shared by
    several parents is walked once; repeated steps merge into one phase), and a flat list of 2 x 10^4 copies of
    one step is one phase."""
    import time

    dpa = pytest.importorskip("dp_accounting")
    step = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1))
    ev = step
    for _ in range(40):
        ev = dpa.ComposedDpEvent([ev, ev])
    t0 = time.perf_counter()
    sch = api.from_dp_event(ev, dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    assert time.perf_counter() - t0 < 2
    assert len(sch.phases) == 1 and sch.phases[0].steps == 2**40
    flat = api.from_dp_event(dpa.ComposedDpEvent([step] * 2 * 10**4), dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    assert len(flat.phases) == 1 and flat.phases[0].steps == 2 * 10**4
    mixed = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([step, dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(1.1))]), 3)])
    assert [p.steps for p in api.from_dp_event(mixed, dpa.NeighboringRelation.ADD_OR_REMOVE_ONE).phases] == [3, 3]
