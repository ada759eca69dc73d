"""Speed of the Watkins-Arora certificates (run: python benchmarks/bench_objpert.py).

Measures, in-process (interpreter start and imports excluded), the median over repeated runs of:
  * producing the Example 4.8 certificate: Theorem 4.1 at N = 1500 plus the Theorem C.13 search
    from N = 1 up to the first passing N = 519 (target: at most 1 s);
  * verifying that certificate from its JSON (target: at most 0.1 s);
  * the mu = 1e-3 row of Appendix C.4 (search up to N = 6079) and the C.5 benchmark, for scale.
"""

import statistics
import sys
import time

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.abspath(__file__))))

from certify.objpert import tables as T  # noqa: E402
from certify.objpert.certificates import certify_gaussian_benchmark, certify_theorem_4_1  # noqa: E402
from certify.verify import verify_text  # noqa: E402


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def main():
    p2, p3 = T.example_problem("1/100"), T.example_problem("1/1000")
    text = certify_theorem_4_1(p2, "1", "1500", "1e-7").dumps()
    rows = [
        ("Example 4.8 certificate (Thm 4.1 + C.13 search to N=519)", 1.0, lambda: certify_theorem_4_1(p2, "1", "1500", "1e-7").dumps(), 15),
        ("verify that certificate", 0.1, lambda: verify_text(text), 15),
        ("C.4 mu=1e-3 certificate (search to N=6079)", None, lambda: certify_theorem_4_1(p3, "1", None, "1e-7").dumps(), 5),
        ("C.5 Gaussian benchmark certificate", None, lambda: certify_gaussian_benchmark("5", "1").dumps(), 15),
    ]
    print(f"{'task':<58}{'median':>10}{'min':>10}  target")
    for name, target, fn, rep in rows:
        med, best = median_time(fn, rep)
        verdict = "" if target is None else (f"<= {target} s: {'ok' if med <= target else 'MISSED'}")
        print(f"{name:<58}{med:>9.4f}s{best:>9.4f}s  {verdict}")


if __name__ == "__main__":
    main()
