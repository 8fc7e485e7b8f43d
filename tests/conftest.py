"""Test set-up: the emulated gpu and the Triton interpreter, enabled before anything imports triton.

`NDD_TRITON_TEST_DEVICE=cuda` runs the same tests on a real CUDA device instead (compiled Triton
kernels, torch.cuda streams, nvImageCodec when installed): the check for machines with a GPU.
"""

import os
import sys

import pytest

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
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))  # kernel_compile, kernel_report

# Record every Triton launch of the session: the `compiled_kernels` fixture compiles each distinct
# (kernel, signature, constexprs) for real CUDA targets.
import kernel_compile  # noqa: E402

from ndd_triton.kernels.gpu import _tables  # noqa: E402

_tables.LAUNCH_LOG = []

# Every interpreted load and store must stay inside the kernel's tensor arguments (what a GPU
# would fault on or read garbage from): tools/interp_bounds.py
if not REAL_CUDA and os.environ.get("NDD_TRITON_CHECK_BOUNDS", "1") != "0":
    import interp_bounds

    interp_bounds.install()
    # device buffers start as 0xFF bytes, not the allocator's (often zero) pages: an element a
    # kernel never writes differs from the reference
    from ndd_triton.core import storage as _storage

    _storage.POISON_MEMORY = True


@pytest.fixture(scope="session")
def compiled_kernels():
    """(jobs, results): every kernel launch of this session compiled once for sm_80 and sm_90,
    with the sm_90 statistics (tools/kernel_compile.py). Shared by test_kernels_compile.py and
    test_kernel_report.py, which pytest runs after the op tests and golden cases. Run alone (or
    in a pytest-xdist worker, which sees only its share of the launches), the launches are read
    from NDD_TRITON_KERNEL_JOBS=FILE or glob (`make test` passes the files its parallel run
    saved), else recorded first from the op tests and golden cases in a subprocess (minutes)."""
    log = _tables.LAUNCH_LOG
    if log and not os.environ.get("PYTEST_XDIST_WORKER"):
        jobs = kernel_compile.launch_jobs(log)
    else:
        jobs = kernel_compile.load_or_record_jobs(os.environ.get("NDD_TRITON_KERNEL_JOBS"))
    return jobs, kernel_compile.compile_jobs(jobs)


def pytest_sessionfinish(session, exitstatus):
    """With NDD_TRITON_LAUNCH_LOG=path, save this session's compile jobs (used when the compile
    check runs alone); a pytest-xdist worker saves its own to `path` with its name appended
    (path.gw0, path.gw1...), which NDD_TRITON_KERNEL_JOBS='path.*' reads back merged."""
    path = os.environ.get("NDD_TRITON_LAUNCH_LOG")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if path and worker:
        path = f"{path}.{worker}"
    if path and _tables.LAUNCH_LOG:
        import json

        with open(path, "w") as f:
            json.dump(kernel_compile.launch_jobs(_tables.LAUNCH_LOG), f)


@pytest.fixture(autouse=True)
def _fresh_launch_memo():
    """Each test starts with an empty GPU launch memo: no replay of launches recorded by an
    earlier test (some tests change tile sizes, which the memo's signature does not include)."""
    from ndd_triton.runtime import launch_memo

    launch_memo.clear()
    yield
