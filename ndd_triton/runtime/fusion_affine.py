"""Compile mode's fusion of an affine warp with the index maps around it and the normalisation
(`runtime/fusion.py` plans the groups), on the GPU: *affine_cmn*, `[slices, crops, flips ->]
rotate/warp_affine -> [flip ->] crop_mirror_normalize`, e.g. a random rotation before the
training crop; *affine_geometry*, a warp with the slices, crops and flips before it and/or a
horizontal flip after it, without a normalisation (`flip -> rotate`, `crop -> warp_affine ->
flip`).

Each element of the normalisation's window is the warp's pixel it is, sampled as the warp
samples it and normalised in the same pass (`kernels/gpu/affine_normalize.py`): one launch per
batch instead of two to six, and no warped image written. Exact: the flip only moves the
normalisation's window (as `flip_cmn`), the window picks which warped pixels are computed, and
the slices, crops and flips before the warp only pick which input pixel each of its taps
reads (`fusion_geometry.source_view`). When the group cannot run so (the CPU, NN sampling, a
volume, not uint8 RGB HWC, a window that leaves the warped image), it tries again without the
calls before the warp, then with only the flip folded into the normalisation.
*affine_geometry* runs the same kernel with a gain of 1 and a bias of 0 into the warp's uint8
HWC output (`v * 1 + 0` is `v`: exact), keeping the whole warped image, mirrored where the
flip after it mirrors; where it cannot (a vertical flip after the warp, ...) each call runs on
its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.kernels import KernelEntry
from ndd_triton.ops._affine import INTERP_LINEAR
from ndd_triton.runtime.dispatch import make_run
from ndd_triton.runtime.fusion_geometry import geometry_heads, read_through, view_source
from ndd_triton.runtime.fusion_group import Group, sole_producer
from ndd_triton.runtime.fusion_norm import LIMIT, NormStore, normalising_store
from ndd_triton.runtime.invocation import Invocation
from ndd_triton.runtime.trace import CallRecord

AFFINE_OPS = frozenset(("rotate", "warp_affine"))
AFFINE_KINDS = ("affine_cmn", "affine_geometry")


def affine_groups(program: list[CallRecord], uses: dict[tuple[int, int], int],
                  groups: dict[int, Group]) -> None:  # fmt: skip
    """Add the affine_geometry groups to `groups`: each GPU warp in no group yet, with the
    slices, crops and flips before it (`geometry_heads`) and the flip that alone reads it, when
    it has either."""
    after: dict[int, int] = {}  # warp -> the flip that alone reads it
    for q, rec in enumerate(program):
        r = sole_producer(program, uses, rec, AFFINE_OPS) if rec.name == "flip" else None
        if r is not None and q not in groups:
            after[r] = q
    for p, rec in enumerate(program):
        if rec.name not in AFFINE_OPS or not rec.gpu or p in groups:
            continue
        heads = geometry_heads(program, uses, p)
        while any(h in groups for h in heads):  # the calls after any grouped one (a chain)
            heads = heads[1:]
        calls = (*heads, p, *((after[p],) if p in after else ()))
        if len(calls) > 1:
            group = Group("affine_geometry", calls)
            for m in calls:
                groups[m] = group


def affine_invocation(name: str, kind: str, members: list[Any], ctx: Any
                      ) -> Invocation | None:  # fmt: skip
    """The group's one launch (producing the last member's output from the first member's
    input), or None when it cannot run as one pass."""
    k = next(i for i, m in enumerate(members) if m.call.schema.name in AFFINE_OPS)
    heads, members = members[:k], members[k:]
    warp, last = members[0], members[-1]
    dev = warp.dev
    if dev.device_type == "cpu":
        return None
    wc = warp.call
    meta, spec = wc.inputs[0], warp.specs[0]
    if meta.layout != "HWC" or spec.layout != "HWC" or (meta.shapes[:, 2] != 3).any() or \
            meta.dtype.name != "u8" or spec.dtype.name != "u8" or \
            int(wc.affine_interp) != INTERP_LINEAR:  # fmt: skip
        return None
    through = read_through(heads, warp)  # (warp_affine's matrix input: in the maps)
    if through is None:
        return None
    view, run_call, batches = through
    store = normalising_store(members, run_call.inputs[0], pad_ok=True) \
        if kind == "affine_cmn" else _plain_store(members, run_call.inputs[0])  # fmt: skip
    if store is None:
        return None
    pad = None if store.fill is None else (spec.shapes[:, :2], store.fill)

    def launch(run: Any, out: Any, inp: Any, _call: Any) -> None:
        from ndd_triton.kernels.gpu.affine_normalize import launch_affine_normalize

        launch_affine_normalize(run, out, inp, wc, store.gain, store.bias, store.mirror,
                                store.chw, store.window, view_source(view, inp), pad)  # fmt: skip

    kernel = KernelEntry(launch, "gpu")
    return Invocation(name, make_run(run_call, kernel, batches, last.specs, dev, ctx), ctx, None)


def _plain_store(members: list[Any], source: Any) -> NormStore | None:
    """The store of `[warp, (flip,)]`: the whole warped image, `v * 1 + 0` into uint8 HWC,
    mirrored where a horizontal flip after the warp flips; None for other flips or samples
    too large for the kernel's int32 indexing."""
    warp = members[0]
    n = warp.call.batch_size
    mirror = np.zeros(n, bool)
    if len(members) == 2:
        fc = members[1].call
        if np.asarray(fc.vertical).reshape(n).any() or np.asarray(fc.depthwise).reshape(n).any():
            return None
        mirror = np.asarray(fc.horizontal).reshape(n) != 0
    extents = np.asarray(warp.specs[0].shapes, np.int64)
    if max(int(source.shapes.prod(axis=1).max(initial=0)),
           int(extents.prod(axis=1).max(initial=0))) >= LIMIT:  # fmt: skip
        return None
    return NormStore(np.ones((n, 3)), np.zeros((n, 3)), False, mirror,
                     (np.zeros((n, 2), np.int64), extents[:, :2]))
