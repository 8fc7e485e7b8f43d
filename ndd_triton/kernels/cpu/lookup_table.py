"""lookup_table on the CPU: NumPy fancy indexing into the dense table."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import lookup_table
from ndd_triton.ops.schema import SampleArgs


@register(lookup_table.schema, "cpu")
def lookup_table_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """out = table[inp] where inp is a key, the default elsewhere."""
    with np.errstate(all="ignore"):  # values outside the output range saturate
        table = convert_numpy(arg.table, out.dtype)
        default = convert_numpy(np.array([arg.default_value]), out.dtype)[0]
    ids = inp.astype(np.int64)  # u64 above INT64_MAX wraps negative: not a key either way
    known = (ids >= 0) & (ids < len(table))
    out[...] = np.where(known, table[np.where(known, ids, 0)], default)
