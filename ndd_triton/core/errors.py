"""Which errors surface at the call in every eval mode (spec/core.md §2).

Python signature errors, argument conversions (a str where an int is expected), inputs that
cannot become tensors, a layout-less input whose rank fits no layout, and the choice of device
are about *how the op was called*: they raise at the call in every mode. Everything the
operator checks from data or argument values (bad values, wrong layout strings, dtypes,
windows, headers, shape mismatches) surfaces where the result is first consumed in eager and
deferred mode. The first kind is marked by deriving from `CallError`; prepare raises those at
once and defers the rest (runtime/prepare.py).
"""

from __future__ import annotations


class CallError(Exception):
    """Marker: an error in how an operator was called, raised at the call in every mode."""


class CallTypeError(CallError, TypeError):
    """A wrong argument or input type, found while converting the call."""


class CallValueError(CallError, ValueError):
    """A value that cannot be converted, or a layout-less input of no supported rank."""


class CallRuntimeError(CallError, RuntimeError):
    """A call that cannot be placed (e.g. device='gpu' with no GPU)."""


_CALL_CLASSES: dict[type[Exception], type[Exception]] = {
    TypeError: CallTypeError,
    ValueError: CallValueError,
    RuntimeError: CallRuntimeError,
}


def call_error(kind: type[Exception], message: str) -> Exception:
    """An exception of class `kind` marked as a call error (a subclass of both)."""
    cls = _CALL_CLASSES.get(kind)
    if cls is None:
        cls = _CALL_CLASSES[kind] = type(f"Call{kind.__name__}", (CallError, kind), {})
    return cls(message)


class ArgumentValueError(ValueError, RuntimeError):
    """An argument value no operator can use (NaN, infinity, out of the integer range).

    Both a ValueError and a RuntimeError: DALI 2.4 reports the cases it checks (a NaN crop
    anchor, a NaN slice start) as RuntimeError, and a ValueError is what Python code expects.
    """


def show(value: object) -> str:
    """`repr` of a value for messages, NumPy scalars and arrays as plain Python (`-4`, not
    `np.int64(-4)`), cut to 80 characters."""
    text = repr(_plain(value))
    return text if len(text) <= 80 else text[:77] + "..."


def _plain(value: object) -> object:
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    if type(value) in (list, tuple):
        return type(value)(_plain(v) for v in value)  # type: ignore[call-arg,operator]
    return value
