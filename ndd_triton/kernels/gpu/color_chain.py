"""A chain of colour adjustments in one launch (compile mode's fusion of traced colour ops).

Each step is one colour op's per-sample affine transform (`kernels/gpu/color.py`), applied in
registers with the same fp32 expression as the single-op kernel, followed by the conversion the
single op's store would do (round half away from zero and saturate for integer outputs), so the
chain gives the bytes of the ops run one by one. Only steps whose outputs survive the round trip
through registers exactly (uint8, int8, int16, float32) may be intermediate; the last step
stores any colour dtype. Steps are 1x1 (a scalar per element) or 3x3 (RGB pixels); a chain with
a 3x3 step walks pixels of three channels and applies the 1x1 steps to each channel alone.
NORM: a crop_mirror_normalize without crop or mirror and with a float output follows the chain;
its `v * gain[c] + bias[c]` and its HWC or CHW store happen in the same pass.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels.gpu._stream import _helper_stream_tile, plan_tiles
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu.color import _helper_convert, _helper_load_pixels, dtype_bounds

IN_BASE: tl.constexpr = tl.constexpr(2)
OUT_BASE: tl.constexpr = tl.constexpr(3)
NCOL: tl.constexpr = tl.constexpr(4)
NSTEP: tl.constexpr = tl.constexpr(12)  # floats per step: 3x3 matrix (row-major) + 3 offsets
MAX_STEPS = 7  # step codes are 4 bits each of one constexpr int
# step output dtype -> code (bits 0-1); bit 2: a 3x3 step
INTERMEDIATE_CODES = {np.dtype(np.float32): 0, np.dtype(np.uint8): 1, np.dtype(np.int8): 2,
                      np.dtype(np.int16): 3}  # fmt: skip


@triton.jit
def _helper_step_convert(value, CODE: tl.constexpr):
    """An intermediate step's output as the next step reads it back (store + load)."""
    if CODE == 1:
        value = _helper_convert(value, True, 0.0, 255.0, False)
    elif CODE == 2:
        value = _helper_convert(value, True, -128.0, 127.0, False)
    elif CODE == 3:
        value = _helper_convert(value, True, -32768.0, 32767.0, False)
    return value


@triton.jit
def _helper_store_pixel(out, value, mask, OUT_INT: tl.constexpr, LO: tl.constexpr,
                        HI: tl.constexpr, NORM: tl.constexpr, MASKED: tl.constexpr):  # fmt: skip
    """Store one channel: as the colour op's store converts it, or (NORM) as
    crop_mirror_normalize's float store does (`v * gain + bias`, already applied)."""
    if NORM:
        value = value.to(out.dtype.element_ty)
    else:
        value = _helper_convert(value, OUT_INT, LO, HI, False).to(out.dtype.element_ty)
    if MASKED:
        tl.store(out, value, mask=mask)
    else:
        tl.store(out, value)


@triton.jit
def _helper_chain_pixels(src, dst, prm, lanes, mask, plane, CIN: tl.constexpr,
                         STEPS: tl.constexpr, CODES: tl.constexpr, OUT_INT: tl.constexpr,
                         LO: tl.constexpr, HI: tl.constexpr, NORM: tl.constexpr,
                         CHW: tl.constexpr, MASKED: tl.constexpr):  # fmt: skip
    """Transform the pixels at `src + lanes * CIN` through every step into `dst` (NORM: then
    `v * gain + bias` per channel, stored HWC, or CHW with `plane` elements per channel)."""
    v0, v1, v2 = _helper_load_pixels(src, lanes, mask, CIN, MASKED)
    z = tl.zeros_like(v0)
    for s in tl.static_range(STEPS):
        p = prm + s * NSTEP
        code = (CODES >> (4 * s)) & 15  # constexpr (s is a static_range index)
        if code & 4:  # 3x3: the single-op kernel's sum for each output channel
            a0 = (tl.load(p) * v0 + tl.load(p + 1) * v1 + tl.load(p + 2) * v2
                  + tl.load(p + 9))  # fmt: skip
            a1 = (tl.load(p + 3) * v0 + tl.load(p + 4) * v1 + tl.load(p + 5) * v2
                  + tl.load(p + 10))  # fmt: skip
            a2 = (tl.load(p + 6) * v0 + tl.load(p + 7) * v1 + tl.load(p + 8) * v2
                  + tl.load(p + 11))  # fmt: skip
        else:  # 1x1: each channel as a one-channel pixel (the padded entries times zeros)
            m = tl.load(p)
            m1 = tl.load(p + 1)
            m2 = tl.load(p + 2)
            o = tl.load(p + 9)
            a0 = m * v0 + m1 * z + m2 * z + o
            if CIN == 3:
                a1 = m * v1 + m1 * z + m2 * z + o
                a2 = m * v2 + m1 * z + m2 * z + o
            else:
                a1 = z
                a2 = z
        if s < STEPS - 1 or NORM:
            v0 = _helper_step_convert(a0, code & 3)
            v1 = _helper_step_convert(a1, code & 3)
            v2 = _helper_step_convert(a2, code & 3)
        else:
            v0 = a0
            v1 = a1
            v2 = a2
    if NORM:  # crop_mirror_normalize's `v * gain[c] + bias[c]` (3 channels)
        g = prm + STEPS * NSTEP
        v0 = v0 * tl.load(g) + tl.load(g + 3)
        v1 = v1 * tl.load(g + 1) + tl.load(g + 4)
        v2 = v2 * tl.load(g + 2) + tl.load(g + 5)
    if CHW:
        out = dst + lanes
        step = plane
    else:
        out = dst + lanes * CIN
        step = 1
    _helper_store_pixel(out, v0, mask, OUT_INT, LO, HI, NORM, MASKED)
    if CIN == 3:
        _helper_store_pixel(out + step, v1, mask, OUT_INT, LO, HI, NORM, MASKED)
        _helper_store_pixel(out + 2 * step, v2, mask, OUT_INT, LO, HI, NORM, MASKED)


@triton.jit
def _color_chain_kernel(src, dst, samples, ptable, tiles, total, BLOCK: tl.constexpr,
                        CIN: tl.constexpr, STEPS: tl.constexpr, CODES: tl.constexpr,
                        OUT_INT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                        NORM: tl.constexpr, CHW: tl.constexpr, PSTRIDE: tl.constexpr,
                        GLOBAL: tl.constexpr, DIRECT: tl.constexpr):  # fmt: skip
    """The pixels p = start + lane of one tile through STEPS colour steps (see the module).

    The output of a CHW store (NORM) is at `out_base + p` per plane (`out_base` = the sample's
    offset minus its stream start), planes `S_END - S_START` elements apart."""
    sample, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL, BLOCK, GLOBAL)
    prm = ptable + sample * PSTRIDE
    plane = start * 0
    if DIRECT:
        src = src + start * CIN
        dst = dst + start * CIN
    else:
        src = src + (tl.load(row + IN_BASE) + start * CIN)
        if CHW:
            dst = dst + (tl.load(row + OUT_BASE) + start)
            plane = tl.load(row + 1) - tl.load(row)  # S_END - S_START: pixels of the sample
        else:
            dst = dst + (tl.load(row + OUT_BASE) + start * CIN)
    lanes = tl.arange(0, BLOCK)
    if hi - lo == BLOCK:
        _helper_chain_pixels(src, dst, prm, lanes, lanes, plane, CIN, STEPS, CODES, OUT_INT, LO,
                             HI, NORM, CHW, False)  # fmt: skip
    else:
        mask = (lanes >= (lo - start).to(tl.int32)) & (lanes < (hi - start).to(tl.int32))
        _helper_chain_pixels(src, dst, prm, lanes, mask, plane, CIN, STEPS, CODES, OUT_INT, LO,
                             HI, NORM, CHW, True)  # fmt: skip


def chain_codes(widths: list[int], dtypes: list[np.dtype], norm: bool = False) -> int | None:
    """The constexpr step codes of a chain (`widths`: 1 or 3 per step, `dtypes`: each step's
    output), or None when the chain cannot run as one pass (an intermediate dtype that does not
    survive registers exactly, or too many steps). With `norm` (a crop_mirror_normalize store
    follows) every step's output is intermediate."""
    if not (1 if norm else 2) <= len(widths) <= MAX_STEPS:
        return None
    codes = 0
    for s, (width, dtype) in enumerate(zip(widths, dtypes, strict=True)):
        last = s == len(widths) - 1 and not norm
        code = INTERMEDIATE_CODES.get(np.dtype(dtype), 0 if last else None)
        if code is None:
            return None
        codes |= (code | (4 if width == 3 else 0)) << (4 * s)
    return codes


def launch_color_chain(run: GpuRun, out: GpuBatch, inp: GpuBatch, matrices: list[np.ndarray],
                       offsets: list[np.ndarray], codes: int,
                       norm: tuple[np.ndarray, np.ndarray, bool] | None = None
                       ) -> None:  # fmt: skip
    """One launch applying every step's `[N, C, C]` matrices and `[N, C]` offsets in turn;
    `norm` = (gain `[N, 3]`, bias `[N, 3]`, CHW output): crop_mirror_normalize's store of
    3-channel pixels (no crop, no mirror, float output) after the last step."""
    n = len(inp.sizes)
    steps = len(matrices)
    params = np.zeros((n, steps, 12), np.float32)
    for s, (matrix, offset) in enumerate(zip(matrices, offsets, strict=True)):
        c = matrix.shape[1]
        padded = np.zeros((n, 3, 3), np.float32)
        padded[:, :c, :c] = matrix
        params[:, s, :9] = padded.reshape(n, 9)
        params[:, s, 9 : 9 + c] = offset
    cin = 3 if norm is not None or any(m.shape[1] == 3 for m in matrices) else 1
    params = params.reshape(n, steps * 12)
    chw = norm is not None and norm[2]
    if norm is not None:
        params = np.concatenate([params, np.asarray(norm[0], np.float32)[:, :3],
                                 np.asarray(norm[1], np.float32)[:, :3]], axis=1)  # fmt: skip
    pixels = inp.sizes // cin
    is_int, lo, hi = dtype_bounds(out.dtype.numpy_dtype)
    block = 1024 if cin == 3 else 2048
    bits = params.view(np.int32)
    uniform = n == 0 or bool((bits == bits[0]).all())
    starts = np.cumsum(pixels) - pixels
    in_base = inp.offsets - starts * cin
    out_base = out.offsets - starts * (1 if chw else cin)
    direct = n > 0 and not chw and \
        bool((in_base == in_base[0]).all() and (out_base == out_base[0]).all())  # fmt: skip
    src, dst = inp.data, out.data
    if direct:
        src, dst = inp.data[int(in_base[0]) :], out.data[int(out_base[0]) :]
    grid, tiles, columns, total = plan_tiles(starts, pixels, block, global_ok=direct and uniform)
    samples = np.concatenate([columns, in_base[:, None], out_base[:, None]], axis=1)
    run.launch(_color_chain_kernel, (grid,), src, dst, samples, params,
               np.zeros((1, 2), np.int32) if tiles is None else tiles, total, BLOCK=block,
               CIN=cin, STEPS=steps, CODES=codes, OUT_INT=is_int and norm is None, LO=lo, HI=hi,
               NORM=norm is not None, CHW=chw, PSTRIDE=params.shape[1], GLOBAL=tiles is None,
               DIRECT=direct)  # fmt: skip
