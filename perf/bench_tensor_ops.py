"""GB/s of `cast` and `transpose` on the CPU: ndd_triton against plain torch, in the same run.

pytest-benchmark module (not in the default test paths):
    python -m pytest perf/bench_tensor_ops.py --benchmark-only -p no:cacheprovider
Bytes moved per call = input read + output written. torch baselines process the same samples
one by one (ragged batches have no batched torch form): `cast` f32 -> u8 is timed against
`round().clamp(0, 255).to(uint8)` (DALI's rule; torch's plain `.to` truncates and wraps) and
u8 -> f32 against `.to(float32)`; `transpose` HWC -> CHW against `permute(2, 0, 1).contiguous()`.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
import torch

import ndd_triton as ndd

UNIFORM = [(480, 640, 3)] * 16
RAGGED = [(480 - 16 * i, 640 - 24 * i, 3) for i in range(16)]
SHAPES = pytest.mark.parametrize("shapes", [UNIFORM, RAGGED], ids=["uniform", "ragged"])


def _samples(shapes: list[tuple[int, ...]], dtype: type) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [(rng.standard_normal(s) * 100 + 100).astype(dtype) for s in shapes]


def _record(benchmark: pytest.FixtureRequest, nbytes: int, shapes: list[tuple[int, ...]]) -> None:
    stats = benchmark.stats.stats  # type: ignore[attr-defined]
    benchmark.extra_info.update(  # type: ignore[attr-defined]
        {
            "GB/s (best)": round(nbytes / stats.min / 1e9, 2),
            "GB/s (median)": round(nbytes / stats.median / 1e9, 2),
            "device": platform.processor() or platform.machine(),
            "threads": ndd.get_num_threads(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "numpy": np.__version__,
            "batch": f"{len(shapes)} samples, first {shapes[0]}, last {shapes[-1]}",
        }
    )


CASTS = pytest.mark.parametrize(
    ("src", "dst"), [(np.float32, np.uint8), (np.uint8, np.float32)], ids=["f32-u8", "u8-f32"]
)


def _moved(samples: list[np.ndarray], dst: type) -> int:
    return sum(s.nbytes + s.size * np.dtype(dst).itemsize for s in samples)


@SHAPES
@CASTS
def test_ndd_cast_cpu(benchmark, shapes, src, dst):
    samples = _samples(shapes, src)
    batch = ndd.as_batch(samples)
    target = ndd.dtype(dst)
    result = benchmark(lambda: ndd.cast(batch, dtype=target).evaluate())
    assert result.dtype == target
    _record(benchmark, _moved(samples, dst), shapes)


@SHAPES
@CASTS
def test_torch_cast_cpu(benchmark, shapes, src, dst):
    samples = [torch.from_numpy(s) for s in _samples(shapes, src)]
    if dst == np.uint8:
        benchmark(lambda: [s.round().clamp_(0, 255).to(torch.uint8) for s in samples])
    else:
        benchmark(lambda: [s.to(torch.float32) for s in samples])
    _record(benchmark, _moved([s.numpy() for s in samples], dst), shapes)


@SHAPES
def test_ndd_transpose_cpu(benchmark, shapes):
    samples = _samples(shapes, np.uint8)
    batch = ndd.as_batch(samples, layout="HWC")
    result = benchmark(lambda: ndd.transpose(batch, perm=[2, 0, 1]).evaluate())
    assert result.layout == "CHW"
    _record(benchmark, 2 * sum(s.nbytes for s in samples), shapes)


@SHAPES
def test_torch_transpose_cpu(benchmark, shapes):
    samples = [torch.from_numpy(s) for s in _samples(shapes, np.uint8)]
    benchmark(lambda: [s.permute(2, 0, 1).contiguous() for s in samples])
    _record(benchmark, 2 * sum(s.numel() for s in samples), shapes)
