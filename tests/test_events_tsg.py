"""TruncatedSubsampledGaussianDpEvent: refused by both accountants (no published statement could be checked; see
docs/events.md), with one stderr line naming the class, the two papers and the certified alternative, exit 2 and
nothing written; wherever it sits in a ledger, and through certify.accounting's dp_accounting-style interface."""

from __future__ import annotations

import json

import pytest

from certify import cli
from certify.balls import InputError
from certify.events.ledger import ledger_of


def tsg(n=10, q="0.3", b=2, z="1.5"):
    return {
        "class_name": "TruncatedSubsampledGaussianDpEvent",
        "dataset_size": n,
        "sampling_probability": q,
        "truncated_batch_size": b,
        "noise_multiplier": z,
    }


def poisson(q="0.3", z="1.5"):
    return {"class_name": "PoissonSampledDpEvent", "sampling_probability": q, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": z}}


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize("query", [["--delta", "1e-5"], ["--epsilon", "1"]])
def test_refused_by_both_accountants_one_line_nothing_written(tmp_path, capsys, accountant, query):
    path, out = tmp_path / "e.json", tmp_path / "cert.json"
    path.write_text(json.dumps({"class_name": "SelfComposedDpEvent", "count": 2, "event": tsg()}))
    assert cli.main(["account", str(path), "--accountant", accountant, *query, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    for part in ("event.event", "TruncatedSubsampledGaussianDpEvent", "2508.15089", "2411.04205", "PoissonSampledDpEvent", "docs/events.md"):
        assert part in err, part
    assert not out.exists()


@pytest.mark.parametrize("relation", ["add-remove", "replace-one", "replace-special"])
def test_refused_under_every_relation_and_located_in_a_composition(relation):
    ev = {"class_name": "ComposedDpEvent", "events": [{"class_name": "GaussianDpEvent", "noise_multiplier": "2"}, tsg()]}
    with pytest.raises(InputError) as e:
        ledger_of(ev, relation)
    assert e.value.parameter == "event.events[1]" and "TruncatedSubsampledGaussianDpEvent is refused" in str(e.value)


@pytest.mark.parametrize("fields", [{}, {"dataset_size": -1}, {"truncated_batch_size": 20}, {"sampling_probability": "2"}, {"noise_multiplier": "0"}])
def test_refused_whatever_its_fields(fields):
    """Refused before any field is read: also the degenerate and invalid parameter sets (B > n, q > 1, z = 0, n < 0)."""
    with pytest.raises(InputError, match="TruncatedSubsampledGaussianDpEvent is refused by both accountants"):
        ledger_of({**tsg(), **fields}, "add-remove")


def test_the_untruncated_alternative_named_in_the_refusal_is_certified():
    ledger = ledger_of(poisson(), "add-remove")
    assert len(ledger.entries) == 1


def test_accounting_interface_says_unsupported_for_dp_accountings_own_event():
    dp = pytest.importorskip("dp_accounting")
    from certify.accounting import PLDAccountant, RdpAccountant

    event = dp.TruncatedSubsampledGaussianDpEvent(dataset_size=10, sampling_probability=0.3, truncated_batch_size=2, noise_multiplier=1.5)
    for acc in (RdpAccountant(), PLDAccountant()):
        assert not acc.supports(event)
        with pytest.raises(InputError, match="2508.15089"):
            acc.compose(event)
