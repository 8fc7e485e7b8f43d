"""What GPU kernels see: `GpuBatch` (packed buffer + tables) and `GpuRun` (launch helper).

A ragged batch is one flat buffer plus per-sample int64 offsets and shapes; a kernel gets a
sample table (one row per sample) and either a per-sample tile-start table (`_tiles.py`: the
program finds its sample by binary search; most kernels) or a per-tile table (`tile_table`,
`row_tiles`: `(sample, first_element)` rows), so the whole batch is one launch. All host
tables of a launch travel in one host-to-device copy.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ndd_triton.core import storage as _storage

_ALIGN = 16
_RING_BYTES = 8 << 20  # pinned staging per CUDA device for launch tables
# When a list, every launch appends (kernel, argument types, constexprs, the names specialised as
# divisible by 16): the compile check and the kernel report use it (`_log_launch`).
LAUNCH_LOG: list[tuple[Any, dict[str, str], dict[str, Any], tuple[str, ...]]] | None = None
_TRITON_TYPES = {torch.uint8: "u8", torch.int8: "i8", torch.int16: "i16", torch.int32: "i32",
                 torch.int64: "i64", torch.uint16: "u16", torch.uint32: "u32", torch.uint64: "u64",
                 torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32",
                 torch.float64: "fp64", torch.bool: "i1"}  # fmt: skip
# No fused multiply-add: results then round as the CPU kernels' (NumPy) arithmetic does, which
# decides near-ties of sampling positions, LUT bins and integer rounding. Every launch compiles
# with these options (tools/kernel_compile.py compiles the same way).
LAUNCH_OPTIONS: dict[str, Any] = {"enable_fp_fusion": False}
_TORCH_OF = {np.dtype(n): t for t, n in (
    (torch.bool, np.bool_), (torch.uint8, np.uint8), (torch.int8, np.int8), (torch.int16, np.int16),
    (torch.int32, np.int32), (torch.int64, np.int64), (torch.uint16, np.uint16),
    (torch.uint32, np.uint32), (torch.uint64, np.uint64), (torch.float16, np.float16),
    (torch.float32, np.float32), (torch.float64, np.float64))}  # NumPy -> torch (table views)


# The parameters a drawing kernel (`GpuRun.launch_drawing`) takes its RNG position in, first:
# `@triton.jit(do_not_specialize=DRAW_WORDS)`, so that neither their values nor their types
# change the compiled kernel (`draw_words` keeps each in int32's range)
DRAW_WORDS = ("key_lo", "key_hi", "off_lo", "off_hi")


_POSITION = struct.Struct("<2Q")
_WORDS = struct.Struct("<4i")


def draw_words(at: tuple[int, int]) -> tuple[int, int, int, int]:
    """An RNG position `(key, offset)` (two uint64) as four int32 words, low half first (the
    kernel reassembles them with `_philox._helper_position`)."""
    return _WORDS.unpack(_POSITION.pack(*at))  # type: ignore[return-value]


def _log_launch(kernel: Any, args: list[Any], meta: dict[str, Any]) -> None:
    """Record the compile signature of a launch as Triton's JIT specialises it (argument names
    from the kernel): an int argument is `i32` when it fits, else `i64`, and equal to 1 a
    constexpr; a pointer or int divisible by 16 gets `tt.divisibility` 16 (its name in the
    entry's last item), which lets Triton vectorise the accesses it addresses. Parameters named in
    the kernel's `do_not_specialize` keep their type and nothing else. So the kernel report
    compiles what a real GPU runs, not a less specialised kernel."""
    names = list(getattr(kernel, "arg_names", []))
    fixed = _not_specialised(kernel, names)
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    divisible: list[str] = []
    for name, value in zip(names, args, strict=False):
        if isinstance(value, torch.Tensor):
            signature[name] = "*" + _TRITON_TYPES[value.dtype]
            if value.data_ptr() % 16 == 0:
                divisible.append(name)
        elif isinstance(value, bool):
            signature[name] = "i1"
        elif isinstance(value, int):
            signature[name] = "i32" if -(2**31) <= value < 2**31 else \
                "u64" if value >= 2**63 else "i64"  # fmt: skip
            if name not in fixed:
                if value == 1:
                    signature[name] = "constexpr"
                    constexprs[name] = 1
                elif value % 16 == 0:
                    divisible.append(name)
        elif isinstance(value, float):
            signature[name] = "fp32"
        else:
            signature[name] = "constexpr"
            constexprs[name] = value
    for name, value in meta.items():
        signature[name] = "constexpr"
        constexprs[name] = value
    assert LAUNCH_LOG is not None
    LAUNCH_LOG.append((kernel, signature, constexprs, tuple(divisible)))


def _not_specialised(kernel: Any, names: list[str]) -> frozenset[str]:
    """The parameters a kernel's `do_not_specialize` names (by name or position), for a
    JITFunction (`do_not_specialize`) and the interpreter's function (`kwargs`) alike."""
    given = getattr(kernel, "do_not_specialize", None)
    if given is None:
        given = getattr(kernel, "kwargs", {}).get("do_not_specialize") or ()
    return frozenset(names[p] if isinstance(p, int) else p for p in given)


class GpuBatch:
    """One input or output batch as a flat device buffer plus per-sample offsets and shapes.
    `packed`: known to hold its samples back to back from the buffer's start, in order (an
    op's freshly allocated output); False says nothing."""

    __slots__ = ("_sizes", "data", "dtype", "layout", "offsets", "packed", "shapes")

    def __init__(self, data: torch.Tensor, offsets: np.ndarray, shapes: np.ndarray,
                 layout: str | None, dtype: Any) -> None:  # fmt: skip
        self.data = data
        self.offsets = offsets
        self.shapes = shapes
        self.layout = layout
        self.dtype = dtype
        self._sizes: np.ndarray | None = None
        self.packed = False

    @property
    def batch_size(self) -> int:
        """Number of samples."""
        return len(self.offsets)

    @property
    def sizes(self) -> np.ndarray:
        """Elements per sample."""
        sizes = self._sizes
        if sizes is None:
            shapes = self.shapes
            sizes = self._sizes = shapes.prod(axis=1, dtype=np.int64) if shapes.shape[1] else \
                np.ones(len(shapes), dtype=np.int64)  # fmt: skip
        return sizes

    def extents(self, letters: str, layout: str | None = None) -> np.ndarray:
        """`[N, len(letters)]` extents of the named axes (1 where the layout lacks the letter)."""
        layout = layout or self.layout or ""
        cols = [self.shapes[:, layout.index(c)] if c in layout else
                np.ones(len(self.shapes), dtype=np.int64) for c in letters]  # fmt: skip
        return np.stack(cols, axis=1) if cols else np.zeros((len(self.shapes), 0), np.int64)


# Elements a row-tiled program copies (ROWS x BLOCK), and its longest block; tests shrink them
# to get many tiles per sample from small images.
ROW_TILE_ELEMENTS = 4096
ROW_TILE_MAX_BLOCK = 4096


def row_block(rows: np.ndarray, row_len: np.ndarray) -> tuple[int, int]:
    """`(ROWS, BLOCK)` powers of two for row-tiled kernels (`_tiles.row_tile_counts`): BLOCK
    covers the longest row (up to ROW_TILE_MAX_BLOCK) in blocks that leave at most ~15% of the
    lanes idle (a 672-element row takes 3 x 256, not 1 x 1024), ROWS fills about
    ROW_TILE_ELEMENTS (no more rows than a sample has)."""
    longest = max(int(np.max(row_len, initial=1)), 1)
    block = min(1 << (longest - 1).bit_length(), ROW_TILE_MAX_BLOCK)
    while block > 64 and -(-longest // block) * block > 1.15 * longest:
        block //= 2
    most_rows = 1 << (max(int(np.max(rows, initial=1)), 1) - 1).bit_length()
    return max(min(ROW_TILE_ELEMENTS // block, most_rows), 1), block


class _PinnedRing:
    """Reused pinned host memory for table uploads: `Tensor.pin_memory()` per launch cost
    ~0.3 ms (H200), and a pageable copy would synchronise the stream. A region is written
    again only after the event recorded behind its copy has completed."""

    def __init__(self, nbytes: int) -> None:
        self.buffer = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        self.host = self.buffer.numpy()
        self.pos = 0
        self.pending: list[tuple[int, int, Any]] = []  # (start, end, event) of copies in flight
        self.lock = threading.Lock()

    def reserve(self, nbytes: int, device: torch.device) -> tuple[np.ndarray, Any]:
        """`nbytes` of pinned host memory to write a launch's tables into, and the token that
        `copy` takes. A region is handed out again only after its copy has read it."""
        if nbytes > len(self.host) // 4:  # rare, large tables: pinned on their own
            own = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
            return own.numpy(), own
        with self.lock:
            if self.pos + nbytes > len(self.host):
                self.pos = 0
            start, end = self.pos, self.pos + nbytes
            keep = []
            for s, e, event in self.pending:
                if s < end and start < e:
                    if event is None:  # being filled by another thread (wrapped round): rare
                        own = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
                        return own.numpy(), own
                    event.synchronize()  # that region's copy must have read it first
                elif event is None or not event.query():
                    keep.append((s, e, event))
            keep.append((start, end, None))  # reserved: its copy records the event
            self.pending = keep
            self.pos = end + (-end) % _ALIGN
        return self.host[start:end], (start, end)

    def copy(self, token: Any, device: torch.device) -> torch.Tensor:
        """The device copy of a reserved region (on the current stream, asynchronous)."""
        if isinstance(token, torch.Tensor):
            return token.to(device, non_blocking=True)
        start, end = token
        event: Any = None
        try:
            dev = self.buffer[start:end].to(device, non_blocking=True)
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream(device))
        finally:  # a failed copy releases its region
            with self.lock:
                pending = self.pending
                for k in range(len(pending) - 1, -1, -1):
                    if pending[k][0] == start and pending[k][2] is None:
                        if event is None:
                            del pending[k]
                        else:
                            pending[k] = (start, end, event)
                        break
        return dev

    def upload(self, host: np.ndarray, device: torch.device) -> torch.Tensor:
        """One host array to the device through the ring."""
        staging, token = self.reserve(host.nbytes, device)
        staging[:] = host.reshape(-1).view(np.uint8)
        return self.copy(token, device)


_rings: dict[int, _PinnedRing] = {}
_rings_lock = threading.Lock()


def _staging(device: torch.device) -> _PinnedRing:
    index = device.index if device.index is not None else torch.cuda.current_device()
    ring = _rings.get(index)
    if ring is not None:
        return ring
    with _rings_lock:
        if index not in _rings:
            _rings[index] = _PinnedRing(_RING_BYTES)
        return _rings[index]


class GpuRun:
    """Launch context of one invocation: device, launch counting, host-table upload."""

    __slots__ = ("device", "pool", "record")

    def __init__(self, device: torch.device, record: Any = None, pool: Any = None) -> None:
        self.device = device
        self.record = record
        self.pool = pool  # the context's CPU thread pool, for host-side work (codec fallbacks)

    def upload(self, *tables: np.ndarray) -> list[torch.Tensor]:
        """Copy host tables to the device in one transfer; returns device views (same shapes)."""
        arrays = []
        starts = []
        offset = 0
        for table in tables:
            arr = table if type(table) is np.ndarray and table.flags.c_contiguous else \
                np.ascontiguousarray(table)  # fmt: skip
            offset += -offset % _ALIGN
            starts.append(offset)
            arrays.append(arr)
            offset += arr.nbytes
        # the tables are written straight into the staging memory (no concatenated copy)
        ring = _staging(self.device) if self.device.type != "cpu" else None
        if ring is not None:
            host, token = ring.reserve(offset, self.device)
        else:
            host = np.empty(offset, np.uint8)
        for arr, start in zip(arrays, starts, strict=True):
            if arr.nbytes:
                host[start:start + arr.nbytes] = arr.reshape(-1).view(np.uint8)
        dev = ring.copy(token, self.device) if ring is not None else torch.from_numpy(host)
        views = []
        for arr, start in zip(arrays, starts, strict=True):
            view = dev[start:start + arr.nbytes].view(_TORCH_OF[arr.dtype])
            views.append(view if arr.ndim == 1 else view.view(arr.shape))
        return views

    def launch_drawing(self, kernel: Any, grid: tuple[int, ...], at: tuple[int, int],
                       *args: Any, **meta: Any) -> None:  # fmt: skip
        """`launch` for a kernel that draws its random numbers itself: its first four
        parameters (named in `do_not_specialize=DRAW_WORDS`) get the call's reserved RNG
        position `at` (`Call.draw_at`) as `draw_words`. Plain arguments, not an uploaded
        table: nothing to copy per call, and a replay passes its own call's words."""
        self.launch(kernel, grid, *draw_words(at), *args, **meta)

    def launch(self, kernel: Any, grid: tuple[int, ...], *args: Any, **meta: Any) -> None:
        """Launch a Triton kernel; NumPy array arguments are uploaded together first."""
        for g in grid:
            if g == 0:
                return
        host_positions = [i for i, a in enumerate(args) if type(a) is np.ndarray]
        if host_positions:
            converted = list(args)
            views = self.upload(*[args[i] for i in host_positions])
            for i, view in zip(host_positions, views, strict=True):
                converted[i] = view
            args = tuple(converted)
        self.launch_device(kernel, grid, args, meta)

    def launch_device(self, kernel: Any, grid: tuple[int, ...], args: tuple[Any, ...],
                      meta: dict[str, Any]) -> Any:  # fmt: skip
        """Launch with device arguments only (what `launch` calls after the upload; the
        launch memo's replays call it directly). Returns what Triton's launch returns: the
        compiled kernel on a real GPU (the launch memo relaunches it directly), else None."""
        if LAUNCH_LOG is not None:
            _log_launch(kernel, list(args), meta)
        compiled = kernel[grid](*args, **LAUNCH_OPTIONS, **meta)
        if self.record is not None:
            self.record.gpu_launches += 1
        return compiled

    def launch_compiled(self, kernel: Any, compiled: Any, grid: tuple[int, ...],
                        args: tuple[Any, ...], meta: dict[str, Any],
                        bound: tuple[Any, ...]) -> None:  # fmt: skip
        """Relaunch a kernel Triton compiled for an earlier launch of the same specialisation
        (`bound`: every parameter's value in order, constexprs included), skipping
        `JITFunction.run`'s argument binding, specialisation key and cache lookup (tens of
        microseconds for a many-argument kernel). The launch memo's replays use it."""
        if LAUNCH_LOG is not None:
            _log_launch(kernel, list(args), meta)
        compiled[grid](*bound)
        if self.record is not None:
            self.record.gpu_launches += 1

    def empty(self, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """Scratch device memory."""
        t = torch.empty(numel, dtype=dtype, device=self.device)
        if _storage.POISON_MEMORY:
            t.view(torch.uint8).fill_(0xFF)
        return t


LaunchFn = Callable[..., None]
