"""cat, stack on the GPU: one launch copies every (sample, input) piece into its output rows.

Design (one launch for any number of inputs): Triton cannot index a table of pointers, and a
kernel argument per input does not scale to DALI's 999 inputs. Every input batch is one packed
device buffer of the same dtype, so each input is addressed from one base buffer (the first
non-empty input's) by its element distance `(ptr_k - ptr_base) / itemsize` (int64, possibly
negative; exact because every buffer is aligned to its element size). No staging copy is made:
the cost is that the kernel addresses memory outside its pointer argument's allocation, which
CUDA's flat address space (and the interpreter's raw addresses) allow.

A piece table row describes one (sample, input) pair: source offset, destination offset of
its first row, source row length, destination row length and number of rows; the tile table
gives each program a block of rows of one piece.

In the row view, `cat` along axis `a` sees input k as `[outer, ext_k * inner]` rows landing at
column `(ext_0 + ... + ext_{k-1}) * inner` of `[outer, total * inner]` output rows; `stack` is the
same with `ext_k = 1` and `inner` covering the axes from `a` on.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import copy_pieces
from ndd_triton.ops import concat
from ndd_triton.ops.schema import Call


def _base(inputs: list[GpuBatch]) -> int:
    """The first input with data (an empty buffer may have no valid device address)."""
    return next((k for k, inp in enumerate(inputs) if inp.data.numel() > 0), 0)


def _deltas(inputs: list[GpuBatch]) -> np.ndarray:
    """Element distance of every input buffer from the base input's buffer."""
    base = inputs[_base(inputs)].data
    size = base.element_size()
    deltas = []
    for inp in inputs:
        delta = inp.data.data_ptr() - base.data_ptr()
        assert delta % size == 0, "device buffers are aligned to their element size"
        deltas.append(delta // size)
    return np.array(deltas, dtype=np.int64)


def _pieces(out: GpuBatch, inputs: list[GpuBatch], axis: int) -> np.ndarray:
    """`[N * K, 5]` piece table (sample-major): src, dst, row, out_row, rows."""
    shapes = np.stack([inp.shapes for inp in inputs])  # [K, N, ndim]
    k_count, n = shapes.shape[:2]
    outer = np.prod(shapes[:, :, :axis], axis=2, dtype=np.int64)  # [K, N]
    rows = np.prod(shapes[:, :, axis:], axis=2, dtype=np.int64)  # ext_k * inner (stack: inner)
    out_rows = np.prod(out.shapes[:, axis:], axis=1, dtype=np.int64)  # [N]: total * inner
    shift = np.cumsum(rows, axis=0) - rows  # columns taken by the inputs before k
    src = _deltas(inputs)[:, None] + np.stack([inp.offsets for inp in inputs])
    dst = out.offsets[None, :] + shift
    table = np.stack([src, dst, rows, np.broadcast_to(out_rows, (k_count, n)), outer],
                     axis=2)  # fmt: skip
    return np.ascontiguousarray(table.transpose(1, 0, 2).reshape(-1, 5), dtype=np.int64)


def _launch(run: GpuRun, out: GpuBatch, rest: tuple[GpuBatch | Call, ...]) -> None:
    *inputs, arg = rest
    batches = [b for b in inputs if isinstance(b, GpuBatch)]
    assert isinstance(arg, Call)
    pieces = _pieces(out, batches, arg.resolved_axis)
    copy_pieces(run, out, batches[_base(batches)].data, pieces)


@register(concat.cat, "gpu")
def cat_gpu(run: GpuRun, out: GpuBatch, *rest: GpuBatch | Call) -> None:
    """Concatenate the whole batch in one launch."""
    _launch(run, out, rest)


@register(concat.stack, "gpu")
def stack_gpu(run: GpuRun, out: GpuBatch, *rest: GpuBatch | Call) -> None:
    """Stack the whole batch in one launch."""
    _launch(run, out, rest)
