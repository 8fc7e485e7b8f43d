"""Python operator dunders shared by Tensor and Batch; they call the arithmetic operators."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _not_connected(*args: Any) -> Any:
    raise RuntimeError("ndd_triton's arithmetic operators are not connected (import ndd_triton)")


_binary: Any = _not_connected
_unary: Any = _not_connected


def connect(binary: Callable[[str, Any, Any], Any], unary: Callable[[str, Any], Any]) -> None:
    """Install the functions behind the dunders: `binary(name, left, right)`, `unary(name, x)`.

    The operator layer (`ops.arithmetic`) calls this when it is imported: the data model stays
    below the operators (no import of ops from core).
    """
    global _binary, _unary
    _binary, _unary = binary, unary


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
