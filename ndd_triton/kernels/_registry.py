"""Kernel registry: `@register(schema, "cpu"|"gpu")` and lazy lookup by the op's module name.

GPU modules are imported on the first GPU dispatch only, because Triton reads TRITON_INTERPRET
when `@triton.jit` runs and CPU-only installs may lack Triton.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_KERNELS: dict[tuple[str, str], KernelEntry] = {}
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class KernelEntry:
    """A registered kernel.

    `batched` kernels get whole batches instead of one sample. `dense` CPU kernels also accept
    a uniform batch as one array with a leading batch axis (`arg.layout` then starts with "N"),
    which the run phase uses when every sample has the same shape and arguments: one NumPy call
    instead of one per sample. `inline=False` marks kernels whose cost is not bounded by the
    size of their data (they wait on I/O or events): eager mode never runs them on the caller's
    thread, however small the batch.

    `bind` (per-sample CPU kernels, one output) specialises the kernel to one call: `bind(call)`
    returns `one(out, i)` that writes sample i into its output view (reading its inputs from
    values the prepare phase derived), or None when `fn` must run. It is for kernels whose own
    work is small next to the Python around it: a decoder spends ~1 ms in libjpeg per image,
    but each sample's Python runs with caches cold from that work, and the general path's views
    of every input and argument lookups cost ~3% of the batch (measured).

    `replay` (GPU kernels; True, or a predicate of the call): what the kernel launches depends
    only on the call's argument values and its buffers' metadata, never on their contents, and
    it writes outputs only through `run.launch`; a call whose signature repeats then replays
    the recorded launches (`runtime/launch_memo.py`) instead of building its tables again.

    `per_sample` (batched CPU kernels): the kernel's per-sample form, used for calls where
    `per_sample_when(call)` holds (e.g. normalize without `batch=True`: its statistics are the
    sample's own). A per-sample call joins the pool's sample pipeline with the ops around it
    instead of running alone on one thread between them.

    `packed` (CPU kernels): a form that computes a contiguous span of samples at once on flat
    arrays, `packed(out, *ins, call, lo, hi)` with `core.host_views.Packed` arguments, used
    when every input and output is laid out in one host buffer. A per-sample kernel makes a
    few NumPy/torch calls per sample, and each releases the GIL: with two pool threads each
    release is a hand-off between them (tens of microseconds on a busy machine), which costs
    more than a small op's arithmetic; a packed kernel makes the same few calls per span (one
    span per pool thread), on the whole span's data.

    `pool_min_bytes` (per-sample CPU kernels whose work is a pass or two over memory): a run
    outside a pipeline reading and writing fewer bytes stays on one thread. Such a kernel's
    NumPy calls are short, and two threads trading the GIL between them (and sharing the
    memory bandwidth) ran it slower than one: `preemphasis_filter` of 16-256 clips (5-80 MB)
    took 1.6-2.1x the time of one thread on two (2-vCPU VM). 0: the pool's own 64 KiB.
    """

    fn: Callable[..., Any]
    backend: str
    batched: bool = False
    dense: bool = False
    inline: bool = True
    bind: Callable[[Any], Callable[[Any, int], None] | None] | None = None
    replay: bool | Callable[[Any], bool] = False
    per_sample: KernelEntry | None = None
    per_sample_when: Callable[[Any], bool] | None = None
    packed: Callable[..., Any] | None = None
    pool_min_bytes: int = 0

    def for_call(self, call: Any) -> KernelEntry:
        """The form of this kernel that runs `call` (itself, or its per-sample form)."""
        when = self.per_sample_when
        if when is not None and when(call):
            assert self.per_sample is not None
            return self.per_sample
        return self


def register(schema: Any, backend: str, *, batched: bool = False, dense: bool = False,
             inline: bool = True,
             bind: Callable[[Any], Callable[[Any, int], None] | None] | None = None,
             replay: bool | Callable[[Any], bool] = False,
             per_sample: Callable[..., Any] | None = None,
             per_sample_when: Callable[[Any], bool] | None = None,
             packed: Callable[..., Any] | None = None, pool_min_bytes: int = 0,
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:  # fmt: skip
    """Register `fn` as the `backend` kernel of `schema` (an OpSchema)."""
    if backend not in ("cpu", "gpu"):
        raise ValueError(f"unknown backend {backend!r}")
    if (per_sample is None) != (per_sample_when is None) or (per_sample and not batched):
        raise ValueError("per_sample and per_sample_when go together, on batched kernels")

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        sample_form = KernelEntry(per_sample, backend, inline=inline, packed=packed) \
            if per_sample else None  # fmt: skip
        _KERNELS[(schema.name, backend)] = KernelEntry(
            fn, backend, batched, dense, inline, bind, replay, sample_form, per_sample_when,
            packed if per_sample is None else None, pool_min_bytes)
        return fn

    return decorate


def lookup(schema: Any, backend: str) -> KernelEntry:
    """The kernel of `schema` for `backend`, importing `kernels.<backend>.<module>` if needed."""
    key = (schema.name, backend)
    entry = _KERNELS.get(key)
    if entry is None:
        with _lock:
            try:
                importlib.import_module(f"ndd_triton.kernels.{backend}.{schema.module}")
            except ModuleNotFoundError as e:
                if e.name != f"ndd_triton.kernels.{backend}.{schema.module}":
                    raise
        entry = _KERNELS.get(key)
        if entry is None:
            raise NotImplementedError(f"{schema.name}: no {backend} kernel is available")
    return entry


def registered() -> dict[tuple[str, str], KernelEntry]:
    """All kernels registered so far (tests import every kernel module first)."""
    return dict(_KERNELS)
