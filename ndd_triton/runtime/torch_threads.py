"""torch's intra-op threads while ndd_triton's CPU kernels run: one OpenMP/MKL thread.

The pool is the parallelism. A kernel's torch ops (an FFT, a sparse product, a resampler) that
fan out to torch's own OpenMP team oversubscribe the cores, and GNU OpenMP's team threads then
spin-wait after every parallel region, taking a core from the pool threads for a while. The
pool and executor threads are made single-threaded once (`make_this_thread_single`); kernels
also run on the caller's thread (sync modes, tiny work inlined in eager mode, external inputs),
and there `SingleThreadedTorch` lowers the thread's own settings for the run and restores
them after. Measured (perf/README.md, "Audio log-mel", fifth session): mel_filter_bank of 16
spectrograms with one pool thread in sync mode took 7.3-8.0 ms of process CPU for 3.7-4.0 ms of
wall per call (the team's second thread spinning), CPU = wall with this.

OpenMP's thread count and MKL's local one are per-thread settings, so the user's own torch
work on the same thread is left as it was. Best effort: without torch's bundled libgomp (or
MKL) symbols nothing changes.

Small work, whose torch ops stay under torch's parallel grain, still gets `SerialBlas`: MKL
decides its own threading, and a GEMM's summation order depends on the thread count MKL may
use even when the matrices are tiny. Without it, a 7x7 uint8 resize gave one pixel off by one
between the caller's thread (torch's default two threads) and a pool thread (one), so a call's
bytes depended on which thread ran it (sync vs eager vs compile mode, or the user's
`torch.set_num_threads`).
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

_tls = threading.local()  # `single`: this thread's torch runs on one thread for good
_libs: tuple[Any, Any, Any] | None = None  # omp_get_max_threads, omp_set_num_threads, MKL local


def _functions() -> tuple[Any, Any, Any]:
    global _libs
    if _libs is None:
        get = put = mkl = None
        try:
            import torch

            lib = os.path.join(os.path.dirname(torch.__file__), "lib")
            gomp = os.path.join(lib, "libgomp.so.1")
            if os.path.exists(gomp):
                omp = ctypes.CDLL(gomp)
                get, put = omp.omp_get_max_threads, omp.omp_set_num_threads
            cpu = os.path.join(lib, "libtorch_cpu.so")
            if os.path.exists(cpu):
                mkl = getattr(ctypes.CDLL(cpu), "MKL_Set_Num_Threads_Local", None)
        except Exception:
            pass
        _libs = (get, put, mkl)
    return _libs


def _torch_thread_init() -> None:
    """torch's lazy per-thread setup of its thread count, done first (it would undo ours)."""
    try:
        import torch

        torch.get_num_threads()
    except Exception:
        pass


def make_this_thread_single() -> None:
    """Worker-thread initializer (pool and executor threads): torch ops on this thread use one
    OpenMP/MKL thread from now on."""
    _torch_thread_init()
    _, put, mkl = _functions()
    if put is not None:
        put(1)
    if mkl is not None:
        mkl(1)
    _tls.single = True


def single_already() -> bool:
    """Whether this thread's torch runs on one thread for good (a pool or executor thread)."""
    return getattr(_tls, "single", False)


class SingleThreadedTorch:
    """`with SingleThreadedTorch():` torch ops in the block use one OpenMP/MKL thread on this
    thread (nothing to do on ndd_triton's own threads); the settings come back after."""

    __slots__ = ("_mkl", "_omp")

    def __enter__(self) -> None:
        self._omp = self._mkl = None
        tls = _tls
        if getattr(tls, "single", False):
            return
        if not getattr(tls, "initialised", False):
            _torch_thread_init()
            tls.initialised = True
        get, put, mkl = _functions()
        if get is not None:
            threads = get()
            if threads > 1:
                put(1)
                self._omp = threads
        if mkl is not None:
            self._mkl = mkl(1)  # (returns the previous local setting; 0: none)

    def __exit__(self, *exc: object) -> None:
        if self._omp is not None:
            _functions()[1](self._omp)
        if self._mkl is not None:
            _functions()[2](self._mkl)


class SerialBlas:
    """`with SerialBlas():` MKL uses one thread on this thread in the block (~0.3 us), for work
    too small for torch's own threads: GEMM results then do not depend on the thread count the
    caller's thread has. Without MKL's symbols, `SingleThreadedTorch` (OpenMP-threaded BLAS
    follows OpenMP's count)."""

    __slots__ = ("_mkl", "_whole")

    def __enter__(self) -> None:
        self._mkl = self._whole = None
        if getattr(_tls, "single", False):
            return
        mkl = _functions()[2]
        if mkl is not None:
            self._mkl = mkl(1)
        else:
            self._whole = SingleThreadedTorch()
            self._whole.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self._mkl is not None:
            _functions()[2](self._mkl)
        elif self._whole is not None:
            self._whole.__exit__()
