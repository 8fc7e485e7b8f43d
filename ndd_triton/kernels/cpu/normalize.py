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


def _means(call: Call, xs: list[np.ndarray], axes: tuple[int, ...],
           counts: list[int]) -> list[np.ndarray]:  # fmt: skip
    """Per-sample means (float64, reduced axes kept as 1): given, per sample or over the batch."""
    if "mean" in call.group_params:
        return [_given(call, "mean", i, x, axes) for i, x in enumerate(xs)]
    sums = [fast_sum(x, axes, np.float64) for x in xs]
    if call.batch:
        total = sum(sums[1:], sums[0]) / max(sum(counts), 1)
        return [total] * len(xs)
    return [s / max(c, 1) for s, c in zip(sums, counts, strict=True)]


def _stddevs(call: Call, centred: list[np.ndarray], axes: tuple[int, ...],
             counts: list[int]) -> list[np.ndarray]:  # fmt: skip
    """Per-sample stddevs from the float32 centred samples (squares accumulated in float64)."""
    if "stddev" in call.group_params:
        return [_given(call, "stddev", i, d, axes) for i, d in enumerate(centred)]
    scratch = np.empty(max((d.size for d in centred), default=0), np.float32)
    ssds = []
    for d in centred:
        square = np.square(d, out=scratch[: d.size].reshape(d.shape))
        ssds.append(fast_sum(square, axes, np.float64))
    if call.batch:
        ssds = [sum(ssds[1:], ssds[0])] * len(centred)
        counts = [sum(counts)] * len(centred)
    stds = []
    for ssd, count in zip(ssds, counts, strict=True):
        divisor = count - int(call.ddof)
        var = ssd / divisor if divisor > 0 else np.zeros_like(ssd)
        stds.append(np.sqrt(var + float(call.epsilon)))
    return stds


@register(normalize.schema, "cpu", batched=True)
def normalize_cpu(call: Call, outs: list[list[np.ndarray]], ins: list[list[Any]]) -> None:
    """Compute the statistics (per sample or per batch), then normalize every sample.

    The centred samples `x - mean` (float32, DALI's precision) are written once, into the
    outputs where those are float32, and serve both the stddev and the result; measured
    ~2.4 -> ~1.6 ms for 16 log-mel spectrograms of 64 x 100-400.
    """
    axes: tuple[int, ...] = call.norm_axes
    xs = [np.asarray(x, dtype=np.float32) for x in ins[0]]
    counts = [int(np.prod([x.shape[d] for d in axes], dtype=np.int64)) for x in xs]
    means = _means(call, xs, axes, counts)
    # float32 output math written in place: (x - mean) * factor + shift.
    centred = [out if out.dtype == np.float32 else np.empty(out.shape, np.float32)
               for out in outs[0]]  # fmt: skip
    for result, x, mean in zip(centred, xs, means, strict=True):
        np.subtract(x, mean.astype(np.float32), out=result)
    stds = _stddevs(call, centred, axes, counts)
    scale, shift = float(call.scale), np.float32(call.shift)
    for out, result, std in zip(outs[0], centred, stds, strict=True):
        with np.errstate(divide="ignore"):
            factor = np.where(std > 0, scale / np.where(std > 0, std, 1.0), 0.0)
        with np.errstate(over="ignore"):  # (a stddev of 1e-145: an inf factor, as float32)
            result *= factor.astype(np.float32)
        result += shift
        if result is not out:
            convert_numpy(result, out.dtype, out=out)
