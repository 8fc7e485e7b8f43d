"""preemphasis_filter: `y[t] = x[t] - c * x[t-1]` (DALI `preemphasis_filter`, ops.md §6.1).

The sample is filtered as one flat signal; before `t = 0` the previous value is 0 (`zero`),
`x[0]` (`clamp`) or `x[1]` (`reflect`). Integer inputs are filtered as their plain values
(no rescaling); an integer `dtype` rounds half away from zero and saturates.
"""

from __future__ import annotations

from ndd_triton.core.dtype import bfloat16, bool_, float32
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

BORDERS = ("zero", "clamp", "reflect")


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if call.border not in BORDERS:
        raise call.error(f"argument 'border' must be one of {', '.join(BORDERS)}; got "
                         f"{call.border!r}", RuntimeError)  # fmt: skip
    if inp.dtype in (bool_, bfloat16):
        raise call.error(f"input 0 has dtype {inp.dtype}; expected a numeric type", RuntimeError)
    call.derive("border_code", BORDERS.index(call.border))
    return OutputSpec(call.dtype, inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="preemphasis_filter",
    doc="Applies the preemphasis filter `y[t] = x[t] - preemph_coeff * x[t-1]` to each sample.",
    inputs=(Input("input"),),
    args=(
        Arg("preemph_coeff", "float", default=0.97, per_sample=True, doc="Filter coefficient."),
        Arg(
            "border",
            "str",
            default="clamp",
            doc="Value before the first sample: `zero` (0), `clamp` (x[0]) or `reflect` (x[1]).",
        ),
        Arg("dtype", "dtype", default=float32, doc="Output type (integers round and saturate)."),
    ),
    infer=_infer,
    examples="`preemphasis_filter([1, 2, 3, 4])` -> `[0.03, 1.03, 1.06, 1.09]`.",
)
