"""cast, cast_like: convert samples to another dtype with DALI's rules (ops.md §4.7).

Float to integer rounds half away from zero and saturates; NaN becomes 0 for types narrower than
32 bits and the type's minimum otherwise; integers saturate; anything to bool means `!= 0`.
"""

from __future__ import annotations

from ndd_triton.core.dtype import ALL_DTYPES, DType, bfloat16
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec

# bfloat16 has no NumPy type (CPU kernels) and the Triton interpreter cannot compute in it.
CASTABLE = tuple(d for d in ALL_DTYPES if d != bfloat16)


def _target(call: Call, target: DType, what: str) -> DType:
    if target == bfloat16:
        raise call.error(f"{what} is bfloat16; casting to bfloat16 is not supported (supported: "
                         f"{', '.join(str(d) for d in CASTABLE)})", TypeError)  # fmt: skip
    return target


def _infer_cast(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    dtype = _target(call, call.dtype, "argument 'dtype'")
    return OutputSpec(dtype, inp.shapes.copy(), inp.layout)


def _infer_cast_like(call: Call) -> OutputSpec:
    inp, like = call.inputs
    dtype = _target(call, like.dtype, "input 1 ('like') has dtype bfloat16:")
    return OutputSpec(dtype, inp.shapes.copy(), inp.layout)


cast = OpSchema(
    name="cast",
    doc="Converts samples to `dtype` (round half away from zero, saturate; NaN to 0 below 32 "
    "bits, to the minimum otherwise; nonzero to True for bool). Layout is kept.",
    inputs=(Input("input", dtypes=CASTABLE),),
    args=(Arg("dtype", "dtype", default=REQUIRED, doc="Output data type."),),
    infer=_infer_cast,
    module="cast",
)

cast_like = OpSchema(
    name="cast_like",
    doc="Converts `input` to the dtype of `like` with the rules of `cast` (shapes independent).",
    inputs=(Input("input", dtypes=CASTABLE), Input("like", doc="Provides the output dtype.")),
    args=(),
    infer=_infer_cast_like,
    module="cast",
)

schemas = [cast, cast_like]
