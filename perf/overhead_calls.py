"""Python function calls per op call for perf/overhead.py's ops and modes (cProfile).

Deterministic where timings on a shared machine are not: compare two trees with
`PYTHONPATH=<tree> python perf/overhead_calls.py` (perf/README.md, "Per-call overhead").
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overhead  # perf/ is not a package: imported from its folder

import ndd_triton as ndd


def calls_per_op(calls: int = 200) -> dict[str, float]:
    """{"op/mode": Python function calls per op call} (warm plan cache, results evaluated)."""
    batch = ndd.batch([np.zeros((4, 4, 3), np.uint8) for _ in range(4)], layout="HWC")
    found = {}
    for name, op in overhead.OPS.items():
        for mode in overhead.MODES.get(name, overhead.DEFAULT_MODES):
            with getattr(ndd.EvalMode, mode):
                for _ in range(50):
                    out = op(ndd, batch)
                out.evaluate()
                profile = cProfile.Profile()
                profile.enable()
                for _ in range(calls):
                    out = op(ndd, batch)
                out.evaluate()
                profile.disable()
            found[f"{name}/{mode}"] = pstats.Stats(profile).total_calls / calls  # type: ignore[attr-defined]
    return found


if __name__ == "__main__":
    print(f"{'op':<15} {'mode':<10} {'calls':>7}")
    for key, value in calls_per_op().items():
        op_name, mode_name = key.split("/")
        print(f"{op_name:<15} {mode_name:<10} {value:7.1f}")
