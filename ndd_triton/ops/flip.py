"""flip: mirror samples along W, H and/or D (DALI `flip`)."""

from __future__ import annotations

from ndd_triton.ops.schema import Arg, Input, OpSchema, same_as_input

FLIP_LAYOUTS = ("FDHWC", "FHWC", "DHWC", "HWC", "FCDHW", "FCHW", "CDHW", "CHW")

schema = OpSchema(
    name="flip",
    doc="Flips each sample along the selected spatial axes; frames are flipped independently.",
    inputs=(Input("input", layouts=FLIP_LAYOUTS),),
    args=(
        Arg("horizontal", "int", default=1, per_sample=True, doc="Flip the W axis when nonzero."),
        Arg("vertical", "int", default=0, per_sample=True, doc="Flip the H axis when nonzero."),
        Arg("depthwise", "int", default=0, per_sample=True, doc="Flip the D axis when nonzero."),
    ),
    infer=same_as_input,
)
