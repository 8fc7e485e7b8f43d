"""noise.* on the GPU: one launch per batch, per-element Philox draws (key, base + index).

Mirrors `kernels/cpu/noise.py` formula by formula, so CPU and GPU agree (the transcendental
functions of real hardware may differ from NumPy's in the last bit; the interpreter is exact).
A program owns BLOCK elements of one sample (int32 lane offsets, `random_ops._helper_sample_tile`);
gaussian lanes share Philox blocks two by two, salt_and_pepper finds an element's unit with
int32 multiply-shift divisions (`_broadcast.py`).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._broadcast import INT32_LIMIT, _helper_magic_div, magic_numbers
from ndd_triton.kernels.gpu._philox import (
    _helper_philox_draw2,
    _helper_unit_f32,
    _helper_unit_f64,
)
from ndd_triton.kernels.gpu._saturate import _helper_round_saturate, int_limits
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import grid_of, tile_starts
from ndd_triton.kernels.gpu.random_ops import (
    _helper_box_muller_f32,
    _helper_draws2,
    _helper_sample_tile,
)
from ndd_triton.ops import noise as ops
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
SIZE: tl.constexpr = tl.constexpr(2)
BASE: tl.constexpr = tl.constexpr(3)  # uint64 bits; SIZE, BASE, KEY_LO, KEY_HI: _helper_sample_tile
KEY_LO: tl.constexpr = tl.constexpr(4)
KEY_HI: tl.constexpr = tl.constexpr(5)
CHAN: tl.constexpr = tl.constexpr(6)  # salt_and_pepper: channel extent (1: per value)
INNER: tl.constexpr = tl.constexpr(7)  # salt_and_pepper: elements after the channel axis
INNER_MUL: tl.constexpr = tl.constexpr(8)  # salt_and_pepper: division constants of INNER, CHAN
INNER_SHIFT: tl.constexpr = tl.constexpr(9)
CHAN_MUL: tl.constexpr = tl.constexpr(10)
CHAN_SHIFT: tl.constexpr = tl.constexpr(11)
NCOL: tl.constexpr = tl.constexpr(12)
F_A: tl.constexpr = tl.constexpr(0)  # mean / prob / factor
F_B: tl.constexpr = tl.constexpr(1)  # stddev / salt_vs_pepper
NFCOL: tl.constexpr = tl.constexpr(2)
POISSON_SMALL: tl.constexpr = tl.constexpr(10.0)
INVERSION_STEPS: tl.constexpr = tl.constexpr(64)
PTRS_ATTEMPTS: tl.constexpr = tl.constexpr(8)
INV_2_32: tl.constexpr = tl.constexpr(1.0 / 4294967296.0)
HALF_LOG_2PI: tl.constexpr = tl.constexpr(0.9189385332046727)
G0: tl.constexpr = tl.constexpr(8.333333333333333e-02)
G1: tl.constexpr = tl.constexpr(-2.777777777777778e-03)
G2: tl.constexpr = tl.constexpr(7.936507936507937e-04)
G3: tl.constexpr = tl.constexpr(-5.952380952380952e-04)
G4: tl.constexpr = tl.constexpr(8.417508417508418e-04)
G5: tl.constexpr = tl.constexpr(-1.917526917526918e-03)
G6: tl.constexpr = tl.constexpr(6.410256410256410e-03)
G7: tl.constexpr = tl.constexpr(-2.955065359477124e-02)
G8: tl.constexpr = tl.constexpr(1.796443723688307e-01)
G9: tl.constexpr = tl.constexpr(-1.39243221690590e00)
TILE = 512
SHOT_TILE = 256

_NO_LIMITS = {"LO": 0.0, "HI": 0.0, "HI_INT": 0, "NAN_INT": 0}


@triton.jit
def _helper_store(out, value, mask, OUT_INT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                  HI_INT: tl.constexpr, NAN_INT: tl.constexpr):  # fmt: skip
    if OUT_INT:
        tl.store(out, _helper_round_saturate(value, out.dtype.element_ty, LO, HI, HI_INT, NAN_INT),
                 mask=mask)  # fmt: skip
    else:
        tl.store(out, value.to(out.dtype.element_ty), mask=mask)


@triton.jit
def _gaussian_kernel(src, dst, samples, fparams, tiles, BLOCK: tl.constexpr,
                     OUT_INT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                     HI_INT: tl.constexpr, NAN_INT: tl.constexpr):  # fmt: skip
    """in + mean + stddev * z in float64; element e draws base + 2e, base + 2e + 1."""
    _, row, frow, first, lanes, mask, k0, k1, base = _helper_sample_tile(
        tiles, samples, fparams, BLOCK, NCOL, NFCOL, SIZE)  # fmt: skip
    d0, d1 = _helper_draws2(k0, k1, base + 2 * first.to(tl.uint64), BLOCK)
    z = _helper_box_muller_f32(d0, d1).to(tl.float64)
    x = tl.load(src + tl.load(row + IN_OFF) + first + lanes, mask=mask, other=0).to(tl.float64)
    value = x + (tl.load(frow + F_A) + tl.load(frow + F_B) * z)
    _helper_store(dst + tl.load(row + OUT_OFF) + first + lanes, value, mask, OUT_INT, LO, HI,
                  HI_INT, NAN_INT)  # fmt: skip


@triton.jit
def _salt_and_pepper_kernel(src, dst, samples, fparams, values, tiles, BLOCK: tl.constexpr):
    """One (replace?, salt?) decision per unit; `values` holds (salt, pepper) per sample.

    Element e's unit: e // (extent * inner) * inner + e % inner (draws base + 2 unit, + 1).
    """
    sample, row, frow, first, lanes, mask, k0, k1, base = _helper_sample_tile(
        tiles, samples, fparams, BLOCK, NCOL, NFCOL, SIZE)  # fmt: skip
    e = first.to(tl.int32) + lanes
    inner = tl.load(row + INNER).to(tl.int32)
    q = _helper_magic_div(e, tl.load(row + INNER_MUL), tl.load(row + INNER_SHIFT))
    outer = _helper_magic_div(q, tl.load(row + CHAN_MUL), tl.load(row + CHAN_SHIFT))
    unit = outer * inner + (e - q * inner)
    d0, d1 = _helper_philox_draw2(k0, k1, base + 2 * unit.to(tl.uint64))
    replace = _helper_unit_f32(d0).to(tl.float64) < tl.load(frow + F_A)
    salt = _helper_unit_f32(d1).to(tl.float64) < tl.load(frow + F_B)
    salt_val = tl.load(values + 2 * sample)
    pepper_val = tl.load(values + 2 * sample + 1)
    x = tl.load(src + tl.load(row + IN_OFF) + first + lanes, mask=mask)
    value = tl.where(replace, tl.where(salt, salt_val, pepper_val), x)
    tl.store(dst + tl.load(row + OUT_OFF) + first + lanes, value, mask=mask)


@triton.jit
def _helper_loggam(x):
    """log Gamma(x) for x >= 1 (float64), as `kernels.cpu.noise.loggam`."""
    x0 = tl.maximum(x, 7.0)
    x2 = 1.0 / (x0 * x0)
    series = x0 * 0.0 + G9
    series = series * x2 + G8
    series = series * x2 + G7
    series = series * x2 + G6
    series = series * x2 + G5
    series = series * x2 + G4
    series = series * x2 + G3
    series = series * x2 + G2
    series = series * x2 + G1
    series = series * x2 + G0
    gl = series / x0 + HALF_LOG_2PI + (x0 - 0.5) * tl.log(x0) - x0
    shift = x0 * 0.0 + 1.0
    for i in tl.static_range(7):
        shift = shift * tl.where(x + i < 7.0, x + i, 1.0)
    return gl - tl.log(shift)


@triton.jit
def _helper_inversion(lam_s, k0, k1, first):
    """Sequential search for lam_s < 10 (0 elsewhere: count 0): the steps while u exceeds the
    cumulative pmf. A runtime loop that ends once no lane of the block moves on (`total` only
    grows, so every later step would add 0), as the CPU's; an unrolled loop kept 64 steps of
    two lanes live at once and spilled."""
    d0, d1 = _helper_philox_draw2(k0, k1, first)
    u = _helper_unit_f64(d0, d1)
    term = tl.exp(-lam_s)
    total = term
    count = lam_s * 0.0
    step = 1
    while (step <= INVERSION_STEPS) & (tl.max((u > total).to(tl.int32), axis=0) != 0):
        count = count + tl.where(u > total, 1.0, 0.0)
        term = term * lam_s / step
        total = total + term
        step += 1
    return count


@triton.jit
def _helper_ptrs(lam_b, big, result, k0, k1, first):
    """Hoermann's PTRS for the `big` lanes (lam_b >= 10), as `kernels.cpu.noise._ptrs`: attempt
    j draws first + 2j, + 2j + 1; a lane keeps `result` when every attempt rejects. One attempt
    per iteration of a runtime loop, which ends once every lane of the block has accepted."""
    slam = tl.sqrt(lam_b)  # float64 sqrt is correctly rounded
    loglam = tl.log(lam_b)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = tl.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2.0)
    pending = big
    j = 0
    while (j < PTRS_ATTEMPTS) & (tl.max(pending.to(tl.int32), axis=0) != 0):
        e0, e1 = _helper_philox_draw2(k0, k1, first + 2 * j)
        uu = e0.to(tl.float64) * INV_2_32 - 0.5
        v = e1.to(tl.float64) * INV_2_32
        us = 0.5 - tl.abs(uu)
        k = tl.floor((2.0 * a / us + b) * uu + lam_b + 0.43)
        quick = (us >= 0.07) & (v <= vr)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        lhs = tl.log(v) + log_invalpha - tl.log(a / (us * us) + b)
        rhs = -lam_b + k * loglam - _helper_loggam(tl.maximum(k, 0.0) + 1.0)
        accept = pending & (quick | ((~reject) & (lhs <= rhs)))
        result = tl.where(accept, k, result)
        pending = pending & (~accept)
        j += 1
    return result


@triton.jit
def _helper_poisson(lam, k0, k1, first):
    """Poisson(lam) (float64) from draws first .. first + 15, as `kernels.cpu.noise.poisson`."""
    small = lam < POISSON_SMALL
    count = _helper_inversion(tl.where(small, lam, 0.0), k0, k1, first)
    result = tl.where(small, count, tl.floor(lam + 0.5))
    big = lam >= POISSON_SMALL
    return _helper_ptrs(tl.where(big, lam, POISSON_SMALL), big, result, k0, k1, first)


@triton.jit
def _shot_kernel(src, dst, samples, fparams, tiles, BLOCK: tl.constexpr, DRAWS: tl.constexpr,
                 OUT_INT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                 HI_INT: tl.constexpr, NAN_INT: tl.constexpr):  # fmt: skip
    """Poisson(max(0, in / factor)) * factor; factor 0 copies the input."""
    _, row, frow, first, lanes, mask, k0, k1, base = _helper_sample_tile(
        tiles, samples, fparams, BLOCK, NCOL, NFCOL, SIZE)  # fmt: skip
    raw = tl.load(src + tl.load(row + IN_OFF) + first + lanes, mask=mask, other=0)
    factor = tl.load(frow + F_A)
    safe = tl.where(factor == 0.0, 1.0, factor)
    x = raw.to(tl.float64) / safe
    lam = tl.where(x > 0, x, 0.0)
    draw = base + DRAWS * (first.to(tl.uint64) + lanes.to(tl.uint64))
    value = _helper_poisson(lam, k0, k1, draw) * factor
    out = dst + tl.load(row + OUT_OFF) + first + lanes
    if factor == 0.0:
        tl.store(out, raw, mask=mask)
    else:
        _helper_store(out, value, mask, OUT_INT, LO, HI, HI_INT, NAN_INT)


def _tables(out: GpuBatch, inp: GpuBatch, call: Call, floats: tuple[np.ndarray, ...],
            chan: tuple[np.ndarray, np.ndarray] | None = None
            ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    n = out.batch_size
    samples = np.zeros((n, int(NCOL)), dtype=np.int64)
    samples[:, int(IN_OFF)] = inp.offsets
    samples[:, int(OUT_OFF)] = out.offsets
    samples[:, int(SIZE)] = out.sizes
    samples[:, int(BASE)] = np.asarray(call.rng_base, dtype=np.uint64).view(np.int64)
    samples[:, int(KEY_LO)] = call.rng_key & 0xFFFFFFFF
    samples[:, int(KEY_HI)] = call.rng_key >> 32
    samples[:, int(CHAN)] = chan[0] if chan is not None else 1
    samples[:, int(INNER)] = chan[1] if chan is not None else 1
    for col, values in ((INNER_MUL, samples[:, int(INNER)]), (CHAN_MUL, samples[:, int(CHAN)])):
        samples[:, int(col)], samples[:, int(col) + 1] = magic_numbers(values)
    if n and int(out.sizes.max()) >= INT32_LIMIT:
        raise ValueError("noise: GPU samples must have fewer than 2**31 elements")
    fparams = np.zeros((n, int(NFCOL)), dtype=np.float64)
    for col, values in enumerate(floats):
        fparams[:, col] = values
    return samples, fparams


def _limits(out: GpuBatch) -> dict[str, object]:
    np_type = out.dtype.numpy_dtype
    if np_type.kind in "iu":
        return {"OUT_INT": True, **int_limits(np_type)}
    return {"OUT_INT": False, **_NO_LIMITS}


@register(ops.gaussian, "gpu")
def gaussian_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """One launch."""
    samples, fparams = _tables(out, inp, call, (call.mean, call.stddev))
    tiles = tile_starts(-(-out.sizes // TILE))
    run.launch(_gaussian_kernel, (grid_of(tiles),), inp.data, out.data, samples, fparams, tiles,
               BLOCK=TILE, **_limits(out))  # fmt: skip


@register(ops.salt_and_pepper, "gpu")
def salt_and_pepper_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """One launch; salt and pepper values are converted to the data type on the host."""
    samples, fparams = _tables(out, inp, call, (call.prob, call.salt_vs_pepper),
                               (call.chan_extent, call.chan_inner))  # fmt: skip
    values = convert_numpy(np.stack([call.salt_val, call.pepper_val], axis=1),
                           out.dtype.numpy_dtype)  # fmt: skip
    tiles = tile_starts(-(-out.sizes // TILE))
    run.launch(_salt_and_pepper_kernel, (grid_of(tiles),), inp.data, out.data, samples, fparams,
               values, tiles, BLOCK=TILE)  # fmt: skip


@register(ops.shot, "gpu")
def shot_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """One launch."""
    samples, fparams = _tables(out, inp, call, (call.factor,))
    tiles = tile_starts(-(-out.sizes // SHOT_TILE))
    run.launch(_shot_kernel, (grid_of(tiles),), inp.data, out.data, samples, fparams, tiles,
               BLOCK=SHOT_TILE, DRAWS=ops.SHOT_DRAWS, **_limits(out))  # fmt: skip
