"""Box data for the bbox op tests: ordinary, empty, degenerate and out-of-image boxes."""

import numpy as np
import pytest


def boxes(count, seed=0, ltrb=True, scale=1.0):
    """`count` random boxes inside [0, scale]^2 (ltrb, or xywh)."""
    rng = np.random.default_rng(seed)
    a = rng.random((count, 2)) * scale
    b = rng.random((count, 2)) * scale
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    out = np.concatenate([lo, hi if ltrb else hi - lo], 1)
    return out.astype(np.float32)


def odd_samples(ltrb=True):
    """A ragged batch: several boxes, none, a degenerate one, boxes outside the image."""
    outside = np.array([[1.2, -0.5, 1.6, 0.1], [-0.3, 0.2, 0.1, 1.4]], np.float32)
    if not ltrb:
        outside[:, 2:] -= outside[:, :2]
    degenerate = np.array([[0.3, 0.3, 0.3, 0.6]], np.float32) if ltrb else \
        np.array([[0.3, 0.3, 0.0, 0.3]], np.float32)  # fmt: skip
    return [boxes(5, 1, ltrb), np.zeros((0, 4), np.float32), degenerate, outside, boxes(140, 2, ltrb)]


@pytest.fixture
def tiny_rows(monkeypatch):
    """Box kernels with 4 rows per program: several tiles per sample."""
    from ndd_triton.kernels.gpu import _box_rows

    monkeypatch.setattr(_box_rows, "ROW_BLOCK", 4)
