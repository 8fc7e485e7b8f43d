"""to_decibels: `multiplier * log10(max(10^(cutoff_db / multiplier), x / reference))` (DALI
`to_decibels`, ops.md §6.5). `reference=0` uses each sample's maximum (all-zero samples then
give `cutoff_db` everywhere); `multiplier=0` gives zeros (as DALI)."""

from __future__ import annotations

from ndd_triton.core.dtype import float32
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

_MAX_EXP10 = 38.0  # 10^38 is below float32's largest value (3.4e38)


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != float32:
        raise call.error(f"input 0 has dtype {inp.dtype}; expected float32", RuntimeError)
    if call.reference < 0:
        raise call.error(f"argument 'reference' must be non-negative; got {call.reference}",
                         RuntimeError)  # fmt: skip
    if call.multiplier and call.cutoff_db / call.multiplier > _MAX_EXP10:
        raise call.error(f"argument 'cutoff_db' ({call.cutoff_db}) over 'multiplier' "
                         f"({call.multiplier}) must be at most {_MAX_EXP10}: the floor "
                         "10^(cutoff_db / multiplier) is beyond float32", ValueError)  # fmt: skip
    return OutputSpec(float32, inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="to_decibels",
    doc="Converts magnitudes or powers to decibels, clamped below at `cutoff_db`.",
    inputs=(Input("input"),),
    args=(
        Arg("multiplier", "float", default=10.0, doc="10 for powers, 20 for magnitudes."),
        Arg(
            "reference",
            "float",
            default=0.0,
            doc="Reference magnitude (0: the maximum of each sample).",
        ),
        Arg("cutoff_db", "float", default=-200.0, doc="Lowest output value (dB)."),
    ),
    infer=_infer,
)
