"""Run every benchmark script in perf/ (those with a `main()`) and print their tables.

`make bench` runs this. pytest-benchmark modules (`perf/bench_*.py`) run with
`pytest perf/bench_x.py --benchmark-only`.
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ["overhead.py"]


def main() -> None:
    scripts = SCRIPTS + sorted(f for f in os.listdir(HERE) if f.startswith("script_") and
                               f.endswith(".py"))  # fmt: skip
    for name in scripts:
        print(f"\n== perf/{name}")
        sys.stdout.flush()
        subprocess.run([sys.executable, os.path.join(HERE, name)], check=False)


if __name__ == "__main__":
    main()
