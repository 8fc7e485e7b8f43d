"""mfcc: DCT of mel spectrograms along one axis (DALI `mfcc`, ops.md §6.6).

Keeps the first `n_mfcc` coefficients (at most the axis length). Unnormalised DCTs are the
plain sums (DCT-II `X_k = sum x_n cos(pi/N (n + 1/2) k)`, no factor 2; DCT-I and DCT-III halve
the end terms); `normalize=True` is the orthonormal DCT (not for type I). `lifter > 0`
multiplies coefficient i by `1 + (lifter / 2) sin(pi (i + 1) / lifter)`.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float32
from ndd_triton.ops._audio import axis_split, dct_matrix
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != float32:
        raise call.error(f"input 0 has dtype {inp.dtype}; expected float32", RuntimeError)
    if call.dct_type not in (1, 2, 3, 4):
        raise call.error(f"argument 'dct_type' must be 1, 2, 3 or 4; got {call.dct_type}",
                         RuntimeError)  # fmt: skip
    if call.dct_type == 1 and call.normalize:
        raise call.error("argument 'normalize': ortho-normalization is not supported for DCT "
                         "type I", RuntimeError)  # fmt: skip
    if call.n_mfcc < 1:
        raise call.error(f"argument 'n_mfcc' must be positive; got {call.n_mfcc}", RuntimeError)
    if call.lifter < 0:
        raise call.error(f"argument 'lifter' must be non-negative; got {call.lifter}",
                         RuntimeError)  # fmt: skip
    ndim = inp.ndim
    if not 0 <= call.axis < ndim:
        raise call.error(f"argument 'axis' ({call.axis}) is out of range for {ndim}-D samples",
                         RuntimeError)  # fmt: skip
    split = axis_split(inp.shapes, call.axis)
    if (split[:, 1] < 1).any() or (call.dct_type == 1 and (split[:, 1] < 2).any()):
        raise call.error("the DCT axis must have at least 1 value (2 for DCT type I)",
                         RuntimeError)  # fmt: skip
    n_out = np.minimum(split[:, 1], call.n_mfcc)
    matrices = {int(n): dct_matrix(int(n), int(min(n, call.n_mfcc)), int(call.dct_type),
                                   bool(call.normalize), float(call.lifter))
                for n in np.unique(split[:, 1])}  # fmt: skip
    call.derive("axis_split", split, per_sample=True)
    call.derive("matrices", matrices)
    shapes = inp.shapes.copy()
    shapes[:, call.axis] = n_out
    return OutputSpec(float32, shapes, inp.layout)


schema = OpSchema(
    name="mfcc",
    doc="Computes mel-frequency cepstral coefficients: a DCT along `axis` of each sample.",
    inputs=(Input("input"),),
    args=(
        Arg("n_mfcc", "int", default=20, doc="Coefficients kept (at most the axis length)."),
        Arg("dct_type", "int", default=2, doc="DCT type, 1 to 4."),
        Arg("normalize", "bool", default=False, doc="Orthonormal DCT (not with type 1)."),
        Arg("lifter", "float", default=0.0, doc="Cepstral liftering coefficient (0: none)."),
        Arg("axis", "int", default=0, doc="Axis to transform (0: the `f` axis of `ft`)."),
    ),
    infer=_infer,
)
