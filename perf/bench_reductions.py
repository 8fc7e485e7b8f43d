"""GB/s of reductions.sum and normalize on the CPU: ndd_triton against plain torch, same run.

pytest-benchmark module (not in the default test paths):
    python -m pytest perf/bench_reductions.py --benchmark-only -p no:cacheprovider
Bytes moved per call: reductions read the input (the output is a few values per sample);
normalize reads the input twice for its statistics plus once to write, counted as one input
read + the float32 output written (a lower bound, the convention torch's numbers use too).
torch reduces the same samples one by one (ragged batches have no stacked form); the uniform
case also times torch on one stacked tensor. GB/s, device, versions and shapes go into each
benchmark's `extra_info` (and `--benchmark-json`).
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
import torch

import ndd_triton as ndd

UNIFORM = [(480, 640, 3)] * 8
RAGGED = [(480 - 16 * i, 640 - 24 * i, 3) for i in range(8)]
SHAPES = pytest.mark.parametrize("shapes", [UNIFORM, RAGGED], ids=["uniform", "ragged"])
DTYPES = pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=["u8", "f32"])
AXES = pytest.mark.parametrize("per_channel", [False, True], ids=["all", "per_channel"])


def _samples(shapes: list[tuple[int, ...]], dtype: type) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, size=s).astype(dtype) for s in shapes]


def _record(benchmark: pytest.FixtureRequest, nbytes: int, shapes: list[tuple[int, ...]]) -> None:
    stats = benchmark.stats.stats  # type: ignore[attr-defined]
    benchmark.extra_info.update({  # type: ignore[attr-defined]
        "GB/s (best)": round(nbytes / stats.min / 1e9, 2),
        "GB/s (median)": round(nbytes / stats.median / 1e9, 2),
        "device": platform.processor() or platform.machine(),
        "threads": ndd.get_num_threads(), "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__, "numpy": np.__version__,
        "batch": f"{len(shapes)} samples, first {shapes[0]}, last {shapes[-1]}",
    })  # fmt: skip


def _torch_sum(t: torch.Tensor, per_channel: bool) -> torch.Tensor:
    wide = torch.int64 if not t.is_floating_point() else torch.float64
    return t.sum(dim=(0, 1) if per_channel else None, dtype=wide)


@SHAPES
@DTYPES
@AXES
def test_ndd_sum_cpu(benchmark, shapes, dtype, per_channel):
    samples = _samples(shapes, dtype)
    batch = ndd.as_batch(samples, layout="HWC")
    kwargs = {"axis_names": "HW"} if per_channel else {}
    result = benchmark(lambda: ndd.reductions.sum(batch, **kwargs).evaluate())
    expected = _torch_sum(torch.from_numpy(samples[0]), per_channel).numpy()
    np.testing.assert_allclose(np.asarray(result.tensors[0]), expected, rtol=1e-6)
    _record(benchmark, sum(s.nbytes for s in samples), shapes)


@SHAPES
@DTYPES
@AXES
def test_torch_per_sample_sum_cpu(benchmark, shapes, dtype, per_channel):
    samples = _samples(shapes, dtype)
    tensors = [torch.from_numpy(s) for s in samples]
    benchmark(lambda: [_torch_sum(t, per_channel) for t in tensors])
    _record(benchmark, sum(s.nbytes for s in samples), shapes)


@DTYPES
@AXES
def test_torch_stacked_sum_cpu(benchmark, dtype, per_channel):
    samples = _samples(UNIFORM, dtype)
    stacked = torch.from_numpy(np.stack(samples))
    wide = torch.int64 if dtype == np.uint8 else torch.float64
    benchmark(lambda: stacked.sum(dim=(1, 2) if per_channel else (1, 2, 3), dtype=wide))
    _record(benchmark, sum(s.nbytes for s in samples), UNIFORM)


def _normalize_bytes(samples: list[np.ndarray]) -> int:
    return sum(s.nbytes + s.size * 4 for s in samples)


def _torch_normalize(t: torch.Tensor, per_channel: bool) -> torch.Tensor:
    x = t.float()
    dims = (0, 1) if per_channel else (0, 1, 2)
    std, mean = torch.std_mean(x, dim=dims, correction=0, keepdim=True)
    return (x - mean) / std


@SHAPES
@DTYPES
@AXES
def test_ndd_normalize_cpu(benchmark, shapes, dtype, per_channel):
    samples = _samples(shapes, dtype)
    batch = ndd.as_batch(samples, layout="HWC")
    kwargs = {"axis_names": "HW"} if per_channel else {}
    result = benchmark(lambda: ndd.normalize(batch, **kwargs).evaluate())
    expected = _torch_normalize(torch.from_numpy(samples[0]), per_channel).numpy()
    np.testing.assert_allclose(np.asarray(result.tensors[0]), expected, atol=1e-4)
    _record(benchmark, _normalize_bytes(samples), shapes)


@SHAPES
@DTYPES
@AXES
def test_torch_per_sample_normalize_cpu(benchmark, shapes, dtype, per_channel):
    samples = _samples(shapes, dtype)
    tensors = [torch.from_numpy(s) for s in samples]
    benchmark(lambda: [_torch_normalize(t, per_channel) for t in tensors])
    _record(benchmark, _normalize_bytes(samples), shapes)
