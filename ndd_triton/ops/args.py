"""Argument normalisation: user values -> validated Python values or `[N, ...]` host arrays.

Per-sample arguments (schema `per_sample=True`) accept a constant, a Tensor (one value for every
sample) or a Batch (one value per sample); they always come out as arrays with a leading batch
dimension so kernels index them the same way whatever the user passed.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import torch

from ndd_triton.core.batch import Batch
from ndd_triton.core.dtype import to_dtype_arg
from ndd_triton.core.errors import ArgumentValueError, CallTypeError, CallValueError, show
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops.schema import Arg

_NP_KIND = {"int": np.int64, "float": np.float64, "bool": np.bool_, "enum": np.int64}
_TORCH_NUMERIC = (
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.float32,
    torch.float64,
)


def _type_error(op: str, arg: Arg, value: Any, expected: str) -> TypeError:
    return CallTypeError(
        f"{op}: argument '{arg.name}' expects {expected}; got {type(value).__name__} {show(value)}"
    )


def _expected(arg: Arg) -> str:
    base = {"int": "an int", "float": "a float", "bool": "a bool", "str": "a str",
            "dtype": "a dtype", "layout": "a layout string", "enum": "an enum member or int",
            "rng": "an ndd.random.RNG", "any": "a value"}.get(arg.kind, arg.kind)  # fmt: skip
    if arg.vector:
        base = f"{base} or a list of them"
    if arg.per_sample:
        base = f"{base}, a Tensor or a Batch"
    return base


def convert_scalar(op: str, arg: Arg, value: Any) -> Any:
    """One scalar value converted to the argument's kind."""
    kind = arg.kind
    if kind in ("int", "enum", "float", "bool"):
        if isinstance(value, str | bytes):
            raise CallValueError(
                f"{op}: argument '{arg.name}' expects {_expected(arg)}; got str {value!r}"
            )
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if not isinstance(value, numbers.Real | np.bool_):
            raise _type_error(op, arg, value, _expected(arg))
        if kind == "bool":
            return bool(value)
        value = float(value) if kind == "float" or not isinstance(value, numbers.Integral) \
            else int(value)  # fmt: skip
        if not _in_range(arg, value):
            raise _range_error(op, arg, value, None)
        return value if kind == "float" else int(value)  # floats are truncated, as in DALI
    if kind in ("str", "layout"):
        if not isinstance(value, str):
            raise _type_error(op, arg, value, _expected(arg))
        return value
    if kind == "dtype":
        return to_dtype_arg(value, f"{op}: argument '{arg.name}'")
    if kind == "rng":
        from ndd_triton.random._rng import RNG

        if not isinstance(value, RNG):
            raise _type_error(op, arg, value, _expected(arg))
        return value
    return value


# Value arguments where NaN and infinity are meaningful data (a float image's fill value).
NONFINITE_OK = frozenset({"fill_value", "fill_values", "default_value", "on_value", "off_value",
                          "values", "salt_val", "pepper_val"})  # fmt: skip
_INT_LIMIT = float(1 << 63)
_F32_MAX = float(np.finfo(np.float32).max)


def _in_range(arg: Arg, value: float | int) -> bool:
    """True when a scalar can be this argument's value: finite (float args in NONFINITE_OK
    excepted) and, for int arguments, within int64."""
    if arg.kind == "float":  # (float32, as in DALI: 1e39 would become inf)
        if arg.name in NONFINITE_OK:
            return not math.isfinite(value) or abs(value) <= _F32_MAX
        return math.isfinite(value) and abs(value) <= _F32_MAX
    return -_INT_LIMIT <= value < _INT_LIMIT  # (NaN compares False)


def _range_error(op: str, arg: Arg, value: Any, index: int | None) -> ValueError:
    where = f" sample {index}" if index is not None else ""
    expected = "an integer within int64" if arg.kind != "float" else \
        "a number within float32" if arg.name in NONFINITE_OK else \
        "a finite number (within float32)"  # fmt: skip
    return ArgumentValueError(
        f"{op}: argument '{arg.name}'{where} expects {expected}; got {show(value)}"
    )


def _check_array(op: str, arg: Arg, arr: np.ndarray, index: int | None) -> None:
    """`_in_range` for a numeric array (vectorised; cheap when the values are fine)."""
    if arr.dtype.kind == "f" and arg.kind == "float" and arg.name in NONFINITE_OK:
        with np.errstate(invalid="ignore"):
            big = np.isfinite(arr) & (np.abs(arr) > _F32_MAX)
        if big.any():
            raise _range_error(op, arg, float(arr[big].reshape(-1)[0]), index)
        return
    if arr.dtype.kind != "f":
        if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arg.kind in ("int", "enum") \
                and arr.size and arr.max() >= 1 << 63:  # fmt: skip
            raise _range_error(op, arg, arr.max(), index)
        return
    if arg.kind in ("int", "enum"):
        ok = (arr >= -_INT_LIMIT) & (arr < _INT_LIMIT)
    elif arg.kind == "float":
        ok = np.abs(arr) <= _F32_MAX  # (False for NaN)
    else:
        return
    if not ok.all():
        flat = arr.reshape(-1)
        bad = int(np.flatnonzero(~ok.reshape(-1))[0])
        if index is None and arr.ndim >= 1 and arr.shape[0] > 0 and arr.size > 1:
            index = bad // max(1, arr.size // arr.shape[0])
        raise _range_error(op, arg, float(flat[bad]), index)


def _constant_array(op: str, arg: Arg, value: Any) -> np.ndarray:
    """A constant (scalar or list) as a NumPy array of the argument's kind."""
    if isinstance(value, list | tuple | np.ndarray):
        if not arg.vector:
            raise _type_error(op, arg, value, _expected(arg))
        items = [convert_scalar(op, arg, v) for v in np.asarray(value, dtype=object).reshape(-1)]
        arr = np.array(items, dtype=_NP_KIND.get(arg.kind, object))
        return arr.reshape(np.shape(value))
    return np.asarray(convert_scalar(op, arg, value), dtype=_NP_KIND.get(arg.kind, object))


def _sample_array(op: str, arg: Arg, value: Any, index: int | None) -> np.ndarray:
    where = f" sample {index}" if index is not None else ""
    arr = np.asarray(value.cpu() if isinstance(value, Tensor) else value)
    if arr.dtype.kind not in "biuf":
        raise CallTypeError(f"{op}: argument '{arg.name}'{where} must be numeric; got {arr.dtype}")
    if not arg.vector and arr.size != 1:
        raise ValueError(
            f"{op}: argument '{arg.name}'{where} expects a scalar per sample; got shape {arr.shape}"
        )
    _check_array(op, arg, arr, index)
    arr = _to_kind(arg, arr)
    return arr.reshape(()) if not arg.vector else arr


def _to_kind(arg: Arg, arr: np.ndarray) -> np.ndarray:
    """Numeric values as the argument's kind (a new array; floats truncate to ints, as DALI)."""
    if arg.kind in ("int", "enum"):
        return np.trunc(arr).astype(np.int64) if arr.dtype.kind == "f" else arr.astype(np.int64)
    if arg.kind == "float":
        return arr.astype(np.float64)
    if arg.kind == "bool":
        return arr.astype(np.bool_)
    return arr.copy()


_CONSTANTS: dict[tuple[int, str, Any, int], np.ndarray] = {}


def _broadcast_constant(op: str, arg: Arg, value: Any, batch_size: int) -> np.ndarray:
    """Read-only `[N, ...]` view of a converted constant, memoised per (arg, value, N): most
    calls repeat the same literal arguments, and conversion + broadcast cost microseconds."""
    try:
        key = (id(arg), type(value).__name__, value, batch_size)
        hit = _CONSTANTS.get(key)
    except TypeError:  # unhashable (list, ndarray)
        const = _constant_array(op, arg, value)
        return np.broadcast_to(const, (batch_size, *const.shape))
    if hit is None:
        const = _constant_array(op, arg, value)
        hit = np.broadcast_to(const, (batch_size, *const.shape))
        if len(_CONSTANTS) > 4096:
            _CONSTANTS.clear()
        _CONSTANTS[key] = hit
    return hit


def _dense_host_array(value: Batch) -> np.ndarray | None:
    """`(N, ...)` NumPy view of a uniform host Batch (e.g. `random.coin_flip`'s output), or
    None: the per-sample path would convert N small arrays one by one."""
    if value.device.device_type != "cpu" or value.batch_size == 0:
        return None
    storage = value._storage_or_raise()
    arr = storage._dense_np
    if arr is None:
        dense = storage.dense()
        if dense is None or dense.dtype not in _TORCH_NUMERIC:
            return None
        arr = dense.numpy()
    return arr if arr.dtype.kind in "biuf" else None


def _dense_sample_values(op: str, arg: Arg, arr: np.ndarray) -> np.ndarray:
    """`per_sample_value` of a uniform batch in one vectorised step (same rules and errors as
    `_sample_array` per sample; every sample has the shape of sample 0)."""
    n, sample_shape = arr.shape[0], arr.shape[1:]
    size = int(np.prod(sample_shape, dtype=np.int64))
    if not arg.vector and size != 1:
        raise ValueError(f"{op}: argument '{arg.name}' sample 0 expects a scalar per sample; "
                         f"got shape {sample_shape}")  # fmt: skip
    _check_array(op, arg, arr, None)
    arr = _to_kind(arg, arr)  # a copy: kernels may run after the batch is reused
    if not arg.vector:
        return arr.reshape(n)
    if arg.length is None:
        return arr
    if size == 1:
        return np.broadcast_to(arr.reshape(n, 1), (n, arg.length))
    if size != arg.length:
        raise ValueError(
            f"{op}: argument '{arg.name}' sample 0: expected {arg.length} values; got {size}"
        )
    return arr.reshape(n, arg.length)


def per_sample_value(op: str, arg: Arg, value: Any, batch_size: int) -> Any:
    """`[N, ...]` array (or list of arrays when vector lengths differ) for a per-sample arg.

    Constants become a read-only broadcast view (no copy per sample).
    """
    if not isinstance(value, Batch | Tensor) and not (arg.vector and arg.length is not None):
        return _broadcast_constant(op, arg, value, batch_size)
    if isinstance(value, Batch):
        if value.batch_size != batch_size:
            raise ValueError(
                f"{op}: Inconsistent batch size: argument '{arg.name}' has "
                f"{value.batch_size} samples, expected {batch_size}"
            )
        dense = _dense_host_array(value)
        if dense is not None:
            return _dense_sample_values(op, arg, dense)
        samples = [_sample_array(op, arg, s, i) for i, s in enumerate(value)]
    elif isinstance(value, Tensor):
        samples = [_sample_array(op, arg, value, None)] * batch_size
    else:
        samples = [_constant_array(op, arg, value)] * batch_size
    if arg.vector and arg.length is not None:
        samples = [np.broadcast_to(s.reshape(-1), (arg.length,)) if s.size == 1 else s.reshape(-1)
                   for s in samples]  # fmt: skip
        for i, s in enumerate(samples):
            if s.size != arg.length:
                raise ValueError(
                    f"{op}: argument '{arg.name}' sample {i}: expected "
                    f"{arg.length} values; got {s.size}"
                )
    if not samples:
        return np.zeros((0,), dtype=_NP_KIND.get(arg.kind, np.float64))
    if all(s.shape == samples[0].shape for s in samples):
        return np.stack(samples)
    return samples


def constant_value(op: str, arg: Arg, value: Any) -> Any:
    """A non-per-sample argument converted (lists stay lists of converted scalars)."""
    if isinstance(value, Tensor | Batch):
        raise CallTypeError(
            f"{op}: argument '{arg.name}' does not accept a Tensor or Batch (it "
            "is not a per-sample argument); pass a constant"
        )
    if isinstance(value, list | tuple | np.ndarray):
        if not arg.vector:
            raise _type_error(op, arg, value, _expected(arg))
        fast = _numeric_list(arg, value)
        if fast is not None:
            return fast
        return [convert_scalar(op, arg, v) for v in np.asarray(value, dtype=object).reshape(-1)]
    value = convert_scalar(op, arg, value)
    if arg.vector and arg.kind not in ("str", "layout"):
        return [value] if arg.length is None else [value] * arg.length
    return value


_FAST_LIST = 16  # shorter lists convert value by value (as cheap, and no array made)


def _numeric_list(arg: Arg, value: list | tuple | np.ndarray) -> list[Any] | None:
    """`constant_value` of a long numeric list or array, vectorised (box_encoder's 5952 anchor
    coordinates took 15-21 ms value by value, 0.3-0.4 ms so): the same Python floats / ints, or
    None where the values need `convert_scalar` (other kinds, mixed or out-of-range values:
    it raises the precise error)."""
    if arg.kind not in ("float", "int", "enum"):
        return None
    if isinstance(value, np.ndarray):
        arr = value
        if arr.dtype.kind not in "fiu":
            return None
    else:
        if len(value) < _FAST_LIST:
            return None
        try:  # (a Python list: exact float64 or int64, else fall back)
            arr = np.asarray(value)
        except (ValueError, TypeError, OverflowError):
            return None
        if arr.dtype not in (np.float64, np.int64) or (arr.dtype == np.int64) != (
                arg.kind != "float"):  # fmt: skip
            return None
    arr = arr.reshape(-1)
    if arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            limit = _F32_MAX if arg.kind == "float" else _INT_LIMIT - 1024
            if not (np.isfinite(arr) & (np.abs(arr) <= limit)).all():
                return None
    elif arr.dtype.kind == "u" and arr.size and arr.max() >= 1 << 63:
        return None
    if arg.kind == "float":
        return arr.astype(np.float64).tolist()
    return arr.astype(np.int64).tolist()  # (floats truncated, as int() does)


def validate(op: str, arg: Arg, value: Any) -> None:
    """Run `choices` and `check` on a converted value."""
    if arg.choices is not None:
        flat = value if isinstance(value, list) else np.asarray(value, dtype=object).reshape(-1)
        for v in flat:
            if v not in arg.choices:
                raise ValueError(
                    f"{op}: argument '{arg.name}' must be one of "
                    f"{', '.join(map(show, arg.choices))}; got {show(v)}"
                )
    if arg.check is not None:
        problem = arg.check(value)
        if problem:
            raise ValueError(f"{op}: argument '{arg.name}' {problem}")


def non_negative(value: Any) -> str | None:
    """Schema `check=`: every value >= 0 (per-sample arrays, lists or scalars)."""
    flat = value if isinstance(value, list) else [value]
    for item in flat:
        arr = np.asarray(item, dtype=np.float64).reshape(-1)
        if arr.size and (arr < 0).any():
            bad = arr[arr < 0]
            return f"must not be negative; got {show(bad[0].item())}"
    return None
