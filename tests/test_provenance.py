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
    assert noted_value(note, "f") == q
    check_notes({"f": exact_str(q), "f.note": note}, ("f",))


def test_binary_float_note_round_trip_random():
    for x in _floats()[8:]:
        if x <= 0 or x != x or x in (float("inf"),):
            continue
        q, note = binary_float_note(x, "dp_accounting")
        assert noted_value(note, "f") == q, x


def test_other_notes_round_trip():
    assert noted_value(ratio_note(fmpq(100), fmpq(10000)), "f") == fmpq(1, 100)
    z, zn = binary_float_note(1.0, "dp_accounting")
    assert noted_value(replace_one_noise_note(z, zn), "f") == 2
    assert noted_value(replace_one_noise_note(fmpq(3, 2), None), "f") == 3


@pytest.mark.parametrize(
    "inputs",
    [
        {"f": "1/100", "f.note": binary_float_note(0.01, "Opacus")[1]},  # the float's exact value is not 1/100
        {"f": "1/100", "f.note": "binary float 0.01 from Opacus; exact binary value 1/100 used"},  # 1/100 is no float
        {"f": "11/10", "f.note": "binary float 1.1 from Opacus; exact binary value 11/10 used"},
        {"f": exact_str(binary_float_note(0.01, "O")[0]), "f.note": binary_float_note(0.01, "O")[1].replace("0.01", "0.5", 1)},
        {"f": "3", "f.note": replace_one_noise_note(fmpq(1), None)},  # sigma = 2z = 2, not 3
        {"f": "1/99", "f.note": ratio_note(fmpq(100), fmpq(10000))},
        {"f": "1", "f.note": "typed by hand"},
        {"f": "1", "f.note": "binary float nan from x; exact binary value 1 used"},
        {"f": "1", "f.note": 5},
        {"g.note": binary_float_note(0.5, "O")[1], "f": "1"},  # names no input field
        {"f.note": binary_float_note(0.5, "O")[1]},  # the noted field is absent
    ],
)
def test_untrue_or_unknown_notes_are_refused(inputs):
    with pytest.raises(InputError):
        check_notes(inputs, ("f",))


def test_partial_inputs_of_a_producer():
    """A producer's extra inputs carry notes before the noted fields are added: not compared until then."""
    note = binary_float_note(0.5, "O")[1]
    check_notes({"f.note": note}, ("f",), partial=True)
    with pytest.raises(InputError):
        check_notes({"f": "1/3", "f.note": note}, ("f",), partial=True)
