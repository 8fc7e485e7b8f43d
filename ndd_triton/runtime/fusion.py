"""Fusion of a traced program (compile mode): chains of calls that run as one pass.

`plan_groups` rewrites the program (a list of plain `CallRecord`s) into groups: a *colour
chain* is a run of colour adjustments (brightness, contrast, brightness_contrast, hue,
saturation, hsv, color_twist) where each reads the previous one's output and nothing else in
the program reads that output (*color_cmn* when a crop_mirror_normalize alone reads the
chain: its normalising store joins the chain's pass on the GPU); a *flip_cmn* pair is a flip
read only by crop_mirror_normalize, which then reads the flip's input with its crop window and
`mirror` mirrored where the flip mirrored (the RN50 recipe's flip costs no pass); a
*resample_flip* pair is a GPU resize/random_resized_crop read only by a flip, whose passes
store mirrored (`resample_gpu`'s `mirror`); a
*resample_cmn* group is [slices, crops, flips ->] resize/random_resized_crop -> [flip ->]
crop_mirror_normalize, one launch on the GPU (`kernels/gpu/resample_normalize.py`; the calls
before the resize join it on the GPU only, `runtime/fusion_geometry.py`); an *affine_cmn*
group is the same with a GPU rotate/warp_affine instead of the resize
(`runtime/fusion_affine.py`, `kernels/gpu/affine_normalize.py`), *affine_geometry* a GPU warp
with the slices, crops and flips before it and/or a flip after it, one launch too; a
*decode_slice*
pair is a CPU decoders.image read only by slice, decoding only the windows
(`runtime/fusion_decode.py`); an
*arith_chain* is a run of arithmetic calls each reading the last, their other operands
constants, batches or other chains' results (a tree: `x * a + y * b`; `runtime/fusion_arith.py`).
The calls between the members (the random draws of their arguments) stay where they are, so
every call is still prepared in program order and draws what eager mode draws.

When an iteration is issued, a group's members are prepared one by one; the last member's
result comes from one invocation running the whole chain (`fused_invocation`): on the GPU one
launch (`kernels/gpu/color_chain.py`), on the CPU each sample goes through every member's
kernel while it is in cache (one pool job, no intermediate batch). Both give the bytes of the
ops run one by one. An intermediate result the caller reads anyway is computed on first read
by its own invocation (lazily, from its own inputs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.kernels import KernelEntry
from ndd_triton.ops import color
from ndd_triton.ops.schema import SampleArgs
from ndd_triton.runtime import profiling as _profiling
from ndd_triton.runtime.dispatch import make_run, make_stage
from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.executor import execute
from ndd_triton.runtime.fusion_affine import (
    AFFINE_KINDS,
    AFFINE_OPS,
    affine_groups,
    affine_invocation,
)
from ndd_triton.runtime.fusion_arith import (
    ARITH_KINDS,
    arith_groups,
    arith_invocation,
    tree_parts,
)
from ndd_triton.runtime.fusion_decode import (
    DECODE_KINDS,
    decode_groups,
    decode_invocation,
    decode_rows_head,
    limit_rows,
    rows_groups,
)
from ndd_triton.runtime.fusion_geometry import geometry_heads, read_through, view_source
from ndd_triton.runtime.fusion_group import RESAMPLE_OPS, Group, count_uses, sole_producer
from ndd_triton.runtime.fusion_norm import gpu_norm, mirrored_cmn, normalising_store
from ndd_triton.runtime.invocation import Invocation
from ndd_triton.runtime.trace import CallRecord

COLOR_OPS = frozenset(s.name for s in color.schemas)
CORE_OPS = RESAMPLE_OPS | AFFINE_OPS  # the pass a geometry group's heads are read through
GEOMETRY_KINDS = ("resample_cmn", "affine_cmn")


def plan_groups(program: list[CallRecord]) -> dict[int, Group]:
    """Member index -> its group: every colour chain of two or more calls, and every flip read
    only by a crop_mirror_normalize."""
    uses = count_uses(program)
    nxt: dict[int, int] = {}  # colour op -> the colour op that alone reads it
    has_prev: set[int] = set()
    normalizer = {}  # colour op -> the crop_mirror_normalize that alone reads it
    groups: dict[int, Group] = {}
    for p, rec in enumerate(program):
        if rec.name in COLOR_OPS:
            q = sole_producer(program, uses, rec, COLOR_OPS)
            if q is not None:
                nxt[q] = p
                has_prev.add(p)
        if rec.name != "crop_mirror_normalize":
            continue
        q = sole_producer(program, uses, rec, COLOR_OPS)
        if q is not None:
            normalizer[q] = p
        # flip -> crop_mirror_normalize: one cmn, mirror ^= flip; a resample before them: one pass
        members, head = [p], rec
        f = sole_producer(program, uses, rec, ("flip",))
        if f is not None:
            groups[f] = groups[p] = Group("flip_cmn", (f, p))
            members, head = [f, p], program[f]
        r, kind = sole_producer(program, uses, head, RESAMPLE_OPS), "resample_cmn"
        if r is None:  # a warp before them: one pass on the GPU
            r, kind = sole_producer(program, uses, head, AFFINE_OPS), "affine_cmn"
            r = r if r is not None and program[r].gpu else None
        if r is not None:
            # slices, crops and flips before the resize or warp (the detection recipe's
            # window) are read through by the pass
            # (on the CPU, a decoder only it reads: decoded down to the rows it reads)
            heads = geometry_heads(program, uses, r) if program[r].gpu else \
                decode_rows_head(program, uses, r)  # fmt: skip
            group = Group(kind, (*heads, r, *members))
            for m in group.calls:
                groups[m] = group
    for p, rec in enumerate(program):  # resize -> flip (no normalisation after it)
        r = sole_producer(program, uses, rec, RESAMPLE_OPS) if rec.name == "flip" else None
        if r is not None and program[r].gpu and p not in groups and r not in groups:
            groups[r] = groups[p] = Group("resample_flip", (r, p))
    affine_groups(program, uses, groups)
    decode_groups(program, uses, groups)
    rows_groups(program, uses, groups)
    arith_groups(program, uses, groups)
    for start in sorted(set(nxt) | set(normalizer)):
        if start in has_prev:
            continue
        calls = [start]
        while calls[-1] in nxt:
            calls.append(nxt[calls[-1]])
        kind = "color_chain"
        if calls[-1] in normalizer:
            calls.append(normalizer[calls[-1]])
            kind = "color_cmn"
        if len(calls) > 1:
            group = Group(kind, tuple(calls))
            for p in calls:
                groups[p] = group
    return groups


def lazy_invocation(prep: Any, ctx: Any) -> Invocation:
    """A member's own invocation, run only if its result is read (on the reading thread), or
    scheduled as eager mode schedules the call when its group cannot run as one pass: on the
    CPU with its stage, so that it joins the pool's sample pipeline as the call's eager
    invocation would (the CPU RN50 chain's random_resized_crop, which no CPU pass fuses)."""
    args = (prep.call, prep.kernel, prep.batches, prep.specs, prep.dev, ctx)
    stage = make_stage(*args) if prep.dev.device_type == "cpu" else None
    inv = Invocation(prep.call.schema.name, make_run(*args), ctx, None, stage)
    inv.mode = EvalMode.deferred
    return inv


def fused_invocation(group: Group, members: list[Any], ctx: Any) -> Invocation | None:
    """One invocation producing the last member's output from the first member's input, or
    None when the members cannot run as one pass (then each runs on its own)."""
    first, last = members[0], members[-1]
    dev = first.dev
    if any(m.dev != dev or len(m.specs) != 1 or m.specs[0].shapes is None for m in members):
        return None
    name = "+".join(m.call.schema.name for m in members)
    if group.kind == "resample_cmn":
        return _resample_cmn(name, members, ctx)
    if group.kind in AFFINE_KINDS:
        return affine_invocation(name, group.kind, members, ctx)
    if group.kind == "resample_flip":
        return _resample_flip(name, members, ctx)
    if group.kind in DECODE_KINDS:
        return decode_invocation(name, group.kind, members, ctx)
    if group.kind in ARITH_KINDS:
        return arith_invocation(name, group, members, ctx)
    if group.kind == "flip_cmn":
        call = mirrored_cmn(first.call, last.call)
        if call is None:
            return None
        stage = make_stage(call, last.kernel, first.batches, last.specs, dev, ctx) \
            if dev.device_type == "cpu" else None  # fmt: skip
        run = make_run(call, last.kernel, first.batches, last.specs, dev, ctx)
        return Invocation(name, run, ctx, None, stage)
    if dev.device_type == "cpu":
        kernel = KernelEntry(_cpu_chain(members), "cpu")
    else:
        from ndd_triton.kernels.gpu.color_chain import chain_codes

        colour = members[:-1] if group.kind == "color_cmn" else members
        norm = gpu_norm(last.call, last.specs[0]) if group.kind == "color_cmn" else None
        if group.kind == "color_cmn" and norm is None:
            return None
        widths = [int(np.asarray(m.call.color_matrix).shape[1]) for m in colour]
        dtypes = [m.specs[0].dtype.numpy_dtype for m in colour]
        codes = chain_codes(widths, dtypes, norm=norm is not None)
        if codes is None:
            return None
        kernel = KernelEntry(_gpu_chain(colour, codes, norm), "gpu")
    specs = last.specs
    stage = make_stage(first.call, kernel, first.batches, specs, dev, ctx) \
        if dev.device_type == "cpu" else None  # fmt: skip
    return Invocation(name, make_run(first.call, kernel, first.batches, specs, dev, ctx), ctx,
                      None, stage)  # fmt: skip


def _resample_cmn(name: str, members: list[Any], ctx: Any) -> Invocation | None:
    """resize/random_resized_crop -> [flip] -> crop_mirror_normalize on the GPU: one launch
    (`kernels/gpu/resample_normalize.py`) when the resize makes uint8 RGB HWC of 2 axes (a
    float HWC/CHW output; only the normalisation's window is computed, and where it is padded
    beyond the resized image the pass stores the fill there). None on the CPU (the caller then folds
    the flip alone): running the resize kernel per sample into a scratch image cost more CPU
    than the pipelined ops in perf/README.md's measurement (the resize's batch recipes)."""
    k = next(i for i, m in enumerate(members) if m.call.schema.name in RESAMPLE_OPS)
    heads, members = members[:k], members[k:]
    resample, cmn = members[0], members[-1]
    dev = resample.dev
    if dev.device_type == "cpu":
        return None
    meta = resample.call.inputs[0]
    through = read_through(heads, resample)  # (the first head's input through their map)
    if through is None:
        return None
    view, rc, batches = through
    if meta.layout != "HWC" or (meta.shapes[:, 2] != 3).any() or meta.dtype.name != "u8" or \
            resample.specs[0].dtype.name != "u8" or rc.resample_axes != "HW":  # fmt: skip
        return None
    store = normalising_store(members, rc.inputs[0], pad_ok=True)
    if store is None:
        return None

    def launch(run: Any, out: Any, inp: Any, _call: Any) -> None:
        from ndd_triton.kernels.gpu.resample_normalize import launch_resample_normalize

        launch_resample_normalize(run, out, inp, rc, store.gain, store.bias, store.mirror,
                                  store.chw, store.window, view_source(view, inp),
                                  store.fill)  # fmt: skip

    kernel = KernelEntry(launch, "gpu")
    return Invocation(name, make_run(rc, kernel, batches, cmn.specs, dev, ctx), ctx, None)


def _resample_flip(name: str, members: list[Any], ctx: Any) -> Invocation | None:
    """resize/random_resized_crop -> flip on the GPU: the resize's own launches, each pass
    storing its axis mirrored where the flip flips it (`resample_gpu`'s `mirror`), so the
    flip's pass disappears (exact). None on the CPU or for a flip of an axis not resampled."""
    resample, flip = members
    if resample.dev.device_type == "cpu" or len(resample.specs) != 1:
        return None
    rc, fc = resample.call, flip.call
    n = rc.batch_size
    flags = {letter: np.asarray(fc.values[arg]).reshape(n) != 0 for letter, arg in
             (("W", "horizontal"), ("H", "vertical"), ("D", "depthwise"))}  # fmt: skip
    axes = rc.resample_axes
    layout = fc.inputs[0].layout or ""
    if any(f.any() and (letter not in axes or letter not in layout)
           for letter, f in flags.items()):  # fmt: skip
        return None
    mirror = np.stack([flags[letter] for letter in axes], axis=1)
    fn = resample.kernel.for_call(rc).fn

    def launch(run: Any, out: Any, inp: Any, call: Any) -> None:
        fn(run, out, inp, call, mirror=mirror)

    kernel = KernelEntry(launch, "gpu")
    return Invocation(name, make_run(rc, kernel, resample.batches, flip.specs, resample.dev,
                                     ctx), ctx, None)  # fmt: skip


def _cpu_chain(members: list[Any]) -> Any:
    """`fn(out, inp, arg)`: sample `arg.index` through every member's CPU kernel."""
    steps = [(m.call, m.kernel, m.specs[0]) for m in members]
    layout = members[0].call.inputs[0].layout

    def chain(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
        i = arg.index
        cur = inp
        for k, (call, kernel, spec) in enumerate(steps):
            if k == len(steps) - 1:
                dst = out
            else:
                dst = np.empty(tuple(int(v) for v in spec.shapes[i]), spec.dtype.numpy_dtype)
            kernel.fn(dst, cur, SampleArgs(call, i, layout))
            cur = dst

    return chain


def _gpu_chain(members: list[Any], codes: int,
               norm: tuple[np.ndarray, np.ndarray, bool] | None) -> Any:  # fmt: skip
    """`fn(run, out, inp, call)`: the chain (and the normalising store) as one launch."""
    from ndd_triton.kernels.gpu.color_chain import launch_color_chain

    matrices = [np.asarray(m.call.color_matrix, np.float32) for m in members]
    offsets = [np.asarray(m.call.color_offset, np.float32) for m in members]

    def chain(run: Any, out: Any, inp: Any, call: Any) -> None:
        launch_color_chain(run, out, inp, matrices, offsets, codes, norm)

    return chain


def issue_member(group: Group, p: int, prep: Any, members: dict[int, list[Any]],
                  ctx: Any) -> tuple[Any, list[tuple[tuple[str, ...], list[Any]]]]:  # fmt: skip
    """Results of fusion group member `p` (prepared) and the (ops, invocations) groups it
    scheduled: the last member schedules the group as one fused invocation, or each member's
    own when they cannot run as one pass."""
    done = members.setdefault(group.calls[0], [])
    done.append((prep, lazy_invocation(prep, ctx)))
    if p != group.last:
        return prep.results(done[-1][1]), []
    preps = [m for m, _ in done]
    names = tuple(m.call.schema.name for m in preps)
    if names[0] == "decoders.image" and names[1] in RESAMPLE_OPS:
        # decode_rows, or a CPU resample_cmn group's head: a rows-limited decode is scheduled
        # in place of the decoder's own invocation (kept for the caller's reads)
        rows = limit_rows(preps[0], preps[1], done[0][1], done[1][1], ctx)
        if rows is not None:
            done[0] = (preps[0], rows)
    fused = fused_invocation(group, preps, ctx)
    parts: list[tuple[Group | None, list[int]]] = []  # (smaller group, members run alone)
    if fused is None and group.kind in GEOMETRY_KINDS:
        # no one pass of it all: without the slice, then the flip still folded
        parts = [(part, list(range(len(group.calls) - len(part.calls))))
                 for part in _geometry_parts(group, names)]  # fmt: skip
    elif fused is None and group.sub:  # a tree: a smaller one, or its main chain alone
        parts = tree_parts(group, preps)
    for part, alone in parts:
        rest = [i for i in range(len(preps)) if i not in alone]
        fused = None if part is None else fused_invocation(part, [preps[i] for i in rest], ctx)
        if fused is not None:
            for i in alone:
                _schedule(done[i][1], preps[i])
            _schedule(fused, preps[rest[0]])
            return prep.results(fused), [*(((names[i],), [done[i][1]]) for i in alone),
                                         (tuple(names[i] for i in rest), [fused])]  # fmt: skip
    if fused is None:
        for m, inv in done:
            _schedule(inv, m)
        scheduled = [((n,), [inv]) for n, (_, inv) in zip(names, done, strict=True)]
        return prep.results(done[-1][1]), scheduled
    _schedule(fused, preps[0])
    return prep.results(fused), [(names, [fused])]


def _geometry_parts(group: Group, names: tuple[str, ...]) -> list[Group]:
    """The smaller groups to try, in turn, when a resample_cmn or affine_cmn group cannot run
    as one pass: without the calls before the resize or warp, then the flip folded into the
    normalisation alone."""
    calls = group.calls[next(i for i, n in enumerate(names) if n in CORE_OPS):]
    parts = [Group(group.kind, calls)] if calls != group.calls else []
    if len(calls) == 3:
        parts.append(Group("flip_cmn", calls[1:]))
    return parts


def _schedule(inv: Any, prep: Any) -> None:
    """Run `inv` as eager mode runs a prepared call (profiled when a profile is active)."""
    if _profiling.ACTIVE and inv.record is None:
        inv.record = _profiling.new_record(inv.name, str(prep.dev), EvalMode.current().name,
                                           prep.call.batch_size)  # fmt: skip
    execute(inv, force_sync=prep.external)
