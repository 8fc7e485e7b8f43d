"""lookup_table on the GPU: one streaming launch; the default is stored after the last key.

The batch is one flat stream (`_stream.py`): keys are loaded 16 bytes per lane on full tiles,
each key gathers its value from the small uploaded table (cache-resident).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._stream import (
    _helper_stream_tile,
    block_for,
    input_view,
    plan_stream,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import lookup_table
from ndd_triton.ops.schema import Call

DELTA: tl.constexpr = tl.constexpr(2)  # after S_START, S_END: key index - stream index
NCOL: tl.constexpr = tl.constexpr(3)


@triton.jit
def _helper_lookup(keys, table, table_len):
    """table[key] for keys in [0, table_len), table[table_len] (the default) otherwise."""
    key = keys.to(tl.int64)
    key = tl.where((key >= 0) & (key < table_len), key, table_len)
    return tl.load(table + key)


@triton.jit
def _lookup_kernel(src, dst, samples, table, tiles, total, table_len, BLOCK: tl.constexpr,
                   GLOBAL: tl.constexpr, SAME: tl.constexpr):  # fmt: skip
    """dst[g] = table[src[g (+ delta)]] for the stream elements g = start + lane of one tile."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL, BLOCK, GLOBAL)
    offs = tl.arange(0, BLOCK)
    if SAME:  # noqa: SIM108 (a static if: Triton compiles one branch)
        src = src + start
    else:
        src = src + (tl.load(row + DELTA) + start)
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised
        tl.store(dst + start + offs, _helper_lookup(tl.load(src + offs), table, table_len))
    else:
        mask = (offs >= (lo - start).to(tl.int32)) & (offs < (hi - start).to(tl.int32))
        keys = tl.load(src + offs, mask=mask, other=0)
        tl.store(dst + start + offs, _helper_lookup(keys, table, table_len), mask=mask)


@register(lookup_table.schema, "gpu", replay=True)
def lookup_table_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Upload the converted table (plus the default) with the sample table; launch once."""
    with np.errstate(all="ignore"):  # values outside the output range saturate
        table = convert_numpy(np.append(arg.table, arg.default_value), out.dtype.numpy_dtype)
    block = block_for(inp.data.dtype, out.data.dtype)
    view, delta, same = input_view(inp, out)
    plan = plan_stream(out, block, global_ok=same)
    samples, tiles = plan.tables(delta)
    run.launch(
        _lookup_kernel,
        (plan.grid,),
        view,
        plan.out,
        samples,
        table,
        tiles,
        plan.total,
        len(table) - 1,
        BLOCK=block,
        GLOBAL=plan.is_global,
        SAME=same,
    )
