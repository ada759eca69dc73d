"""The Python entry points take exact numbers (str, int, Fraction, fmpq), refuse floats, and validate like the CLI."""

from fractions import Fraction

import pytest

from certify.balls import InputError, fmpq
from certify.dpsgd.accountant import certify_dpsgd, certify_rho
from certify.dpsgd.baselines.certificates import certify_baseline
from certify.dpsgd.problem import Problem
from certify.objpert import calibrate as K
from certify.objpert import tables as T
from certify.objpert.certificates import certify_gaussian_benchmark, certify_theorem_4_1
from certify.objpert.problem import make_loss
from certify.objpert_rdp.certificates import certify_curve
from certify.verify import verify_text

GOOD = dict(p="1/100", sigma="2", steps=1000, delta="1e-6")


@pytest.mark.parametrize(
    "field,value,needle",
    [
        ("steps", -5, "steps: must be an integer >= 1, got -5"),
        ("steps", 0, "steps"),
        ("steps", "10.5", "steps"),
        ("steps", 1000.0, "float"),
        ("delta", 2, "delta: must be in (0, 1)"),
        ("delta", 1e-6, "float"),
        ("p", 0.01, "float"),
        ("p", 1, "p: must be in (0, 1)"),
        ("sigma", 0, r"sigma: must be >= 1/500"),
        ("sigma", 2.0, "float"),
    ],
)
def test_certify_dpsgd_validates(field, value, needle):
    args = dict(GOOD, **{field: value})
    with pytest.raises(InputError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        certify_dpsgd(**args)


@pytest.mark.parametrize(
    "kw,needle",
    [
        (dict(alpha=1), "alpha"),
        (dict(alpha=300), "alpha"),
        (dict(alpha=8.0), "float"),
        (dict(gamma=0), "gamma"),
        (dict(gamma=2), "gamma"),
        (dict(gamma=1e-9), "float"),
        (dict(extra_inputs={"note": "x"}), "extra_inputs"),
        (dict(extra_inputs={"batch_size": "6", "dataset_size": "6000"}), "disagrees"),
    ],
)
def test_certify_dpsgd_validates_options(kw, needle):
    with pytest.raises(InputError, match=needle):
        certify_dpsgd(**GOOD, **kw)


def test_certify_dpsgd_accepts_every_exact_type():
    texts = certify_dpsgd("1/100", "2", "1000", "1e-6", alpha=8).certificate.dumps()
    for p, s, t, d in [
        (Fraction(1, 100), Fraction(2), 1000, Fraction(1, 10**6)),
        (fmpq(1, 100), fmpq(2), 1000, fmpq(1, 10**6)),
        ("0.01", "2", "1e3", "0.000001"),
    ]:
        assert certify_dpsgd(p, s, t, d, alpha=8).certificate.dumps() == texts
    assert verify_text(texts).ok


def test_certify_rho_validates_problem():
    with pytest.raises(InputError, match="float"):
        certify_rho(Problem(8, 0.01, 2))
    with pytest.raises(InputError, match="alpha"):
        certify_rho(Problem(1, fmpq(1, 100), fmpq(2)))
    with pytest.raises(InputError, match="p: must be in"):
        certify_rho(Problem(8, fmpq(3, 2), fmpq(2)))
    with pytest.raises(InputError, match="gamma"):
        certify_rho(Problem(8, fmpq(1, 100), fmpq(2)), gamma="-1")


@pytest.mark.parametrize(
    "kw,needle",
    [
        (dict(steps=-1000), "steps"),
        (dict(steps=0), "steps"),
        (dict(delta="2"), "delta"),
        (dict(p=0.01), "float"),
        (dict(alpha=1), "alpha"),
    ],
)
def test_certify_baseline_validates(kw, needle):
    args = dict(p="1/100", sigma="2", steps=1000, delta="1e-6", alpha=8)
    args.update(kw)
    for column in ("wang", "birrell"):
        with pytest.raises(InputError, match=needle):
            certify_baseline(column, **args)
    with pytest.raises(InputError, match="column"):
        certify_baseline("moments", "1/100", "2", 1000, "1e-6")


def test_objpert_and_referee_producers_refuse_floats():
    p = T.example_problem("1/100")
    with pytest.raises(InputError, match="float"):
        certify_theorem_4_1(p, 1.0)
    with pytest.raises(InputError, match="iterations"):
        certify_theorem_4_1(p, "1", -3)
    with pytest.raises(InputError, match="--delta"):
        certify_theorem_4_1(p, "1", None, "2")
    with pytest.raises(InputError, match="float"):
        certify_gaussian_benchmark(5.0, "1")
    with pytest.raises(InputError, match="epsilon"):
        certify_gaussian_benchmark("5", "1/100")
    with pytest.raises(InputError, match="float"):
        certify_curve("1", "2", "1/4", "1", alpha=3.0)
    loss = make_loss("logistic")
    with pytest.raises(InputError, match="float"):
        K.certify_corollary_4_13(0.5, "1e-6", "0.05", "3", 200000, 50, "1", loss)
    with pytest.raises(InputError, match="float"):
        K.certify_calibration_c13(p, 1.0, "1e-7", 1500)
    with pytest.raises(InputError, match="iterations"):
        K.certify_calibration_c13(p, "1", "1e-7", 0)
    assert verify_text(certify_theorem_4_1(p, Fraction(1), Fraction(1500), Fraction(1, 10**7)).dumps()).ok
