"""multi_paste: paste regions of input images onto zeroed canvases (DALI `multi_paste`).

With one input batch and `in_ids`, output sample i receives, in order, regions of the input
samples `in_ids[i]`; without `in_ids`, it receives sample i of every input, in input order.
Region r of output i: source anchor `in_anchors[i][r]` (or relative `in_anchors_rel`), shape
`shapes[i][r]` (or `shapes_rel`; default: to the end of the source), destination
`out_anchors[i][r]` (or `out_anchors_rel`; default 0). Later regions overwrite earlier ones.
All coordinates are `(y, x)`. Infer builds one region table for the kernels:
`(out sample, input, input sample, in_y, in_x, h, w, out_y, out_x)` per row.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import DType, float32, int16, int32, uint8
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

MULTI_PASTE_DTYPES = (uint8, int16, int32, float32)
REGION_COLS = 9


def _pairs(call: Call, name: str, i: int, count: int) -> np.ndarray | None:
    """`[count, 2]` values of a per-region argument for output sample i, or None."""
    value = call.values.get(name)
    if value is None:
        return None
    v = np.asarray(value[i], np.float64)
    if v.size != 2 * count:
        raise call.error(
            f"argument '{name}' sample {i}: expected {count} (y, x) pairs (one "
            f"per region); got shape {v.shape}"
        )
    return v.reshape(count, 2)


def _sources(call: Call) -> list[list[tuple[int, int]]]:
    """Per output sample: the (input, input sample) of each region."""
    n = call.batch_size
    given = [k for k, meta in enumerate(call.inputs) if meta is not None]
    if call.in_ids is None:
        return [[(k, i) for k in given] for i in range(n)]
    if len(given) != 1:
        raise call.error(f"argument 'in_ids' needs exactly one input batch; got {len(given)}")
    size = call.inputs[0].shapes.shape[0]
    out = []
    for i in range(n):
        ids = np.asarray(call.in_ids[i], np.int64).reshape(-1)
        bad = ids[(ids < 0) | (ids >= size)]
        if bad.size:
            raise call.error(
                f"argument 'in_ids' sample {i}: index {int(bad[0])} is out of "
                f"range for {size} input samples"
            )
        out.append([(0, int(j)) for j in ids])
    return out


def _canvas(call: Call, i: int) -> np.ndarray:
    if call.output_size is not None:
        size = np.asarray(call.output_size[i], np.int64).reshape(-1)
        if size.size != 2 or (size < 0).any():
            raise call.error(
                f"argument 'output_size' sample {i}: expected (H, W) >= 0; got {size.tolist()}"
            )
        return size
    shapes = np.concatenate([m.shapes[:, :2] for m in call.inputs if m is not None])
    if not (shapes == shapes[0]).all():
        raise call.error(
            "argument 'output_size' is required when the input shapes differ", RuntimeError
        )
    return shapes[0]


def _region_rows(call: Call, i: int, sources: list[tuple[int, int]], canvas: np.ndarray
                 ) -> np.ndarray:  # fmt: skip
    count = len(sources)
    in_ext = np.array([call.inputs[k].shapes[j, :2] for k, j in sources], np.int64)
    in_ext = in_ext.reshape(count, 2)
    anchor = _pairs(call, "in_anchors", i, count)
    rel = _pairs(call, "in_anchors_rel", i, count)
    anchor = np.zeros((count, 2)) if anchor is None else anchor
    anchor = np.floor(rel * in_ext) if rel is not None else anchor
    shape = _pairs(call, "shapes", i, count)
    rel = _pairs(call, "shapes_rel", i, count)
    shape = in_ext - anchor if shape is None else shape
    shape = np.floor(rel * in_ext) if rel is not None else shape
    dst = _pairs(call, "out_anchors", i, count)
    rel = _pairs(call, "out_anchors_rel", i, count)
    dst = np.zeros((count, 2)) if dst is None else dst
    dst = np.floor(rel * canvas) if rel is not None else dst
    for what, a in (("in_anchors", anchor), ("shapes", shape), ("out_anchors", dst)):
        if not (np.abs(a) < 2.0**62).all():  # (False for NaN)
            raise call.error(f"sample {i}: arguments '{what}'/'{what}_rel' give coordinates "
                             f"beyond the int64 range: {a.tolist()}")  # fmt: skip
    anchor, shape, dst = (a.astype(np.int64) for a in (anchor, shape, dst))
    for r in range(count):
        end = anchor[r] + shape[r]
        if (anchor[r] < 0).any() or (shape[r] < 0).any() or (end > in_ext[r]).any():
            raise call.error(
                f"sample {i} region {r}: the source region {anchor[r].tolist()} + "
                f"{shape[r].tolist()} exceeds the input {in_ext[r].tolist()} (arguments "
                "'in_anchors'/'in_anchors_rel' and 'shapes'/'shapes_rel')",
                RuntimeError,
            )
        if (dst[r] < 0).any() or (dst[r] + shape[r] > canvas).any():
            raise call.error(
                f"sample {i} region {r}: The pasted region must be within output "
                f"bounds: {dst[r].tolist()} + {shape[r].tolist()} exceeds "
                f"{canvas.tolist()} (arguments 'out_anchors'/'out_anchors_rel', "
                "'shapes'/'shapes_rel' and 'output_size')",
                RuntimeError,
            )
    rows = np.zeros((count, REGION_COLS), np.int64)
    rows[:, 0] = i
    rows[:, 1:3] = np.array(sources, np.int64).reshape(count, 2)
    rows[:, 3:5], rows[:, 5:7], rows[:, 7:9] = anchor, shape, dst
    return rows


def _infer(call: Call) -> OutputSpec:
    metas = [m for m in call.inputs if m is not None]
    channels = {int(m.shapes[j, 2]) for m in metas for j in range(m.shapes.shape[0])}
    if len(channels) > 1:
        raise call.error(
            f"all inputs must have the same number of channels; got {sorted(channels)}"
        )
    dtypes = {m.dtype for m in metas}
    if len(dtypes) > 1:
        raise call.error("all inputs must have the same dtype", TypeError)
    n = call.batch_size
    sources = _sources(call)
    canvases = np.array([_canvas(call, i) for i in range(n)], np.int64).reshape(n, 2)
    rows = [_region_rows(call, i, sources[i], canvases[i]) for i in range(n)]
    table = np.concatenate(rows) if rows else np.zeros((0, REGION_COLS), np.int64)
    call.derive("paste_regions", table)
    out_dtype: DType = call.dtype or metas[0].dtype
    if out_dtype not in MULTI_PASTE_DTYPES:
        raise call.error(
            f"argument 'dtype': expected one of "
            f"{', '.join(map(str, MULTI_PASTE_DTYPES))}; got {out_dtype}"
        )
    c = channels.pop() if channels else 1
    shapes = np.concatenate([canvases, np.full((n, 1), c, np.int64)], axis=1)
    return OutputSpec(out_dtype, shapes, "HWC")


def _pairs_arg(name: str, kind: str, doc: str) -> Arg:
    return Arg(name, kind, per_sample=True, vector=True, doc=doc)


schema = OpSchema(
    name="multi_paste",
    doc="Pastes regions of input images onto zero canvases (later regions overwrite).",
    inputs=(Input("input_0", layouts=("HWC",), dtypes=MULTI_PASTE_DTYPES, doc="Images."),
            Input("inputs", variadic=True, layouts=("HWC",), dtypes=MULTI_PASTE_DTYPES,
                  doc="More image batches (without in_ids).")),
    args=(
        Arg("in_ids", "int", per_sample=True, vector=True,
            doc="With one input: the input samples pasted into each output sample."),
        Arg("output_size", "int", per_sample=True, vector=True,
            doc="Canvas (H, W); required when input shapes differ."),
        _pairs_arg("in_anchors", "int", "Source region tops-left (y, x), one pair per region."),
        _pairs_arg("in_anchors_rel", "float", "Same, relative to the input extents."),
        _pairs_arg("shapes", "int", "Region extents (h, w); default: to the end of the source."),
        _pairs_arg("shapes_rel", "float", "Same, relative to the input extents."),
        _pairs_arg("out_anchors", "int", "Destination tops-left (y, x); default (0, 0)."),
        _pairs_arg("out_anchors_rel", "float", "Same, relative to the canvas."),
        Arg("dtype", "dtype", doc="Output type (default: the input type)."),
    ),
    infer=_infer,
)  # fmt: skip
