"""random_bbox_crop on the GPU: the windows were searched on the host (infer, as DALI does on
its CPU backend); this uploads the results in one host-to-device transfer and places them.

Only the kept labels come from device data: one gather launch over the batch.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts
from ndd_triton.ops import random_bbox_crop
from ndd_triton.ops.schema import Call

GATHER_BLOCK = 128


@triton.jit
def _gather_labels_kernel(src, dst, samples, index, tiles, BLOCK: tl.constexpr):
    """dst[out_off + j] = src[in_off + index[idx_off + j]] for BLOCK kept boxes of a sample."""
    s, tile = _helper_find_tile(tiles)
    j = tile.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    row = samples + s.to(tl.int64) * 4
    mask = j < tl.load(row + 3)
    k = tl.load(index + tl.load(row + 2) + j, mask=mask, other=0)
    tl.store(dst + tl.load(row + 1) + j, tl.load(src + tl.load(row) + k, mask=mask), mask=mask)


def _packed(values: list[np.ndarray], offsets: np.ndarray, dtype: type, total: int) -> np.ndarray:
    """Per-sample arrays laid out at their output offsets in one flat host array."""
    flat = np.zeros(total, dtype)
    for off, v in zip(offsets, values, strict=True):
        v = np.asarray(v, dtype).reshape(-1)
        flat[int(off):int(off) + v.size] = v
    return flat


@register(random_bbox_crop.schema, "gpu")
def random_bbox_crop_gpu(run: GpuRun, out: tuple, *rest: object) -> None:
    """One upload of anchors, shapes, boxes and indices; one launch gathers the labels."""
    arg: Call = rest[-1]  # type: ignore[assignment]
    labels: GpuBatch | None = rest[1] if len(rest) > 2 else None  # type: ignore[assignment]
    outs: list[GpuBatch] = list(out)
    keeps = [np.asarray(k, np.int32) for k in arg.crop_indices]
    values = [arg.crop_anchor, arg.crop_shape_out, arg.crop_boxes]
    dtypes: list[type] = [np.float32, np.float32, np.float32]
    index_out = outs[4] if labels is not None and len(outs) > 4 else \
        (outs[3] if labels is None and len(outs) > 3 else None)  # fmt: skip
    targets = outs[:3] + ([index_out] if index_out is not None else [])
    if index_out is not None:
        values.append(keeps)
        dtypes.append(np.int32)
    hosts = [_packed(v, o.offsets, d, int(o.data.numel()))
             for v, o, d in zip(values, targets, dtypes, strict=True)]  # fmt: skip
    index_offsets = np.concatenate([[0], np.cumsum([len(k) for k in keeps])[:-1]]).astype(np.int64)
    index_flat = np.concatenate(keeps) if keeps else np.zeros(0, np.int32)
    device = run.upload(*hosts, np.ascontiguousarray(index_flat, np.int32))
    for target, view in zip(targets, device[:-1], strict=True):
        target.data.copy_(view)
    if labels is not None:
        counts = np.array([len(k) for k in keeps], np.int64)
        samples = np.stack([labels.offsets, outs[3].offsets, index_offsets, counts], axis=1)
        tiles = tile_starts(-(-counts // GATHER_BLOCK))
        run.launch(_gather_labels_kernel, (grid_of(tiles),), labels.data, outs[3].data,
                   np.ascontiguousarray(samples, np.int64), device[-1], tiles,
                   BLOCK=GATHER_BLOCK)  # fmt: skip
