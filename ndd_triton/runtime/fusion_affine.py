"""Compile mode's fusion of an affine warp into the normalisation (`runtime/fusion.py` plans the
groups): *affine_cmn*, `[slices, crops, flips ->] rotate/warp_affine -> [flip ->]
crop_mirror_normalize` on the GPU, e.g. a random rotation before the training crop.

Each element of the normalisation's window is the warp's pixel it is, sampled as the warp
samples it and normalised in the same pass (`kernels/gpu/affine_normalize.py`): one launch per
batch instead of two to six, and no warped image written. Exact: the flip only moves the
normalisation's window (as `flip_cmn`), the window picks which warped pixels are computed, and
the slices, crops and flips before the warp only pick which input pixel each of its taps
reads (`fusion_geometry.source_view`). When the group cannot run so (the CPU, NN sampling, a
volume, not uint8 RGB HWC, a window that leaves the warped image), it tries again without the
calls before the warp, then with only the flip folded into the normalisation.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ndd_triton.kernels import KernelEntry
from ndd_triton.ops._affine import INTERP_LINEAR
from ndd_triton.runtime.dispatch import make_run
from ndd_triton.runtime.fusion_geometry import read_through, view_source
from ndd_triton.runtime.fusion_norm import normalising_store
from ndd_triton.runtime.invocation import Invocation

AFFINE_OPS = frozenset(("rotate", "warp_affine"))


def affine_cmn_invocation(name: str, members: list[Any], ctx: Any) -> Invocation | None:
    """The group's one launch (producing the normalisation's output from the first member's
    input), or None when it cannot run as one pass."""
    k = next(i for i, m in enumerate(members) if m.call.schema.name in AFFINE_OPS)
    heads, members = members[:k], members[k:]
    warp, cmn = members[0], members[-1]
    dev = warp.dev
    if dev.device_type == "cpu":
        return None
    wc = warp.call
    meta, spec = wc.inputs[0], warp.specs[0]
    if meta.layout != "HWC" or spec.layout != "HWC" or (meta.shapes[:, 2] != 3).any() or \
            meta.dtype.name != "u8" or spec.dtype.name != "u8" or \
            int(wc.affine_interp) != INTERP_LINEAR:  # fmt: skip
        return None
    wc = dataclasses.replace(wc, inputs=[meta])  # (warp_affine's matrix input: in the maps)
    through = read_through(heads)
    if through is None:
        return None
    view, first_input = through
    run_call = wc if first_input is None else dataclasses.replace(wc, inputs=[first_input])
    store = normalising_store(members, run_call.inputs[0])
    if store is None:
        return None

    def launch(run: Any, out: Any, inp: Any, _call: Any) -> None:
        from ndd_triton.kernels.gpu.affine_normalize import launch_affine_normalize

        launch_affine_normalize(run, out, inp, wc, store.gain, store.bias, store.mirror,
                                store.chw, store.window, view_source(view, inp))  # fmt: skip

    batches = heads[0].batches[:1] if heads else warp.batches[:1]
    kernel = KernelEntry(launch, "gpu")
    return Invocation(name, make_run(run_call, kernel, batches, cmn.specs, dev, ctx), ctx, None)
