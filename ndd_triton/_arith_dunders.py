"""Python operator dunders shared by Tensor and Batch; they call the arithmetic operators."""

from __future__ import annotations

from typing import Any


def _binary(name: str, left: Any, right: Any) -> Any:
    global _binary_op
    if _binary_op is None:  # imported on first use (ops import Tensor/Batch)
        from ndd_triton.ops.arithmetic import binary

        _binary_op = binary
    return _binary_op(name, left, right)


def _unary(name: str, value: Any) -> Any:
    from ndd_triton.ops.arithmetic import unary

    return unary(name, value)


_binary_op: Any = None


def _make_binary(name: str) -> tuple[Any, Any]:
    def forward(self: Any, other: Any) -> Any:
        return _binary(name, self, other)

    def reflected(self: Any, other: Any) -> Any:
        return _binary(name, other, self)

    forward.__name__ = f"__{name}__"
    reflected.__name__ = f"__r{name}__"
    return forward, reflected


class ArithmeticMixin:
    """`+ - * / // % ** & | ^ << >>`, comparisons and unary `- + ~ abs()` as ndd operators."""

    __slots__ = ()

    __add__, __radd__ = _make_binary("add")
    __sub__, __rsub__ = _make_binary("sub")
    __mul__, __rmul__ = _make_binary("mul")
    __truediv__, __rtruediv__ = _make_binary("truediv")
    __floordiv__, __rfloordiv__ = _make_binary("floordiv")
    __mod__, __rmod__ = _make_binary("mod")
    __pow__, __rpow__ = _make_binary("pow")
    __and__, __rand__ = _make_binary("and")
    __or__, __ror__ = _make_binary("or")
    __xor__, __rxor__ = _make_binary("xor")
    __lshift__, __rlshift__ = _make_binary("lshift")
    __rshift__, __rrshift__ = _make_binary("rshift")

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return _binary("eq", self, other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return _binary("ne", self, other)

    def __lt__(self, other: Any) -> Any:
        return _binary("lt", self, other)

    def __le__(self, other: Any) -> Any:
        return _binary("le", self, other)

    def __gt__(self, other: Any) -> Any:
        return _binary("gt", self, other)

    def __ge__(self, other: Any) -> Any:
        return _binary("ge", self, other)

    def __neg__(self) -> Any:
        return _unary("neg", self)

    def __pos__(self) -> Any:
        return _unary("pos", self)

    def __invert__(self) -> Any:
        return _unary("invert", self)

    def __abs__(self) -> Any:
        return _unary("abs", self)
