"""audio_resample on the GPU: one launch, a program per 32 outputs x `2 * lobes` taps.

Input positions are DALI's float32 walk (`ops/_audio.resample_positions`, a sequential float32
sum per block of 256 outputs, which a parallel kernel cannot reproduce bit for bit), computed
on the host with NumPy and uploaded with the tables (4 bytes per output). Weights are
interpolated from the uploaded sinc table; channels are looped. Integer inputs/outputs are
rescaled as in the CPU kernel.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import audio_resample
from ndd_triton.ops._audio import batch_resample_positions, resample_table
from ndd_triton.ops.schema import Call

T_SAMPLE: tl.constexpr = tl.constexpr(0)
T_FIRST: tl.constexpr = tl.constexpr(1)  # first output of the tile
T_ORIGIN: tl.constexpr = tl.constexpr(2)  # integer input position of its 256-output block
T_POS: tl.constexpr = tl.constexpr(3)  # index of its first output's offset in `offsets`
NCOL: tl.constexpr = tl.constexpr(4)
S_IN: tl.constexpr = tl.constexpr(0)
S_OUT: tl.constexpr = tl.constexpr(1)
S_N: tl.constexpr = tl.constexpr(2)
S_M: tl.constexpr = tl.constexpr(3)
S_C: tl.constexpr = tl.constexpr(4)
S_NCOL: tl.constexpr = tl.constexpr(5)
BLOCK_J = 32  # outputs per program (divides RESAMPLE_BLOCK: a tile has one origin)


@triton.jit
def _resample_kernel(src, dst, tiles, samples, offsets, lut, lut_last, center, per_unit,
                     LOBES: tl.constexpr, TAPS: tl.constexpr, BLOCK_J: tl.constexpr,
                     IN_KIND: tl.constexpr, IN_MAX: tl.constexpr, OUT_KIND: tl.constexpr,
                     OUT_MAX: tl.constexpr, LO_F: tl.constexpr):  # fmt: skip
    """BLOCK_J outputs x TAPS taps of one sample; KIND 0 float, 1 signed, 2 unsigned int."""
    tile = tiles + tl.program_id(0) * NCOL
    sample = tl.load(tile + T_SAMPLE)
    first = tl.load(tile + T_FIRST)
    origin = tl.load(tile + T_ORIGIN)
    row = samples + sample * S_NCOL
    n = tl.load(row + S_N)
    m = tl.load(row + S_M)
    c_count = tl.load(row + S_C).to(tl.int32)
    src_base = src + tl.load(row + S_IN)
    dst_base = dst + tl.load(row + S_OUT)
    jj = tl.arange(0, BLOCK_J)
    live = first + jj < m
    pos = tl.load(offsets + tl.load(tile + T_POS) + jj, mask=live, other=0.0)
    lane = tl.arange(0, TAPS)
    rel = tl.ceil(pos).to(tl.int32)[:, None] - LOBES + lane[None, :]
    idx = origin + rel
    ok = live[:, None] & (lane[None, :] < 2 * LOBES) & (idx >= 0) & (idx < n)
    fi = (rel.to(tl.float32) - pos[:, None]) * per_unit + center
    lo = tl.floor(fi)
    frac = fi - lo
    lo_i = tl.minimum(tl.maximum(lo.to(tl.int32), 0), lut_last)
    w0 = tl.load(lut + lo_i, mask=ok, other=0.0)
    w = tl.where(ok, w0 + frac * (tl.load(lut + lo_i + 1, mask=ok, other=0.0) - w0), 0.0)
    for c in range(c_count):
        x = tl.load(src_base + idx * c_count + c, mask=ok, other=0).to(tl.float32)
        if IN_KIND == 1:
            x = x / IN_MAX
        elif IN_KIND == 2:
            x = x * (2.0 / IN_MAX) - 1.0
        y = tl.sum(w * x, axis=1)
        if OUT_KIND == 1:
            v = y * OUT_MAX
            v = tl.where(v < 0, tl.ceil(v - 0.5), tl.floor(v + 0.5))
            y = tl.minimum(tl.maximum(v, LO_F), OUT_MAX)
        elif OUT_KIND == 2:
            y = tl.minimum(tl.maximum(tl.floor((y + 1.0) * (OUT_MAX / 2.0)), 0.0), OUT_MAX)
        tl.store(dst_base + (first + jj) * c_count + c, y.to(dst.dtype.element_ty), mask=live)


def _kind(dtype: np.dtype) -> tuple[int, float, float]:
    if dtype.kind == "f":
        return 0, 1.0, 0.0
    info = np.iinfo(dtype)
    return (1 if dtype.kind == "i" else 2), float(info.max), float(info.min)


@register(audio_resample.schema, "gpu", replay=True)
def audio_resample_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Positions (DALI's float32 walk, `batch_resample_positions`) and tiles built on the host
    with NumPy over all samples at once; one launch."""
    m = np.asarray(arg.out_len, dtype=np.int64).reshape(-1)
    ratio = np.asarray(arg.step, dtype=np.float64).reshape(-1)
    origin_each, pos_table = batch_resample_positions(m, ratio)  # per output, concatenated
    counts = -(-m // BLOCK_J)
    sample = np.repeat(np.arange(len(m)), counts)
    local = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts,
                                                                     counts)  # fmt: skip
    first = local * BLOCK_J
    pos_base = np.cumsum(m) - m
    tiles = np.stack([sample, first, origin_each[pos_base[sample] + first],
                      pos_base[sample] + first], axis=1)  # fmt: skip
    channels = inp.shapes[:, 1] if inp.shapes.shape[1] > 1 else np.ones(len(m), np.int64)
    samples = np.stack([inp.offsets, out.offsets, inp.shapes[:, 0], m, channels],
                       axis=1).astype(np.int64)  # fmt: skip
    lobes = int(arg.lobes)
    lut, center, per_unit = resample_table(lobes)
    in_kind, in_max, _ = _kind(inp.dtype.numpy_dtype)
    out_kind, out_max, out_min = _kind(out.dtype.numpy_dtype)
    run.launch(_resample_kernel, (len(tiles),), inp.data, out.data, tiles.astype(np.int64),
               samples, pos_table, np.asarray(lut), len(lut) - 2, center, per_unit, LOBES=lobes,
               TAPS=1 << (2 * lobes - 1).bit_length(), BLOCK_J=BLOCK_J, IN_KIND=in_kind,
               IN_MAX=in_max, OUT_KIND=out_kind, OUT_MAX=out_max, LO_F=out_min)  # fmt: skip
