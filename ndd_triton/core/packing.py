"""How a batch's samples are laid out in one flat buffer when packed back to back (what
`BatchStorage.allocate` and packing produce: every op output)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


class Packing:
    """Samples of these shapes laid out back to back: sample `i` at element `offsets[i]`;
    `row` is the common shape of a uniform batch (None when ragged), `rows` the shapes as
    lists, `sizes` the elements per sample (ragged only; a 0-d sample counts 1)."""

    __slots__ = ("n", "offsets", "row", "rows", "sizes", "total")

    def __init__(self, shapes: Sequence[Sequence[int]] | np.ndarray) -> None:
        arr = np.asarray(shapes, dtype=np.int64)
        n = self.n = len(arr)
        arr = arr.reshape(n, -1) if n else arr.reshape(0, 0)
        self.rows: list[list[int]] = arr.tolist()
        self.row: tuple[int, ...] | None = None
        self.sizes: np.ndarray | None = None
        if n and self.rows.count(self.rows[0]) == n:
            self.row = tuple(self.rows[0])
            size = math.prod(self.row)
            self.total = n * size
            self.offsets = np.arange(0, self.total, size or 1, dtype=np.int64) if size else \
                np.zeros(n, np.int64)  # fmt: skip
            return
        sizes = self.sizes = arr.prod(axis=1) if arr.shape[1] else np.ones(n, dtype=np.int64)
        self.offsets = np.zeros(n, dtype=np.int64)
        if n > 1:
            np.cumsum(sizes[:-1], out=self.offsets[1:])
        self.total = int(sizes.sum())
