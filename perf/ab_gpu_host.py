"""Before/after host time of one op's GPU call: two checkouts, interleaved pairs of processes.

On this 2-vCPU machine the speed of the same code drifts by up to 2x within minutes, so a
change of 10-30% in one op's host time is lost between two runs of `perf/bench_gpu_host.py`.
Here each checkout measures in its own short-lived interpreter (emulated gpu, launches and
pixel decoding no-ops: `bench_gpu_host._no_launch`), the two alternate `--pairs` times (the
order flipping each pair), and the table gives each side's median and the median and range
of the per-pair ratios new / base. Per process: the min over 7 rounds of the process CPU µs
per call (`--size tiny`: 4 x 8x8x3, 100 calls a round; `big`: 64 ragged ~500x375, 10 calls).

    python perf/ab_gpu_host.py --base /tmp/base_checkout --new . --op random_resized_crop
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import os, sys, time
os.environ["NDD_TRITON_EMULATE_GPU"] = "1"
os.environ["TRITON_INTERPRET"] = "1"
src, perf, op, size, mode = sys.argv[1:6]
sys.path.insert(0, src)
import ndd_triton as ndd  # the checkout's, before the perf helpers put theirs first
sys.path.insert(1, perf)
import bench_gpu_host
bench_gpu_host._no_launch()
fn = bench_gpu_host.make_calls(ndd, size == "big")[op]
calls = 10 if size == "big" else 100
with getattr(ndd.EvalMode, mode):
    for _ in range(calls):
        fn().evaluate()
    best = float("inf")
    for _ in range(7):
        t = time.process_time()
        for _ in range(calls):
            fn().evaluate()
        best = min(best, (time.process_time() - t) / calls * 1e6)
print(best)
"""


def measure(src: str, op: str, size: str, mode: str) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(src), HERE, op, size,
                          mode], capture_output=True, text=True, check=True)  # fmt: skip
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the checkout before the change")
    parser.add_argument("--new", default=os.path.dirname(HERE), help="the checkout after it")
    parser.add_argument("--op", action="append", help="an op of bench_gpu_host.OPS "
                        "(repeatable; default random_resized_crop)")  # fmt: skip
    parser.add_argument("--size", choices=("tiny", "big", "both"), default="both")
    parser.add_argument("--mode", default="sync_cpu")
    parser.add_argument("--pairs", type=int, default=8)
    opts = parser.parse_args()
    sizes = ("tiny", "big") if opts.size == "both" else (opts.size,)
    print(f"# host µs per GPU call (emulated, launches no-ops), {opts.mode}, {opts.pairs} "
          f"interleaved pairs; load {os.getloadavg()[0]:.1f}")
    print("| op | batch | base, median | new, median | new / base: median (min-max) |")
    print("|---|---|---:|---:|---:|")
    for op in opts.op or ["random_resized_crop"]:
        for size in sizes:
            base, new = [], []
            for p in range(opts.pairs):
                order = ((opts.base, base), (opts.new, new))
                for src, into in order if p % 2 == 0 else order[::-1]:
                    into.append(measure(src, op, size, opts.mode))
            ratios = [n / b for b, n in zip(base, new, strict=True)]
            batch = "64 ragged" if size == "big" else "4 tiny"
            print(f"| {op} | {batch} | {statistics.median(base):.0f} | "
                  f"{statistics.median(new):.0f} | {statistics.median(ratios):.2f}x "
                  f"({min(ratios):.2f}-{max(ratios):.2f}) |", flush=True)


if __name__ == "__main__":
    main()
