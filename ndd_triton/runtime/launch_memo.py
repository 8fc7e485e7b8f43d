"""The launch memo: GPU calls whose signature repeats skip their host-side table work.

A GPU kernel's host work (per-sample tables with NumPy, the upload, choosing constexprs) is
most of a small call's host time. For a kernel registered with `replay=True` it depends only
on the call's signature: the argument values (per-sample ones by content), the inputs' and
outputs' shapes, packing offsets, dtypes and layouts, the stream. The memo keys calls by that
signature; the second call of a signature is recorded (`kernels/gpu/_replay.Recorder`), later
ones replay the recorded launches with their own buffers (no NumPy, no upload). Uniform
batches with constant arguments (a fixed-size crop, resize or normalisation of every batch)
hit on every call; random per-sample arguments (a coin flip per sample) make new signatures
and miss, at the cost of building the key.

Entries keep their device tables alive: the memo is bounded by entries and table bytes
(least recently used first out). `NDD_TRITON_LAUNCH_MEMO=0` turns it off.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from enum import Enum
from typing import Any

import numpy as np

from ndd_triton.core.dtype import DType
from ndd_triton.kernels import KernelEntry
from ndd_triton.ops.schema import Call

MAX_ENTRIES = 512
MAX_TABLE_BYTES = 64 << 20
_SEEN_LIMIT = 8192
ENABLED = os.environ.get("NDD_TRITON_LAUNCH_MEMO", "1") != "0"
# Record a signature the first time it is seen instead of the second (tests: every call of a
# replayable kernel is then recorded or replayed).
RECORD_AT_FIRST_SIGHT = False

_entries: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_seen: set[tuple[Any, ...]] = set()
_bytes = 0
_lock = threading.Lock()
stats = {"hits": 0, "recorded": 0, "misses": 0, "unkeyed": 0}
_last = threading.local()  # `replay`: what this thread's last `run_kernel` replayed or recorded


class _Unkeyable(Exception):
    pass


_PLAIN = (int, float, bool, str, type(None), DType, np.integer, np.floating, np.bool_, Enum)
_PLAIN_TYPES = {int, float, bool, str, type(None), DType}


def _freeze(v: Any) -> Any:
    """A hashable stand-in equal for equal values (arrays by content), or `_Unkeyable`."""
    t = type(v)
    if t in _PLAIN_TYPES:
        return v
    if t is np.ndarray:
        if v.dtype.hasobject:
            raise _Unkeyable
        return (v.dtype.str, v.shape, v.tobytes())
    if t is list or t is tuple:
        items = tuple(v)
        for x in items:
            if type(x) not in _PLAIN_TYPES:
                return (t, tuple(_freeze(x) for x in items))
        return (t, items)
    if t is dict:
        return (dict, tuple((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, _PLAIN):  # NumPy scalars, enums, subclasses
        return v
    params = getattr(t, "__dataclass_params__", None)
    if params is not None and params.frozen:  # plain-data arguments (e.g. arithmetic constants)
        return (t, tuple(_freeze(getattr(v, f)) for f in t.__dataclass_fields__))
    raise _Unkeyable


def _buffers_key(ins: list[Any], outs: list[Any], full: bool) -> list[Any] | None:
    """Per buffer: its dtype and packing (`full`: also shapes, layout and element type), or
    None when two buffers share memory (their relation is not part of the key)."""
    parts: list[Any] = []
    ptrs = set()
    buffers = (*ins, *outs)
    shared = len(buffers) - buffers.count(None) > 1  # (one buffer cannot share with another)
    for b in buffers:
        if b is None:
            parts.append(None)
            continue
        if shared:
            ptrs.add(b.data.untyped_storage().data_ptr())
        parts.append((b.data.dtype, b.offsets.tobytes(), b.shapes.shape, b.shapes.tobytes(),
                      b.layout, b.dtype) if full else (b.data.dtype, b.offsets.tobytes()))
    return parts if not shared or len(ptrs) == len(parts) - parts.count(None) else None


def memo_key(kernel: KernelEntry, call: Call, ins: list[Any], outs: list[Any],
             stream: Any) -> tuple[Any, ...] | None:  # fmt: skip
    """The signature of a GPU call, or None when it cannot be memoised.

    A call with a `signature` (its values are a plan's remembered infer result for its input
    shapes, metadata included) is keyed by that serial and its buffers' packing; any other
    by its buffers' metadata and every argument value."""
    replay = kernel.replay
    if not replay or (replay is not True and not replay(call)):
        return None
    # With a signature the outputs are implied: `_launch_gpu` allocates them afresh (no
    # sharing) from the remembered infer result's shapes (their dtype and packing)
    buffers = _buffers_key(ins, outs if call.signature is None else [],
                           full=call.signature is None)  # fmt: skip
    if buffers is None:
        return None
    key: list[Any] = [id(kernel), id(stream), call.batch_size, *buffers]
    if call.signature is not None:
        key.append(call.signature)
        return tuple(key)
    try:
        for meta in call.inputs:
            if meta is not None and (meta.values is not None or meta.hints):
                key.append((_freeze(meta.values), _freeze(meta.hints)))
        key.extend((name, _freeze(value)) for name, value in call.values.items())
    except _Unkeyable:
        return None
    key.append(frozenset(call.per_sample))
    key.append(frozenset(call.given))
    return tuple(key)


def run_kernel(kernel: KernelEntry, run: Any, dst: Any, ins: list[Any], call: Call,
               stream: Any) -> None:  # fmt: skip
    """`kernel.fn(run, dst, *ins, call)`, through the memo where the kernel allows it."""
    if ENABLED and kernel.replay:
        outs = list(dst) if isinstance(dst, tuple) else [dst]
        key = memo_key(kernel, call, ins, outs, stream)
    else:  # (never memoised: the decoders, ops that launch through other ops)
        key = None
    # (`_last` is set after the kernel ran: a kernel may call ops, whose runs set it too)
    if key is None:
        stats["unkeyed"] += 1
        kernel.fn(run, dst, *ins, call)
        _last.replay = None
        return
    in_data = [b.data if b is not None else None for b in ins]
    out_data = [b.data for b in outs]
    entry = _entries.get(key)
    if entry is not None:
        stats["hits"] += 1
        with _lock:
            if key in _entries:
                _entries.move_to_end(key)
        entry.replay(run, in_data, out_data, call.draw_at)
        _last.replay = entry
        return
    if not RECORD_AT_FIRST_SIGHT and key not in _seen:
        # first sight: run it; record only when the signature comes back
        stats["misses"] += 1
        if len(_seen) >= _SEEN_LIMIT:
            _seen.clear()
        _seen.add(key)
        kernel.fn(run, dst, *ins, call)
        _last.replay = None
        return
    from ndd_triton.kernels.gpu._replay import Recorder

    recorder = Recorder(run, in_data, out_data)
    kernel.fn(recorder, dst, *ins, call)
    replay = recorder.finish()
    _last.replay = replay
    if replay is not None:
        stats["recorded"] += 1
        _store(key, replay)


def forget_last() -> None:
    """A call that launched nothing: no earlier call's replay may be taken for it."""
    _last.replay = None


def last_replay() -> Any:
    """The `Replay` this thread's last `run_kernel` used or recorded (then forgotten), or None:
    what a whole-call replay (`runtime/call_replay.py`) of the same call may launch."""
    replay = getattr(_last, "replay", None)
    _last.replay = None
    return replay


def _store(key: tuple[Any, ...], replay: Any) -> None:
    global _bytes
    if replay.nbytes > MAX_TABLE_BYTES // 4:
        return
    with _lock:
        if key in _entries:
            return
        _entries[key] = replay
        _bytes += replay.nbytes
        while len(_entries) > MAX_ENTRIES or _bytes > MAX_TABLE_BYTES:
            _, old = _entries.popitem(last=False)
            _bytes -= old.nbytes


def clear() -> None:
    """Forget every entry (tests; frees the kept device tables)."""
    global _bytes
    with _lock:
        _entries.clear()
        _seen.clear()
        _bytes = 0
        for k in stats:
            stats[k] = 0
