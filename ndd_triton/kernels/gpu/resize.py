"""resize on the GPU: one Triton launch per separable pass for the whole ragged batch.

A 2-D resize is two launches (W pass, then H pass; a volume adds a D pass): each output element
of a pass is a K-tap weighted sum along one axis, with the taps and weights read from the same
tables the CPU kernel uses (`kernels._resample.axis_table`). For the triangle filters (LINEAR,
TRIANGULAR: every RN50 resize and random crop) one more launch builds the tables of all axes
on the device (`_resample_tables`, bit-identical to the host's), so that a batch of new sizes
costs no per-sample NumPy work on the host (~75 -> ~10 µs per sample). Intermediate results
are float32; the last pass rounds half away from zero and saturates integer outputs. Samples
with fewer taps than the batch maximum are padded with zero weights. resize_crop_mirror and
random_resized_crop reuse `resample_gpu`: they only change the source mapping.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels._resample import axis_tables
from ndd_triton.kernels.gpu._resample_tables import DeviceTables, triangle_tables
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts
from ndd_triton.ops import resize
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
OUTER: tl.constexpr = tl.constexpr(2)
L_IN: tl.constexpr = tl.constexpr(3)
L_OUT: tl.constexpr = tl.constexpr(4)
INNER: tl.constexpr = tl.constexpr(5)
TAB: tl.constexpr = tl.constexpr(6)  # first row of this sample in the tap tables
FLIP: tl.constexpr = tl.constexpr(7)  # nonzero: the pass stores its axis mirrored (MIRROR)
NCOL: tl.constexpr = tl.constexpr(8)
TILE = 1024


@triton.jit
def _resample_axis_kernel(src, dst, samples, tiles, index, weight, TAPS: tl.constexpr,
                          ROUND: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                          IDX: tl.constexpr, BLOCK: tl.constexpr,
                          MIRROR: tl.constexpr = False):  # fmt: skip
    """One tile of one sample: out[o, j, i] = sum_k weight[j, k] * src[o, index[j, k], i]
    (`MIRROR`: stored at `l_out - 1 - j` in the samples whose FLIP column is set: a flip of
    this axis after the resize, compile mode's fusion).

    Index math in IDX-bit integers: int32 when every sample's input and output of the pass
    fit (the divisions dominate this kernel's cost on the GPU; int64 ones are much slower)."""
    ity = tl.int32 if IDX == 32 else tl.int64
    sample, tile = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    first = tile.to(tl.int64) * BLOCK
    row = samples + sample * NCOL
    outer = tl.load(row + OUTER).to(ity)
    l_in = tl.load(row + L_IN).to(ity)
    l_out = tl.load(row + L_OUT).to(ity)
    inner = tl.load(row + INNER).to(ity)
    tab = tl.load(row + TAB)
    src_base = src + tl.load(row + IN_OFF)
    idx = (first + tl.arange(0, BLOCK).to(tl.int64)).to(ity)
    mask = idx < outer * l_out * inner
    i = idx % inner
    oj = idx // inner
    j = oj % l_out
    o = oj // l_out
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(TAPS):
        t = (tab + j) * TAPS + k
        s = tl.load(index + t, mask=mask, other=0).to(ity)
        w = tl.load(weight + t, mask=mask, other=0.0)
        v = tl.load(src_base + ((o * l_in + s) * inner + i).to(tl.int64), mask=mask,
                    other=0).to(tl.float32)  # fmt: skip
        acc += w * v
    if ROUND:  # integer output: saturate, then round half away from zero
        acc = tl.minimum(tl.maximum(acc, LO), HI)
        acc = tl.where(acc < 0, tl.ceil(acc - 0.5), tl.floor(acc + 0.5))
    if MIRROR:  # a static if: Triton compiles one branch
        flip = tl.load(row + FLIP)
        at = tl.where(flip != 0, (o * l_out + (l_out - 1 - j)) * inner + i, idx)
    else:
        at = idx
    tl.store(
        dst + tl.load(row + OUT_OFF) + at.to(tl.int64), acc.to(dst.dtype.element_ty), mask=mask
    )


def resample_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call,
                 tables: DeviceTables | None = None,
                 mirror: np.ndarray | None = None) -> None:  # fmt: skip
    """Resample the spatial axes of every sample: one launch per axis, innermost first (and
    one before them building every axis's tap tables, for the triangle filters, or as
    `tables` says). Every host table of the call (the tables launch's plan rows, each pass's
    sample and tile-start tables, host-built tap tables) goes to the device in one upload.
    `mirror` (`[N, axes]`, in `resample_axes` order): each axis's pass stores that axis
    mirrored where set (a flip after the resize, exact: the passes are independent along the
    other axes)."""
    layout = call.inputs[0].layout or "HWC"
    letters = call.resample_axes
    n = len(inp.shapes)
    resample_out = np.asarray(call.resample_out, np.int64)
    # all axes' plans as one batch of len(letters) * N plans: one table launch; each pass
    # reads its own rows of the shared tables
    tri = tables if tables is not None else triangle_tables(call)
    host: list[np.ndarray] = list(tri.host) if tri is not None else []
    passes = []
    shapes, src_off = inp.shapes, inp.offsets
    for step, k in enumerate(reversed(range(len(letters)))):
        axis = layout.index(letters[k])
        new = shapes.copy()
        new[:, axis] = resample_out[:, k]
        sizes = new.prod(axis=1, dtype=np.int64)
        last = step == len(letters) - 1
        if last:
            dst_off = out.offsets
        else:
            dst_off = np.zeros(n, np.int64)
            np.cumsum(sizes[:-1], out=dst_off[1:])
        if tri is not None:  # triangle filters: no per-sample host work
            first, taps = tri.first[k * n:(k + 1) * n], tri.taps
        else:
            index, weight, first, taps = axis_tables(
                np.asarray(call.resample_in)[:, k], resample_out[:, k],
                np.asarray(call.resample_origin)[:, k], np.asarray(call.resample_step)[:, k],
                np.asarray(call.resample_interp)[:, k], bool(call.antialias),
                k == len(letters) - 1)  # fmt: skip
            host += [index, weight]
        samples = np.zeros((n, 8), np.int64)  # the columns IN_OFF .. FLIP
        samples[:, 0], samples[:, 1] = src_off, dst_off
        samples[:, 2] = shapes[:, :axis].prod(axis=1, dtype=np.int64)
        samples[:, 3], samples[:, 4] = shapes[:, axis], new[:, axis]
        samples[:, 5] = shapes[:, axis + 1:].prod(axis=1, dtype=np.int64)
        samples[:, 6] = first
        if mirror is not None:
            samples[:, 7] = mirror[:, k] != 0
        tiles = tile_starts(-(-sizes // TILE))
        host += [samples, tiles]
        small = max(int(shapes.prod(axis=1).max(initial=0)),
                    int(sizes.max(initial=0))) < 2**30  # fmt: skip
        flips = mirror is not None and bool((mirror[:, k] != 0).any())
        passes.append((last, int(sizes.sum()), taps, tiles, small, flips))
        shapes, src_off = new, dst_off
    views = iter(run.upload(*host))
    if tri is not None:
        shared = tri.build(run, [next(views) for _ in tri.host])
    src = inp.data
    for last, total, taps, tiles, small, flips in passes:
        index, weight = shared if tri is not None else (next(views), next(views))
        samples_dev, tiles_dev = next(views), next(views)
        dst = out.data if last else run.empty(total, torch.float32)
        is_int = last and not out.dtype.is_float
        info = np.iinfo(out.dtype.numpy_dtype) if is_int else None
        run.launch(_resample_axis_kernel, (grid_of(tiles),), src, dst, samples_dev, tiles_dev,
                   index, weight, TAPS=taps, ROUND=is_int,
                   LO=float(info.min) if info is not None else 0.0,
                   HI=float(info.max) if info is not None else 0.0,
                   IDX=32 if small else 64, BLOCK=TILE, MIRROR=flips)  # fmt: skip
        src = dst


@register(resize.schema, "gpu", replay=lambda call: not call.values.get("save_attrs"))
def resize_gpu(run: GpuRun, out: GpuBatch | tuple[GpuBatch, GpuBatch], inp: GpuBatch,
               call: Call, mirror: np.ndarray | None = None) -> None:  # fmt: skip
    """Resize the batch (two launches for 2-D samples); save_attrs copies the input extents.
    `mirror`: see `resample_gpu`."""
    if isinstance(out, tuple):
        out, attrs = out
        extents = np.asarray(call.resample_in, dtype=np.int32).reshape(-1)
        attrs.data.copy_(torch.from_numpy(extents).to(attrs.data.device))
    resample_gpu(run, out, inp, call, None, mirror)
