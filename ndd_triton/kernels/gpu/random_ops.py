"""random.* on the GPU: one launch per batch; values from Philox draws (key, base + index).

Mirrors `kernels/cpu/random_ops.py` formula by formula (same draws, same precision), so both
backends produce the same values (bit-exact for uniform and coin_flip; normal uses float32
log/cos, whose last bit may differ on real hardware). `choice` and `beta` are CPU-only in DALI:
their GPU path computes on the host with the CPU code and uploads the result in one copy.

A program owns BLOCK elements of one sample (found from a per-sample `_tiles.tile_starts`
table; its first element a multiple of BLOCK; int32 lane offsets). Sample bases are multiples
of 4 (`RNG.reserve`), so the lanes of a tile share Philox blocks: one 10-round block feeds 4
lanes of one-draw ops and 2 lanes of two-draw ops, not one lane each (Philox dominates these
kernels' arithmetic).
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.random_ops import beta_sample, choice_sample
from ndd_triton.kernels.gpu._philox import (
    _helper_block,
    _helper_mulhi64,
    _helper_philox_draw2,
    _helper_unit_f32,
    _helper_unit_f64,
    _helper_unit_open_f32,
)
from ndd_triton.kernels.gpu._saturate import _helper_round_saturate, int_limits
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts
from ndd_triton.ops import random_ops as ops
from ndd_triton.ops.schema import Call, SampleArgs

OUT_OFF: tl.constexpr = tl.constexpr(0)
SIZE: tl.constexpr = tl.constexpr(1)
BASE: tl.constexpr = tl.constexpr(2)  # uint64 bits; SIZE, BASE, KEY_LO, KEY_HI: _helper_sample_tile
KEY_LO: tl.constexpr = tl.constexpr(3)
KEY_HI: tl.constexpr = tl.constexpr(4)
LO_BITS: tl.constexpr = tl.constexpr(5)  # uniform int: lo as uint64 bits
SPAN: tl.constexpr = tl.constexpr(6)  # uniform int/values: hi - lo (uint64 bits)
VSTART: tl.constexpr = tl.constexpr(7)  # uniform values: first entry in the value table
NCOL: tl.constexpr = tl.constexpr(8)
F_A: tl.constexpr = tl.constexpr(0)  # lo / mean / probability
F_B: tl.constexpr = tl.constexpr(1)  # hi / stddev
F_C: tl.constexpr = tl.constexpr(2)  # below_hi
NFCOL: tl.constexpr = tl.constexpr(3)
TWO_PI: tl.constexpr = tl.constexpr(2.0 * np.pi)
TILE = 1024


@triton.jit
def _helper_sample_tile(tiles, samples, fparams, BLOCK: tl.constexpr, NCOL: tl.constexpr,
                        NFCOL: tl.constexpr, SIZE: tl.constexpr):  # fmt: skip
    """One program: its sample, int row (SIZE, BASE, KEY_LO, KEY_HI at SIZE..SIZE+3), float
    row, the tile's first element (int64), int32 lanes, mask, Philox key and the sample's draw
    base. The sample and tile come from a `_tiles.tile_starts` table."""
    sample, tile = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    first = tile.to(tl.int64) * BLOCK
    row = samples + sample * NCOL
    lanes = tl.arange(0, BLOCK)
    mask = lanes < tl.load(row + SIZE) - first
    k0 = tl.load(row + SIZE + 2).to(tl.uint32)
    k1 = tl.load(row + SIZE + 3).to(tl.uint32)
    base = tl.load(row + SIZE + 1).to(tl.uint64, bitcast=True)
    return sample, row, fparams + sample * NFCOL, first, lanes, mask, k0, k1, base


@triton.jit
def _helper_draws1(k0, k1, first_draw, BLOCK: tl.constexpr):
    """Draws `first_draw + lane` (first_draw a multiple of 4): one Philox block per 4 lanes."""
    quads = first_draw + 4 * tl.arange(0, BLOCK // 4).to(tl.uint64)
    r0, r1, r2, r3 = _helper_block(k0, k1, quads)
    return tl.reshape(tl.join(tl.join(r0, r2), tl.join(r1, r3)), [BLOCK])  # lane 4q + j: r_j


@triton.jit
def _helper_draws2(k0, k1, first_draw, BLOCK: tl.constexpr):
    """Draws `first_draw + 2 lane` and `+ 1` (first_draw a multiple of 4): a block per 2 lanes."""
    quads = first_draw + 4 * tl.arange(0, BLOCK // 2).to(tl.uint64)
    r0, r1, r2, r3 = _helper_block(k0, k1, quads)
    return tl.reshape(tl.join(r0, r2), [BLOCK]), tl.reshape(tl.join(r1, r3), [BLOCK])


@triton.jit
def _uniform_kernel(dst, values, samples, fparams, tiles, BLOCK: tl.constexpr,
                    MODE: tl.constexpr, F64: tl.constexpr, U64: tl.constexpr):  # fmt: skip
    """MODE 0: lo + u (hi - lo) clamped below hi; 1: lo + index in [0, span]; 2: values[index].

    Element e of the sample uses draw base + e (float32 and narrower) or base + 2e, base + 2e + 1.
    """
    _, row, frow, first, lanes, mask, k0, k1, base = _helper_sample_tile(
        tiles, samples, fparams, BLOCK, NCOL, NFCOL, SIZE)  # fmt: skip
    e = first.to(tl.uint64)
    out = dst + tl.load(row + OUT_OFF) + first + lanes
    if MODE == 0:
        if F64:
            d0, d1 = _helper_draws2(k0, k1, base + 2 * e, BLOCK)
            u = _helper_unit_f64(d0, d1)
        else:
            u = _helper_unit_f32(_helper_draws1(k0, k1, base + e, BLOCK)).to(tl.float64)
        lo = tl.load(frow + F_A)
        hi = tl.load(frow + F_B)
        below = tl.load(frow + F_C).to(dst.dtype.element_ty)
        value = (lo + u * (hi - lo)).to(dst.dtype.element_ty)
        tl.store(out, tl.minimum(value, below), mask=mask)
    else:
        d0, d1 = _helper_draws2(k0, k1, base + 2 * e, BLOCK)
        u = (d0.to(tl.uint64) << 32) | d1.to(tl.uint64)
        n = tl.load(row + SPAN).to(tl.uint64, bitcast=True) + 1  # 0: the full 64-bit range
        pick = tl.where(n == 0, u, _helper_mulhi64(u, n))
        if MODE == 1:
            bits = tl.load(row + LO_BITS).to(tl.uint64, bitcast=True) + pick
            if U64:
                tl.store(out, bits, mask=mask)
            else:
                tl.store(out, bits.to(tl.int64, bitcast=True).to(dst.dtype.element_ty),
                         mask=mask)  # fmt: skip
        else:
            where = tl.load(row + VSTART) + pick.to(tl.int64)
            tl.store(out, tl.load(values + where, mask=mask), mask=mask)


@triton.jit
def _helper_box_muller_f32(d0, d1):
    """Standard normal float32 from two draws (Box-Muller, as the CPU kernel)."""
    radius = tl.sqrt_rn(-2.0 * tl.log(_helper_unit_open_f32(d0)))
    return radius * tl.cos(_helper_unit_f32(d1) * TWO_PI)


@triton.jit
def _helper_standard_normal_f32(k0, k1, index):
    """Box-Muller on draws `index`, `index + 1` (index even), in float32 like the CPU kernel."""
    d0, d1 = _helper_philox_draw2(k0, k1, index)
    return _helper_box_muller_f32(d0, d1)


@triton.jit
def _normal_kernel(dst, samples, fparams, tiles, BLOCK: tl.constexpr, OUT_INT: tl.constexpr,
                   LO: tl.constexpr, HI: tl.constexpr, HI_INT: tl.constexpr,
                   NAN_INT: tl.constexpr):  # fmt: skip
    """mean + stddev * z in float64, converted to the output type (draws base + 2e, + 1)."""
    _, row, frow, first, lanes, mask, k0, k1, base = _helper_sample_tile(
        tiles, samples, fparams, BLOCK, NCOL, NFCOL, SIZE)  # fmt: skip
    d0, d1 = _helper_draws2(k0, k1, base + 2 * first.to(tl.uint64), BLOCK)
    z = _helper_box_muller_f32(d0, d1)
    value = tl.load(frow + F_A) + tl.load(frow + F_B) * z.to(tl.float64)
    out = dst + tl.load(row + OUT_OFF) + first + lanes
    if OUT_INT:
        tl.store(out, _helper_round_saturate(value, dst.dtype.element_ty, LO, HI, HI_INT, NAN_INT),
                 mask=mask)  # fmt: skip
    else:
        tl.store(out, value.to(dst.dtype.element_ty), mask=mask)


@triton.jit
def _coin_flip_kernel(dst, samples, fparams, tiles, BLOCK: tl.constexpr):
    """1 where a [0, 1) float32 draw (base + e) is below the probability."""
    _, row, frow, first, lanes, mask, k0, k1, base = _helper_sample_tile(
        tiles, samples, fparams, BLOCK, NCOL, NFCOL, SIZE)  # fmt: skip
    u = _helper_unit_f32(_helper_draws1(k0, k1, base + first.to(tl.uint64), BLOCK))
    hit = u.to(tl.float64) < tl.load(frow + F_A)
    out = dst + tl.load(row + OUT_OFF) + first + lanes
    tl.store(out, hit.to(dst.dtype.element_ty), mask=mask)


def _tables(out: GpuBatch, call: Call, ints: dict[int, np.ndarray] | None = None,
            floats: dict[int, np.ndarray] | None = None
            ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    n = out.batch_size
    samples = np.zeros((n, int(NCOL)), dtype=np.int64)
    samples[:, int(OUT_OFF)] = out.offsets
    samples[:, int(SIZE)] = out.sizes
    samples[:, int(BASE)] = np.asarray(call.rng_base, dtype=np.uint64).view(np.int64)
    samples[:, int(KEY_LO)] = call.rng_key & 0xFFFFFFFF
    samples[:, int(KEY_HI)] = call.rng_key >> 32
    for col, values in (ints or {}).items():
        samples[:, col] = values
    fparams = np.zeros((n, int(NFCOL)), dtype=np.float64)
    for col, values in (floats or {}).items():
        fparams[:, col] = values
    return samples, fparams


@register(ops.uniform, "gpu")
def uniform_gpu(run: GpuRun, out: GpuBatch, _like: GpuBatch | None, call: Call) -> None:
    """One launch; discrete values are converted to the output type on the host first."""
    np_type = out.dtype.numpy_dtype
    values = np.zeros(1, np_type)
    ints: dict[int, np.ndarray] = {}
    floats: dict[int, np.ndarray] = {}
    if call.mode == ops.MODE_FLOAT:
        floats = {int(F_A): call.lo, int(F_B): call.hi, int(F_C): call.below_hi}
    else:
        ints[int(SPAN)] = np.asarray(call.span, dtype=np.uint64).view(np.int64)
        if call.mode == ops.MODE_INT:
            ints[int(LO_BITS)] = np.asarray(call.lo_bits, dtype=np.uint64).view(np.int64)
        else:
            values = convert_numpy(call.value_table, np_type)
            ints[int(VSTART)] = call.value_start
    samples, fparams = _tables(out, call, ints, floats)
    tiles = tile_starts(-(-out.sizes // TILE))
    run.launch(_uniform_kernel, (grid_of(tiles),), out.data, values, samples, fparams, tiles,
               BLOCK=TILE, MODE=int(call.mode), F64=np_type == np.float64,
               U64=np_type == np.uint64)  # fmt: skip


@register(ops.normal, "gpu")
def normal_gpu(run: GpuRun, out: GpuBatch, _like: GpuBatch | None, call: Call) -> None:
    """One launch."""
    np_type = out.dtype.numpy_dtype
    limits = int_limits(np_type) if np_type.kind in "iu" else \
        {"LO": 0.0, "HI": 0.0, "HI_INT": 0, "NAN_INT": 0}  # fmt: skip
    samples, fparams = _tables(out, call, floats={int(F_A): call.mean, int(F_B): call.stddev})
    tiles = tile_starts(-(-out.sizes // TILE))
    run.launch(_normal_kernel, (grid_of(tiles),), out.data, samples, fparams, tiles, BLOCK=TILE,
               OUT_INT=np_type.kind in "iu", **limits)  # fmt: skip


@register(ops.coin_flip, "gpu")
def coin_flip_gpu(run: GpuRun, out: GpuBatch, _like: GpuBatch | None, call: Call) -> None:
    """One launch."""
    samples, fparams = _tables(out, call, floats={int(F_A): call.probability})
    tiles = tile_starts(-(-out.sizes // TILE))
    run.launch(_coin_flip_kernel, (grid_of(tiles),), out.data, samples, fparams, tiles, BLOCK=TILE)


def _host_samples(batch: GpuBatch) -> list[np.ndarray]:
    return _host_samples_of(batch, batch.data.cpu().numpy())


def _upload(out: GpuBatch, host: np.ndarray) -> None:
    out.data.copy_(torch.from_numpy(host), non_blocking=False)


@register(ops.choice, "gpu")
def choice_gpu(run: GpuRun, out: GpuBatch, a: GpuBatch, _like: GpuBatch | None,
               call: Call) -> None:  # fmt: skip
    """CPU-only in DALI: pick on the host (same draws as the CPU kernel), upload once."""
    host = np.zeros(out.data.numel(), out.dtype.numpy_dtype)
    outs = _host_samples_of(out, host)
    for i, (sample, dst) in enumerate(zip(_host_samples(a), outs, strict=True)):
        choice_sample(dst, sample, SampleArgs(call, i, None))
    _upload(out, host)


@register(ops.beta, "gpu")
def beta_gpu(run: GpuRun, out: GpuBatch, _like: GpuBatch | None, call: Call) -> None:
    """CPU-only in DALI: draw on the host (same generator as the CPU kernel), upload once."""
    host = np.zeros(out.data.numel(), out.dtype.numpy_dtype)
    for i, dst in enumerate(_host_samples_of(out, host)):
        beta_sample(dst, SampleArgs(call, i, None))
    _upload(out, host)


def _host_samples_of(batch: GpuBatch, host: np.ndarray) -> list[np.ndarray]:
    rows = zip(batch.offsets, batch.sizes, batch.shapes, strict=True)
    return [host[off : off + size].reshape(shape) for off, size, shape in rows]
