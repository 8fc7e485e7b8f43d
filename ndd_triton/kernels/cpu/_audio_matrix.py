"""A matrix applied along one axis of a sample (mel_filter_bank, mfcc on the CPU).

torch runs single-threaded on the pool threads (NumPy's BLAS starts its own threads per call
and oversubscribes the cores: 50 vs 0.6 ms for 64x257 @ 257x250 on 2 busy CPUs). Sparse
matrices (mel banks: each bin feeds at most two bands) go through torch's CSR product
(0.08 vs 0.34 ms dense for 64 bands x 257 bins x 250 frames).
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import torch

from ndd_triton.ops.schema import SampleArgs

_cache: dict[int, tuple[np.ndarray, torch.Tensor]] = {}
_lock = threading.Lock()


def _torch_matrix(matrix: np.ndarray) -> torch.Tensor:
    """float32 torch copy of a (cached, read-only) schema matrix: CSR when mostly zeros."""
    hit = _cache.get(id(matrix))
    if hit is not None and hit[0] is matrix:
        return hit[1]
    dense = torch.from_numpy(matrix.astype(np.float32))
    with _lock:  # (catch_warnings swaps the process's filters: one thread at a time here)
        if np.count_nonzero(matrix) * 4 < matrix.size:
            with warnings.catch_warnings():  # "sparse CSR support is in beta": a stable product
                warnings.simplefilter("ignore", UserWarning)
                dense = dense.to_sparse_csr()
        if len(_cache) > 64:
            _cache.clear()
        _cache[id(matrix)] = (matrix, dense)  # holds `matrix`, so its id is not reused
    return dense


def apply_along_axis(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """out[o, k, t] = sum_j M[k, j] in[o, j, t] with the sample's (outer, J, inner) view."""
    outer, extent, inner = (int(v) for v in arg.axis_split)
    if not out.size:
        return
    matrix = _torch_matrix(arg.matrices[extent])
    sparse = matrix.layout == torch.sparse_csr
    if outer == 1 and sparse:  # mel bands of `ft` spectrograms: 2-D views, the same product
        # as below without its per-slice indexing (~5 us of a sample's ~20 us of Python)
        x = torch.from_numpy(np.ascontiguousarray(inp).reshape(extent, inner))
        # (a NumPy reshape where it is a view: torch's view op would release the GIL)
        dst = torch.from_numpy(out.reshape(-1, inner)) if out.flags.c_contiguous else \
            torch.from_numpy(out).view(-1, inner)  # fmt: skip
        torch.mm(matrix, x, out=dst)
        return
    x = torch.from_numpy(np.ascontiguousarray(inp).reshape(outer, extent, inner))
    dst = torch.from_numpy(out).view(outer, matrix.shape[0], inner)
    if sparse:
        for o in range(outer):  # no temporary + copy
            torch.mm(matrix, x[o], out=dst[o])
    else:
        torch.matmul(matrix, x, out=dst)
