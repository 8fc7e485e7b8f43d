"""erase: fill boxes of each sample with a value (DALI `erase`).

`anchor` and `shape` list the regions' coordinates on the selected axes, region after region
(`y0, x0, y1, x1, ...` for `axis_names="HW"`). On each axis a region covers
`[floor(a), floor(a + s))` after relative scaling (`normalized*`) and centring
(`centered_anchor`), clipped to the sample; axes not listed are fully covered. Fill values are
converted to the sample type with wrap-around (300 -> 44 for uint8), as in DALI.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _axes(call: Call, layout: str | None, ndim: int) -> list[int]:
    """Axis indices the coordinates refer to (axis_names has priority over axes)."""
    if "axis_names" in call.given or "axes" not in call.given:
        names = call.axis_names
        if layout is None:
            raise call.error(
                f"argument 'axis_names' ('{names}') needs a layout, but the input "
                f"({ndim}-D) has none; pass axes=[...] or give the input a layout"
            )
        missing = [c for c in names if c not in layout]
        if missing:
            raise call.error(
                f"argument 'axis_names': axis '{missing[0]}' is not in the input layout '{layout}'"
            )
        return [layout.index(c) for c in names]
    axes = [int(a) + ndim if int(a) < 0 else int(a) for a in call.axes]
    bad = [a for a in axes if not 0 <= a < ndim]
    if bad:
        raise call.error(f"argument 'axes': axis {bad[0]} is out of range for {ndim}-D input")
    return axes


def _regions(call: Call, i: int, axes: list[int], shape: np.ndarray) -> np.ndarray:
    """`[R, ndim, 2]` (start, end) of sample `i`'s regions, clipped to `shape`."""
    anchor: np.ndarray = np.asarray(
        call.anchor[i] if call.anchor is not None else [], np.float64
    ).ravel()
    size: np.ndarray = np.asarray(
        call.shape[i] if call.shape is not None else [], np.float64
    ).ravel()
    if anchor.size != size.size:
        raise call.error(
            f"sample {i}: arguments 'anchor' ({anchor.size} values) and 'shape' "
            f"({size.size} values) must have the same length",
            RuntimeError,
        )
    k = len(axes)
    if k == 0:
        raise call.error("arguments 'axes' / 'axis_names' select no axis to erase along",
                         RuntimeError)  # fmt: skip
    if anchor.size % k:
        raise call.error(
            f"sample {i}: argument 'anchor' has {anchor.size} values; expected a "
            f"multiple of {k} (one per axis in {axes})",
            RuntimeError,
        )
    # float32 arithmetic, as DALI 2.4 (fits 2400 recorded random regions; float64 misses some
    # where a + s lands on an integer, e.g. 0.39 * 10 + 0.01 * 10 erases nothing)
    anchor, size = anchor.reshape(-1, k).astype(np.float32), size.reshape(-1, k).astype(np.float32)
    ext = shape[axes].astype(np.float32)
    if call.normalized or call.normalized_anchor:
        anchor = anchor * ext
    if call.normalized or call.normalized_shape:
        size = size * ext
    if call.centered_anchor:
        anchor = anchor - size * np.float32(0.5)
    regions = np.zeros((len(anchor), len(shape), 2), np.int64)
    regions[:, :, 1] = shape
    start, end = np.floor(anchor), np.floor(anchor + size)
    regions[:, axes, 0] = np.clip(start, 0, ext)
    regions[:, axes, 1] = np.clip(end, 0, ext)
    return regions


def _fills(call: Call, layout: str | None, shapes: np.ndarray) -> list[np.ndarray]:
    dtype = call.inputs[0].dtype.numpy_dtype
    out = []
    for i in range(call.batch_size):
        fill = np.asarray(call.fill_value[i], np.float64).ravel()
        if fill.size != 1:
            if layout is None or "C" not in layout:
                raise call.error(
                    f"argument 'fill_value' sample {i}: {fill.size} values need a "
                    "channel axis 'C' in the layout; give one value"
                )
            channels = int(shapes[i, layout.index("C")])
            if fill.size != channels:
                raise call.error(
                    f"argument 'fill_value' sample {i}: expected 1 or {channels} "
                    f"values (one per channel); got {fill.size}"
                )
        if dtype.kind != "f" and not (np.abs(fill) < 2.0**63).all():  # (False for NaN)
            raise call.error(f"argument 'fill_value' sample {i}: NaN, infinity or values "
                             f"beyond int64 cannot fill a {dtype} input")  # fmt: skip
        out.append(fill.astype(dtype) if dtype.kind == "f" else
                   np.trunc(fill).astype(np.int64).astype(dtype))  # fmt: skip
    return out


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if call.normalized and ("normalized_anchor" in call.given or "normalized_shape" in call.given):
        raise call.error(
            "argument 'normalized' cannot be combined with 'normalized_anchor' or "
            "'normalized_shape'",
            RuntimeError,
        )
    layout = inp.layout
    if layout is None and inp.ndim == 3:
        layout = "HWC"
    axes = _axes(call, layout, inp.ndim)
    call.derive(
        "erase_regions",
        [_regions(call, i, axes, inp.shapes[i]) for i in range(call.batch_size)],
        per_sample=True,
    )
    call.derive("erase_fill", _fills(call, layout, inp.shapes), per_sample=True)
    call.derive("erase_channel_axis", layout.index("C") if layout and "C" in layout else -1)
    return OutputSpec(inp.dtype, inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="erase",
    doc="Erases (fills with a value) one or more boxes of each sample.",
    inputs=(Input("input"),),
    args=(
        Arg("anchor", "float", per_sample=True, vector=True,
            doc="Region starts, concatenated per region, on the selected axes."),
        Arg("shape", "float", per_sample=True, vector=True,
            doc="Region extents, same arrangement as anchor."),
        Arg("axis_names", "str", default="HW",
            doc="Axes the coordinates refer to, by layout name (has priority over axes)."),
        Arg("axes", "int", default=[1, 0], vector=True, doc="Axes by index (alternative)."),
        Arg("fill_value", "float", default=[0.0], per_sample=True, vector=True,
            doc="One value, or one per channel."),
        Arg("normalized", "bool", default=False,
            doc="anchor and shape are fractions of the extents."),
        Arg("normalized_anchor", "bool", default=False, doc="anchor is relative."),
        Arg("normalized_shape", "bool", default=False, doc="shape is relative."),
        Arg("centered_anchor", "bool", default=False, doc="anchor is the region centre."),
    ),
    infer=_infer,
)  # fmt: skip
