"""Test set-up: the emulated gpu and the Triton interpreter, enabled before anything imports triton.

`NDD_TRITON_TEST_DEVICE=cuda` runs the same tests on a real CUDA device instead (compiled Triton
kernels, torch.cuda streams, nvImageCodec when installed): the check for machines with a GPU.
"""

import os
import sys

REAL_CUDA = os.environ.get("NDD_TRITON_TEST_DEVICE") == "cuda"
if REAL_CUDA:
    os.environ.pop("NDD_TRITON_EMULATE_GPU", None)
    os.environ.pop("TRITON_INTERPRET", None)
else:
    os.environ["NDD_TRITON_EMULATE_GPU"] = "1"
    os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "golden"))
sys.path.insert(0, HERE)

# Record every Triton launch of the session: tests/test_kernels_compile.py compiles each distinct
# (kernel, signature, constexprs) for real CUDA targets.
from ndd_triton.kernels.gpu import _tables  # noqa: E402

_tables.LAUNCH_LOG = []


def pytest_sessionfinish(session, exitstatus):
    """With NDD_TRITON_LAUNCH_LOG=path, save this session's compile jobs (used when the compile
    check runs alone)."""
    path = os.environ.get("NDD_TRITON_LAUNCH_LOG")
    if path and _tables.LAUNCH_LOG:
        import json

        from test_kernels_compile import launch_jobs

        with open(path, "w") as f:
            json.dump(launch_jobs(_tables.LAUNCH_LOG), f)
