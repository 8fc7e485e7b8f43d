"""A dense matrix applied along one axis of a sample (mel_filter_bank, mfcc on the CPU)."""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.ops.schema import SampleArgs


def apply_along_axis(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """out[o, k, t] = sum_j M[k, j] in[o, j, t] with the sample's (outer, J, inner) view."""
    outer, extent, inner = (int(v) for v in arg.axis_split)
    if not out.size:
        return
    matrix = torch.from_numpy(arg.matrices[extent].astype(np.float32))
    x = torch.from_numpy(np.ascontiguousarray(inp).reshape(outer, extent, inner))
    # torch's matmul runs single-threaded on the pool threads; NumPy's BLAS would start its own
    # threads per call and oversubscribe the cores (50 vs 0.6 ms for 64x257 @ 257x250, 2 CPUs)
    torch.matmul(matrix, x, out=torch.from_numpy(out).view(outer, matrix.shape[0], inner))
