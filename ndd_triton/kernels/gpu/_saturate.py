"""Float -> integer conversion in Triton with DALI's rule (as `_convert.convert_numpy`).

Round half away from zero, saturate to the type's range; NaN becomes 0 for types narrower than
32 bits and the type's minimum otherwise. `int_limits(np_dtype)` gives the constexpr kwargs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl


def int_limits(dtype: Any) -> dict[str, Any]:
    """constexpr kwargs `LO, HI, HI_INT, NAN_INT` of `_helper_round_saturate` (NumPy int dtype)."""
    info = np.iinfo(dtype)
    nan = 0 if info.bits < 32 else int(info.min)
    return {"LO": float(info.min), "HI": float(info.max), "HI_INT": int(info.max),
            "NAN_INT": nan}  # fmt: skip


@triton.jit
def _helper_round_saturate(x, DT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                   HI_INT: tl.constexpr, NAN_INT: tl.constexpr):  # fmt: skip
    """`x` (any float) -> `DT` integers: round half away from zero, saturate, NaN rule."""
    x = x.to(tl.float64)
    nan = x != x
    r = tl.floor(tl.abs(x) + 0.5)
    r = tl.where(x < 0, -r, r)
    r = tl.where(nan, 0.0, r)
    r = tl.minimum(tl.maximum(r, LO), HI)
    big = r >= HI  # HI may round up in float64 (64-bit types): saturate explicitly
    v = tl.where(big, 0.0, r).to(DT)
    v = tl.where(big, tl.full(v.shape, HI_INT, DT), v)
    v = tl.where(nan, tl.full(v.shape, NAN_INT, DT), v)
    return v
