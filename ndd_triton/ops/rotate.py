"""rotate: rotate each image about its centre (DALI `rotate`).

Only the host side lives here: the per-sample inverse map and canvas size
(`ops/_affine.py`); the pixels go through warp_affine's kernels. Volumes (DHWC, FDHWC) rotate
about `axis` (x, y, z); their canvas generalises the 2-D rule (bounding box, parity of the
input extent contributing most), checked only against the spec's 4x6x8 example.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops import _affine
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec


def _volume_maps(call: Call, angle: np.ndarray, in_dhw: np.ndarray) -> tuple[np.ndarray, ...]:
    """3x4 inverse maps and (D, H, W) canvases of a volume batch (axis-angle rotations)."""
    if call.axis is None:
        raise call.error("Argument axis is required for volumes (DHWC)", RuntimeError)
    n = call.batch_size
    out = _affine.output_sizes(call, in_dhw)
    maps, sizes = np.zeros((n, 3, 4)), np.zeros((n, 3), np.int64)
    for i in range(n):
        axis = np.asarray(call.axis[i], np.float64).reshape(-1)
        if axis.size != 3 or not np.isfinite(axis).all() or not axis.any():
            raise call.error(
                f"argument 'axis' sample {i}: expected a non-zero (x, y, z) vector; got "
                f"{axis.tolist()}"
            )
        rot = _affine.rotation_3d(float(angle[i]), axis)
        sizes[i] = (
            in_dhw[i]
            if call.keep_size
            else out[i]
            if out is not None
            else _affine.rotated_canvas_3d(rot, in_dhw[i])
        )
        maps[i] = _affine.rotation_inverse_3d(rot, in_dhw[i], sizes[i])
    return maps, sizes


def _infer(call: Call) -> OutputSpec:
    layout = call.inputs[0].layout or "HWC"
    in_hw = _affine.spatial_hw(call)
    angle = np.asarray(call.angle, np.float64).reshape(call.batch_size)
    bad = np.flatnonzero(~np.isfinite(angle))
    if bad.size:
        raise call.error(
            f"argument 'angle' sample {int(bad[0])}: expected a finite angle in "
            f"degrees; got {angle[bad[0]]}"
        )
    if "D" in layout:
        maps, canvases = _volume_maps(call, angle, in_hw)
        return OutputSpec(
            _affine.output_dtype(call), _affine.derive_affine(call, maps, canvases), layout
        )
    if call.axis is not None:
        raise call.error(
            f"argument 'axis' applies to volumes (DHWC); got an input with layout {layout}"
        )
    out_hw = _affine.output_sizes(call, in_hw)
    if call.keep_size:
        out_hw = in_hw.copy()
    elif out_hw is None:
        out_hw = _affine.rotated_canvases(angle, in_hw)
    inverse = _affine.rotation_inverse(angle, in_hw, out_hw)
    shapes = _affine.derive_affine(call, inverse, out_hw)
    return OutputSpec(_affine.output_dtype(call), shapes, layout)


schema = OpSchema(
    name="rotate",
    doc="Rotates each image about its centre by `angle` degrees (counter-clockwise as "
        "displayed), on a canvas that fits the rotated image unless `size`/`keep_size` say "
        "otherwise.",
    inputs=(Input("input", layouts=_affine.AFFINE_LAYOUTS, dtypes=_affine.AFFINE_DTYPES),),
    args=(
        Arg("angle", "float", default=REQUIRED, per_sample=True, per_frame=True,
            doc="Rotation angle in degrees."),
        Arg("axis", "float", per_sample=True, vector=True,
            doc="Rotation axis (x, y, z) of volumes (DHWC; required there); need not be "
                "normalised. Not for 2-D images."),
        Arg("size", "float", per_sample=True, vector=True,
            doc="Output (H, W), rounded; default: the bounding box of the rotated image, each "
                "extent keeping the parity of the input extent."),
        Arg("keep_size", "bool", default=False, doc="Output has the input size."),
        *_affine.sampling_args(),
    ),
    infer=_infer,
)  # fmt: skip
