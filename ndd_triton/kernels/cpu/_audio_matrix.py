"""A dense matrix applied along one axis of a sample (mel_filter_bank, mfcc on the CPU)."""

from __future__ import annotations

import numpy as np

from ndd_triton.ops.schema import SampleArgs


def apply_along_axis(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """out[o, k, t] = sum_j M[k, j] in[o, j, t] with the sample's (outer, J, inner) view."""
    outer, extent, inner = (int(v) for v in arg.axis_split)
    if not out.size:
        return
    matrix = arg.matrices[extent].astype(np.float32)
    x = inp.reshape(outer, extent, inner)
    out.reshape(outer, matrix.shape[0], inner)[...] = np.matmul(matrix[None], x)
