"""resize on the CPU: two (or three) separable passes, each a few band GEMMs in torch.

The filter tables come from `kernels._resample` (the GPU kernel reads the same tables). A pass
multiplies the axis by its resampling matrix block by block (`_bands`); the work tensor is
kept in whatever physical axis order makes that a plain 2-D/batched GEMM, and the final copy
into the output permutes back and converts (round half away, saturate).
uint8 LINEAR/TRIANGULAR images over integer windows take `_resize_linear_u8` first (torch's
fixed-point resampler, exact border; see FIXED_POINT_LINEAR_U8).
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._resample import AxisPlan, axis_table
from ndd_triton.kernels.cpu._bands import _BLOCK as _BLOCK_ROWS
from ndd_triton.kernels.cpu._bands import band_dense
from ndd_triton.kernels.cpu._resize_linear_u8 import _recipe, linear_u8_fast, recipes
from ndd_triton.ops import resize
from ndd_triton.ops.schema import SampleArgs

_SMALL_INNER = 16  # below this many trailing elements, move the axis last before the GEMM
_BANDED_CONVERT = 600_000  # from this many elements on, convert the first pass band by band
# uint8 LINEAR/TRIANGULAR 2-D samples go through torch's fixed-point resampler (border outputs
# recomputed exactly): ~2.5x faster, outputs within 1 of DALI's but 1 off on 10-18% of the
# pixels where this float path is off on 0-1% (see _resize_linear_u8). False: float path only.
FIXED_POINT_LINEAR_U8 = True


def _band_slices(plan: AxisPlan) -> list[tuple[int, int, int, int, np.ndarray]]:
    """(j0, j1, l0, l1, view of M) per block, from the one band array of the plan."""
    starts, lo, hi, dense = band_dense(plan)
    n = plan.n_out
    return [(j0, min(j0 + _BLOCK_ROWS, n), l0, l1,
             dense[b, :min(j0 + _BLOCK_ROWS, n) - j0, :l1 - l0])
            for b, (j0, l0, l1) in enumerate(zip(starts, lo, hi, strict=True))]  # fmt: skip


@functools.lru_cache(maxsize=512)
def _blocks_m(plan: AxisPlan) -> tuple[tuple[int, int, int, int, torch.Tensor], ...]:
    """Band blocks as torch tensors (j0, j1, l0, l1, M), cached per plan."""
    return tuple((j0, j1, l0, l1, torch.from_numpy(np.ascontiguousarray(m)))
                 for j0, j1, l0, l1, m in _band_slices(plan))  # fmt: skip


@functools.lru_cache(maxsize=512)
def _blocks_t(plan: AxisPlan) -> tuple[tuple[int, int, int, int, torch.Tensor], ...]:
    """Band blocks as torch tensors (j0, j1, l0, l1, M transposed), cached per plan."""
    return tuple((j0, j1, l0, l1, torch.from_numpy(np.ascontiguousarray(m.T)))
                 for j0, j1, l0, l1, m in _band_slices(plan))  # fmt: skip


@functools.lru_cache(maxsize=512)
def _kron_blocks(plan: AxisPlan, channels: int
                 ) -> tuple[tuple[int, int, int, int, torch.Tensor], ...]:  # fmt: skip
    """Band blocks for an axis followed by `channels` interleaved values (HWC's W): the
    transposed block with each weight spread over the channels, `kron(M.T, I_C)`, so a GEMM
    on the `[rows, W * C]` view resamples W without transposing the data."""
    starts, lo, hi, dense = band_dense(plan)
    eye = np.eye(channels, dtype=np.float32)[None, None, :, None, :]
    nb, rows, width = dense.shape
    spread = (dense.transpose(0, 2, 1)[:, :, None, :, None] * eye).reshape(
        nb, width * channels, rows * channels)
    c = channels
    return tuple((j0, min(j0 + _BLOCK_ROWS, plan.n_out), l0, l1, torch.from_numpy(
                  np.ascontiguousarray(spread[b, :(l1 - l0) * c, :(min(j0 + _BLOCK_ROWS,
                                                                      plan.n_out) - j0) * c])))
                 for b, (j0, l0, l1) in enumerate(zip(starts, lo, hi, strict=True)))  # fmt: skip


def sample_plans(arg: SampleArgs, antialias: bool) -> list[AxisPlan]:
    """The AxisPlans of one sample, outermost spatial axis first."""
    n_in, n_out = arg.resample_in, arg.resample_out
    origin, step, interp = arg.resample_origin, arg.resample_step, arg.resample_interp
    last = len(n_in) - 1
    return [AxisPlan(int(n_in[k]), int(n_out[k]), float(origin[k]), float(step[k]),
                     int(interp[k]), bool(antialias), k == last)
            for k in range(len(n_in))]  # fmt: skip


def _pass(t: torch.Tensor, order: list[int], axis: int, plan: AxisPlan, first: int = 0
          ) -> tuple[torch.Tensor, list[int]]:  # fmt: skip
    """Resample logical `axis` of `t` (physical dims in `order`); returns float32 data.

    `t` holds the axis from source index `first` on (see `_support`)."""
    p = order.index(axis)
    inner = math.prod(t.shape[p + 1:])
    if p == t.dim() - 2 and inner < _SMALL_INNER:
        # The axis right before a few channels (HWC's W): one GEMM per block on the
        # `[outer, n * C]` view with the weights spread over the channels. Each output sums the
        # same products as after a transpose (plus exact zeros), without moving the data twice
        # (the transpose here and the transposed copy in `store`).
        if t.dtype != torch.float32 or not t.is_contiguous():
            t = t.to(torch.float32).contiguous()
        shape = list(t.shape)
        shape[p] = plan.n_out
        res = torch.empty(shape, dtype=torch.float32)
        src, dst = t.view(-1, t.shape[p] * inner), res.view(-1, plan.n_out * inner)
        for j0, j1, l0, l1, kt in _kron_blocks(plan, inner):
            torch.mm(src[:, (l0 - first) * inner:(l1 - first) * inner], kt,
                     out=dst[:, j0 * inner:j1 * inner])  # fmt: skip
        return res, order
    if p != t.dim() - 1 and inner < _SMALL_INNER:
        # Transpose in the source type, then convert: torch's converting copy is slow across
        # mismatched strides (measured 2 ms vs 0.5 ms for 480x640x3 u8).
        t = t.movedim(p, -1).contiguous().to(torch.float32)
        order = order[:p] + order[p + 1:] + [axis]
        p = t.dim() - 1
    elif (math.prod(t.shape[:p]) == 1 and p != t.dim() - 1 and t.is_contiguous()
          and t.dtype != torch.float32 and t.numel() >= _BANDED_CONVERT):
        # The outermost axis of a large contiguous integer image: each band is converted to
        # float32 just before its GEMM (no whole-image float copy; the band stays in cache):
        # 1.16 vs 1.34 ms for a 480x640x3 uint8 image, LINEAR to 224x224; no gain from 375x500
        # down (per-call overhead), nor for strided crop windows (measured slower).
        shape = list(t.shape)
        shape[p] = plan.n_out
        res = torch.empty(shape, dtype=torch.float32)
        src, dst = t.view(t.shape[p], -1), res.view(plan.n_out, -1)
        for j0, j1, l0, l1, m in _blocks_m(plan):
            torch.mm(m, src[l0 - first:l1 - first].to(torch.float32), out=dst[j0:j1])
        return res, order
    elif t.dtype != torch.float32 or not t.is_contiguous():
        t = t.to(torch.float32).contiguous()
    shape = list(t.shape)
    shape[p] = plan.n_out
    res = torch.empty(shape, dtype=torch.float32)
    # GEMMs write straight into strided output blocks (`out=`): 25% faster than assigning.
    if p == t.dim() - 1:
        src, dst = t.view(-1, t.shape[p]), res.view(-1, plan.n_out)
        for j0, j1, l0, l1, mt in _blocks_t(plan):
            torch.mm(src[:, l0 - first:l1 - first], mt, out=dst[:, j0:j1])
    elif math.prod(t.shape[:p]) == 1:
        src, dst = t.view(t.shape[p], -1), res.view(plan.n_out, -1)
        for j0, j1, l0, l1, m in _blocks_m(plan):
            torch.mm(m, src[l0 - first:l1 - first], out=dst[j0:j1])
    else:
        outer = math.prod(t.shape[:p])
        src, dst = t.view(outer, t.shape[p], -1), res.view(outer, plan.n_out, -1)
        for j0, j1, l0, l1, m in _blocks_m(plan):
            dst[:, j0:j1] = torch.matmul(m, src[:, l0 - first:l1 - first])
    return res, order


def store(out: np.ndarray, t: torch.Tensor, order: list[int]) -> None:
    """Write float32 work data (physical `order`) into `out`: round half away and saturate."""
    dst = torch.from_numpy(out)
    if not dst.dtype.is_floating_point:
        info = torch.iinfo(dst.dtype)
        t = t.clamp_(info.min, info.max)
        t = t.add_(0.5) if info.min == 0 else torch.where(t < 0, t - 0.5, t + 0.5)
    dst.permute(order).copy_(t)


@functools.lru_cache(maxsize=512)
def _support(plan: AxisPlan) -> tuple[int, int]:
    """Source indices `[lo, hi)` read by any output of the axis (empty for no output)."""
    if plan.n_out == 0:
        return 0, 0
    index = axis_table(plan).index
    return int(index.min()), int(index.max()) + 1


def _next_axis(t: torch.Tensor, order: list[int], todo: dict[int, AxisPlan]) -> int:
    """The axis to resample next: one that needs no transpose if any (a transpose costs a full
    pass over the data), then the one that shrinks the most. For HWC u8 480x640 -> 224 this
    does H first and transposes only the smaller intermediate."""

    def key(axis: int) -> tuple[bool, float]:
        p = order.index(axis)
        moves = p != t.dim() - 1 and math.prod(t.shape[p + 1:]) < _SMALL_INNER
        return moves, todo[axis].n_out / max(todo[axis].n_in, 1)

    return min(todo, key=key)


def resample(out: np.ndarray, inp: np.ndarray, layout: str, letters: str,
             plans: list[AxisPlan], fast: bool = True) -> None:  # fmt: skip
    """Resample the spatial axes `letters` of one sample into `out` (`fast=False`: the
    caller knows the uint8 fast path does not apply)."""
    if fast and FIXED_POINT_LINEAR_U8 and linear_u8_fast(out, inp, layout, letters, plans):
        return
    t = torch.from_numpy(inp)
    order = list(range(inp.ndim))
    todo = {layout.index(c): plan for c, plan in zip(letters, plans, strict=True)}
    first = {}
    for axis, plan in todo.items():
        # Only the source rows/columns that some output reads (a crop window, e.g. in
        # random_resized_crop) are converted and multiplied: the same sums on less data.
        lo, hi = _support(plan)
        if hi > lo and (lo > 0 or hi < t.shape[axis]):
            t = t.narrow(axis, lo, hi - lo)
        first[axis] = lo if hi > lo else 0
    while todo:
        axis = _next_axis(t, order, todo)
        t, order = _pass(t, order, axis, todo.pop(axis), first[axis])
    if t.dtype != torch.float32:  # no spatial axis (cannot happen for valid layouts)
        t = t.to(torch.float32)
    store(out, t, order)


# Fast-path recipes of recent calls, built for the whole call by the first of its samples to
# run (random crops make a new plan pair per sample; one vectorised pass over the border taps
# of all samples costs ~0.2-0.3 ms, mostly fixed NumPy call overhead, so one pass per call
# beats chunks; each sample then assembles its own recipe outside the locks). Keyed by the
# identity of the call's argument dict (kept alive by the entry, so an id cannot be reused).
_PLAN_NAMES = ("resample_in", "resample_out", "resample_origin", "resample_step",
               "resample_interp")  # fmt: skip
_BATCH_RECIPES: dict[int, list[Any]] = {}
_BATCH_LOCK = threading.Lock()
_BATCH_KEEP = 8  # calls in progress remembered (a few pipelines' resizes interleave)


def _batch_recipe(arg: SampleArgs) -> Any:
    """This sample's fast-path recipe from its call's batch pass: a recipe, None (float
    path), or False (per-sample output sizes: not built for the batch)."""
    values = arg.batch_values
    key = id(values)
    with _BATCH_LOCK:
        entry = _BATCH_RECIPES.get(key)
        if entry is None or entry[0] is not values:
            arrays = [values[name] for name in _PLAN_NAMES]
            n = len(arrays[2])
            if all((a == a[0]).all() for a in arrays):
                # One plan pair for every sample (a plain resize of equal shapes): the
                # recipe cached per plan pair, across calls.
                found: Any = [_recipe(*sample_plans(arg, arg.antialias))] * n
            elif (arrays[1] == arrays[1][0]).all():  # one output size: built once, below
                found = None
            else:  # per-sample output sizes: each sample's own recipe
                found = [False] * n
            # [values, recipes, lock of the build, samples served, samples]
            entry = [values, found, threading.Lock(), 0, n]
            if len(_BATCH_RECIPES) >= _BATCH_KEEP:
                del _BATCH_RECIPES[next(iter(_BATCH_RECIPES))]
            _BATCH_RECIPES[key] = entry
        entry[3] += 1
        if entry[3] >= entry[4]:  # the call's last sample: the recipes die young
            del _BATCH_RECIPES[key]
    found = entry[1]
    if found is None:
        with entry[2]:
            found = entry[1]
            if found is None:
                found = entry[1] = recipes(*(values[name] for name in _PLAN_NAMES),
                                           bool(arg.antialias))  # fmt: skip
    return found[arg.index]


@register(resize.schema, "cpu")
def resize_cpu(out: np.ndarray | tuple[np.ndarray, np.ndarray], inp: np.ndarray,
               arg: SampleArgs) -> None:  # fmt: skip
    """Resize one sample (and write its input extents when save_attrs asks for them)."""
    if isinstance(out, tuple):
        out, attrs = out
        attrs[...] = arg.resample_in
    layout, letters = arg.layout or "HWC", arg.resample_axes
    fast = FIXED_POINT_LINEAR_U8 and letters == "HW" and inp.dtype == np.uint8 and \
        out.dtype == np.uint8  # fmt: skip
    if fast:
        recipe = _batch_recipe(arg)
        if recipe is not False:  # False: not known for the batch, the sample looks it up
            if recipe is not None and linear_u8_fast(out, inp, layout, letters, None, recipe):
                return
            fast = False
    resample(out, inp, layout, letters, sample_plans(arg, arg.antialias), fast)
