"""kernels/gpu/_interpreter_compat.py: the fixes for the interpreters of Triton 3.6-3.8.

CI runs Triton 3.9, whose interpreter needs neither fix, so the fixes are checked here against a
stand-in with the old behaviour; the golden cases ran on Triton 3.6 + NumPy 2.4 with them
(518 of 518 emulated-GPU cases pass; 104 failed before).
"""

from __future__ import annotations

import types

import numpy as np
import pytest
import triton.language as tl

from ndd_triton.kernels.gpu import _interpreter_compat as compat


class _Handle:
    def __init__(self, data: np.ndarray, dtype=None) -> None:
        self.data, self.dtype = data, dtype


class _Scope:
    def __init__(self) -> None:
        self.attrs: dict[str, object] = {}

    def set_attr(self, obj, name, value) -> None:
        self.attrs[name] = value


def _old_interpreter() -> types.SimpleNamespace:
    """The two pieces as Triton 3.6 wrote them."""

    class InterpreterBuilder:
        def get_all_ones_value(self, type):
            return _Handle(np.full(1, -1, dtype=np.dtype(type.name)), type)

    def patch_lang_tensor(tensor, scope):
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))

    return types.SimpleNamespace(
        InterpreterBuilder=InterpreterBuilder, interpreter_builder=InterpreterBuilder(),
        _patch_lang_tensor=patch_lang_tensor, TensorHandle=_Handle,
        _get_np_dtype=lambda t: np.dtype(t.name))  # fmt: skip


def test_the_old_interpreter_fails_as_reported():
    old = _old_interpreter()
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        old.interpreter_builder.get_all_ones_value(tl.uint8)
    scope = _Scope()
    old._patch_lang_tensor(object, scope)
    tensor = types.SimpleNamespace(handle=_Handle(np.array([7], np.int32)))
    with pytest.raises(TypeError, match="only 0-dimensional arrays"):
        scope.attrs["__index__"](tensor)


def test_all_ones_becomes_the_unsigned_maximum():
    old = _old_interpreter()
    assert compat._fix_all_ones(old)
    ones = old.interpreter_builder.get_all_ones_value(tl.uint8)
    assert ones.data.tolist() == [255]
    assert old.interpreter_builder.get_all_ones_value(tl.int16).data.tolist() == [-1]
    assert not compat._fix_all_ones(old)  # once


def test_index_squeezes_on_old_versions_only(monkeypatch):
    old = _old_interpreter()
    monkeypatch.setattr(compat, "_triton_version", lambda: (3, 7))
    assert not compat._fix_index(old)
    monkeypatch.setattr(compat, "_triton_version", lambda: (3, 6))
    assert compat._fix_index(old)
    scope = _Scope()
    old._patch_lang_tensor(object, scope)
    tensor = types.SimpleNamespace(handle=_Handle(np.array([7], np.int32)))
    assert scope.attrs["__index__"](tensor) == 7


def test_the_installed_interpreter_needs_no_further_fix():
    from triton.runtime import interpreter

    assert compat.install() == []  # applied at import where needed, and only once
    if compat._triton_version() >= (3, 9):
        assert not hasattr(interpreter.InterpreterBuilder.get_all_ones_value, "ndd_fixed")
