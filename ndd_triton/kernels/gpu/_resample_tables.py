"""Resize tap tables built on the device for the triangle filters (LINEAR, TRIANGULAR).

`kernels._resample.axis_tables` builds every output pixel's taps and weights on the host with
NumPy over all rows of a batch: ~60% of a GPU `random_resized_crop`'s host time, ~55 µs per
sample, because every random crop is a new plan. Here the host passes one row of plan values
per sample (`[N]` arrays, no per-row work) and one program per sample writes its rows of the
same `[R, K]` index and weight tables, with the same float64 operations in the same order
(centre, `ceil`/`floor` of the support, `1 - |x|`, NumPy's pairwise summation of each row's
weights over its sample's tap count, the division, the float32 cast): bit-identical tables
(tests/ops/test_host_tables.py), so CPU and GPU still read the same taps. (The float32 cast
hides most float64 rounding differences: a plain sum of the weights gave the same bits on
every plan tried; the order is kept anyway, so that no plan can differ.) `resample_gpu` builds
the tables of all axes of a call in one launch (its plans as one batch of axes x samples,
`call_triangle_plan`), uploading the plan rows with its passes' tables in one copy; the fused
resize + crop_mirror_normalize pass of compile mode (`resample_normalize`) does the same.

The table is K = max over samples of `floor(2 r) + 2` taps wide (an upper bound of a sample's
tap count, r the widened radius; the host table is exactly as wide as the most taps): the extra
columns hold index 0 and weight 0, as the host table's padding of samples with fewer taps does.
Samples whose bound exceeds 128 taps (a >64x antialiased downscale), other filters and NN keep
the host tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels._resample import LINEAR, TRIANGULAR
from ndd_triton.kernels.gpu._replay import table_kernel
from ndd_triton.kernels.gpu._tables import GpuRun

MAX_TAPS = 128  # NumPy's pairwise summation changes form above 128 values per row
_BLOCK = 64


@triton.jit
def _helper_triangle_weight(start, c, widen, k):
    """The triangle filter's weight of tap `k` (float64, as `_resample._filter`)."""
    x = ((start + k).to(tl.float64) - c) / widen
    return tl.maximum(0.0, 1.0 - tl.abs(x))


@triton.jit
def _helper_running_sum(acc, w, add):
    """One of the 8 running sums: the tap's weight is added while `add`."""
    return tl.where(add, acc + w, acc)


@triton.jit
def _helper_plan_taps(origin, step, radius, n_out, BLOCK: tl.constexpr):
    """A plan's tap count: 1 + its widest support over its `n_out` outputs (as
    `_axis_tables` takes it), scanned `BLOCK` outputs at a time."""
    lanes = tl.arange(0, BLOCK)
    widest = tl.full([BLOCK], -1, tl.int64)
    for r0 in range(0, n_out, BLOCK):
        j = r0 + lanes
        c = origin + (j.to(tl.float64) + 0.5) * step - 0.5
        start = tl.ceil(c - radius)
        span = (tl.floor(c + radius) - start).to(tl.int64)
        widest = tl.maximum(widest, tl.where(j < n_out, span, -1))
    return tl.max(widest, axis=0) + 1


@triton.jit
def _helper_tap_total(start, c, widen, taps, K: tl.constexpr):
    """The sum of an output's `taps` weights (`start`, `c`: its first tap and centre, float64,
    one per lane) as NumPy sums a row: fewer than 8 one by one from 0; else 8 running sums
    started by the first 8 weights, then 8 at a time up to `taps - taps % 8`, combined
    pairwise, and the last `taps % 8` one by one (`K` >= taps bounds the loop). 1.0 for a
    zero sum (the weights then stay 0)."""
    whole = taps - taps % 8
    seq = tl.zeros_like(c)
    a0 = _helper_triangle_weight(start, c, widen, 0)
    a1 = _helper_triangle_weight(start, c, widen, 1)
    a2 = _helper_triangle_weight(start, c, widen, 2)
    a3 = _helper_triangle_weight(start, c, widen, 3)
    a4 = _helper_triangle_weight(start, c, widen, 4)
    a5 = _helper_triangle_weight(start, c, widen, 5)
    a6 = _helper_triangle_weight(start, c, widen, 6)
    a7 = _helper_triangle_weight(start, c, widen, 7)
    seq = tl.where(taps > 0, seq + a0, seq)
    seq = tl.where(taps > 1, seq + a1, seq)
    seq = tl.where(taps > 2, seq + a2, seq)
    seq = tl.where(taps > 3, seq + a3, seq)
    seq = tl.where(taps > 4, seq + a4, seq)
    seq = tl.where(taps > 5, seq + a5, seq)
    seq = tl.where(taps > 6, seq + a6, seq)
    for b in range(8, K, 8):  # a loop, not unrolled: K reaches 128 (registers)
        a0 = _helper_running_sum(a0, _helper_triangle_weight(start, c, widen, b), b < whole)
        a1 = _helper_running_sum(a1, _helper_triangle_weight(start, c, widen, b + 1),
                                 b + 1 < whole)  # fmt: skip
        a2 = _helper_running_sum(a2, _helper_triangle_weight(start, c, widen, b + 2),
                                 b + 2 < whole)  # fmt: skip
        a3 = _helper_running_sum(a3, _helper_triangle_weight(start, c, widen, b + 3),
                                 b + 3 < whole)  # fmt: skip
        a4 = _helper_running_sum(a4, _helper_triangle_weight(start, c, widen, b + 4),
                                 b + 4 < whole)  # fmt: skip
        a5 = _helper_running_sum(a5, _helper_triangle_weight(start, c, widen, b + 5),
                                 b + 5 < whole)  # fmt: skip
        a6 = _helper_running_sum(a6, _helper_triangle_weight(start, c, widen, b + 6),
                                 b + 6 < whole)  # fmt: skip
        a7 = _helper_running_sum(a7, _helper_triangle_weight(start, c, widen, b + 7),
                                 b + 7 < whole)  # fmt: skip
    blocked = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
    for m in tl.static_range(7):  # the last taps % 8 weights, one by one
        w = _helper_triangle_weight(start, c, widen, whole + m)
        blocked = tl.where(whole + m < taps, blocked + w, blocked)
    total = tl.where(taps < 8, seq, blocked)
    return tl.where(total == 0.0, 1.0, total)


@triton.jit
def _helper_tap(start, c, widen, total, taps, n_in, k):
    """Tap `k` of an output: (source index int32, weight float32), 0 and 0.0 from `taps` on
    (the padding of a table wider than the plan's taps)."""
    w32 = (_helper_triangle_weight(start, c, widen, k) / total).to(tl.float32)
    idx = tl.minimum(tl.maximum(start + k, 0), n_in - 1).to(tl.int32)
    inside = k < taps
    return tl.where(inside, idx, 0), tl.where(inside, w32, 0.0)


@triton.jit
def _helper_write_tables(index, weight, origin, step, widen, radius, n_in, n_out, first,
                         K: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """Write one plan's rows: taps `[first + j, 0:K]` of its `n_out` outputs."""
    lanes = tl.arange(0, BLOCK)
    taps = _helper_plan_taps(origin, step, radius, n_out, BLOCK)
    for r0 in range(0, n_out, BLOCK):
        j = r0 + lanes
        live = j < n_out
        c = origin + (j.to(tl.float64) + 0.5) * step - 0.5
        start = tl.ceil(c - radius).to(tl.int64)
        total = _helper_tap_total(start, c, widen, taps, K)
        row = (first + j.to(tl.int64)) * K
        for k in range(K):
            idx, w32 = _helper_tap(start, c, widen, total, taps, n_in, k)
            tl.store(index + row + k, idx, mask=live)
            tl.store(weight + row + k, w32, mask=live)


@table_kernel
@triton.jit
def _triangle_tables_kernel(fparams, iparams, index, weight, K: tl.constexpr,
                            BLOCK: tl.constexpr):  # fmt: skip
    """Rows of plan `program_id`: taps `[first + j, 0:K]` of its `n_out` outputs."""
    s = tl.program_id(0)
    origin = tl.load(fparams + s * 4)
    step = tl.load(fparams + s * 4 + 1)
    widen = tl.load(fparams + s * 4 + 2)
    radius = tl.load(fparams + s * 4 + 3)
    n_in = tl.load(iparams + s * 4)
    n_out = tl.load(iparams + s * 4 + 1)
    first = tl.load(iparams + s * 4 + 2)
    _helper_write_tables(index, weight, origin, step, widen, radius, n_in, n_out, first, K,
                         BLOCK)  # fmt: skip


@dataclass(frozen=True, slots=True)
class TrianglePlan:
    """Host side of a tables launch: one row of plan values per (axis, sample) plan, no
    per-row work. `first[p]`: plan p's first row in the `[rows, taps]` tables."""

    fparams: np.ndarray  # [P, 4] float64: origin, step, widen, radius
    iparams: np.ndarray  # [P, 4] int64: n_in, n_out, first row, 0
    first: np.ndarray
    rows: int
    taps: int


def triangle_plan(n_in: np.ndarray, n_out: np.ndarray, origin: np.ndarray, step: np.ndarray,
                  interp: np.ndarray, antialias: bool) -> TrianglePlan | None:  # fmt: skip
    """The plan rows of `[P]` axis plans for `launch_triangle_tables`, or None where the host
    must build the tables (another filter, a NN sample, more than MAX_TAPS taps)."""
    n_in = np.asarray(n_in, np.int64).reshape(-1)
    n_out = np.asarray(n_out, np.int64).reshape(-1)
    interp = np.asarray(interp, np.int64).reshape(-1)
    if not len(n_out) or not ((interp == LINEAR) | (interp == TRIANGULAR)).all():
        return None
    step = np.asarray(step, np.float64).reshape(-1)
    scale = np.abs(step)
    widen = np.where(antialias & (scale > 1.0), scale, 1.0)
    radius = 1.0 * widen  # the triangle's support (`_resample._RADIUS`)
    taps = int((np.floor(2.0 * radius) + 2).max())
    if taps > MAX_TAPS:
        return None
    first = np.zeros(len(n_out), np.int64)
    np.cumsum(n_out[:-1], out=first[1:])
    fparams = np.empty((len(n_out), 4), np.float64)
    fparams[:, 0] = np.asarray(origin, np.float64).reshape(-1)
    fparams[:, 1], fparams[:, 2], fparams[:, 3] = step, widen, radius
    iparams = np.zeros((len(n_out), 4), np.int64)
    iparams[:, 0], iparams[:, 1], iparams[:, 2] = n_in, n_out, first
    return TrianglePlan(fparams, iparams, first, int(n_out.sum()), taps)


def launch_triangle_tables(run: GpuRun, plan: TrianglePlan, fparams: Any = None,
                           iparams: Any = None) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The flat `[rows * taps]` index and weight tables of `plan`, built by one launch.
    `fparams`/`iparams`: the plan's rows already uploaded (a caller uploading all host tables
    of its call in one copy), else `plan`'s host arrays are uploaded by this launch."""
    index = run.empty(plan.rows * plan.taps, torch.int32)
    weight = run.empty(plan.rows * plan.taps, torch.float32)
    run.launch(_triangle_tables_kernel, (len(plan.first),),
               plan.fparams if fparams is None else fparams,
               plan.iparams if iparams is None else iparams, index, weight,
               K=plan.taps, BLOCK=_BLOCK)  # fmt: skip
    # flat (row-major [rows, K]): the launch memo places scratch buffers, not views of them
    return index, weight


def device_axis_tables(run: GpuRun, n_in: np.ndarray, n_out: np.ndarray, origin: np.ndarray,
                       step: np.ndarray, interp: np.ndarray, antialias: bool
                       ) -> tuple[torch.Tensor, torch.Tensor, np.ndarray, int] | None:  # fmt: skip
    """`axis_tables`' `(index, weight, first, K)` with the tables built on the device as flat
    `[rows * K]` tensors (K may exceed the most taps: zero columns), or None where the host
    must build them (another filter, a NN sample, more than MAX_TAPS taps)."""
    plan = triangle_plan(n_in, n_out, origin, step, interp, antialias)
    if plan is None:
        return None
    index, weight = launch_triangle_tables(run, plan)
    return index, weight, plan.first, plan.taps


@dataclass(frozen=True, slots=True)
class DeviceTables:
    """Tap tables a resample call builds on the device (`resample_gpu`'s `tables`): the host
    arrays its build launch reads (uploaded with the passes' tables in one copy), each plan's
    first row (plan `k * N + i`: axis k of sample i), the table width, and
    `build(run, uploaded host arrays) -> (index, weight)` (flat `[rows * taps]`)."""

    host: tuple[np.ndarray, ...]
    first: np.ndarray
    taps: int
    build: Callable[[GpuRun, list[torch.Tensor]], tuple[torch.Tensor, torch.Tensor]]


def triangle_tables(plan: Any) -> DeviceTables | None:
    """The `DeviceTables` of a resample plan's triangle filters (`call_triangle_plan`), or
    None where the host builds the tables."""
    tri = call_triangle_plan(plan)
    if tri is None:
        return None
    return DeviceTables((tri.fparams, tri.iparams), tri.first, tri.taps,
                        lambda run, views: launch_triangle_tables(run, tri, *views))


def call_triangle_plan(plan: Any) -> TrianglePlan | None:
    """`triangle_plan` of every spatial axis of a resample plan (a call with the `resample_*`
    values, `[N, axes]` each) as one batch: rows of axis k for sample i start at
    `first[k * N + i]`."""
    every = [np.asarray(getattr(plan, name)).T.reshape(-1) for name in
             ("resample_in", "resample_out", "resample_origin", "resample_step",
              "resample_interp")]  # fmt: skip
    return triangle_plan(*every, bool(plan.antialias))

