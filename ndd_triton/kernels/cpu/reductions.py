"""reductions.* on the CPU: one sample per call, NumPy reductions with DALI's result types.

Float results accumulate in float64 (more accurate than DALI's float32 sums, well inside the
golden tolerances); integer `dtype` overrides accumulate exactly and wrap into the output type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import reductions as red
from ndd_triton.ops.schema import SampleArgs


def _identity(dtype: np.dtype[Any], op: int) -> Any:
    """Result of min/max over nothing: the type's maximum / lowest value (DALI: -3.4028e38)."""
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.max if op == red.MIN else info.min


def _int_mean(total: np.ndarray, count: int) -> np.ndarray:
    """Integer mean truncated toward zero (DALI: mean of [1, 2] with dtype=int32 -> 1)."""
    if count == 0:
        return np.zeros_like(total)
    result: np.ndarray = np.sign(total) * (np.abs(total) // count)
    return result


def fast_reduce(x: np.ndarray, axes: tuple[int, ...], ufunc: np.ufunc = np.add,
                dtype: Any = None, initial: Any = None) -> np.ndarray:  # fmt: skip
    """`ufunc.reduce(x, axes, keepdims=True, ...)`, faster for per-channel reductions.

    Reducing leading axes with a short kept tail (HWC -> C) makes NumPy combine rows of 3
    values, ~10x slower than long rows; viewing the rows as `(R / k, k * K)` blocks gives long
    inner loops, then the k partial rows are folded (measured 10 ms -> ~1 ms for a 480x640x3
    uint8 sum).
    """
    lead = len(axes)
    kw: dict[str, Any] = {"dtype": dtype} if dtype is not None else {}
    if 0 < lead < x.ndim and axes == tuple(range(lead)) and x.flags.c_contiguous:
        kept = int(np.prod(x.shape[lead:]))
        rows = int(np.prod(x.shape[:lead]))
        if 0 < kept <= 64 and rows > 0:
            flat = x.reshape(rows, kept)
            k = max(1, 1024 // kept)
            main = (rows // k) * k
            if main:
                blocks = ufunc.reduce(flat[:main].reshape(rows // k, k * kept), axis=0, **kw)
                total: np.ndarray = ufunc.reduce(blocks.reshape(k, kept), axis=0, **kw)
                if main < rows:
                    total = ufunc(total, ufunc.reduce(flat[main:], axis=0, **kw))
            else:
                total = ufunc.reduce(flat, axis=0, **kw)
            return total.reshape((1,) * lead + x.shape[lead:])
    if initial is not None:
        kw["initial"] = initial
    result: np.ndarray = ufunc.reduce(x, axis=axes, keepdims=True, **kw)
    return result


def fast_sum(x: np.ndarray, axes: tuple[int, ...], dtype: Any) -> np.ndarray:
    """`np.sum(x, axes, keepdims=True, dtype=dtype)` through `fast_reduce`."""
    return fast_reduce(x, axes, np.add, dtype)


def _moment(x: np.ndarray, axes: tuple[int, ...], op: int, out_dtype: np.dtype[Any]
            ) -> np.ndarray:  # fmt: skip
    """sum / mean / mean_square / rms with keepdims=True."""
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    squared = op in (red.MEAN_SQUARE, red.RMS)
    if out_dtype.kind in "iu":
        acc = np.uint64 if x.dtype.kind == "u" and op == red.SUM else np.int64
        # np.sum(dtype=) widens in small buffers: no full-size copy unless squaring.
        src = np.square(x.astype(acc)) if squared else x
        total = fast_sum(src, axes, acc)
        if op == red.SUM:
            return total
        total = _int_mean(total.astype(np.int64), count)
        return np.floor(np.sqrt(total)).astype(np.int64) if op == red.RMS else total
    src = np.square(x, dtype=np.float64) if squared else x
    total = fast_sum(src, axes, np.float64)
    if op == red.SUM:
        return total
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count if count else np.full_like(total, np.nan)
        return np.sqrt(mean) if op == red.RMS else mean


def _spread(x: np.ndarray, mean: np.ndarray, axes: tuple[int, ...], op: int, ddof: int
            ) -> np.ndarray:  # fmt: skip
    """variance / std_dev around the given mean, divisor N - ddof, as DALI 2.4 computes it:
    a zero divisor gives inf (NaN for 0 / 0), a negative one a negative variance (NaN std_dev);
    with no reduced axes the result is 0 whatever the mean."""
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if not axes:
        return np.zeros(x.shape)
    keep_shape = tuple(1 if i in axes else e for i, e in enumerate(x.shape))
    m = np.asarray(mean, dtype=np.float64)
    m = m.reshape(()) if m.size == 1 else m.reshape(keep_shape)
    diff = x.astype(np.float64) - m
    ssd = fast_sum(np.square(diff), axes, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = ssd / np.float64(count - ddof)
        return np.sqrt(var) if op == red.STD_DEV else var


def reduce_sample(out: np.ndarray, x: np.ndarray, mean: np.ndarray | None, arg: SampleArgs
                  ) -> None:  # fmt: skip
    """Reduce one sample into `out` (whose shape has the reduced axes kept or dropped)."""
    axes: tuple[int, ...] = arg.reduce_axes
    if arg.dense:  # a uniform batch as one (N, ...) array: the sample axes move by one
        axes = tuple(a + 1 for a in axes)
    op: int = arg.op_code
    if op in (red.MIN, red.MAX):
        ufunc = np.minimum if op == red.MIN else np.maximum
        result = fast_reduce(x, axes, ufunc, initial=_identity(x.dtype, op))
    elif op >= red.VARIANCE:
        assert mean is not None
        result = _spread(x, mean, axes, op, int(arg.ddof))
    else:
        result = _moment(x, axes, op, out.dtype)
    out[...] = result.reshape(out.shape).astype(out.dtype)


def _moment_cpu(out: np.ndarray, x: np.ndarray, arg: SampleArgs) -> None:
    reduce_sample(out, x, None, arg)


def _spread_cpu(out: np.ndarray, x: np.ndarray, mean: np.ndarray, arg: SampleArgs) -> None:
    reduce_sample(out, x, mean, arg)


for _schema in red.schemas:
    if _schema.short_name in ("std_dev", "variance"):
        register(_schema, "cpu")(_spread_cpu)
    else:  # dense: a small uniform batch is reduced in one NumPy call
        register(_schema, "cpu", dense=True)(_moment_cpu)
