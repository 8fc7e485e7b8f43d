"""Record the launches of one GPU kernel call and replay them on other buffers (launch memo).

A GPU kernel registered with `replay=True` promises that what it launches depends only on
the call's argument values and on its inputs' and outputs' metadata (shapes, offsets, dtypes,
layouts), never on their contents, and that it writes its outputs only through launches. Its
host work (tables built with NumPy, the upload) is then the same for every call of the same
signature, and the runtime (`runtime/launch_memo.py`) replays a recorded call instead:

* `Recorder` is a `GpuRun` that launches as usual and notes each launch: the kernel, the grid,
  the constexprs and, per argument, where it comes from — an input's or output's buffer (or a
  view of one), an uploaded table (kept: the replay reuses the device copy), scratch memory
  from `run.empty` (allocated again per replay), or a plain value;
* the launch of a table kernel (`table_kernel`: device tables from uploaded tables alone, e.g.
  resize's tap tables) is left out of the replay, which keeps the tables it wrote; a drawn
  table kernel's (`table_kernel(drawn=True)`: tables from uploaded tables and the call's RNG
  position, random_resized_crop's) is launched again, into the buffers the recording
  allocated, which the replay keeps (see `Replay.replay`);
* a call's RNG position (`run.launch_drawing`, ops that draw on the device: four int32
  arguments) is taken per replay from the replaying call's own `draw_at`;
* `Replay` is the result: `replay(run, inputs, outputs, draws)` calls `run.launch_device` for each
  recorded launch with the new buffers. No NumPy, no upload, no table building. On a real GPU
  it relaunches the kernel Triton compiled for the recorded launch (`run.launch_compiled`),
  without Triton's per-launch argument binding and cache lookup.

A tensor argument the recorder cannot place (made by a torch op inside the kernel, e.g. an
FFT's result) makes the call not replayable: it still runs normally, nothing is kept.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any

import numpy as np
import torch

from ndd_triton.kernels.gpu._tables import DRAW_WORDS, GpuRun, draw_words

# A recorded launch: kernel, grid, arguments (None where rebuilt), constexprs, the
# `(position, source kind, what)` of each argument rebuilt at replay, the NumPy error
# state it ran under when not the process's usual one, and how to relaunch its compiled
# kernel directly (`_Direct`, real GPUs) or None
Step = tuple[Any, tuple[int, ...], tuple[Any, ...], dict[str, Any], tuple[Any, ...], Any, Any]
_DEFAULT_ERR = np.geterr()
# Argument sources in a recorded launch (position -> how to rebuild it)
# (the first four index `Replay.replay`'s sources)
_IN, _OUT, _SCRATCH, _DRAW, _VIEW_IN, _VIEW_OUT = range(6)


def _storage_ptr(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


class Replay:
    """The recorded launches of one call (immutable; shared by threads)."""

    __slots__ = ("__weakref__", "_fresh", "_kept", "_lock", "nbytes", "scratch", "steps",
                 "tables")  # fmt: skip

    def __init__(self, steps: list[Step], scratch: list[tuple[int, torch.dtype] | None],
                 tables: list[torch.Tensor],
                 rewritten: dict[int, torch.Tensor] | None = None) -> None:  # fmt: skip
        self.steps = tuple(steps)
        self.scratch = tuple(scratch)
        self.tables = (*tables, *(rewritten or {}).values())  # kept alive with the entry
        self.nbytes = sum(t.untyped_storage().nbytes() for t in self.tables)
        # the scratch buffers a drawn table kernel rewrites on every replay (by index)
        self._kept = tuple((rewritten or {}).get(i) for i in range(len(scratch))) \
            if rewritten else None  # fmt: skip
        # the scratch buffers a replay that holds the kept ones allocates even so
        self._fresh = tuple((i, made) for i, made in enumerate(scratch)
                            if made is not None and (self._kept is None or self._kept[i] is None))
        self._lock = threading.Lock()

    def replay(self, run: GpuRun, inputs: list[torch.Tensor | None], outputs: list[torch.Tensor],
               draws: tuple[int, int] | None = None) -> None:  # fmt: skip
        """Launch the recorded steps on these buffers (same metadata as the recorded call) and
        this call's RNG position `draws` (`Call.draw_at`).

        The buffers a drawn table kernel rewrites are the recording's own, taken by one replay
        at a time: a replay is replayed on the stream it was recorded on only (the launch
        memo's and `call_replay`'s keys hold the stream), so the next replay's table launch
        runs after this one's passes on the device; a replay that finds them taken (another
        thread replaying at the same moment) allocates its own."""
        kept = self._kept
        if kept is not None and self._lock.acquire(blocking=False):
            try:
                self._launch(run, inputs, outputs, draws, kept)
            finally:
                self._lock.release()
        else:
            self._launch(run, inputs, outputs, draws, None)

    def _launch(self, run: GpuRun, inputs: list[torch.Tensor | None],
                outputs: list[torch.Tensor], draws: tuple[int, int] | None,
                kept: tuple[torch.Tensor | None, ...] | None) -> None:  # fmt: skip
        if kept is None:
            scratch = [run.empty(*made) if made is not None else None for made in self.scratch]
        else:
            scratch = list(kept)
            for i, made in self._fresh:
                scratch[i] = run.empty(*made)
        sources = (inputs, outputs, scratch, draw_words(draws) if draws is not None else ())
        for kernel, grid, args, meta, subs, err, direct in self.steps:
            if subs:
                filled = list(args)
                for pos, kind, what in subs:
                    if kind <= _DRAW:
                        filled[pos] = sources[kind][what]
                    else:
                        base = inputs[what[0]] if kind == _VIEW_IN else outputs[what[0]]
                        filled[pos] = _rebuild_view(base, what)
                args = tuple(filled)
            if direct is not None and direct.fits(args):
                run.launch_compiled(kernel, direct.compiled, direct.grid, args, meta,
                                    direct.bind(args))  # fmt: skip
            elif err is None:
                run.launch_device(kernel, grid, args, meta)
            else:  # the NumPy error state the kernel launched under (Triton's interpreter
                with np.errstate(**err):  # evaluates with NumPy: intended IEEE results)
                    run.launch_device(kernel, grid, args, meta)


class _Direct:
    """How to relaunch a recorded launch's compiled kernel without Triton's binder: every
    parameter's value in order (`template`: a launch argument's position, or a constexpr's
    value), and the 16-byte alignment each rebuilt pointer had (Triton specialises on it: a
    replay whose buffers differ there goes through `JITFunction.run`, which picks or compiles
    the matching variant)."""

    __slots__ = ("aligned", "compiled", "grid", "template")

    def __init__(self, compiled: Any, grid: tuple[int, ...], template: tuple[Any, ...],
                 aligned: tuple[tuple[int, bool], ...]) -> None:  # fmt: skip
        self.compiled = compiled
        self.grid = (*grid, *(1,) * (3 - len(grid)))
        self.template = template
        self.aligned = aligned

    def fits(self, args: tuple[Any, ...]) -> bool:
        return all((args[pos].data_ptr() % 16 == 0) == aligned for pos, aligned in self.aligned)

    def bind(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(args[v] if k else v for k, v in self.template)

    @staticmethod
    def make(kernel: Any, compiled: Any, grid: tuple[int, ...], args: tuple[Any, ...],
             meta: dict[str, Any], rebuilt: list[int]) -> _Direct | None:  # fmt: skip
        """The direct relaunch of this launch, or None (the interpreter, an unknown kernel
        object, a parameter without a value)."""
        names = getattr(kernel, "arg_names", None)
        fn = getattr(kernel, "fn", None)
        if compiled is None or names is None or fn is None or \
                not hasattr(compiled, "__getitem__"):  # fmt: skip
            return None
        defaults = inspect.signature(fn).parameters
        template: list[Any] = []
        for i, name in enumerate(names):
            if i < len(args):
                template.append((True, i))
            elif name in meta:
                template.append((False, meta[name]))
            elif defaults[name].default is not inspect.Parameter.empty:
                template.append((False, defaults[name].default))
            else:
                return None
        aligned = tuple((pos, args[pos].data_ptr() % 16 == 0) for pos in rebuilt)
        return _Direct(compiled, tuple(grid), tuple(template), aligned)


def _describe_view(t: torch.Tensor, base: torch.Tensor, index: int) -> tuple[Any, ...] | None:
    """How to cut `t` out of a buffer like `base` again: (index, dtype, size, stride, byte
    offset from base's first element), or None when that cannot be said exactly."""
    rel = t.storage_offset() * t.element_size() - base.storage_offset() * base.element_size()
    if rel < 0 or rel % t.element_size():
        return None
    return (index, t.dtype, tuple(t.shape), tuple(t.stride()), rel)


def _rebuild_view(base: torch.Tensor, what: tuple[Any, ...]) -> torch.Tensor:
    _, dtype, size, stride, rel = what
    offset = (base.storage_offset() * base.element_size() + rel) // dtype.itemsize
    view = torch.empty(0, dtype=dtype, device=base.device)
    return view.set_(base.untyped_storage(), offset, size, stride)


class Recorder(GpuRun):
    """A `GpuRun` that records what it launches (see the module docstring)."""

    __slots__ = ("_drawing", "_in_ptrs", "_inputs", "_out_ptrs", "_outputs", "_scratch",
                 "_steps", "_tables", "replayable")  # fmt: skip

    def __init__(self, run: GpuRun, inputs: list[torch.Tensor | None],
                 outputs: list[torch.Tensor]) -> None:  # fmt: skip
        super().__init__(run.device, run.record, run.pool)
        self._inputs = inputs
        self._outputs = outputs
        self._in_ptrs = {_storage_ptr(t): i for i, t in enumerate(inputs) if t is not None}
        self._out_ptrs = {_storage_ptr(t): i for i, t in enumerate(outputs)}
        self._steps: list[Any] = []
        self._scratch: list[tuple[torch.Tensor, int, torch.dtype]] = []
        self._tables: list[torch.Tensor] = []
        self._drawing = False
        self.replayable = True

    def launch_drawing(self, kernel: Any, grid: tuple[int, ...], at: tuple[int, int],
                       *args: Any, **meta: Any) -> None:  # fmt: skip
        self._drawing = True  # the launch's first four arguments are the RNG position's words
        try:
            super().launch_drawing(kernel, grid, at, *args, **meta)
        finally:
            self._drawing = False

    def upload(self, *tables: np.ndarray) -> list[torch.Tensor]:
        views = super().upload(*tables)
        self._tables.extend(views)
        return views

    def empty(self, numel: int, dtype: torch.dtype) -> torch.Tensor:
        t = super().empty(numel, dtype)
        self._scratch.append((t, numel, dtype))
        return t

    def launch_device(self, kernel: Any, grid: tuple[int, ...], args: tuple[Any, ...],
                      meta: dict[str, Any]) -> Any:  # fmt: skip
        if self.replayable:
            words = len(DRAW_WORDS) if self._drawing else 0
            subs = [(pos, _DRAW, pos) for pos in range(words)]
            for pos, a in enumerate(args):
                if isinstance(a, torch.Tensor):
                    where = self._place(a)
                    if where is None:
                        self.replayable = False
                        break
                    if where[0] is not None:
                        subs.append((pos, *where))
            else:
                rebuilt = {s[0] for s in subs}
                stored = tuple(None if pos in rebuilt else a for pos, a in enumerate(args))
                err = np.geterr()
                compiled = super().launch_device(kernel, grid, args, meta)
                direct = _Direct.make(kernel, compiled, grid, args, meta,
                                      sorted(rebuilt - set(range(words))))  # fmt: skip
                self._steps.append((kernel, tuple(grid), stored, dict(meta), tuple(subs),
                                    None if err == _DEFAULT_ERR else err, direct))  # fmt: skip
                return compiled
        return super().launch_device(kernel, grid, args, meta)

    def _place(self, t: torch.Tensor) -> tuple[Any, Any] | None:
        """(kind, what) to rebuild `t` at replay, (None, None) to keep it, None if unknown."""
        for i, x in enumerate(self._inputs):
            if t is x:
                return _IN, i
        for i, x in enumerate(self._outputs):
            if t is x:
                return _OUT, i
        for i, (x, _, _) in enumerate(self._scratch):
            if t is x:
                return _SCRATCH, i
        for x in self._tables:
            if t is x:
                return None, None
        ptr = _storage_ptr(t)
        for ptrs, buffers, kind in ((self._in_ptrs, self._inputs, _VIEW_IN),
                                    (self._out_ptrs, self._outputs, _VIEW_OUT)):  # fmt: skip
            index = ptrs.get(ptr)
            if index is not None:
                base = buffers[index]
                view = _describe_view(t, base, index)  # type: ignore[arg-type]
                if view is None:
                    return None
                if view[1:] == (base.dtype, tuple(base.shape), tuple(base.stride()), 0):  # type: ignore[union-attr]
                    # the whole buffer again (another tensor object): the buffer itself
                    return (_IN if kind == _VIEW_IN else _OUT), index
                return kind, view
        for x in self._tables:  # a view of an uploaded table (kept as it is)
            if ptr == _storage_ptr(x):
                return None, None
        return None

    def finish(self) -> Replay | None:
        """The recorded call, or None when it cannot be replayed. The launches of table
        kernels (`table_kernel`) that read only uploaded tables are left out: the scratch
        buffers they wrote are kept with the replay, as uploaded tables are."""
        if not self.replayable:
            return None
        kept: dict[int, torch.Tensor] = {}
        rewritten: dict[int, torch.Tensor] = {}
        for kernel, _, _, _, subs, _, _ in self._steps:
            if kernel in _TABLE_KERNELS and all(kind == _SCRATCH for _, kind, _ in subs):
                kept.update((what, self._scratch[what][0]) for _, _, what in subs)
            elif kernel in _DRAWN_TABLE_KERNELS and \
                    all(kind in (_SCRATCH, _DRAW) for _, kind, _ in subs):  # fmt: skip
                rewritten.update((what, self._scratch[what][0]) for _, kind, what in subs
                                 if kind == _SCRATCH)  # fmt: skip
        steps: list[Step] = []
        for step in self._steps:
            kernel, grid, stored, meta, subs, err, direct = step
            if kernel in _TABLE_KERNELS and all(kind == _SCRATCH for _, kind, _ in subs):
                continue
            if any(kind == _SCRATCH and what in kept for _, kind, what in subs):
                fixed = list(stored)
                for pos, kind, what in subs:
                    if kind == _SCRATCH and what in kept:
                        fixed[pos] = kept[what]
                stored = tuple(fixed)
                subs = tuple(s for s in subs if not (s[1] == _SCRATCH and s[2] in kept))
            steps.append((kernel, grid, stored, meta, subs, err, direct))
        scratch = [(n, d) if i not in kept else None for i, (_, n, d) in enumerate(self._scratch)]
        return Replay(steps, scratch, [*self._tables, *kept.values()], rewritten)


# Kernels whose launch only turns uploaded tables into device tables (`table_kernel`), and
# those that also read the call's RNG position (`table_kernel(drawn=True)`)
_TABLE_KERNELS: set[Any] = set()
_DRAWN_TABLE_KERNELS: set[Any] = set()


def table_kernel(kernel: Any = None, *, drawn: bool = False) -> Any:
    """Declare `kernel` a table kernel: given only uploaded tables and scratch buffers, it
    writes those scratch buffers from the tables' contents alone, every element its other
    launches read, and no other launch of the call writes them. A recorded call keeps what its
    launch wrote instead of launching it again on every replay (resize's tap tables: one launch
    and two allocations fewer). `drawn`: it also reads the call's RNG position
    (`GpuRun.launch_drawing`), so a replay launches it again, into the recording's buffers
    (random_resized_crop's tables: two allocations fewer). Usable as `@table_kernel` and
    `@table_kernel(drawn=True)`."""
    if kernel is None:
        return lambda k: table_kernel(k, drawn=drawn)
    (_DRAWN_TABLE_KERNELS if drawn else _TABLE_KERNELS).add(kernel)
    return kernel
