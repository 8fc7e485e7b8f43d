"""Per-call overhead of cheap ops on a Batch of 4 tiny samples, per eval mode, beside DALI.

Prints process CPU µs per call (all threads; the robust number on a busy machine) for
ndd_triton and, with `--dali-python`, for DALI 2.4 dynamic mode run by that interpreter in a
subprocess. The two libraries are measured in alternating rounds and each cell is the median
over rounds, so both see the same machine load; the last column is ndd / DALI.
A "call" here is one op call plus reading nothing back: calls are issued back to back and the
last result is evaluated, so eager mode's executor work is included.
Usage: python perf/overhead.py [--calls N] [--rounds R] [--dali-python /path/to/python]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
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
MODES = {"flip": ("eager", "sync_cpu", "sync_full", "deferred")}
DEFAULT_MODES = ("eager", "sync_cpu")


def measure(ndd: Any, op: Callable[[Any, Any], Any], mode_name: str, calls: int) -> float:
    """Process CPU µs per call for `calls` calls of `op` in one eval mode."""
    # ndd.batch copies: wrapped external data (as_batch) would be read synchronously in any mode
    batch = ndd.batch([np.zeros((4, 4, 3), np.uint8) for _ in range(4)], layout="HWC")
    with getattr(ndd.EvalMode, mode_name):
        for _ in range(100):  # warm-up
            out = op(ndd, batch)
        out.evaluate()
        cpu_start = time.process_time()
        for _ in range(calls):
            out = op(ndd, batch)
        out.evaluate()
        if mode_name == "deferred":
            ndd.EvalContext.current().evaluate_all()
        cpu = time.process_time() - cpu_start
    return cpu / calls * 1e6


def one_round(ndd: Any, calls: int) -> dict[str, float]:
    """{"op/mode": µs} for every op and mode."""
    return {f"{name}/{mode}": measure(ndd, op, mode, calls)
            for name, op in OPS.items() for mode in MODES.get(name, DEFAULT_MODES)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dali-python", help="python of a venv with nvidia-dali installed")
    parser.add_argument("--dali-round", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dali_round:  # child: one DALI round, as JSON
        import nvidia.dali.experimental.dynamic as dali_ndd

        print(json.dumps(one_round(dali_ndd, args.calls)))
        return
    import ndd_triton

    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for _ in range(args.rounds):
        ours.append(one_round(ndd_triton, args.calls))
        if args.dali_python:
            out = subprocess.run([args.dali_python, __file__, "--dali-round", "--calls",
                                  str(args.calls)], check=True, capture_output=True, text=True)
            theirs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"# Batch of 4 x (4,4,3) u8, {args.calls} calls x {args.rounds} rounds (median); "
          f"{platform.machine()}, python {platform.python_version()}, numpy {np.__version__}")
    print(f"{'op':<15} {'mode':<10} {'ndd cpu us':>10} {'DALI cpu us':>11} {'ndd/DALI':>9}")
    for key in ours[0]:
        op, mode = key.split("/")
        mine = statistics.median(r[key] for r in ours)
        row = f"{op:<15} {mode:<10} {mine:10.1f}"
        if theirs:
            dali = statistics.median(r[key] for r in theirs)
            row += f" {dali:11.1f} {mine / dali:9.2f}"
        print(row)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
