"""jitter: move each pixel by a random integer offset (DALI `jitter`, GPU-only in DALI).

Output pixel `(x, y)` copies input pixel `(x + dx, y + dy)`, all channels, or `fill_value`
when that lies outside; `dx, dy` are uniform integers in `[-(nDegree // 2), nDegree -
nDegree // 2]`, from two Philox draws per pixel (`floor(top24(u) * (nDegree + 1) / 2**24)`,
exact integer arithmetic), so both backends give the same bytes for the same RNG state. The
draws are reserved in infer from `rng` or the thread's default RNG. ndd_triton also runs it
on the CPU. `mask=0` passes a sample through.
"""

from __future__ import annotations

from ndd_triton.core.dtype import float32, uint8
from ndd_triton.ops.random_ops import reserve
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec, same_as_input


def _infer(call: Call) -> OutputSpec:
    if call.nDegree < 0:
        raise call.error(f"argument 'nDegree' must be non-negative; got {call.nDegree}")
    if int(call.interp_type) != 0:
        raise call.error(
            f"argument 'interp_type': only INTERP_NN (0) is supported (offsets "
            f"are whole pixels); got {int(call.interp_type)}"
        )
    spec = same_as_input(call)
    shapes = call.inputs[0].shapes
    reserve(call, shapes[:, 0] * shapes[:, 1] * 2)
    return spec


schema = OpSchema(
    name="jitter",
    doc="Moves each pixel by a random offset of up to nDegree / 2 pixels in x and y.",
    inputs=(Input("input", layouts=("HWC",), dtypes=(uint8, float32)),),
    args=(
        Arg("nDegree", "int", default=2, doc="Range of the offsets: [-nDegree/2, nDegree/2]."),
        Arg("fill_value", "float", default=0.0, doc="Value where the source lies outside."),
        Arg("interp_type", "enum", default=0, choices=tuple(range(6)),
            doc="INTERP_NN only (offsets are whole pixels)."),
        Arg("mask", "int", default=1, per_sample=True,
            doc="0 passes the sample through unchanged."),
        Arg("rng", "rng", doc="Random generator (default: the thread's)."),
    ),
    infer=_infer,
    random=True,
)  # fmt: skip
