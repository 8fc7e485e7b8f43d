"""warp_affine: sample each image through a 2x3 affine map (DALI `warp_affine`).

The matrix comes from the `matrix` argument (6 numbers, or per sample a `(2, 3)` / `(6,)` value)
or from the second positional input (`(2, 3)` float tensors, one per sample). Volumes (DHWC)
take 3x4 matrices (12 numbers) in (x, y, z) = (W, H, D) order. With
`inverse_map=True` (default) it maps output coordinates to input coordinates; otherwise it is
inverted first. Coordinates are continuous, pixel centres at `i + 0.5` (see `ops/_affine.py`).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops import _affine
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _matrices(call: Call, d: int) -> np.ndarray:
    """`[N, d, d + 1]` float64 matrices as given (input `mtx` or argument `matrix`)."""
    n = call.batch_size
    rows, cols = d, d + 1
    mtx = call.inputs[1] if len(call.inputs) > 1 else None
    if mtx is not None:
        if call.matrix is not None:
            raise call.error(
                "the matrix is given both as input 1 and as argument 'matrix'; give only one"
            )
        assert mtx.values is not None
        out = np.zeros((n, rows, cols))
        for i, value in enumerate(mtx.values):
            if value.shape != (rows, cols):
                raise call.error(
                    f"input 1 (mtx) sample {i}: expected a ({rows}, {cols}) matrix; got shape "
                    f"{value.shape}",
                    RuntimeError,
                )
            out[i] = value
        return out
    if call.matrix is None:
        raise call.error(
            f"no transform given: pass 'matrix' ({rows * cols} numbers or ({rows}, {cols}) per "
            "sample) or a matrix as input 1",
            RuntimeError,
        )
    out = np.zeros((n, rows, cols))
    for i in range(n):
        value = np.asarray(call.matrix[i], np.float64)
        if value.shape not in ((rows * cols,), (rows, cols)):
            raise call.error(
                f"argument 'matrix' sample {i}: matrix parameter must have {rows * cols} "
                f"elements ({rows}x{cols}); got shape {value.shape}",
                RuntimeError,
            )
        out[i] = value.reshape(rows, cols)
    return out


def _infer(call: Call) -> OutputSpec:
    in_hw = _affine.spatial_hw(call)
    mats = _matrices(call, in_hw.shape[1])
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
        Arg("matrix", "float", per_sample=True, vector=True, per_frame=True,
            doc="The transform: 6 numbers [m00, m01, m02, m10, m11, m12], or per sample a "
                "(2, 3) array (e.g. from ndd.transforms.*)."),
        Arg("inverse_map", "bool", default=True,
            doc="True: the matrix maps output to input coordinates; False: input to output "
                "(it is inverted)."),
        Arg("size", "float", per_sample=True, vector=True,
            doc="Output (H, W) or (D, H, W), rounded; default: the input size."),
        *_affine.sampling_args(),
    ),
    infer=_infer,
)  # fmt: skip
