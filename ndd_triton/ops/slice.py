"""slice: extract a box from each sample, with out-of-bounds policies (DALI `slice`).

Coordinates come either from keywords (`start`/`rel_start` with `end`/`shape`/`rel_end`/
`rel_shape`) or from the positional `anchor` and `shape_input` inputs (read on the host in
prepare, as DALI reads argument inputs on the CPU). Without `axes`/`axis_names` they refer to
the axes "WH" (x first), also for the positional inputs. Relative coordinates are rounded half
up *after* adding: start = round(rel_start * E), end = round((rel_start + rel_shape) * E)
(precision as DALI's: see `_window`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.ops._axes import resolve_axes, uniform_vector
from ndd_triton.ops._tensor_args import cxx_cast
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

POLICIES = ("error", "pad", "constant", "edge", "clamp", "reflect", "reflect_1001",
            "reflect_101", "wrap", "trim_to_shape")  # fmt: skip
# Kernel codes of the policies that read outside the input (aliases share one code).
INSIDE, PAD, EDGE, REFLECT_1001, REFLECT_101, WRAP = range(6)
POLICY_CODES = {"error": INSIDE, "trim_to_shape": INSIDE, "pad": PAD, "constant": PAD,
                "edge": EDGE, "clamp": EDGE, "reflect": REFLECT_1001, "reflect_1001": REFLECT_1001,
                "reflect_101": REFLECT_101, "wrap": WRAP}  # fmt: skip
_KEYWORDS = ("start", "end", "shape", "rel_start", "rel_end", "rel_shape")


def _slice_axes(call: Call, ndim: int, layout: str | None) -> list[int]:
    axes = resolve_axes(call, uniform_vector(call, "axes"), call.axis_names, ndim, layout)
    if axes is not None:
        return axes
    if not layout:
        if ndim < 2:
            raise call.error(f"Axis 'W' is not present: input 0 has {ndim} dimension(s) and no "
                             "layout, and the default axes are 'WH' ([1, 0]); pass axes=[0]",
                             RuntimeError)  # fmt: skip
        return [1, 0]
    for name in "WH":
        if name not in layout:
            raise call.error(
                f"Axis '{name}' is not present in the input layout '{layout}' (the "
                "default axes are 'WH'); pass axes or axis_names",
                RuntimeError,
            )
    return [layout.index("W"), layout.index("H")]


def _coordinate(call: Call, name: str, i: int, count: int, rel: bool) -> tuple[np.ndarray, bool]:
    values = call.values[name]
    vec = np.asarray(values[i], dtype=np.float32 if rel else np.float64).reshape(-1)
    if vec.size != count:
        raise call.error(f"argument '{name}' sample {i}: expected {count} values (one per "
                         f"sliced axis); got {vec.size}")  # fmt: skip
    return vec.astype(np.float64), rel


def _positional(call: Call, k: int, i: int, count: int) -> tuple[np.ndarray, bool]:
    meta = call.inputs[k]
    assert meta is not None
    assert meta.values is not None
    what = "anchor" if k == 1 else "shape"
    vec = np.asarray(meta.values[i]).reshape(-1)
    if vec.dtype.kind not in "iuf":
        raise call.error(f"input '{what}' sample {i} must be int or float; got {vec.dtype}",
                         TypeError)  # fmt: skip
    if vec.size != count:
        raise call.error(f"input '{what}' sample {i}: expected {count} values (one per sliced "
                         f"axis); got {vec.size}")  # fmt: skip
    normalized = call.normalized_anchor if k == 1 else call.normalized_shape
    rel = vec.dtype.kind == "f" and bool(normalized)
    return vec.astype(np.float32 if rel else np.float64).astype(np.float64), rel


def _check_sources(call: Call) -> bool:
    """Validate which coordinate sources were given; True for the positional inputs."""
    positional = [call.inputs[k] is not None for k in (1, 2)] if len(call.inputs) > 2 else [0, 0]
    keywords = [name for name in _KEYWORDS if call.values.get(name) is not None]
    if any(positional) and keywords:
        raise call.error(
            f"the positional anchor/shape inputs and the keyword coordinates "
            f"({', '.join(keywords)}) are mutually exclusive",
            RuntimeError,
        )
    if any(positional) and not all(positional):
        raise call.error("the positional 'anchor' and 'shape' inputs must be given together",
                         RuntimeError)  # fmt: skip
    for pair in (("start", "rel_start"),):
        if all(call.values.get(p) is not None for p in pair):
            raise call.error(f"arguments '{pair[0]}' and '{pair[1]}' are mutually exclusive",
                             RuntimeError)  # fmt: skip
    ends = [n for n in ("end", "shape", "rel_end", "rel_shape") if call.values.get(n) is not None]
    if len(ends) > 1:
        raise call.error(
            f"arguments {', '.join(repr(e) for e in ends)} are mutually exclusive; "
            "give one of end, shape, rel_end, rel_shape",
            RuntimeError,
        )
    if not any(positional) and not keywords:
        raise call.error(
            "no slice coordinates given; pass start/end/shape (or rel_start/rel_end"
            "/rel_shape), or the positional anchor and shape inputs",
            RuntimeError,
        )
    return all(positional)


def _round(call: Call, x: np.ndarray) -> np.ndarray:
    if not (np.abs(x) < 2.0**62).all():  # (False for NaN)
        raise call.error(f"the window from {_coordinate_args(call)} is beyond the int64 range: "
                         f"{x.tolist()}")  # fmt: skip
    return np.floor(x + 0.5).astype(np.int64)


def _coordinate_args(call: Call) -> str:
    """The slice coordinates the call gave, for messages ('rel_start', 'shape', ...)."""
    names = [n for n in ("start", "rel_start", "end", "rel_end", "shape", "rel_shape")
             if n in call.given]  # fmt: skip
    return ", ".join(f"'{n}'" for n in names) if names else "the anchor and shape inputs"


def _window(call: Call, i: int, extents: np.ndarray, positional: bool
            ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Start and end (absolute, integer) of sample `i` on each sliced axis."""
    count = len(extents)
    zero = (np.zeros(count), False)
    end_kind = "end"
    if positional:
        start, (end_v, end_rel) = _positional(call, 1, i, count), _positional(call, 2, i, count)
        end_kind = "shape"
    else:
        start = (
            _coordinate(call, "start", i, count, False)
            if call.start is not None
            else _coordinate(call, "rel_start", i, count, True)
            if call.rel_start is not None
            else zero
        )
        end_v, end_rel = extents.astype(np.float64), False
        for name in ("end", "shape", "rel_end", "rel_shape"):
            if call.values.get(name) is not None:
                end_v, end_rel = _coordinate(call, name, i, count, name.startswith("rel"))
                end_kind = name.removeprefix("rel_")
    # Relative coordinates, as recorded from DALI 2.4 at exact .5 ties (700 cases): keyword
    # starts and ends scale in float32 (0.35 * 10 -> 3.5 -> 4); a relative start + shape ends
    # at (start + shape) * extent in double; positional anchors scale in double too.
    start_v, start_rel = start
    ext32 = extents.astype(np.float32)
    f32 = np.float32
    if start_rel and positional:
        start_f = start_v.astype(f32).astype(np.float64) * extents
    else:
        start_f = (start_v.astype(f32) * ext32).astype(np.float64) if start_rel else start_v
    if end_kind == "end":
        end_f = (end_v.astype(f32) * ext32).astype(np.float64) if end_rel else end_v
    elif end_rel and start_rel:
        end_f = (start_v.astype(f32).astype(np.float64) + end_v.astype(f32)) * extents
    else:
        end_f = start_f + ((end_v.astype(f32) * ext32).astype(np.float64) if end_rel else end_v)
    return _round(call, start_f), _round(call, end_f)


def _positional_windows(call: Call, extents: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """`_window` of every sample from the positional inputs at once (`extents`: `[N, count]`;
    the same element-wise steps), when every window lies inside its sample; None sends the
    batch through the per-sample path (other dtypes or sizes, windows outside, errors).
    Per sample, NumPy's call overhead cost ~2 us per image in the detection recipe."""
    n, count = extents.shape
    values = []
    for k in (1, 2):
        meta = call.inputs[k]
        assert meta is not None
        assert meta.values is not None
        vecs = [np.asarray(v).reshape(-1) for v in meta.values]
        if n == 0 or any(v.size != count or v.dtype != vecs[0].dtype for v in vecs) or \
                vecs[0].dtype.kind not in "iuf":  # fmt: skip
            return None
        rel = vecs[0].dtype.kind == "f" and bool(
            call.normalized_anchor if k == 1 else call.normalized_shape)
        values.append((np.stack(vecs).astype(np.float32 if rel else np.float64)
                       .astype(np.float64), rel))  # fmt: skip
    (start_v, start_rel), (end_v, end_rel) = values
    f32 = np.float32
    start_f = start_v.astype(f32).astype(np.float64) * extents if start_rel else start_v
    if end_rel and start_rel:
        end_f = (start_v.astype(f32).astype(np.float64) + end_v.astype(f32)) * extents
    else:
        end_f = start_f + ((end_v.astype(f32) * extents.astype(f32)).astype(np.float64)
                           if end_rel else end_v)  # fmt: skip
    if not ((np.abs(start_f) < 2.0**62).all() and (np.abs(end_f) < 2.0**62).all()):
        return None
    begin, end = np.floor(start_f + 0.5).astype(np.int64), np.floor(end_f + 0.5).astype(np.int64)
    if (end < begin).any() or (begin < 0).any() or (end > extents).any():
        return None
    return begin, end


def _apply_policy(call: Call, policy: str, i: int, axes: list[int], extents: np.ndarray,
                  begin: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    for k, axis in enumerate(axes):
        if end[k] < begin[k]:
            raise call.error(f"sample {i} axis {axis}: the slice end {end[k]} is before its "
                             f"start {begin[k]}")  # fmt: skip
        outside = begin[k] < 0 or end[k] > extents[k]
        if not outside:
            continue
        if policy == "error":
            raise call.error(f"Slice can't be placed out of bounds with out_of_bounds_policy="
                             f"'error': sample {i} axis {axis}: window [{begin[k]}, {end[k]}) vs "
                             f"extent {extents[k]} (from {_coordinate_args(call)}); pass "
                             "another out_of_bounds_policy",
                             RuntimeError)  # fmt: skip
        if policy == "trim_to_shape":
            begin[k] = min(max(begin[k], 0), extents[k])
            end[k] = max(min(end[k], extents[k]), begin[k])
        elif POLICY_CODES[policy] != PAD and extents[k] == 0 and end[k] > begin[k]:
            raise call.error(f"sample {i} axis {axis}: out_of_bounds_policy='{policy}' needs "
                             "a non-empty input extent", RuntimeError)  # fmt: skip
    return begin, end


def _convert_fill(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Fill values in the output dtype as DALI 2.4 converts them: truncated and wrapped
    (`cxx_cast`: u8 114.8 -> 114, -5 -> 251, 300 -> 44)."""
    return cxx_cast(values, dtype)


def _fill(call: Call, layout: str | None, shapes: np.ndarray, dtype: Any) -> tuple[Any, int]:
    """Fill values converted to the output dtype, and the channel axis they index (-1: none)."""
    values = np.asarray(call.fill_values, dtype=np.float64).reshape(-1)
    converted = _convert_fill(values, np.dtype(dtype))
    if values.size <= 1:
        return converted.reshape(1) if values.size else np.zeros(1, dtype), -1
    if not layout or "C" not in layout:
        raise call.error(
            f"argument 'fill_values' has {values.size} values (one per channel) "
            "but input 0 has no 'C' axis in its layout; pass one value"
        )
    channel = layout.index("C")
    for i, extent in enumerate(shapes[:, channel]):
        if extent != values.size:
            raise call.error(
                f"argument 'fill_values' has {values.size} values but sample {i} "
                f"has {extent} channels; pass one value or one per channel"
            )
    return converted, channel


def _infer(call: Call) -> OutputSpec:
    data = call.inputs[0]
    positional = _check_sources(call)
    axes = _slice_axes(call, data.ndim, data.layout)
    policy = call.out_of_bounds_policy
    shapes = data.shapes.copy()
    anchors = np.zeros_like(shapes)
    windows = _positional_windows(call, data.shapes[:, axes]) if positional else None
    if windows is not None:
        anchors[:, axes] = windows[0]
        shapes[:, axes] = windows[1] - windows[0]
    for i in range(call.batch_size if windows is None else 0):
        extents = data.shapes[i, axes]
        begin, end = _window(call, i, extents, positional)
        begin, end = _apply_policy(call, policy, i, axes, extents, begin, end)
        anchors[i, axes] = begin
        shapes[i, axes] = end - begin
    dtype = data.dtype if call.dtype is None else call.dtype
    fill, channel = _fill(call, data.layout, shapes, dtype.numpy_dtype)
    call.derive("anchor_full", anchors, per_sample=True)
    call.derive("policy_code", POLICY_CODES[policy])
    call.derive("fill", fill)
    call.derive("channel_axis", channel)
    return OutputSpec(dtype, shapes, data.layout)


_COORD_DOC = " per sliced axis (in the order of `axes`; default 'WH', x first)."
schema = OpSchema(
    name="slice",
    doc="Extracts a box from each sample; coordinates are absolute or relative, given as "
    "keywords or as the positional `anchor` and `shape` inputs.",
    inputs=(
        Input("data", doc="Samples of any rank >= 1 and any dtype."),
        Input(
            "anchor",
            optional=True,
            host_values=True,
            doc="1-D start per sliced axis (float: relative unless normalized_anchor=False).",
        ),
        Input(
            "shape_input",
            optional=True,
            host_values=True,
            doc="1-D extent per sliced axis (float: relative unless normalized_shape=False).",
        ),
    ),
    args=(
        Arg("start", "int", per_sample=True, vector=True, doc="Absolute start" + _COORD_DOC),
        Arg(
            "end", "int", per_sample=True, vector=True, doc="Absolute end (exclusive)" + _COORD_DOC
        ),
        Arg("shape", "int", per_sample=True, vector=True, doc="Absolute extent" + _COORD_DOC),
        Arg("rel_start", "float", per_sample=True, vector=True, doc="Relative start" + _COORD_DOC),
        Arg("rel_end", "float", per_sample=True, vector=True, doc="Relative end" + _COORD_DOC),
        Arg("rel_shape", "float", per_sample=True, vector=True, doc="Relative extent" + _COORD_DOC),
        Arg(
            "axes",
            "int",
            per_sample=True,
            vector=True,
            doc="Axes the coordinates refer to, in order; default [1, 0] ('WH').",
        ),
        Arg("axis_names", "layout", doc="Axes the coordinates refer to, by layout letter."),
        Arg(
            "normalized_anchor",
            "bool",
            default=True,
            doc="Float positional anchors are fractions of the extent (else absolute).",
        ),
        Arg(
            "normalized_shape",
            "bool",
            default=True,
            doc="Float positional shapes are fractions of the extent (else absolute).",
        ),
        Arg(
            "out_of_bounds_policy",
            "str",
            default="error",
            choices=POLICIES,
            doc="What to read outside the input: error, pad/constant, edge/clamp, reflect/"
            "reflect_1001, reflect_101, wrap, or trim_to_shape (shrink the window).",
        ),
        Arg(
            "fill_values",
            "float",
            default=[0.0],
            vector=True,
            doc="Padding value(s) for 'pad': one, or one per channel.",
        ),
        Arg(
            "dtype",
            "dtype",
            doc="Output dtype (default: the input's); converted with rounding and saturation.",
        ),
    ),
    infer=_infer,
)
