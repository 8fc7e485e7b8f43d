"""Feature specs for `readers.TFRecord` (DALI's `nvidia.dali.tfrecord`, without TensorFlow).

    from ndd_triton.readers import tfrecord as tfrec
    reader = ndd.readers.TFRecord(
        path=["train.tfrecord"], index_path=["train.idx"],
        features={"image/encoded": tfrec.FixedLenFeature([], tfrec.string, ""),
                  "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
                  "image/object/bbox/xmin": tfrec.VarLenFeature(tfrec.float32, 0.0)})

Element types: `int64` (i64 output), `float32` (f32) and `string` (bytes as u8 1-D).
`FixedLenFeature(shape, dtype, default_value)` expects exactly `prod(shape)` values and reshapes
them (`[]` = a scalar; for `string`, one value whose bytes are the output). A missing feature
takes `default_value` (filled to `shape`), or fails when there is none.
`VarLenFeature(dtype, default_value)` returns all values as 1-D (a missing feature gives
`[default_value]`, or an empty array without a default; a `string` feature must hold at most
one value).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

int64 = "int64"
float32 = "float32"
string = "string"
_NUMPY: dict[str, type[np.generic]] = {int64: np.int64, float32: np.float32, string: np.uint8}


@dataclass(frozen=True, slots=True)
class Feature:
    """A feature spec: `fixed` (with `shape`) or variable length, element type and default."""

    fixed: bool
    dtype: str
    shape: tuple[int, ...]
    default_value: Any

    @property
    def numpy_dtype(self) -> type[np.generic]:
        """The NumPy type of the output."""
        return _NUMPY[self.dtype]


def _check_dtype(dtype: Any, what: str) -> str:
    if dtype not in _NUMPY:
        raise TypeError(f"{what}: dtype must be tfrecord.int64, tfrecord.float32 or "
                        f"tfrecord.string; got {dtype!r}")
    return str(dtype)


def FixedLenFeature(shape: Any, dtype: Any, default_value: Any = None) -> Feature:
    """A feature with exactly `prod(shape)` values, reshaped to `shape`."""
    items = [shape] if isinstance(shape, int) else shape
    if not isinstance(items, list | tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in items):
        raise TypeError(f"FixedLenFeature: shape must be a list of non-negative ints; got "
                        f"{shape!r}")
    kind = _check_dtype(dtype, "FixedLenFeature")
    if kind == string and int(np.prod(items)) != 1:
        raise ValueError(f"FixedLenFeature: a string feature holds one value (shape [] or [1]); "
                         f"got shape {list(items)}")
    return Feature(True, kind, tuple(items), default_value)


def VarLenFeature(dtype: Any, default_value: Any = None) -> Feature:
    """A feature with any number of values, returned as 1-D."""
    return Feature(False, _check_dtype(dtype, "VarLenFeature"), (), default_value)


__all__ = ["Feature", "FixedLenFeature", "VarLenFeature", "float32", "int64", "string"]
