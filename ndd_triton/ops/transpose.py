"""transpose: permute the axes of every sample (ops.md §4.3)."""

from __future__ import annotations

import numpy as np

from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def resolve_perm(call: Call, ndim: int) -> list[int]:
    """The permutation (default: reversed axes), validated against `ndim`."""
    perm = call.perm
    if perm is None:
        return list(range(ndim - 1, -1, -1))
    if len(perm) != ndim:
        raise call.error(f"argument 'perm' has {len(perm)} entries; expected one per input "
                         f"dimension ({ndim}); got {perm}", RuntimeError)  # fmt: skip
    if sorted(perm) != list(range(ndim)):
        raise call.error(f"argument 'perm': Invalid permutation {perm}; expected a permutation "
                         f"of 0..{ndim - 1}", RuntimeError)  # fmt: skip
    return list(perm)


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    perm = resolve_perm(call, inp.ndim)
    call.derive("resolved_perm", perm)
    shapes = inp.shapes[:, perm] if inp.ndim else inp.shapes.copy()
    layout = inp.layout
    if call.output_layout is not None and call.output_layout != "":
        if len(call.output_layout) != inp.ndim:
            raise call.error(
                f"argument 'output_layout' {call.output_layout!r} has "
                f"{len(call.output_layout)} letters; expected {inp.ndim}"
            )
        layout = call.output_layout
    elif layout and call.transpose_layout:
        layout = "".join(layout[p] for p in perm)
    return OutputSpec(inp.dtype, np.ascontiguousarray(shapes, dtype=np.int64), layout or None)


schema = OpSchema(
    name="transpose",
    doc="Transposes every sample: output axis i is input axis `perm[i]`.",
    inputs=(Input("input"),),
    args=(
        Arg(
            "perm",
            "int",
            vector=True,
            doc="Output axis i is input axis perm[i]; default: reversed axes.",
        ),
        Arg(
            "transpose_layout",
            "bool",
            default=True,
            doc="Permute the layout letters too; False keeps the input layout string.",
        ),
        Arg("output_layout", "layout", doc="Explicit output layout (wins over transpose_layout)."),
    ),
    infer=_infer,
)
