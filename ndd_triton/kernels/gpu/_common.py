"""Helpers shared by Triton launchers: padding shapes to a fixed rank, per-axis flags."""

from __future__ import annotations

import numpy as np

MAX_RANK = 6


def padded_shapes(shapes: np.ndarray, rank: int = MAX_RANK) -> np.ndarray:
    """`[N, rank]` shapes, left-padded with 1 so every sample has the same rank."""
    n, ndim = shapes.shape
    if ndim > rank:
        raise ValueError(f"samples with {ndim} dimensions exceed the GPU kernels' limit of {rank}")
    out = np.ones((n, rank), dtype=np.int64)
    if ndim:
        out[:, rank - ndim:] = shapes
    return out


def padded_strides(strides: np.ndarray, rank: int = MAX_RANK) -> np.ndarray:
    """`[N, rank]` strides, left-padded with 0 (the padded axes have extent 1)."""
    n, ndim = strides.shape
    out = np.zeros((n, rank), dtype=np.int64)
    if ndim:
        out[:, rank - ndim:] = strides
    return out
