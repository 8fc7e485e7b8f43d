"""Per-call overhead of cheap ops on a Batch of 4 tiny samples, per eval mode.

Prints µs per call for ndd_triton and, when `nvidia.dali` is importable (e.g. run this script
with a DALI venv's python), DALI dynamic mode. "caller" is the time until the call returns;
"total" includes waiting for the result (the throughput a loop of such calls reaches); "cpu" is
the process CPU time (all threads), the robust number on a busy machine.
Usage: python perf/overhead.py [--calls N]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

OPS: dict[str, Callable[[Any, Any], Any]] = {
    "flip": lambda ndd, b: ndd.flip(b, horizontal=1),
    "cast": lambda ndd, b: ndd.cast(b, dtype=ndd.float32),
    "add": lambda ndd, b: b + b,
    "transpose": lambda ndd, b: ndd.transpose(b, perm=[2, 0, 1]),
    "reductions.sum": lambda ndd, b: ndd.reductions.sum(b),
}


def measure(ndd: Any, op: Callable[[Any, Any], Any], mode_name: str, calls: int
            ) -> tuple[float, float, float]:  # fmt: skip
    """(caller, total, cpu) µs per call for `calls` calls of `op` in one eval mode."""
    batch = ndd.as_batch([np.zeros((4, 4, 3), np.uint8) for _ in range(4)], layout="HWC")
    with getattr(ndd.EvalMode, mode_name):
        for _ in range(50):  # warm-up
            out = op(ndd, batch)
        out.evaluate()
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(calls):
            out = op(ndd, batch)
        caller = time.perf_counter() - start
        out.evaluate()
        if mode_name == "deferred":
            ndd.EvalContext.current().evaluate_all()
        total = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
    return caller / calls * 1e6, total / calls * 1e6, cpu / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    libs = []
    try:
        import ndd_triton

        libs.append(("ndd_triton", ndd_triton))
    except ImportError:  # e.g. run from a DALI-only venv for the DALI rows
        pass
    try:
        import nvidia.dali.experimental.dynamic as dali_ndd

        libs.append(("DALI", dali_ndd))
    except ImportError:
        pass
    print(f"# Batch of 4 x (4,4,3) u8, {args.calls} calls; {platform.machine()}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    print(f"{'library':<11} {'op':<15} {'mode':<10} {'caller us':>10} {'total us':>9} "
          f"{'cpu us':>8}")
    for name, lib in libs:
        for op_name, op in OPS.items():
            modes = ("eager", "sync_cpu", "sync_full", "deferred") if op_name == "flip" else \
                ("eager", "sync_cpu")  # fmt: skip
            for mode in modes:
                caller, total, cpu = measure(lib, op, mode, args.calls)
                print(f"{name:<11} {op_name:<15} {mode:<10} {caller:10.1f} {total:9.1f} "
                      f"{cpu:8.1f}")


if __name__ == "__main__":
    main()
