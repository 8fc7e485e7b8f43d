"""Per-call overhead of a cheap op (flip on a Batch of 4 tiny samples) in each eval mode.

Prints µs per call for ndd_triton and, when `nvidia.dali` is importable, DALI dynamic mode in the
same run. "caller" is the time until the call returns; "total" includes waiting for the result
(the throughput a loop of such calls reaches). Usage: python perf/overhead.py [--calls N]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np


def measure(ndd, mode_name: str, calls: int) -> tuple[float, float, float]:
    """(caller µs/call, total µs/call, process CPU µs/call) for `calls` flips in one mode.

    CPU time (all threads of the process) is the robust number on a busy machine.
    """
    samples = [np.zeros((4, 4, 3), np.uint8) for _ in range(4)]
    batch = ndd.as_batch(samples, layout="HWC")
    mode = getattr(ndd.EvalMode, mode_name)
    with mode:
        for _ in range(50):  # warm-up
            out = ndd.flip(batch, horizontal=1)
        out.evaluate()
        start = time.perf_counter()
        cpu_start = time.process_time()
        for _ in range(calls):
            out = ndd.flip(batch, horizontal=1)
        caller = time.perf_counter() - start
        out.evaluate()
        if mode_name == "deferred":
            ndd.EvalContext.current().evaluate_all()
        total = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
    return caller / calls * 1e6, total / calls * 1e6, cpu / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
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
    print(f"# flip on Batch(4 x 4x4x3 u8), {args.calls} calls; {platform.processor() or 'cpu'}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    print(f"{'library':<12} {'mode':<10} {'caller us/call':>15} {'total us/call':>14} "
          f"{'cpu us/call':>12}")
    for name, lib in libs:
        for mode in ("eager", "sync_cpu", "sync_full", "deferred"):
            caller, total, cpu = measure(lib, mode, args.calls)
            print(f"{name:<12} {mode:<10} {caller:15.1f} {total:14.1f} {cpu:12.1f}")


if __name__ == "__main__":
    main()
