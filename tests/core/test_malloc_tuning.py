"""glibc malloc settings at import: memory a batch frees is reused by the next batch, not
returned to the kernel and page-faulted in again (the log-mel recipe of perf/bench_audio.py
made ~500-730 minor faults per batch without them, 0-30 with them)."""

import os
import subprocess
import sys

import pytest

# glibc's own rules, made deterministic: after a 2 MiB block is freed its dynamic mmap
# threshold is 2 MiB and its trim threshold 4 MiB, so a batch of 1 MiB temporaries (8 MiB,
# all freed at the end) is trimmed from the heap's top after every batch.
PROBE = r"""
import resource, numpy as np
import ndd_triton
from ndd_triton.core import malloc_tuning
def batch():
    blocks = [np.ones(1 << 20, np.uint8) for _ in range(8)]
    del blocks
np.ones(2 << 20, np.uint8)
batch()
start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    batch()
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start) // 10
print(sorted(malloc_tuning.applied), faults)
"""


def _probe(**env):
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True)  # fmt: skip
    names, per_batch = out.stdout.strip().rsplit(" ", 1)
    return names, int(per_batch)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.confstr("CS_GNU_LIBC_VERSION"),
                    reason="glibc only")  # fmt: skip
def test_freed_batch_memory_is_reused_without_page_faults():
    names, tuned = _probe()
    assert names == str(["MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_"])
    off_names, untuned = _probe(NDD_TRITON_MALLOC_TUNING="0")
    assert off_names == "[]"
    # 2048 pages per batch here; 992 on a machine with other kernel settings (an H100 host)
    assert untuned > 500, f"glibc's defaults: {untuned} faults per 8 MiB batch (2048 pages)"
    assert tuned < 100 and tuned * 10 < untuned, f"{tuned} page faults per batch with the " \
        f"settings, {untuned} without"  # fmt: skip
    user_names, _ = _probe(MALLOC_TRIM_THRESHOLD_="1000000")
    assert "MALLOC_TRIM_THRESHOLD_" not in user_names, "the user's glibc setting wins"
