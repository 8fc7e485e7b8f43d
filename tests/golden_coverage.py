"""Print which golden op names are implemented and which are not (a progress report)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "golden"))
os.environ.setdefault("NDD_TRITON_EMULATE_GPU", "1")

import golden
from test_golden import implemented

if __name__ == "__main__":
    done, missing = [], []
    for op, count in golden.ops():
        (done if implemented(op) else missing).append(f"{op} ({count})")
    print(f"implemented: {len(done)} ops\n  " + ", ".join(done))
    print(f"missing: {len(missing)} ops\n  " + ", ".join(missing))
