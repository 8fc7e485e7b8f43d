"""The GPU bench's streaming kernels compile to vector accesses (STYLE.md §4), checked without a
GPU: `perf/kernel_report_bench.py` records the launches of `perf/bench_gpu_kernels.py`'s rows on
480x640x3 uint8 images (launches as no-ops, specialised as a GPU launch would be) and compiles
them for sm_90. A kernel whose data stores fall back to single bytes, that starts converting
layouts through shared memory, or that spills shows here, where no GPU runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# bench row -> what its kernels must keep: 16-byte stores, 16-byte loads, no shared memory
STREAMING = {
    "flip vertical": {"load16": True, "no_smem": True},
    "flip horizontal": {"load16": False, "no_smem": True},  # (reversed reads are gathers)
    "crop 224x224": {"load16": True, "no_smem": True},
    "pad to 512x704": {"load16": True, "no_smem": True},
    "cast u8 -> f32": {"load16": True, "no_smem": False},  # (u8 -> f32 vector widths differ)
    "transpose HWC -> CHW": {"load16": False, "no_smem": False},  # (a tile transpose)
    "brightness_contrast": {"load16": True, "no_smem": True},
    "erase 3 regions": {"load16": True, "no_smem": True},
    "grid_mask": {"load16": True, "no_smem": True},
    "crop_mirror_normalize 224 f32 CHW": {"load16": False, "no_smem": True},  # (3 channels)
}


@pytest.fixture(scope="module")
def bench_kernels():
    env = {k: v for k, v in os.environ.items() if k != "NDD_TRITON_TEST_DEVICE"}
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "perf", "kernel_report_bench.py"),
                           "--kbatch", "4", "--json", "--only", ",".join(STREAMING)],
                          capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_row_compiles_without_spills(bench_kernels):
    assert {r["row"] for r in bench_kernels} == set(STREAMING)
    for r in bench_kernels:
        assert r["kernel"] and not r["error"], r
        assert r["spills"] == 0, r


@pytest.mark.parametrize("row", sorted(STREAMING))
def test_streaming_rows_store_16_byte_vectors(bench_kernels, row):
    want = STREAMING[row]
    for r in (r for r in bench_kernels if r["row"] == row):
        stores, loads = {int(k) for k in r["st"]}, {int(k) for k in r["ld"]}
        assert max(stores) == 16, f"{row}: {r['kernel']} stores {sorted(stores)} bytes wide"
        if want["load16"]:
            assert 16 in loads, f"{row}: {r['kernel']} loads {sorted(loads)} bytes wide"
        if want["no_smem"]:
            assert r["smem"] == 0, f"{row}: {r['kernel']} uses {r['smem']} B of shared memory"
