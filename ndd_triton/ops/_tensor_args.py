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
