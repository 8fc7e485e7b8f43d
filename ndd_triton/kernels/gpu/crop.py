"""crop on the GPU (row-tiled `_window_rows` launch), and the one-launch window kernel of
crop_mirror_normalize.

crop reads each output axis at `start + coord`; outside the input it reads the channel's fill
value (pad policy) or clamps (edge policy), converting through fp32 when the output dtype
differs. Each program copies rows of the contiguous innermost run (the `W * C` row of HWC).

`_window_kernel` (crop_mirror_normalize) writes one tile of one sample's output. The flat output
index is unravelled over the output extents (output layout order, left-padded to rank 5); each
coordinate is mirrored if asked, shifted by the window start and mapped through the input
stride of its axis. Coordinates outside the input read the sample's fill value of that channel
(pad policy) or are clamped (edge policy); padded channels (pad_output) have fill 0.
Normalisation is `x * gain[c] + bias[c]` in fp32; integer outputs are rounded half away and
saturated.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu import _window_rows as rows
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts
from ndd_triton.ops import crop
from ndd_triton.ops.schema import Call

RANK = 5
IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
CPOS: tl.constexpr = tl.constexpr(2)  # position of C in the padded output order, -1 if none
OUT_EXT: tl.constexpr = tl.constexpr(3)  # 5 extents each from here on
START: tl.constexpr = tl.constexpr(8)
IN_EXT: tl.constexpr = tl.constexpr(13)
IN_STRIDE: tl.constexpr = tl.constexpr(18)
FLIP: tl.constexpr = tl.constexpr(23)
NCOL: tl.constexpr = tl.constexpr(28)
TILE = 1024


@triton.jit
def _window_kernel(src, dst, samples, floats, tiles, AFFINE: tl.constexpr,
                   CONVERT: tl.constexpr, CLAMP: tl.constexpr, ROUND: tl.constexpr,
                   LO: tl.constexpr, HI: tl.constexpr, CMAX: tl.constexpr,
                   NDIM: tl.constexpr, IDX: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """Copy (and normalise) one output tile of one sample from its crop window.

    Only the last NDIM of the 5 padded axes are unravelled (the others have extent 1), in
    IDX-bit integers (int32 when every sample's input and output fit: GPU division is the
    cost of this kernel, and 64-bit division is several times slower)."""
    sample, t = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    first = t.to(tl.int64) * BLOCK
    row = samples + sample * NCOL
    frow = floats + sample * (3 * CMAX)
    ity = tl.int32 if IDX == 32 else tl.int64
    cpos = tl.load(row + CPOS).to(ity)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    rem = idx.to(ity)
    total = 1
    src_idx = tl.zeros([BLOCK], dtype=ity)
    inside = idx >= 0
    chan = tl.zeros([BLOCK], dtype=ity)
    for d in tl.static_range(NDIM):
        p = 4 - d
        ext = tl.load(row + OUT_EXT + p).to(ity)
        n_in = tl.load(row + IN_EXT + p).to(ity)
        coord = rem % ext
        rem = rem // ext
        total = total * ext
        chan = tl.where(cpos == p, coord, chan)
        coord = tl.where(tl.load(row + FLIP + p) != 0, ext - 1 - coord, coord)
        coord = coord + tl.load(row + START + p).to(ity)
        if CLAMP:
            clamped = tl.minimum(tl.maximum(coord, 0), n_in - 1)
            coord = tl.where(cpos == p, coord, clamped)
        inside = inside & (coord >= 0) & (coord < n_in)
        src_idx += coord * tl.load(row + IN_STRIDE + p).to(ity)
    mask = idx < total
    chan = tl.minimum(chan, CMAX - 1)
    v = tl.load(src + tl.load(row + IN_OFF) + src_idx.to(tl.int64), mask=mask & inside, other=0)
    fill = tl.load(frow + 2 * CMAX + chan, mask=mask, other=0.0)
    if CONVERT:
        v = v.to(tl.float32)
        if AFFINE:
            gain = tl.load(frow + chan, mask=mask, other=0.0)
            bias = tl.load(frow + CMAX + chan, mask=mask, other=0.0)
            v = v * gain + bias
        v = tl.where(inside, v, fill)
        if ROUND:
            v = tl.minimum(tl.maximum(v, LO), HI)
            v = tl.where(v < 0, tl.ceil(v - 0.5), tl.floor(v + 0.5))
    else:
        v = tl.where(inside, v, fill.to(v.dtype))
    tl.store(dst + tl.load(row + OUT_OFF) + idx, v.to(dst.dtype.element_ty), mask=mask)


def _strides(shapes: np.ndarray) -> np.ndarray:
    """Contiguous element strides `[N, ndim]`."""
    rev = np.cumprod(shapes[:, ::-1], axis=1)[:, ::-1]
    return np.concatenate([rev[:, 1:], np.ones((len(shapes), 1), np.int64)], axis=1)


def window_launch(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call, out_layout: str,
                  floats: np.ndarray, mirror: np.ndarray | None, affine: bool) -> None:  # fmt: skip
    """Launch `_window_kernel` once for the batch (`floats`: `[N, 3, CMAX]` gain/bias/fill)."""
    layout = call.inputs[0].layout or "HWC"
    n, pad = inp.batch_size, RANK - len(layout)
    table = np.zeros((n, int(NCOL)), np.int64)
    table[:, IN_OFF], table[:, OUT_OFF], table[:, CPOS] = inp.offsets, out.offsets, -1
    blocks = {name: table[:, int(col):int(col) + RANK] for name, col in
              (("out", OUT_EXT), ("start", START), ("in", IN_EXT), ("stride", IN_STRIDE),
               ("flip", FLIP))}  # fmt: skip
    blocks["out"][:], blocks["in"][:] = 1, 1
    strides = _strides(inp.shapes)
    letters = [c for c in "DHW" if c in layout]
    for p, letter in enumerate(out_layout):
        axis, q = layout.index(letter), pad + p
        blocks["out"][:, q] = out.shapes[:, p]
        blocks["in"][:, q] = inp.shapes[:, axis]
        blocks["stride"][:, q] = strides[:, axis]
        if letter in letters:
            blocks["start"][:, q] = np.asarray(call.window_start)[:, letters.index(letter)]
        if letter == "W" and mirror is not None:
            blocks["flip"][:, q] = np.asarray(mirror).reshape(n) != 0
        if letter == "C":
            table[:, CPOS] = q
    convert = affine or out.dtype != inp.dtype
    is_int = convert and not out.dtype.is_float
    info = np.iinfo(out.dtype.numpy_dtype) if is_int else None
    tiles = tile_starts(-(-out.sizes // TILE))
    # |window coordinates| stay below in + out extents; int32 holds the index math when
    # every sample's input and output (and so any offset within them) stay below 2**30
    small = max(int(inp.sizes.max(initial=0)), int(out.sizes.max(initial=0))) < 2**30
    run.launch(_window_kernel, (grid_of(tiles),), inp.data, out.data, table,
               np.ascontiguousarray(floats, dtype=np.float32), tiles, AFFINE=affine,
               CONVERT=convert, CLAMP=call.out_of_bounds_policy in ("edge", "clamp"),
               ROUND=is_int, LO=float(info.min) if info is not None else 0.0,
               HI=float(info.max) if info is not None else 0.0, CMAX=floats.shape[2],
               NDIM=len(out_layout), IDX=32 if small else 64, BLOCK=TILE)  # fmt: skip


@register(crop.schema, "gpu", replay=True)
def crop_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Crop the whole batch in one launch."""
    layout = call.inputs[0].layout or "HWC"
    n, ndim = inp.shapes.shape
    anchor = np.zeros((n, ndim), np.int64)
    letters = [c for c in "DHW" if c in layout]
    for k, letter in enumerate(letters):
        anchor[:, layout.index(letter)] = np.asarray(call.window_start)[:, k]
    channel = layout.index("C") if "C" in layout else -1
    # one fill per channel, in the output dtype (through fp32, as the conversion path does);
    # channels past the fill table read its last value
    fill = np.asarray(call.fill, dtype=np.float64).reshape(-1)
    width = max(int(out.shapes[:, channel].max(initial=1)) if channel >= 0 else 1, len(fill), 1)
    table = np.full(width, fill[-1] if len(fill) else 0.0)
    table[: len(fill)] = fill
    with np.errstate(over="ignore", invalid="ignore"):
        fills = table.astype(np.float32).astype(out.dtype.numpy_dtype)
    conv = {"CONV": rows.CONV_NONE, "LO": 0, "HI": 0, "NANV": 0, "LO_F": 0.0, "HI_F": 0.0}
    if out.dtype != inp.dtype:
        conv["CONV"] = rows.CONV_CROP
        if not out.dtype.is_float:
            info = np.iinfo(out.dtype.numpy_dtype)
            conv["LO_F"], conv["HI_F"] = float(info.min), float(info.max)
    edge = call.out_of_bounds_policy in ("edge", "clamp")
    rows.window_rows(run, out, inp.data, inp.offsets, inp.shapes, anchor,
                     policy=rows.EDGE if edge else rows.PAD,
                     fills=np.broadcast_to(fills, (n, width)), channel_axis=channel,
                     conv=conv)  # fmt: skip
