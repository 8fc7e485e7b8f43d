"""Bounds on the work one argument can ask for: output elements per sample and window lengths.

A typo (`size=[1e-9, 1e-9]`, `sigma=1e6`, `num_classes=10**12`) must fail at once with a
message naming the op and the argument, not allocate terabytes or run for minutes. Two limits,
both far above real images, configurable by environment variable at import or at run time:

* `max_sample_elements` (`NDD_TRITON_MAX_SAMPLE_ELEMENTS`, default 2**31): elements of one
  output sample; checked on every inferred output shape before anything is allocated.
* `max_window` (`NDD_TRITON_MAX_WINDOW`, default 8193): the taps of a filter window derived
  from arguments along one axis (Gaussian windows from `sigma`, a resize's antialiasing filter
  from the scale).

`ndd.set_limits(max_sample_elements=..., max_window=...)` changes them (returns the previous
values); `ndd.limits()` reads them. Exceeding one raises `ValueError`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ndd_triton.ops.schema import Call, OutputSpec


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = int(float(text))
    except ValueError:
        raise ValueError(f"{name} must be a positive integer; got {text!r}") from None
    if value < 1:
        raise ValueError(f"{name} must be a positive integer; got {text!r}")
    return value


_LIMITS = {
    "max_sample_elements": _env_int("NDD_TRITON_MAX_SAMPLE_ELEMENTS", 1 << 31),
    "max_window": _env_int("NDD_TRITON_MAX_WINDOW", 8193),
}


def limits() -> dict[str, int]:
    """The current limits: `max_sample_elements` and `max_window`."""
    return dict(_LIMITS)


def set_limits(*, max_sample_elements: int | None = None,
               max_window: int | None = None) -> dict[str, int]:  # fmt: skip
    """Change the limits (None keeps one); returns the previous values, so
    `ndd.set_limits(**previous)` restores them."""
    previous = limits()
    for name, value in (("max_sample_elements", max_sample_elements),
                        ("max_window", max_window)):  # fmt: skip
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"set_limits: '{name}' must be a positive int; got {value!r}")
        _LIMITS[name] = int(value)
    _CHECKED.clear()
    global GENERATION
    GENERATION += 1
    return previous


def given_names(call: Call) -> str:
    """The arguments of the call, as a message names them ('size', 'sigma' or 'the inputs')."""
    names = sorted(call.given)
    return ", ".join(f"'{n}'" for n in names) if names else "the input shapes"


# Shape tables already found within the limits, by (ndim, bytes): calls repeat the same
# shapes, and a lookup costs ~0.3 µs where two NumPy reductions cost several (prepare runs
# this for every call). Cleared when the limits change.
_CHECKED: dict[tuple[int, bytes], None] = {}
# Bumped by every set_limits: results of infer and checks kept elsewhere are valid only within
# one generation (runtime/plans.py's infer memo)
GENERATION = 0


def check_outputs(call: Call, specs: Sequence[OutputSpec]) -> None:
    """Raise ValueError when an inferred output sample has more elements than allowed (or a
    negative extent): before anything is allocated."""
    for k, spec in enumerate(specs):
        shapes = spec.shapes
        if shapes is None:
            continue
        if shapes.nbytes > 2048:  # a large batch: the check is cheap beside its work
            _check_shapes(call, specs, k, shapes)
            continue
        key = (shapes.shape[-1], shapes.tobytes())
        if key in _CHECKED:
            continue
        _check_shapes(call, specs, k, shapes)
        if len(_CHECKED) >= 4096:
            _CHECKED.clear()
        _CHECKED[key] = None


def _check_shapes(call: Call, specs: Sequence[OutputSpec], k: int, shapes: np.ndarray) -> None:
    cap = _LIMITS["max_sample_elements"]
    if shapes.size:
        counts = np.prod(shapes.astype(np.float64), axis=1)
        # (one extent alone beyond the limit fails too: NumPy refuses (0, 4e16, 52) arrays)
        bad = np.flatnonzero((counts > cap) | (shapes < 0).any(axis=1) |
                             (shapes > cap).any(axis=1))  # fmt: skip
        if not len(bad):
            return
        i = int(bad[0])
        shape = [int(v) for v in shapes[i]]
        what = f"output {k} " if len(specs) > 1 else "the output "
        if min(shape) < 0:
            raise call.error(f"{what}of sample {i} would have a negative extent {shape}; "
                             f"check {given_names(call)}")  # fmt: skip
        raise call.error(f"{what}of sample {i} would have shape {shape} ({counts[i]:.4g} "
                         f"elements), above the limit of {cap} elements (or extent) per sample; "
                         "check "
                         f"{given_names(call)} (the limit: ndd.set_limits(max_sample_elements=) "
                         "or NDD_TRITON_MAX_SAMPLE_ELEMENTS)")  # fmt: skip


def check_count(call: Call, arg: str, count: Any, what: str = "elements") -> None:
    """Raise ValueError when `count` (a number of output elements per sample, from one
    argument) is not finite or above `max_sample_elements` (check before casting or
    allocating)."""
    cap = _LIMITS["max_sample_elements"]
    worst = float(np.max(count)) if np.size(count) else 0.0
    if not np.isfinite(worst) or worst > cap:
        raise call.error(f"argument '{arg}' asks for {worst:.4g} {what} per sample, above the "
                         f"limit of {cap} (ndd.set_limits(max_sample_elements=) or "
                         "NDD_TRITON_MAX_SAMPLE_ELEMENTS)")  # fmt: skip


def check_window(call: Call, arg: str, taps: Any, what: str = "window") -> None:
    """Raise ValueError when a window derived from argument `arg` has more taps than
    `max_window` along one axis (`taps`: any array of tap counts, float or int)."""
    cap = _LIMITS["max_window"]
    worst = float(np.max(taps)) if np.size(taps) else 0.0
    if not np.isfinite(worst) or worst > cap:
        raise call.error(f"argument '{arg}' gives a {what} of {worst:.6g} taps along one axis, "
                         f"above the limit of {cap} (ndd.set_limits(max_window=) or "
                         "NDD_TRITON_MAX_WINDOW)")  # fmt: skip


def check_finite(call: Call, arg: str, values: Iterable[Any] | np.ndarray) -> None:
    """Raise ValueError when a value computed from argument `arg` is NaN or infinite."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size and not np.isfinite(arr).all():
        bad = arr.reshape(-1)[~np.isfinite(arr.reshape(-1))][0]
        raise call.error(f"argument '{arg}' must be finite; got {float(bad)!r}")
