"""Helpers shared by the tensor-operator schemas (reshape, squeeze, expand_dims, cat, ...)."""

from __future__ import annotations

from typing import Any

import numpy as np


def sample_rows(value: Any, batch_size: int) -> list[np.ndarray]:
    """A per-sample vector argument (`[N, k]` array, `[N]` scalars or a list) as N 1-D arrays."""
    if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == batch_size:
        return [np.atleast_1d(np.asarray(v)).reshape(-1) for v in value]
    if isinstance(value, list) and len(value) == batch_size:
        return [np.atleast_1d(np.asarray(v)).reshape(-1) for v in value]
    row = np.atleast_1d(np.asarray(value)).reshape(-1)
    return [row] * batch_size


def insert_letters(layout: str | None, ndim: int, positions: list[int], letters: str
                   ) -> str | None:  # fmt: skip
    """Layout of a result with new axes `letters` at output `positions` (None if unnamed)."""
    if not letters or (layout is None and ndim > 0):
        return None
    out_ndim = ndim + len(positions)
    result: list[str] = [""] * out_ndim
    for pos, letter in zip(positions, letters, strict=False):
        result[pos] = letter
    rest = iter(layout or "")
    return "".join(c if c else next(rest) for c in result)


def cxx_cast(values: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """Float constants converted to `dtype` the way DALI 2.4's C++ casts do (x86-64, recorded
    for one_hot's on/off values and slice/crop fill values): floats pass through; integer types
    truncate toward zero, then wrap (u8: 300.7 -> 44, -1.6 -> 255, 114.8 -> 114). Types up to
    32 bits go through int32 (NaN or out of its range -> INT32_MIN, so 1e10 -> 0 in u8); u32,
    i64 and u64 go through int64 the same way. bool: nonzero."""
    v = np.asarray(values, np.float64)
    dtype = np.dtype(dtype)
    if dtype.kind in "fb":
        return v.astype(dtype)
    bits = 32 if dtype.itemsize < 4 or dtype == np.int32 else 64
    lo = -(2.0 ** (bits - 1))
    with np.errstate(invalid="ignore"):
        t = np.trunc(v)
        t = np.where(np.isnan(t) | (t < lo) | (t >= -lo), lo, t).astype(np.int64)
    return t.astype(dtype)  # two's complement wrap
