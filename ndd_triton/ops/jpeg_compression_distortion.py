"""jpeg_compression_distortion: JPEG encode + decode round trip of uint8 RGB images.

Introduces JPEG artefacts (8x8 DCT quantisation, 4:2:0 chroma subsampling) at a per-sample
`quality`. Not bit-exact across JPEG implementations (DALI's is not either): test with tolerances.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core import dtype as _dtype
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != _dtype.uint8:
        raise call.error(f"input 0 has dtype {inp.dtype}; only uint8 is supported", TypeError)
    channels = inp.shapes[:, -1]
    bad = np.flatnonzero(channels != 3)
    if len(bad):
        i = int(bad[0])
        raise call.error(f"input 0 sample {i}: expected 3 channels (RGB); got {int(channels[i])}")
    # DALI clamps out-of-range qualities (0 is accepted) to 1..100
    call.derive("qualities", np.clip(np.asarray(call.quality, dtype=np.int64), 1, 100),
                per_sample=True)  # fmt: skip
    return OutputSpec(inp.dtype, inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="jpeg_compression_distortion",
    doc="Round-trips uint8 RGB images through JPEG compression at the given quality.",
    inputs=(Input("input", layouts=("HWC", "FHWC")),),
    args=(Arg("quality", "int", default=50, per_sample=True,
              doc="JPEG quality 1..100 (values outside are clamped)."),),
    infer=_infer,
)
