"""Fork safety: a child process starts with fresh executor threads, thread pools and locks.

`os.fork` copies the memory of every thread but keeps only the forking one, so a child that
inherits a started executor, CPU pool or reader prefetcher inherits queues no thread serves
and locks no thread will release: the first op in a PyTorch `DataLoader` worker (fork start
method, the default on Linux) waited forever. Handlers registered with `os.register_at_fork`:

* before the fork, the eager work queued on executors is drained (up to `DRAIN_TIMEOUT_S`),
  so results computed in the parent (a dataset's precomputed tensors) are complete in both
  processes and no executor or pool thread holds a lock at the fork;
* in the child, `generation()` is incremented, the package's module-level locks are made new
  (`MODULE_LOCKS`, kept complete by a test), and each module's `on_fork_child` hook runs:
  the executor, the thread pools and the contexts forget their threads and start new ones on
  first use; readers notice the new generation and restart their prefetch thread at the
  position the parent had reached (`readers/_base.py`);
* torch's intra-op parallelism is set to one thread in the child, as PyTorch's DataLoader does
  in its workers: GNU OpenMP is not fork-safe, and the first parallel torch op of a child whose
  parent used OpenMP threads waits forever (plain torch: `torch.cat` of large tensors hangs).

Nothing here changes the parent. CUDA cannot be used in a forked child (torch refuses); the
emulated GPU and the CPU backend can.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

DRAIN_TIMEOUT_S = 10.0

# (module, attribute) of every module-level lock of the package. A fork while another thread
# holds one (e.g. a prefetch thread allocating from the host buffer pool) would leave it locked
# forever in the child, so the child gets a new one (as the logging module does for its locks).
MODULE_LOCKS: tuple[tuple[str, str], ...] = (
    ("ndd_triton.core.source_tags", "_lock"),
    ("ndd_triton.core.storage", "_pool_lock"),
    ("ndd_triton.core.storage", "_pack_lock"),
    ("ndd_triton.decoders._roi_decode", "_lock"),
    ("ndd_triton.kernels._registry", "_lock"),
    ("ndd_triton.kernels.cpu._audio_matrix", "_lock"),
    ("ndd_triton.kernels.cpu.resize", "_BATCH_LOCK"),
    ("ndd_triton.kernels.cpu.spectrogram", "_setups_lock"),
    ("ndd_triton.kernels.gpu._tables", "_rings_lock"),
    ("ndd_triton.kernels.gpu.flip", "_lock"),
    ("ndd_triton.random._philox", "_ahead_lock"),
    ("ndd_triton.runtime.compiled", "_active_lock"),
    ("ndd_triton.runtime.gpu_run", "_INTERPRETER_LOCK"),
    ("ndd_triton.runtime.launch_memo", "_lock"),
    ("ndd_triton.runtime.profiling", "_lock"),
    ("ndd_triton.runtime.stream", "_default_lock"),
    ("ndd_triton.runtime.thread_pool", "_lock"),
)

_generation = 0
_before_hooks: list[Callable[[], None]] = []
_child_hooks: list[Callable[[], None]] = []


def generation() -> int:
    """How many forks lie between the process that started and this one (0 in the original)."""
    return _generation


def before_fork(hook: Callable[[], None]) -> Callable[[], None]:
    """Register `hook` to run in the parent right before a fork (decorator)."""
    _before_hooks.append(hook)
    return hook


def on_fork_child(hook: Callable[[], None]) -> Callable[[], None]:
    """Register `hook` to run in a forked child, after the locks are new (decorator)."""
    _child_hooks.append(hook)
    return hook


def _before() -> None:
    for hook in _before_hooks:
        with contextlib.suppress(Exception):  # a fork must never fail because of us
            hook()


def _after_in_child() -> None:
    global _generation
    _generation += 1
    for module_name, attribute in MODULE_LOCKS:
        module = sys.modules.get(module_name)
        lock = getattr(module, attribute, None) if module is not None else None
        if lock is not None:
            lock._at_fork_reinit()
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    for hook in _child_hooks:
        hook()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(before=_before, after_in_child=_after_in_child)
