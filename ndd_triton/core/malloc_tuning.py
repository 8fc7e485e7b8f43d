"""Keep freed host memory in the process (glibc malloc settings), so batches do not page-fault.

glibc returns large freed blocks to the kernel (blocks over the mmap threshold are unmapped,
and the heap's free top is trimmed), so the next batch's temporaries and outputs of the same
sizes are fresh pages: one page fault per 4 KiB touched. A log-mel batch of 16 clips made
~730 minor faults (~3 MB) per batch, the detection and image recipes more; on a virtual machine
a fault costs microseconds, and they ran in the pool threads' hot loops. DALI keeps its own
pools; torch's CPU allocator is plain malloc.

At import, on glibc, ndd_triton sets `mallopt`: blocks up to `MMAP_THRESHOLD` come from the
heap (not mmap), and up to `TRIM_THRESHOLD` of free heap top is kept; the heap grows by
`TOP_PAD` extra. The cost is resident memory a process keeps after its peak (at most the trim
threshold above what it uses). `NDD_TRITON_MALLOC_TUNING=0` leaves malloc as it is (set it
before importing ndd_triton); glibc's own `MALLOC_*_` environment variables, when set, win.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

MMAP_THRESHOLD = 32 << 20  # glibc's own dynamic threshold tops out here (64-bit)
TRIM_THRESHOLD = 256 << 20
TOP_PAD = 16 << 20

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_ENV = {_M_TRIM_THRESHOLD: "MALLOC_TRIM_THRESHOLD_", _M_TOP_PAD: "MALLOC_TOP_PAD_",
        _M_MMAP_THRESHOLD: "MALLOC_MMAP_THRESHOLD_"}  # fmt: skip

applied: dict[str, int] = {}  # what `tune_malloc` set (read by tests and docs)


def tune_malloc() -> dict[str, int]:
    """Apply the settings above once (glibc only; no-op elsewhere or when turned off)."""
    if applied or os.environ.get("NDD_TRITON_MALLOC_TUNING", "1") == "0":
        return applied
    if not sys.platform.startswith("linux"):
        return applied
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018  (glibc, not musl: mallopt's codes differ)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return applied
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    for code, value in ((_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD),
                        (_M_TOP_PAD, TOP_PAD)):  # fmt: skip
        name = _ENV[code]
        if name in os.environ:  # the user's explicit glibc setting
            continue
        if mallopt(code, value) == 1:
            applied[name] = value
    return applied
