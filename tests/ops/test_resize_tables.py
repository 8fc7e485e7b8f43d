"""The batched host tables of the GPU resize path against the per-sample formulas they replace."""

from __future__ import annotations

import numpy as np
import pytest

from ndd_triton.kernels._resample import (
    CUBIC,
    GAUSSIAN,
    LANCZOS3,
    LINEAR,
    NN,
    TRIANGULAR,
    AxisPlan,
    axis_table,
    axis_tables,
)


def _per_sample(plans: list[AxisPlan]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The concatenation the GPU resize built before `axis_tables`: one `axis_table` per sample,
    zero-padded to the most taps."""
    tables = [axis_table(p) for p in plans]
    taps = max((t.taps for t in tables), default=1)
    index = np.zeros((sum(p.n_out for p in plans), taps), np.int32)
    weight = np.zeros(index.shape, np.float32)
    first = np.zeros(len(plans), np.int64)
    row = 0
    for k, t in enumerate(tables):
        first[k] = row
        index[row:row + len(t.index), :t.taps] = t.index
        weight[row:row + len(t.index), :t.taps] = t.weight
        row += len(t.index)
    return index, weight, first, taps


def _random_plans(rng: np.random.Generator, n: int, interps: list[int], antialias: bool,
                  innermost: bool) -> list[AxisPlan]:  # fmt: skip
    plans = []
    for _ in range(n):
        n_in = int(rng.integers(1, 700))
        n_out = int(rng.integers(0, 300)) if rng.random() < 0.9 else int(rng.integers(0, 3))
        lo, hi = sorted(rng.uniform(-0.3 * n_in, 1.3 * n_in, 2))
        if rng.random() < 0.3:
            lo, hi = 0.0, float(n_in)
        if rng.random() < 0.2:
            lo, hi = hi, lo  # mirrored
        step = (hi - lo) / max(n_out, 1) if rng.random() < 0.8 else float(rng.choice([0.5, 2.0]))
        plans.append(AxisPlan(n_in, n_out, float(lo), float(step), int(rng.choice(interps)),
                              antialias, innermost))  # fmt: skip
    return plans


@pytest.mark.parametrize("interps", [[LINEAR], [NN], [CUBIC], [LANCZOS3], [TRIANGULAR],
                                     [GAUSSIAN], [NN, LINEAR, CUBIC, LANCZOS3, TRIANGULAR,
                                                  GAUSSIAN]])  # fmt: skip
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("innermost", [True, False])
def test_axis_tables_match_per_sample_tables(interps: list[int], antialias: bool,
                                             innermost: bool) -> None:  # fmt: skip
    rng = np.random.default_rng(sum(interps) * 4 + 2 * antialias + innermost)
    for n in (0, 1, 2, 7, 33):
        plans = _random_plans(rng, n, interps, antialias, innermost)
        want = _per_sample(plans)
        got = axis_tables(np.array([p.n_in for p in plans], np.int64),
                          np.array([p.n_out for p in plans], np.int64),
                          np.array([p.origin for p in plans], np.float64),
                          np.array([p.step for p in plans], np.float64),
                          np.array([p.interp for p in plans], np.int64),
                          antialias, innermost)  # fmt: skip
        assert got[3] == want[3]
        np.testing.assert_array_equal(got[2], want[2])
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1].dtype == np.float32
        np.testing.assert_array_equal(got[1].view(np.int32), want[1].view(np.int32))


@pytest.mark.parametrize("mode", ["default", "stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_float_sizes_match_per_sample(mode: str, d: int) -> None:
    from ndd_triton.ops._resize_params import _float_sizes, float_sizes

    rng = np.random.default_rng(d * 10 + len(mode))
    for n in (0, 1, 5, 64):
        in_ext = rng.integers(1, 900, (n, d)).astype(np.float64)
        in_ext[rng.random((n, d)) < 0.1] += rng.random() * 0.75  # fractional ROIs
        req = np.round(rng.uniform(1, 500, (n, d)) * 4) / 4  # .25, .5, .75 requests too
        req[rng.random((n, d)) < 0.4] = 0.0  # missing extents
        for max_size in (None, np.full(d, 300.0), rng.choice([0.0, 250.0, 90.5], d)):
            want = np.stack([_float_sizes(req[i], in_ext[i], mode, max_size)
                             for i in range(n)]) if n else np.zeros((0, d))  # fmt: skip
            got = float_sizes(req, in_ext, mode, max_size)
            np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
