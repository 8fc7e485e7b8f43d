"""The Triton interpreter (emulated GPU) of Triton 3.6-3.8 with NumPy >= 2.4: two fixes.

Compiled kernels (a real GPU) never run this code; it only makes older interpreters behave like
Triton 3.9's, which CI uses. Both bugs are in the interpreter, not in the kernels: on Triton 3.6
+ NumPy 2.4, 104 of 518 emulated-GPU golden cases failed (rotate, filter, warp_affine,
normalize, gaussian_blur, erase, reductions, `~` on uint8, ...); with these fixes none does.

* `tensor.__index__` (Triton < 3.7): the interpreter holds every scalar as a one-element array
  and converted it with `int(array)`, which NumPy 2.4 turned into `TypeError('only
  0-dimensional arrays can be converted to Python scalars')` (deprecated since 1.25). Every loop
  with a runtime bound, `for start in range(0, n, BLOCK)`, calls it. Triton 3.7 squeezes first.
* `get_all_ones_value` (Triton < 3.9, found by trying it): `~x` on an unsigned type filled an
  array with -1, which NumPy 2 refuses (`OverflowError: Python integer -1 out of bounds for
  uint8`). Triton 3.9 uses the type's maximum.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np


def _triton_version() -> tuple[int, int]:
    import triton

    major, minor = triton.__version__.split(".")[:2]
    return int(major), int(minor)


def _scalar_index(self: Any) -> int:
    return int(self.handle.data.squeeze())


def _fix_index(interpreter: Any) -> bool:
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if _triton_version() >= (3, 7) or original is None or hasattr(original, "ndd_fixed"):
        return False

    def patch_lang_tensor(tensor: Any, scope: Any = None, *args: Any) -> None:
        if scope is None:  # older interpreters set the attributes directly
            original(tensor)
            tensor.__index__ = _scalar_index
            return
        original(tensor, scope, *args)
        scope.set_attr(tensor, "__index__", _scalar_index)

    patch_lang_tensor.ndd_fixed = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = patch_lang_tensor
    return True


def _fix_all_ones(interpreter: Any) -> bool:
    import triton.language as tl

    builder = getattr(interpreter, "InterpreterBuilder", None)
    original = getattr(builder, "get_all_ones_value", None)
    if original is None or hasattr(original, "ndd_fixed"):
        return False
    try:
        original(interpreter.interpreter_builder, tl.uint8)
        return False
    except OverflowError:
        pass

    def get_all_ones_value(self: Any, type: Any) -> Any:
        np_type = interpreter._get_np_dtype(type)
        if np.issubdtype(np_type, np.unsignedinteger):
            ones = np.full(1, np.iinfo(np_type).max, dtype=np_type)
            return interpreter.TensorHandle(ones, type.scalar)
        return original(self, type)

    get_all_ones_value.ndd_fixed = True  # type: ignore[attr-defined]
    builder.get_all_ones_value = get_all_ones_value
    return True


def install() -> list[str]:
    """Apply the fixes this interpreter needs; the names of those applied."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return []
    from triton.runtime import interpreter

    fixes = {"__index__": _fix_index, "get_all_ones_value": _fix_all_ones}
    return [name for name, fix in fixes.items() if fix(interpreter)]


install()
