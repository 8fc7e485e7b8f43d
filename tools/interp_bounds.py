"""Bounds checking for Triton's interpreter: every load and store of an interpreted kernel must
touch only the memory of the kernel's tensor arguments.

On a GPU an access past a tensor's allocation reads another buffer's bytes, or faults with an
illegal address when nothing is mapped there; in the interpreter (NumPy on raw host addresses)
it reads whatever lies there and only rarely crashes (issue #17's normalize partial tiles read
their statistics table out of bounds for months). With `install()`, each launch records the
memory of its tensor arguments (each tensor's own elements, from its first to its last; with
`STRICT = False` their whole storages), and every load or store
checks the addresses of its active lanes (mask set) against them: an access outside all of
them raises `OutOfBounds`, naming the kernel, the access and how far it lies from the nearest
argument. Masked-off lanes are not checked (they are never accessed).

Tests enable it for the whole run (`tests/conftest.py`); `NDD_TRITON_CHECK_BOUNDS=0` turns it
off there.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

_state = threading.local()  # `ranges`: (starts, ends, names) of the running launch's arguments
_installed = False
# The range of an argument: the elements of the tensor itself (a view's, so that a read past
# one table into the next table of the same upload is caught), or its whole storage
STRICT = True
# Kernels whose loads legitimately reach buffers that are not their arguments (their stores are
# still checked), with the reason
UNCHECKED_LOADS = {
    "_pieces_kernel": "concat/stack read every input through the first input's pointer plus "
                      "its element distance (kernels/gpu/concat.py)",
}


class OutOfBounds(AssertionError):
    """An interpreted kernel accessed memory outside its tensor arguments."""


def _argument_ranges(args: list[Any], names: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    spans = []
    for name, arg in zip(names, args, strict=False):
        t = getattr(arg, "base", arg)  # (TensorWrapper)
        if not hasattr(t, "untyped_storage"):
            continue
        if STRICT:  # the tensor's own elements (a view's, not its storage's)
            start = t.data_ptr()
            last = sum((n - 1) * st for n, st in zip(t.shape, t.stride(), strict=True) if n)
            size = (last + 1) * t.element_size() if t.numel() else 0
            spans.append((start, start + size, name))
            continue
        s = t.untyped_storage()
        spans.append((s.data_ptr(), s.data_ptr() + s.nbytes(), name))
    spans.sort()
    return (np.array([s for s, _, _ in spans], np.uint64),
            np.array([e for _, e, _ in spans], np.uint64), [n for _, _, n in spans])  # fmt: skip


def _check(ptrs: np.ndarray, mask: np.ndarray | None, itemsize: int, what: str) -> None:
    ranges = getattr(_state, "ranges", None)
    if ranges is None:
        return
    starts, ends, names = ranges
    addrs = np.asarray(ptrs).reshape(-1)
    if mask is not None:
        addrs = addrs[np.broadcast_to(np.asarray(mask), np.shape(ptrs)).reshape(-1)]
    if not addrs.size:
        return
    addrs = addrs.astype(np.uint64)
    k = np.searchsorted(starts, addrs, side="right").astype(np.int64) - 1
    inside = (k >= 0) & (addrs + np.uint64(itemsize) <= ends[np.maximum(k, 0)])
    if inside.all():
        return
    bad = addrs[~inside]
    first = int(bad[0])
    near = int(np.argmin(np.minimum(np.abs(starts.astype(np.int64) - first),
                                    np.abs(ends.astype(np.int64) - first))))  # fmt: skip
    offset = first - int(starts[near])
    size = int(ends[near] - starts[near])
    raise OutOfBounds(
        f"{getattr(_state, 'kernel', '?')}: {what} of {bad.size} lane(s) outside the kernel's "
        f"tensor arguments; the first at byte {offset} of '{names[near]}' ({size} bytes)"
    )


def install() -> None:
    """Check every interpreted launch of this process from now on (idempotent)."""
    global _installed
    if _installed:
        return
    from triton.runtime import interpreter as interp

    grid_call = interp.GridExecutor.__call__
    init_args = interp.GridExecutor._init_args_hst

    def init_args_hst(self: Any, args_dev: Any, kwargs: Any) -> Any:
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        names = list(self.arg_names[:len(args_hst)]) + list(kwargs_hst)
        _state.ranges = _argument_ranges([*args_hst, *kwargs_hst.values()], names)
        _state.kernel = getattr(self.fn, "__qualname__", str(self.fn))
        return args_hst, kwargs_hst

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return grid_call(self, *args, **kwargs)
        finally:
            _state.ranges = None

    builder = interp.InterpreterBuilder
    masked_load, masked_store = builder.create_masked_load, builder.create_masked_store

    def create_masked_load(self: Any, ptrs: Any, mask: Any, other: Any, *rest: Any) -> Any:
        if getattr(_state, "kernel", None) not in UNCHECKED_LOADS:
            itemsize = np.dtype(interp._get_np_dtype(ptrs.get_element_ty())).itemsize
            _check(ptrs.data, mask.data, itemsize, "a load")
        return masked_load(self, ptrs, mask, other, *rest)

    def create_masked_store(self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        _check(ptrs.data, mask.data, np.asarray(value.data).dtype.itemsize, "a store")
        return masked_store(self, ptrs, value, mask, *rest)

    interp.GridExecutor._init_args_hst = init_args_hst
    interp.GridExecutor.__call__ = call
    builder.create_masked_load = create_masked_load
    builder.create_masked_store = create_masked_store
    _installed = True
