"""GB/s of `batch + batch` on the CPU: ndd_triton against plain torch, in the same run.

pytest-benchmark module (not in the default test paths):
    python -m pytest perf/bench_arithmetic.py --benchmark-only -p no:cacheprovider
Bytes moved per call = both inputs read + the output written. The ragged case uses samples
of different sizes (no padding); torch adds the same samples one by one (its batched add
needs equal shapes), the uniform case also times torch on one stacked tensor. GB/s, the device,
versions and shapes go into each benchmark's `extra_info` (and `--benchmark-json`).
"""

from __future__ import annotations

import platform
from typing import Any

import numpy as np
import pytest
import torch

import ndd_triton as ndd

UNIFORM = [(480, 640, 3)] * 16
RAGGED = [(480 - 16 * i, 640 - 24 * i, 3) for i in range(16)]


def _samples(shapes: list[tuple[int, ...]], dtype: type = np.float32) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _record(benchmark: Any, nbytes: int, shapes: list[tuple[int, ...]]) -> None:
    stats = benchmark.stats.stats
    benchmark.extra_info.update({
        "GB/s (best)": round(nbytes / stats.min / 1e9, 2),
        "GB/s (median)": round(nbytes / stats.median / 1e9, 2),
        "device": platform.processor() or platform.machine(),
        "threads": ndd.get_num_threads(), "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__, "numpy": np.__version__,
        "batch": f"{len(shapes)} samples, first {shapes[0]}, last {shapes[-1]}",
    })  # fmt: skip


def _bytes(samples: list[np.ndarray]) -> int:
    return 3 * sum(s.nbytes for s in samples)


@pytest.mark.parametrize("shapes", [UNIFORM, RAGGED], ids=["uniform", "ragged"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8], ids=["f32", "u8"])
def test_ndd_batch_add_cpu(benchmark, shapes, dtype):
    samples = _samples(shapes, dtype)
    batch = ndd.as_batch(samples)
    result = benchmark(lambda: (batch + batch).evaluate())
    np.testing.assert_array_equal(np.asarray(result.tensors[0]), samples[0] + samples[0])
    _record(benchmark, _bytes(samples), shapes)


@pytest.mark.parametrize("shapes", [UNIFORM, RAGGED], ids=["uniform", "ragged"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8], ids=["f32", "u8"])
def test_torch_per_sample_add_cpu(benchmark, shapes, dtype):
    samples = [torch.from_numpy(s) for s in _samples(shapes, dtype)]
    benchmark(lambda: [s + s for s in samples])
    _record(benchmark, _bytes([s.numpy() for s in samples]), shapes)


@pytest.mark.parametrize("dtype", [np.float32, np.uint8], ids=["f32", "u8"])
def test_torch_stacked_add_cpu(benchmark, dtype):
    samples = _samples(UNIFORM, dtype)
    stacked = torch.from_numpy(np.stack(samples))
    benchmark(lambda: stacked + stacked)
    _record(benchmark, _bytes(samples), UNIFORM)
