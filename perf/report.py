"""Run the benchmark scripts in perf/ and print their tables (`make bench`).

Scripts (each prints its own table, side by side with the alternatives it finds installed):
overhead.py, bench_decode.py, bench_geometry.py, bench_rotate.py, bench_color.py,
bench_random.py, bench_rn50.py. The pytest-benchmark modules (bench_arithmetic.py,
bench_tensor_ops.py, bench_reductions.py) run with
`python -m pytest perf/bench_arithmetic.py --benchmark-only`.
Measured tables and the machines they came from are in perf/README.md.
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ["overhead.py", "bench_decode.py", "bench_geometry.py", "bench_rotate.py",
           "bench_color.py", "bench_random.py", "bench_rn50.py"]  # fmt: skip


def main() -> None:
    """Run every script in turn (a failing script is reported, the others still run)."""
    for name in SCRIPTS:
        print(f"\n== perf/{name}", flush=True)
        result = subprocess.run([sys.executable, os.path.join(HERE, name)], check=False)
        if result.returncode:
            print(f"(perf/{name} exited with {result.returncode})")


if __name__ == "__main__":
    main()
