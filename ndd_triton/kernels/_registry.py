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
    """

    fn: Callable[..., Any]
    backend: str
    batched: bool = False
    dense: bool = False
    inline: bool = True
    bind: Callable[[Any], Callable[[Any, int], None] | None] | None = None
    replay: bool | Callable[[Any], bool] = False


def register(schema: Any, backend: str, *, batched: bool = False, dense: bool = False,
             inline: bool = True,
             bind: Callable[[Any], Callable[[Any, int], None] | None] | None = None,
             replay: bool | Callable[[Any], bool] = False,
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:  # fmt: skip
    """Register `fn` as the `backend` kernel of `schema` (an OpSchema)."""
    if backend not in ("cpu", "gpu"):
        raise ValueError(f"unknown backend {backend!r}")

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        _KERNELS[(schema.name, backend)] = KernelEntry(fn, backend, batched, dense, inline, bind,
                                                      replay)
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
