"""Provenance notes (certify/provenance.py): what certify writes it can read back, and a note that does not
describe the recorded value is refused (by the producer's validators and by `certify verify` alike)."""

from __future__ import annotations

import random
import struct
import sys
from fractions import Fraction

import pytest

from certify.balls import InputError, exact_str, fmpq
from certify.provenance import binary_float_note, check_notes, noted_value, ratio_note, replace_one_noise_note


def _floats():
    rng = random.Random(19)
    fixed = [0.01, 1.1, 1e-5, 5e-324, sys.float_info.max, sys.float_info.min, 0.1 + 0.2, 2.0**-1074 * 3]
    return fixed + [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(62)))[0] for _ in range(200)]


@pytest.mark.parametrize("x", _floats()[:8])
def test_binary_float_note_round_trip_fixed(x):
    q, note = binary_float_note(x, "Opacus")
    assert Fraction(int(q.p), int(q.q)) == Fraction(x)
    assert noted_value(note, "sampling_rate") == q
    check_notes({"source": "Opacus history", "sampling_rate": exact_str(q), "sampling_rate.note": note}, ("sampling_rate",))


def test_binary_float_note_round_trip_random():
    for x in _floats()[8:]:
        if x <= 0 or x != x or x in (float("inf"),):
            continue
        q, note = binary_float_note(x, "dp_accounting")
        assert noted_value(note, "sampling_rate") == q, x


def test_other_notes_round_trip():
    assert noted_value(ratio_note(fmpq(100), fmpq(10000)), "sampling_rate") == fmpq(1, 100)
    z, zn = binary_float_note(1.0, "dp_accounting")
    assert noted_value(replace_one_noise_note(z, zn), "noise_multiplier") == 2
    assert noted_value(replace_one_noise_note(fmpq(3, 2), None), "noise_multiplier") == 3


@pytest.mark.parametrize(
    "inputs",
    [
        {"sampling_rate": "1/100", "sampling_rate.note": binary_float_note(0.01, "Opacus")[1]},  # the float's exact value is not 1/100
        {"sampling_rate": "1/100", "sampling_rate.note": "binary float 0.01 from Opacus; exact binary value 1/100 used"},  # 1/100 is no float
        {"sampling_rate": "11/10", "sampling_rate.note": "binary float 1.1 from Opacus; exact binary value 11/10 used"},
        {
            "sampling_rate": exact_str(binary_float_note(0.01, "Opacus")[0]),
            "sampling_rate.note": binary_float_note(0.01, "Opacus")[1].replace("0.01", "0.5", 1),
        },
        {"noise_multiplier": "3", "noise_multiplier.note": replace_one_noise_note(fmpq(1), None)},  # sigma = 2z = 2, not 3
        {"sampling_rate": "1/99", "sampling_rate.note": ratio_note(fmpq(100), fmpq(10000))},
        {"sampling_rate": "1", "sampling_rate.note": "typed by hand"},
        {"sampling_rate": "1", "sampling_rate.note": "binary float nan from x; exact binary value 1 used"},
        {"sampling_rate": "1", "sampling_rate.note": 5},
        {"g.note": binary_float_note(0.5, "Opacus")[1], "sampling_rate": "1"},  # names no input field
        {"sampling_rate.note": binary_float_note(0.5, "Opacus")[1]},  # the noted field is absent
    ],
)
def test_untrue_or_unknown_notes_are_refused(inputs):
    with pytest.raises(InputError):
        check_notes(inputs, ("sampling_rate", "noise_multiplier"))


def test_partial_inputs_of_a_producer():
    """A producer's extra inputs carry notes before the noted fields are added: not compared until then."""
    note = binary_float_note(0.5, "Opacus")[1]
    check_notes({"source": "Opacus history", "sampling_rate.note": note}, ("sampling_rate",), partial=True)
    with pytest.raises(InputError):
        check_notes({"source": "Opacus history", "sampling_rate": "1/3", "sampling_rate.note": note}, ("sampling_rate",), partial=True)


@pytest.mark.parametrize(
    "inputs",
    [
        # a note on a field, or under a contract, where certify never writes it (each value itself is right)
        {"sampling": "poisson", "adjacency": "add-remove", "sampling_rate": "2", "sampling_rate.note": replace_one_noise_note(fmpq(1), None)},
        {"sampling": "poisson", "adjacency": "add-remove", "noise_multiplier": "2", "noise_multiplier.note": replace_one_noise_note(fmpq(1), None)},
        {"sampling": "poisson", "adjacency": "add-remove", "sampling_rate": "1/100", "sampling_rate.note": ratio_note(fmpq(1), fmpq(100))},
        {"sampling": "fixed-size", "adjacency": "replace-one", "delta": "1/100", "delta.note": ratio_note(fmpq(1), fmpq(100))},
        {"steps": exact_str(binary_float_note(1000.0, "Opacus")[0]), "steps.note": binary_float_note(1000.0, "Opacus")[1]},
        {"delta": exact_str(binary_float_note(0.5, "Opacus")[0]), "delta.note": binary_float_note(0.5, "x" * 200)[1]},
        {"delta": exact_str(binary_float_note(0.5, "Opacus")[0]), "delta.note": binary_float_note(0.5, "opacus")[1]},
    ],
)
def test_note_on_a_field_or_contract_certify_never_writes_it_on_is_refused(inputs):
    with pytest.raises(InputError):
        check_notes(inputs, ("sampling_rate", "noise_multiplier", "steps", "delta"))


def test_notes_where_certify_writes_them():
    fixed = {"sampling": "fixed-size", "adjacency": "replace-one"}
    check_notes({**fixed, "sampling_rate": "1/100", "sampling_rate.note": ratio_note(fmpq(1), fmpq(100))}, ("sampling_rate",))
    check_notes({**fixed, "noise_multiplier": "2", "noise_multiplier.note": replace_one_noise_note(fmpq(1), None)}, ("noise_multiplier",))
    q, note = binary_float_note(1e-5, "the caller")
    check_notes({"sampling": "poisson", "adjacency": "add-remove", "delta": exact_str(q), "delta.note": note}, ("delta",))


@pytest.mark.parametrize(
    "source, library", [("schedule", "Opacus"), ("command line", "Opacus"), ("Opacus history", "dp_accounting"), ("dp_accounting event", "Opacus")]
)
def test_a_note_names_a_library_its_source_hands_over(source, library):
    q, note = binary_float_note(1.1, library)
    with pytest.raises(InputError, match="under source"):
        check_notes({"source": source, "noise_multiplier": exact_str(q), "noise_multiplier.note": note}, ("noise_multiplier",))
