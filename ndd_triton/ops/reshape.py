"""reshape: reinterpret the shape of every sample without moving data (ops.md §4.4).

The new shape comes from `shape`, `rel_shape` (relative to the input extents, optionally taken
from `src_dims`), the `shape_input` positional input or `src_dims` alone; one entry may be -1
(inferred from the volume). The layout is `layout` if given, else kept when the number of
dimensions is unchanged and cleared otherwise.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops._tensor_args import sample_rows
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _base_extents(call: Call, i: int, src: np.ndarray, src_dims: np.ndarray | None) -> list[int]:
    """The input extents the output is built from (all of them, or those named by src_dims)."""
    if src_dims is None:
        return [int(v) for v in src]
    ndim = len(src)
    for d in src_dims:
        if not -1 <= d < ndim:
            raise call.error(f"argument 'src_dims' sample {i}: {int(d)} is not a valid input "
                             f"dimension for {ndim}-D input (expected -1..{ndim - 1})",
                             RuntimeError)  # fmt: skip
    for d in range(ndim):
        if d not in src_dims and src[d] != 1:
            raise call.error(f"argument 'src_dims' sample {i}: input dimension {d} (extent "
                             f"{int(src[d])}) is omitted but its extent is not 1",
                             RuntimeError)  # fmt: skip
    return [int(src[d]) if d >= 0 else 1 for d in src_dims]


def _wanted(call: Call, i: int, base: list[int], shape: np.ndarray | None,
            rel: np.ndarray | None) -> list[float]:  # fmt: skip
    if shape is not None:
        return [float(v) for v in shape]
    if rel is None:
        return [float(v) for v in base]
    if len(rel) > len(base):
        raise call.error(f"argument 'rel_shape' sample {i} has {len(rel)} entries but the "
                         f"source has only {len(base)} dimensions", RuntimeError)  # fmt: skip
    return [-1.0 if r == -1 else float(np.copysign(np.floor(abs(b * r) + 0.5), b * r))
            for b, r in zip(base, rel, strict=False)]  # fmt: skip


def _resolve(call: Call, i: int, wanted: list[float], volume: int, what: str) -> list[int]:
    """Fill the -1 entry from the volume and check that the volume is unchanged."""
    unknown = [k for k, v in enumerate(wanted) if v == -1]
    if len(unknown) > 1:
        raise call.error(f"{what} sample {i}: only one extent may be -1; got {wanted}",
                         RuntimeError)  # fmt: skip
    if any(v < 0 and v != -1 for v in wanted):
        raise call.error(f"{what} sample {i}: extents must be non-negative (or -1); got "
                         f"{[int(v) for v in wanted]}", RuntimeError)  # fmt: skip
    out = [int(v) for v in wanted]
    if unknown:
        known = int(np.prod([v for k, v in enumerate(out) if k != unknown[0]], dtype=np.int64))
        if known == 0 or volume % known:
            raise call.error(f"{what} sample {i}: cannot infer the -1 extent of {out} from "
                             f"{volume} elements", RuntimeError)  # fmt: skip
        out[unknown[0]] = volume // known
    if int(np.prod(out, dtype=np.int64)) != volume:
        raise call.error(
            f"Input and output samples must occupy the same size in bytes; "
            f"sample {i}: the input has {volume} elements, the requested shape "
            f"{tuple(out)} has {int(np.prod(out, dtype=np.int64))}",
            RuntimeError,
        )
    return out


def _sources(call: Call) -> list[str]:
    given = [("shape", call.shape is not None), ("rel_shape", call.rel_shape is not None),
             ("shape_input", len(call.inputs) > 1 and call.inputs[1] is not None)]  # fmt: skip
    return [name for name, present in given if present]


def _shape_rows(call: Call, n: int) -> tuple[list[np.ndarray] | None, list[np.ndarray] | None]:
    shape_in = call.inputs[1] if len(call.inputs) > 1 else None
    if shape_in is not None:
        if shape_in.dtype.is_float or shape_in.ndim != 1:
            raise call.error(f"input 1 (shape_input) must be a 1-D integer tensor per sample; "
                             f"got {shape_in.ndim}-D {shape_in.dtype}", RuntimeError)  # fmt: skip
        return [np.asarray(v).reshape(-1) for v in shape_in.values or []], None
    shape = sample_rows(call.shape, n) if call.shape is not None else None
    rel = sample_rows(call.rel_shape, n) if call.rel_shape is not None else None
    return shape, rel


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    n = call.batch_size
    sources = _sources(call)
    if len(sources) > 1:
        raise call.error(f"{', '.join(sources)} are mutually exclusive; give only one of "
                         "'shape', 'rel_shape' and the shape input", RuntimeError)  # fmt: skip
    if not sources and call.src_dims is None and call.layout is None:
        raise call.error("nothing to do: give 'shape', 'rel_shape', 'src_dims', a shape input "
                         "or 'layout'", RuntimeError)  # fmt: skip
    shape, rel = _shape_rows(call, n)
    src_dims = sample_rows(call.src_dims, n) if call.src_dims is not None else None
    what = f"argument '{sources[0]}'" if sources and sources[0] != "shape_input" else \
        "input 1 (shape_input)" if sources else "argument 'src_dims'"  # fmt: skip
    rows = []
    for i in range(n):
        src = inp.shapes[i]
        base = _base_extents(call, i, src, src_dims[i] if src_dims is not None else None)
        wanted = _wanted(call, i, base, shape[i] if shape is not None else None,
                         rel[i] if rel is not None else None)  # fmt: skip
        rows.append(_resolve(call, i, wanted, int(np.prod(src, dtype=np.int64)), what))
    ndims = {len(r) for r in rows}
    if len(ndims) > 1:
        raise call.error(f"{what}: every sample must get the same number of dimensions; got "
                         f"{sorted(ndims)}", RuntimeError)  # fmt: skip
    out_ndim = ndims.pop() if ndims else inp.ndim
    shapes = np.array(rows, dtype=np.int64).reshape(n, out_ndim)
    layout = inp.layout if out_ndim == inp.ndim else None
    if call.layout is not None:
        layout = call.layout or None
        if layout is not None and len(layout) != out_ndim:
            raise call.error(f"argument 'layout' {layout!r} has {len(layout)} letters but the "
                             f"output has {out_ndim} dimensions", RuntimeError)  # fmt: skip
    return OutputSpec(inp.dtype, shapes, layout)


schema = OpSchema(
    name="reshape",
    doc="Reinterprets the shape of every sample without changing its data.",
    inputs=(
        Input("data"),
        Input(
            "shape_input",
            optional=True,
            host_values=True,
            doc="1-D integer tensor per sample: the new shape (like `shape`).",
        ),
    ),
    args=(
        Arg(
            "shape",
            "int",
            vector=True,
            per_sample=True,
            doc="New shape; one entry may be -1 (inferred).",
        ),
        Arg(
            "rel_shape",
            "float",
            vector=True,
            per_sample=True,
            doc="New shape relative to the input extents (of src_dims if given); one -1 allowed.",
        ),
        Arg(
            "src_dims",
            "int",
            vector=True,
            per_sample=True,
            doc="Input dimensions that build the output; -1 inserts a size-1 dimension.",
        ),
        Arg("layout", "layout", doc="Output layout; default: kept when ndim is unchanged."),
    ),
    infer=_infer,
)
