"""warp_affine: sample each image through a 2x3 affine map (DALI `warp_affine`).

The matrix comes from the `matrix` argument (6 numbers, or per sample a `(2, 3)` / `(6,)` value)
or from the second positional input (`(2, 3)` float tensors, one per sample). With
`inverse_map=True` (default) it maps output coordinates to input coordinates; otherwise it is
inverted first. Coordinates are continuous, pixel centres at `i + 0.5` (see `ops/_affine.py`).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops import _affine
from ndd_triton.schema import Arg, Call, Input, OpSchema, OutputSpec


def _matrices(call: Call) -> np.ndarray:
    """`[N, 2, 3]` float64 matrices as given (input `mtx` or argument `matrix`)."""
    n = call.batch_size
    mtx = call.inputs[1] if len(call.inputs) > 1 else None
    if mtx is not None:
        if call.matrix is not None:
            raise call.error(
                "the matrix is given both as input 1 and as argument 'matrix'; give only one"
            )
        assert mtx.values is not None
        out = np.zeros((n, 2, 3))
        for i, value in enumerate(mtx.values):
            if value.shape != (2, 3):
                raise call.error(
                    f"input 1 (mtx) sample {i}: expected a (2, 3) matrix; got shape {value.shape}",
                    RuntimeError,
                )
            out[i] = value
        return out
    if call.matrix is None:
        raise call.error(
            "no transform given: pass 'matrix' (6 numbers or (2, 3) per sample) "
            "or a matrix as input 1",
            RuntimeError,
        )
    out = np.zeros((n, 2, 3))
    for i in range(n):
        value = np.asarray(call.matrix[i], np.float64)
        if value.size != 6 or value.shape not in ((6,), (2, 3)):
            raise call.error(
                f"argument 'matrix' sample {i}: matrix parameter must have 6 "
                f"elements (2x3); got shape {value.shape}",
                RuntimeError,
            )
        out[i] = value.reshape(2, 3)
    return out


def _infer(call: Call) -> OutputSpec:
    in_hw = _affine.spatial_hw(call)
    mats = _matrices(call)
    inverse = mats if call.inverse_map else _affine.invert(mats)
    out_hw = _affine.output_sizes(call, in_hw)
    shapes = _affine.derive_affine(call, inverse, in_hw if out_hw is None else out_hw)
    return OutputSpec(_affine.output_dtype(call), shapes, call.inputs[0].layout or "HWC")


schema = OpSchema(
    name="warp_affine",
    doc="Applies an affine transform to each image (NN or bilinear sampling), with a constant "
        "fill or clamped borders outside the source.",
    inputs=(Input("data", layouts=_affine.AFFINE_LAYOUTS, dtypes=_affine.AFFINE_DTYPES),
            Input("mtx", optional=True, host_values=True,
                  doc="Per-sample (2, 3) float matrices (instead of the 'matrix' argument).")),
    args=(
        Arg("matrix", "float", per_sample=True, vector=True,
            doc="The transform: 6 numbers [m00, m01, m02, m10, m11, m12], or per sample a "
                "(2, 3) array (e.g. from ndd.transforms.*)."),
        Arg("inverse_map", "bool", default=True,
            doc="True: the matrix maps output to input coordinates; False: input to output "
                "(it is inverted)."),
        Arg("size", "float", per_sample=True, vector=True,
            doc="Output (H, W), rounded to integers; default: the input size."),
        *_affine.sampling_args(),
    ),
    infer=_infer,
)  # fmt: skip
