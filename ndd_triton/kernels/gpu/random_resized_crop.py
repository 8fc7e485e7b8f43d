"""random_resized_crop on the GPU: windows, tap tables and the resize passes, all on the device.

Where infer derived `draws_on_device` (triangle filters, the usual case), the host does no
per-call work at all: one launch draws every sample's attempts from the call's reserved RNG
position (four int32 kernel arguments, `GpuRun.launch_drawing`: Philox on the device, the
draws `_draw_values` reads on the host), picks the window as
`ops/random_resized_crop._windows` does and writes the tap tables of both axes
(`_resample_tables._helper_write_tables`); the two resize passes follow. Everything the host
uploads depends on the input shapes and arguments only, so a repeated call is replayed whole
(`runtime/call_replay.py`) with its new RNG position.

The window is the host's bit for bit where float64 `exp` is: the interpreter evaluates with
NumPy, so the emulated gpu is checked against the host here (tests/ops/test_rrc_device.py);
CUDA's `exp` is within 1 ulp of NumPy's, which moves a window only when
`sqrt(area * aspect)` lands within ~1e-16 of a rounding boundary. The other operations are
IEEE float64 with exact rounding (sqrt, division, no fused multiply-add: `LAUNCH_OPTIONS`).

The tables are K = `floor(2 * widest) + 2` taps wide, `widest` the widest filter any window of
the sample's size could need (the whole image), rather than the batch's own windows' widest as
on the host: extra columns hold weight 0, which adds nothing to a finite pixel.
Other filters keep the host path: windows drawn in prepare (`_draw_values`), host tables.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._philox import _helper_philox_draw, _helper_position, _helper_unit_f64
from ndd_triton.kernels.gpu._replay import table_kernel
from ndd_triton.kernels.gpu._resample_tables import MAX_TAPS, DeviceTables, _helper_write_tables
from ndd_triton.kernels.gpu._tables import DRAW_WORDS, GpuBatch, GpuRun
from ndd_triton.kernels.gpu.resize import resample_gpu
from ndd_triton.ops import random_resized_crop
from ndd_triton.ops.schema import DRAWS_ON_DEVICE, Call

assert MAX_TAPS == random_resized_crop.MAX_DEVICE_TAPS
_BLOCK = 64


@triton.jit
def _helper_uniform(k0, k1, offset, m):
    """Float64 uniform number `m` of the call: draws `offset + 2m` and `offset + 2m + 1`."""
    first = offset + 2 * m.to(tl.uint64)
    return _helper_unit_f64(_helper_philox_draw(k0, k1, first),
                            _helper_philox_draw(k0, k1, first + 1))  # fmt: skip


@triton.jit
def _helper_window(k0, k1, offset, consts, i, h, w, attempts, A: tl.constexpr):
    """Sample `i`'s window (y, x, height, width; float64) from its `attempts` attempts, tried
    side by side (`A` lanes): the first that fits, else the largest centred window whose
    aspect ratio is in range (`_windows` and `_fallback`, operation for operation). The
    draws are those of the call's RNG position: key `(k0, k1)`, offset `offset`."""
    area0 = tl.load(consts)
    area1 = tl.load(consts + 1)
    log_lo = tl.load(consts + 2)
    log_hi = tl.load(consts + 3)
    ratio0 = tl.load(consts + 4)
    ratio1 = tl.load(consts + 5)
    lane = tl.arange(0, A)
    m = (i.to(tl.int64) * attempts + lane) * 4
    a = _helper_uniform(k0, k1, offset, m)
    r = _helper_uniform(k0, k1, offset, m + 1)
    py = _helper_uniform(k0, k1, offset, m + 2)
    px = _helper_uniform(k0, k1, offset, m + 3)
    frac = area0 + a * (area1 - area0)
    aspect = tl.exp(log_lo + r * (log_hi - log_lo))
    cw = tl.floor(tl.sqrt(frac * h * w * aspect) + 0.5)
    ch = tl.floor(tl.sqrt(frac * h * w / aspect) + 0.5)
    fits = (cw > 0) & (cw <= w) & (ch > 0) & (ch <= h) & (lane < attempts)
    first = tl.min(tl.where(fits, lane, A), axis=0)
    pick = lane == first
    cw_f = tl.sum(tl.where(pick, cw, 0.0), axis=0)
    ch_f = tl.sum(tl.where(pick, ch, 0.0), axis=0)
    y = tl.sum(tl.where(pick, _helper_trunc(py * (h - ch + 1)), 0.0), axis=0)
    x = tl.sum(tl.where(pick, _helper_trunc(px * (w - cw + 1)), 0.0), axis=0)
    # no attempt fits: the largest centred window with the aspect ratio in range
    in_ratio = w / h
    fb_h = tl.where(in_ratio < ratio0, tl.maximum(tl.floor(w / ratio0 + 0.5), 1.0), h)
    fb_w = tl.where((in_ratio >= ratio0) & (in_ratio > ratio1),
                    tl.maximum(tl.floor(h * ratio1 + 0.5), 1.0), w)  # fmt: skip
    fb_y = tl.floor((h - fb_h) / 2)
    fb_x = tl.floor((w - fb_w) / 2)
    found = first < A
    return (tl.where(found, y, fb_y), tl.where(found, x, fb_x), tl.where(found, ch_f, fb_h),
            tl.where(found, cw_f, fb_w))  # fmt: skip


@triton.jit
def _helper_trunc(v):
    """Round toward zero (float64)."""
    return tl.where(v < 0, tl.ceil(v), tl.floor(v))


@table_kernel(drawn=True)
@triton.jit(do_not_specialize=DRAW_WORDS)
def _rrc_tables_kernel(key_lo, key_hi, off_lo, off_hi, consts, iparams, index, weight, n,
                       attempts, ANTIALIAS: tl.constexpr, A: tl.constexpr, K: tl.constexpr,
                       BLOCK: tl.constexpr):  # fmt: skip
    """Plan `program_id` (axis `p // n` of sample `p % n`): the sample's window, the axis's
    source mapping (`rp.mapping`) and filter width (`triangle_plan`), then its table rows.
    The first four arguments are the call's RNG position (`GpuRun.launch_drawing`)."""
    k0, k1, offset = _helper_position(key_lo, key_hi, off_lo, off_hi)
    p = tl.program_id(0)
    axis = p // n
    i = p % n
    h = tl.load(iparams + i * 4).to(tl.float64)  # plans 0 .. n-1: the H axis
    w = tl.load(iparams + (n + i) * 4).to(tl.float64)
    y, x, ch, cw = _helper_window(k0, k1, offset, consts, i, h, w, attempts, A)
    n_in = tl.load(iparams + p * 4)
    n_out = tl.load(iparams + p * 4 + 1)
    first = tl.load(iparams + p * 4 + 2)
    origin, step, widen = _helper_axis_plan(tl.where(axis == 0, y, x),
                                            tl.where(axis == 0, ch, cw),
                                            tl.load(consts + 6 + axis), n_out,
                                            ANTIALIAS)  # fmt: skip
    _helper_write_tables(index, weight, origin, step, widen, 1.0 * widen, n_in, n_out, first,
                         K, BLOCK)  # fmt: skip


@triton.jit
def _helper_axis_plan(lo, extent, size, n_out, ANTIALIAS: tl.constexpr):
    """An axis's source mapping over the window `[lo, lo + extent)` (`rp.mapping` with
    sub-pixel scale) and its filter's widening (`triangle_plan`): origin, step, widen."""
    span = (lo + extent) - lo
    step = span / size
    origin = lo + (span - n_out.to(tl.float64) * step) / 2
    widen = tl.where(step > 1.0, step, 1.0) if ANTIALIAS else tl.zeros_like(step) + 1.0
    return origin, step, widen


def device_tables(call: Call) -> DeviceTables:
    """The tables launch of a call with `draws_on_device`: its host arrays depend on the
    input shapes and arguments only (a replayed call reuses them)."""
    n = call.batch_size
    extents = np.asarray(call.resample_in, np.int64)
    n_in = extents.T.reshape(-1)
    n_out = np.asarray(call.resample_out, np.int64).T.reshape(-1)
    first = np.zeros(2 * n, np.int64)
    np.cumsum(n_out[:-1], out=first[1:])
    iparams = np.zeros((2 * n, 4), np.int64)
    iparams[:, 0], iparams[:, 1], iparams[:, 2] = n_in, n_out, first
    consts = np.asarray(call.rrc_consts, np.float64)
    antialias = call.antialias is not False
    taps = random_resized_crop.tap_bound(extents, consts[6:8], antialias)
    attempts = int(call.num_attempts)
    rows = int(n_out.sum())

    def build(run: GpuRun, views: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        index = run.empty(rows * taps, torch.int32)
        weight = run.empty(rows * taps, torch.float32)
        assert call.draw_at is not None
        run.launch_drawing(_rrc_tables_kernel, (2 * n,), call.draw_at, views[0], views[1],
                           index, weight, n, attempts, ANTIALIAS=antialias,
                           A=triton.next_power_of_2(attempts), K=taps, BLOCK=_BLOCK)  # fmt: skip
        return index, weight

    return DeviceTables((consts, iparams), first, taps, build)


@register(random_resized_crop.schema, "gpu",
          replay=lambda call: bool(call.values.get(DRAWS_ON_DEVICE)))  # fmt: skip
def random_resized_crop_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call,
                            mirror: np.ndarray | None = None) -> None:  # fmt: skip
    """The resize passes over the windows: drawn here (`draws_on_device`) or in prepare
    (`mirror`: see `resample_gpu`)."""
    on_device = call.values.get(DRAWS_ON_DEVICE)
    resample_gpu(run, out, inp, call, device_tables(call) if on_device else None, mirror)
