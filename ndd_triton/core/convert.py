"""DALI's numeric conversion: round half away from zero, then saturate (NumPy and torch forms).

Used by `tensor(..., dtype=)` on array sources, by the `cast` CPU kernel and by every kernel
that writes integer outputs, so the rule lives in one place.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

_FLOAT_KINDS = "fc"


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round to nearest, ties away from zero (DALI's float-to-int rule)."""
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def convert_numpy(src: np.ndarray, dst_dtype: np.dtype[Any], out: np.ndarray | None = None
                  ) -> np.ndarray:  # fmt: skip
    """Convert with DALI semantics: float->int rounds half away and saturates, int->int clamps.

    NaN becomes 0 for integer types narrower than 32 bits and the type's minimum otherwise
    (matching DALI's observed behaviour); int->bool means `!= 0`, float->bool rounds first
    (`|x| >= 0.5` or NaN is True, as in DALI's golden `cast` data).
    """
    dst_dtype = np.dtype(dst_dtype)
    if out is None:
        out = np.empty(src.shape, dst_dtype)
    if dst_dtype.kind == "b" and src.dtype.kind in _FLOAT_KINDS:
        np.not_equal(round_half_away(src.astype(np.float64)), 0, out=out)  # DALI rounds first
    elif dst_dtype.kind == "b":
        np.not_equal(src, 0, out=out)
    elif dst_dtype.kind in _FLOAT_KINDS or src.dtype == dst_dtype:
        out[...] = src
    elif src.dtype.kind in _FLOAT_KINDS:
        info = np.iinfo(dst_dtype)
        wide = round_half_away(src.astype(np.float64))
        nan = np.isnan(wide)
        np.clip(wide, float(info.min), float(info.max), out=wide)
        if dst_dtype.itemsize >= 4:
            # float64 cannot hold INT64_MAX exactly: saturate explicitly after the cast.
            big = wide >= float(info.max)
            with np.errstate(invalid="ignore"):  # values >= max are fixed up just below
                res = wide.astype(dst_dtype)
            res[big] = info.max
            res[nan] = info.min
            out[...] = res
        else:
            wide[nan] = 0
            out[...] = wide.astype(dst_dtype)
    elif src.dtype.kind == "b":
        out[...] = src
    else:
        info = np.iinfo(dst_dtype)
        src_info = np.iinfo(src.dtype)
        if src_info.min >= info.min and src_info.max <= info.max:
            out[...] = src
        elif src.dtype.kind == "u":
            out[...] = np.minimum(src, np.array(info.max).astype(src.dtype))
        else:
            low = max(int(info.min), int(src_info.min))
            high = min(int(info.max), int(src_info.max))
            out[...] = np.clip(src, low, high)
    return out


def convert_torch(src: torch.Tensor, dst: torch.dtype) -> torch.Tensor:
    """`convert_numpy` for torch tensors on any device (used on CUDA storage)."""
    if src.dtype == dst:
        return src.clone()
    if src.device.type == "cpu" and dst != torch.bfloat16 and src.dtype != torch.bfloat16:
        arr = convert_numpy(src.numpy(), torch.empty(0, dtype=dst).numpy().dtype)
        return torch.from_numpy(arr)
    if dst == torch.bool:
        if src.dtype.is_floating_point:
            return (src.abs() >= 0.5) | torch.isnan(src)
        return src != 0
    if dst.is_floating_point:
        return src.to(dst)
    info = torch.iinfo(dst)
    if src.dtype.is_floating_point:
        wide = src.to(torch.float64)
        nan = torch.isnan(wide)
        wide = torch.sign(wide) * torch.floor(wide.abs() + 0.5)
        wide = wide.clamp(info.min, info.max)
        res = wide.to(dst)
        res[wide >= float(info.max)] = info.max
        res[nan] = info.min if info.bits >= 32 else 0
        return res
    return src.to(torch.int64).clamp(info.min, info.max).to(dst)
