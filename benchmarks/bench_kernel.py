"""Speed of the second checker (certify_kernel) against `certify verify` on the same certificates.

    python benchmarks/bench_kernel.py [--runs 5]

For each certificate, each checker runs in a fresh Python process (imports excluded from the timing, every
process-level memo empty: the first check of a file, which is what an auditor runs), ``--runs`` times; the
medians are printed in milliseconds with their ratio (kernel / certify). A second column pair times the
command lines (``python -m certify verify FILE`` and ``python -m certify_kernel FILE``, imports included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TIMER = """
import json, sys, time
doc = json.load(open(sys.argv[1]))
if sys.argv[2] == "kernel":
    import certify_kernel
    t = time.perf_counter(); v = certify_kernel.check_document(doc); status = v.status
else:
    from certify.verify import spec_for, verify_document
    spec_for(doc["kind"])  # the kind's module imported before timing, as the kernel's are
    t = time.perf_counter(); status = verify_document(doc).exit_code
print(time.perf_counter() - t, status)
"""


def certificates() -> dict:
    from certify import api
    from certify.objpert import tables as T
    from certify.objpert.certificates import certify_theorem_4_1
    from certify.verify import spec_for

    def poisson(**kw):
        return api.dpsgd_epsilon(sampling="poisson", adjacency="add-remove", **kw).certificate.to_json()

    def bok(**kw):
        return api.dpsgd_epsilon(sampling="fixed-size", adjacency="replace-one", **kw).certificate.to_json()

    phases = [{"sampling_rate": "0.01", "noise_multiplier": "1", "steps": 100}, {"sampling_rate": "0.02", "noise_multiplier": "2", "steps": 300}]
    return {
        "poisson example (alpha 37/4)": json.loads(spec_for("dpsgd/renyi-poisson").example().dumps()),
        "poisson alpha 64": poisson(sampling_rate="0.05", noise_multiplier="1.5", steps=200, delta="1e-5", alpha="64"),
        "poisson alpha 1024": poisson(sampling_rate="0.001", noise_multiplier="20", steps=10**6, delta="1e-9", alpha="1024"),
        "poisson schedule (2 phases)": poisson(schedule=phases, delta="1e-6"),
        "poisson-fails example (270 orders)": json.loads(spec_for("dpsgd/renyi-poisson-fails").example().dumps()),
        "objpert Example 4.8 + C.13 (518 failures)": json.loads(spec_for("objpert/theorem-4.1").example().dumps()),
        "objpert Thm 4.1, N = 1500": certify_theorem_4_1(T.example_problem("1/100"), "1", iterations=1500).to_json(),
        "poisson default q=0.02 s=0.6 T=5e4 (5/4)": poisson(sampling_rate="0.02", noise_multiplier="0.6", steps=50000, delta="1e-5"),
        "poisson default Opacus CIFAR-10 (99/16)": poisson(sampling_rate="1/196", noise_multiplier="1.1", steps=19600, delta="1e-5"),
        "bok p=1/100 s=2 T=1000 (max at u = 0)": bok(sampling_rate="1/100", noise_multiplier="2", steps=1000, delta="1e-6"),
        "bok p=1/20 s=3/2 T=500 (max at u = 1/2)": bok(sampling_rate="1/20", noise_multiplier="3/2", steps=500, delta="1e-5"),
        **events_certificates(),
    }


def events_certificates() -> dict:
    from certify.accounting import calibrate_noise
    from certify.events.accountant import certify_events
    from certify.events.ledger import ledger_of

    def e(cls, **fields):
        return {"class_name": cls, **fields}

    sampled = e("PoissonSampledDpEvent", sampling_probability="1/100", event=e("GaussianDpEvent", noise_multiplier="11/10"))
    mixed = e("ComposedDpEvent", events=[e("SelfComposedDpEvent", count=1000, event=sampled), e("LaplaceDpEvent", noise_multiplier="2")])
    finite = e("ComposedDpEvent", events=[e("ZCDpEvent", rho="1/100"), e("RandomizedResponseDpEvent", noise_parameter="1/2", num_buckets=4)])
    laplace = e("SelfComposedDpEvent", count=10, event=e("LaplaceDpEvent", noise_multiplier="$noise"))
    return {
        "events/rdp Poisson x1000 + Laplace (69/8)": json.loads(certify_events(ledger_of(mixed, "add-remove"), delta="1e-5").dumps()),
        "events/rdp zCDP + randomized response": json.loads(certify_events(ledger_of(finite, "replace-one"), delta="1e-5").dumps()),
        "events/rdp-fails Laplace x10 (270 orders)": json.loads(calibrate_noise(laplace, "1", "1e-5").failing.dumps()),
    }


def _in_process(path: str, which: str) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", TIMER, path, which], capture_output=True, text=True, env=env, check=True).stdout.split()
    return float(out[0]), int(out[1])


def _cli(path: str, which: str) -> float:
    env = dict(os.environ, PYTHONPATH=ROOT)
    args = ["-m", "certify_kernel", path] if which == "kernel" else ["-m", "certify", "verify", path]
    t = time.perf_counter()
    subprocess.run([sys.executable, *args], capture_output=True, env=env)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"{'certificate':44} {'certify ms':>10} {'kernel ms':>10} {'ratio':>6}  {'CLI certify s':>13} {'CLI kernel s':>12}  verdicts")
    with tempfile.TemporaryDirectory() as tmp:
        for label, doc in certificates().items():
            path = os.path.join(tmp, "c.json")
            with open(path, "w") as fh:
                json.dump(doc, fh)
            times = {w: [_in_process(path, w) for _ in range(runs)] for w in ("certify", "kernel")}
            cli = {w: statistics.median(_cli(path, w) for _ in range(max(1, runs // 2))) for w in ("certify", "kernel")}
            med = {w: 1000 * statistics.median(t for t, _ in times[w]) for w in times}
            verdicts = {w: times[w][0][1] for w in times}
            print(
                f"{label:44} {med['certify']:10.1f} {med['kernel']:10.1f} {med['kernel'] / med['certify']:6.1f}  "
                f"{cli['certify']:13.2f} {cli['kernel']:12.2f}  {verdicts['certify']}/{verdicts['kernel']}"
            )


if __name__ == "__main__":
    main()
