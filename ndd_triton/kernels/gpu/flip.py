"""flip on the GPU: one row-tiled launch for the whole ragged batch (`_window_rows`).

A flipped axis reads the source at `extent - 1 - o` (anchor `extent - 1`, step -1). For HWC a
horizontal flip reverses the order of the C-element pixels inside each contiguous `W * C` row
(C constexpr), a vertical flip copies a row to the mirrored row, so loads and stores stay
contiguous; no per-element unravelling.

A batch of the shapes of the last one (a pipeline's flip after a resize or crop to a fixed
size) differs from it only in which samples are mirrored: the second time a batch layout is
seen, the plan of its launch is kept with the sample-table change each mirrored axis makes, and
later calls add up their axes' changes (three NumPy calls instead of ~60; a flip of a new batch
of 64 224x224 images took 552 µs of host time, now 315, the rest being the call's prepare and
dispatch: emulated gpu, launches as no-ops). The same table, bit for bit, as a plan of its
own. A layout seen once is planned as it comes: building the kept plan costs one plan per axis
more, which batches of new ragged shapes every call (a flip right after decoding) would pay
every time.
"""

from __future__ import annotations

import threading

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._window_rows import WindowPlan, launch_window, window_plan
from ndd_triton.ops import flip
from ndd_triton.ops.schema import Call

_AXES = (("W", "horizontal"), ("H", "vertical"), ("D", "depthwise"))
_MAX_PLANS = 16
_plans: dict[tuple[object, ...], tuple[WindowPlan, np.ndarray] | None] = {}
_seen: set[tuple[object, ...]] = set()  # layouts seen once (kept on their second sight)
_lock = threading.Lock()


def _mirror(arg: Call, layout: str, n: int, ndim: int) -> np.ndarray:
    """`[N, ndim]` bool: the axes each sample mirrors."""
    mirror = np.zeros((n, ndim), dtype=bool)
    for name, arg_name in _AXES:
        if name in layout:
            mirror[:, layout.index(name)] = np.asarray(getattr(arg, arg_name)).reshape(-1) != 0
    return mirror


def _plan(out: GpuBatch, inp: GpuBatch, mirror: np.ndarray) -> WindowPlan:
    anchor = np.where(mirror, inp.shapes - 1, 0)
    step = np.where(mirror, -1, 1)
    return window_plan(out, inp.data.element_size(), inp.offsets, inp.shapes, anchor, step)


def _layout_plan(out: GpuBatch, inp: GpuBatch, axes: list[int]
                 ) -> tuple[WindowPlan, np.ndarray] | None:  # fmt: skip
    """The plan with no axis mirrored and, per axis in `axes`, `[N, NCOL]` table change of
    mirroring it in every sample; None when mirroring changes more than the table (then each
    call plans its own launch)."""
    n, ndim = inp.shapes.shape
    base = _plan(out, inp, np.zeros((n, ndim), bool))
    deltas = []
    for axis in axes:
        mirror = np.zeros((n, ndim), bool)
        mirror[:, axis] = True
        one = _plan(out, inp, mirror)
        if one.meta != base.meta or not np.array_equal(one.tiles, base.tiles) or \
                not np.array_equal(one.fills, base.fills):  # fmt: skip
            return None
        deltas.append(one.table - base.table)
    return base, np.stack(deltas) if deltas else np.zeros((0, *base.table.shape), np.int64)


@register(flip.schema, "gpu", replay=True)
def flip_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Mirror the flagged axes of every sample in one launch."""
    layout = arg.inputs[0].layout or ""
    n, ndim = inp.shapes.shape
    mirror = _mirror(arg, layout, n, ndim)
    axes = [layout.index(name) for name, _ in _AXES if name in layout]
    key = (layout, inp.shapes.shape, inp.shapes.tobytes(), inp.offsets.tobytes(),
           out.offsets.tobytes(), inp.data.dtype, out.data.dtype)  # fmt: skip
    with _lock:
        found = _plans.get(key, False)
        first_sight = found is False and key not in _seen
        if first_sight:
            if len(_seen) >= 4 * _MAX_PLANS:
                _seen.clear()
            _seen.add(key)
    if found is False and not first_sight:
        found = _layout_plan(out, inp, axes)
        with _lock:
            if len(_plans) >= _MAX_PLANS:
                _plans.clear()
            _plans[key] = found
    if found is None or found is False:
        plan = _plan(out, inp, mirror)
        launch_window(run, plan, inp.data, out)
        return
    base, deltas = found
    # the axes' table changes are in disjoint columns: their sum is the mirrored table
    table = base.table + np.einsum("an,anc->nc", mirror[:, axes].T.astype(np.int64), deltas)
    launch_window(run, base, inp.data, out, table)
