"""lookup_table on the GPU: one launch; the default value is stored after the table's last key."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import lookup_table
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
SIZE: tl.constexpr = tl.constexpr(2)
NCOL: tl.constexpr = tl.constexpr(3)
TILE = 1024


@triton.jit
def _lookup_kernel(src, dst, samples, table, tiles, table_len, BLOCK: tl.constexpr):
    """One tile of one sample: dst = table[src] for keys, table[table_len] (default) otherwise."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + SIZE)
    key = tl.load(src + tl.load(row + IN_OFF) + idx, mask=mask, other=0).to(tl.int64)
    key = tl.where((key >= 0) & (key < table_len), key, table_len)
    val = tl.load(table + key, mask=mask)
    tl.store(dst + tl.load(row + OUT_OFF) + idx, val, mask=mask)


@register(lookup_table.schema, "gpu")
def lookup_table_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Upload the converted table (plus the default) with the sample table; launch once."""
    with np.errstate(all="ignore"):  # values outside the output range saturate
        table = convert_numpy(np.append(arg.table, arg.default_value), out.dtype.numpy_dtype)
    samples = np.stack([inp.offsets, out.offsets, out.sizes], axis=1)
    tiles = tile_table(out.sizes, TILE)
    run.launch(_lookup_kernel, (len(tiles),), inp.data, out.data, samples, table, tiles,
               len(table) - 1, BLOCK=TILE)  # fmt: skip
