"""normalize on the CPU: a whole-batch kernel (batch=True statistics span samples).

Statistics accumulate in float64; the output is computed in float32, as DALI does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.reductions import fast_sum
from ndd_triton.ops import normalize
from ndd_triton.ops.schema import Call


def _keep_shape(x: np.ndarray, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if d in axes else e for d, e in enumerate(x.shape))


def _given(call: Call, name: str, i: int, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The group values of a given parameter, shaped to broadcast against sample `i`."""
    values: np.ndarray = call.group_params[name][i]
    return values.reshape(_keep_shape(x, axes))


def _stats(call: Call, xs: list[np.ndarray], axes: tuple[int, ...]
           ) -> tuple[list[np.ndarray], list[np.ndarray]]:  # fmt: skip
    """Per-sample mean and stddev, shaped with the reduced axes kept as 1."""
    params = call.group_params
    counts = [int(np.prod([x.shape[d] for d in axes], dtype=np.int64)) for x in xs]
    if "mean" in params:
        means = [_given(call, "mean", i, x, axes) for i, x in enumerate(xs)]
    else:
        sums = [fast_sum(x, axes, np.float64) for x in xs]
        if call.batch:
            total = sum(sums[1:], sums[0]) / max(sum(counts), 1)
            means = [total] * len(xs)
        else:
            means = [s / max(c, 1) for s, c in zip(sums, counts, strict=True)]
    if "stddev" in params:
        return means, [_given(call, "stddev", i, x, axes) for i, x in enumerate(xs)]
    # Centred squares in float32 (DALI's precision), accumulated in float64.
    ssds = [fast_sum(np.square(x - m.astype(np.float32)), axes, np.float64)
            for x, m in zip(xs, means, strict=True)]  # fmt: skip
    if call.batch:
        ssds = [sum(ssds[1:], ssds[0])] * len(xs)
        counts = [sum(counts)] * len(xs)
    stds = []
    for ssd, count in zip(ssds, counts, strict=True):
        divisor = count - int(call.ddof)
        var = ssd / divisor if divisor > 0 else np.zeros_like(ssd)
        stds.append(np.sqrt(var + float(call.epsilon)))
    return means, stds


@register(normalize.schema, "cpu", batched=True)
def normalize_cpu(call: Call, outs: list[list[np.ndarray]], ins: list[list[Any]]) -> None:
    """Compute the statistics (per sample or per batch), then normalize every sample."""
    axes: tuple[int, ...] = call.norm_axes
    xs = [np.asarray(x, dtype=np.float32) for x in ins[0]]
    means, stds = _stats(call, xs, axes)
    scale, shift = float(call.scale), float(call.shift)
    for out, x, mean, std in zip(outs[0], xs, means, stds, strict=True):
        with np.errstate(divide="ignore"):
            factor = np.where(std > 0, scale / np.where(std > 0, std, 1.0), 0.0)
        # float32 output math written in place: (x - mean) * factor + shift.
        result = out if out.dtype == np.float32 else np.empty(out.shape, np.float32)
        np.subtract(x, mean.astype(np.float32), out=result)
        with np.errstate(over="ignore"):  # (a stddev of 1e-145: an inf factor, as float32)
            result *= factor.astype(np.float32)
        result += np.float32(shift)
        if result is not out:
            convert_numpy(result, out.dtype, out=out)
