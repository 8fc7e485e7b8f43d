"""Affine geometry shared by warp_affine and rotate (and the future fused-geometry path).

Every op of this family reduces, on the host, to one explicit **inverse map** per sample: a 2x3
matrix `M` (volumes: 3x4 in (x, y, z) = (W, H, D) order) that takes the continuous coordinates
`(x, y)` of an output pixel centre (`x + 0.5, y + 0.5`, origin at the corner of the first
pixel) to continuous source coordinates `M @ [x, y, 1]`. The kernels
(`kernels/cpu/warp_affine.py`, `kernels/gpu/warp_affine.py`) only sample the source there
(NN or bilinear, pixel centres at `i + 0.5`), with a constant `fill_value` outside the source
or clamped coordinates without one (DALI 2.4 semantics, checked against tests/golden).

What infer derives for the kernels (`derive_affine`): `affine_matrix` `[N, d, d + 1]` float64,
`affine_fill` (float or None), `affine_interp` (0 NN, 1 LINEAR).
"""

from __future__ import annotations

import math

import numpy as np

from ndd_triton.core.dtype import (
    DType,
    float32,
    int8,
    int16,
    int32,
    uint8,
    uint16,
)
from ndd_triton.ops.schema import Arg, Call

AFFINE_LAYOUTS = ("HWC", "FHWC", "DHWC", "FDHWC")
AFFINE_DTYPES = (uint8, int8, int16, uint16, int32, float32)
INTERP_NN = 0
INTERP_LINEAR = 1
_INTERP_NAMES = ("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3",
                 "INTERP_TRIANGULAR", "INTERP_GAUSSIAN")  # fmt: skip


def sampling_args() -> tuple[Arg, ...]:
    """fill_value / interp_type / dtype, common to warp_affine and rotate."""
    return (
        Arg("fill_value", "float",
            doc="Value of output pixels whose source lies outside the input; when absent, "
                "source coordinates are clamped (border pixels repeat)."),
        Arg("interp_type", "enum", default=INTERP_LINEAR, choices=tuple(range(6)),
            doc="INTERP_NN or INTERP_LINEAR (other DALIInterpType values raise)."),
        Arg("dtype", "dtype", doc="Output type (default: the input type)."),
    )  # fmt: skip


def invert(m: np.ndarray) -> np.ndarray:
    """Inverse of affine maps `[..., d, d + 1]` (as homogeneous matrices); NaN if singular."""
    d = m.shape[-2]
    full = np.zeros((*m.shape[:-2], d + 1, d + 1))
    full[..., :d, :] = m
    full[..., d, d] = 1.0
    det = np.linalg.det(full)
    ok = np.isfinite(det) & (np.abs(det) > 1e-300)
    safe = np.where(ok[..., None, None], full, np.eye(d + 1))
    inv = np.linalg.inv(safe)[..., :d, :]
    return np.where(ok[..., None, None], inv, np.nan)  # type: ignore[no-any-return]


def compose(*mats: np.ndarray) -> np.ndarray:
    """`mats[0] @ mats[1] @ ...` for affine maps `[..., 2, 3]` (the last one applies first)."""
    out = mats[0]
    for m in mats[1:]:
        lin = out[..., :, :2] @ m[..., :, :2]
        shift = (out[..., :, :2] @ m[..., :, 2:])[..., 0] + out[..., :, 2]
        out = np.concatenate([lin, shift[..., None]], axis=-1)
    return out


def rotation_inverse(angle_deg: np.ndarray, in_hw: np.ndarray, out_hw: np.ndarray) -> np.ndarray:
    """`[N, 2, 3]` inverse maps of rotate: `src = R(angle) (p - c_out) + c_in`, `c = size / 2`,
    `sx = cos*dx - sin*dy`, `sy = sin*dx + cos*dy` in y-down pixel coordinates.

    As DALI 2.4 (fitted to recorded NN ties at 30-270 degrees): the angle is converted to
    radians in float32 (as for the canvas), cos / sin of that value are rounded to float32, and
    the translation is summed in float32 as `(cos * -cx_out + -sin * -cy_out) + cx_in` (it
    decides NN ties, e.g. at 45 or 90 degrees with an odd-sized canvas).
    """
    f32 = np.float32
    rad = np.asarray(angle_deg, np.float64).astype(f32) * f32(math.pi / 180)
    cos = np.cos(rad.astype(np.float64)).astype(f32)
    sin = np.sin(rad.astype(np.float64)).astype(f32)
    cy_in, cx_in = (in_hw[:, 0] / 2.0).astype(f32), (in_hw[:, 1] / 2.0).astype(f32)
    cy_out, cx_out = (out_hw[:, 0] / 2.0).astype(f32), (out_hw[:, 1] / 2.0).astype(f32)
    m = np.zeros((len(rad), 2, 3))
    m[:, 0, 0], m[:, 0, 1] = cos, -sin
    m[:, 1, 0], m[:, 1, 1] = sin, cos
    m[:, 0, 2] = (cos * -cx_out + -sin * -cy_out) + cx_in
    m[:, 1, 2] = (sin * -cx_out + cos * -cy_out) + cy_in
    return m


def rotated_canvas(angle_deg: float, h: int, w: int) -> tuple[int, int]:
    """DALI's rotate canvas: ceil of the rotated bounding box (up to 0.01 of floating noise
    ignored), each extent raised by 1 where needed to keep the parity of the input extent it is
    closest to. As in DALI, the angle is converted to radians in float32 (sin/cos of that value
    in double): this decides which extent counts as "closest" at 45-degree multiples (45 and 225
    swap, 135 and 315 do not). Verified against DALI 2.4 on 2200 random shapes/angles
    (tools/dali_diff.py)."""
    rad = float(np.float32(angle_deg) * np.float32(math.pi / 180))
    cos, sin = abs(math.cos(rad)), abs(math.sin(rad))
    out_w = math.ceil(w * cos + h * sin - 0.01)
    out_h = math.ceil(w * sin + h * cos - 0.01)
    # Observed rule: from 45 degrees on (|sin| >= |cos|), the parity follows the other extent
    # (40x61 at 45 degrees -> 73x72; 18x47 at 90 degrees -> 47x18).
    like_h, like_w = (w, h) if sin >= cos else (h, w)
    out_h += (out_h - like_h) % 2
    out_w += (out_w - like_w) % 2
    return out_h, out_w


def rotated_canvases(angle_deg: np.ndarray, hw: np.ndarray) -> np.ndarray:
    """`rotated_canvas` of a batch: `[N, 2]` (H, W) from `[N]` angles and `[N, 2]` extents,
    with the same float64 operations over `[N]` arrays (cos and sin by `math`, once per
    distinct angle, as there); bit for bit the per-sample rule (tests/ops/test_host_tables.py)."""
    angle_deg = np.asarray(angle_deg, np.float64).reshape(-1)
    distinct, which = np.unique(angle_deg, return_inverse=True)
    rad = [float(np.float32(a) * np.float32(math.pi / 180)) for a in distinct.tolist()]
    cos = np.array([abs(math.cos(r)) for r in rad], np.float64)[which]
    sin = np.array([abs(math.sin(r)) for r in rad], np.float64)[which]
    h, w = hw[:, 0].astype(np.int64), hw[:, 1].astype(np.int64)
    out_w = np.ceil(w * cos + h * sin - 0.01).astype(np.int64)
    out_h = np.ceil(w * sin + h * cos - 0.01).astype(np.int64)
    swap = sin >= cos
    like_h, like_w = np.where(swap, w, h), np.where(swap, h, w)
    out_h += (out_h - like_h) % 2
    out_w += (out_w - like_w) % 2
    return np.stack([out_h, out_w], axis=1)


def output_sizes(call: Call, in_hw: np.ndarray, arg: str = "size") -> np.ndarray | None:
    """`[N, d]` output extents ((H, W) or (D, H, W)) from a per-sample `size` argument
    (rounded), or None if absent."""
    value = call.values.get(arg)
    if value is None:
        return None
    out = np.zeros_like(in_hw)
    for i in range(call.batch_size):
        v = np.asarray(value[i], np.float64).reshape(-1)
        if v.size == 0:
            out[i] = in_hw[i]
            continue
        if v.size != in_hw.shape[1]:
            names = "(H, W)" if in_hw.shape[1] == 2 else "(D, H, W)"
            raise call.error(
                f"argument '{arg}' sample {i}: expected {in_hw.shape[1]} values {names}; "
                f"got {v.size}"
            )
        if not np.isfinite(v).all() or (v < 0).any():
            raise call.error(
                f"argument '{arg}' sample {i}: extents must be finite and "
                f"non-negative; got {v.tolist()}"
            )
        out[i] = np.floor(v + 0.5)
    return out


def check_interp(call: Call) -> int:
    """The interpolation code; only NN and LINEAR are supported (as in DALI)."""
    interp = int(call.interp_type)
    if interp not in (INTERP_NN, INTERP_LINEAR):
        raise call.error(
            f"argument 'interp_type': only INTERP_NN and INTERP_LINEAR are "
            f"supported; got {_INTERP_NAMES[interp]}"
        )
    return interp


def output_dtype(call: Call) -> DType:
    """`dtype` when given (one of AFFINE_DTYPES), else the input type."""
    if call.dtype is None:
        return call.inputs[0].dtype  # type: ignore[no-any-return]
    if call.dtype not in AFFINE_DTYPES:
        raise call.error(
            f"argument 'dtype': expected one of "
            f"{', '.join(str(d) for d in AFFINE_DTYPES)}; got {call.dtype}"
        )
    return call.dtype  # type: ignore[no-any-return]


def spatial_hw(call: Call) -> np.ndarray:
    """`[N, d]` input extents, outermost first: (H, W) or (D, H, W)."""
    layout = call.inputs[0].layout or "HWC"
    shapes = call.inputs[0].shapes
    return np.stack([shapes[:, layout.index(c)] for c in "DHW" if c in layout], axis=1)


def _input_typed_fill(call: Call) -> float:
    """`fill_value` converted to the input type as DALI 2.4's LINEAR sampling does (round half
    away from zero, saturate): a u8 image rotated into float32 with fill 251.9 shows 252; NN
    keeps 251.9."""
    fill = float(call.fill_value)
    dtype = call.inputs[0].dtype.numpy_dtype
    if dtype.kind not in "iu" or not math.isfinite(fill):
        return fill
    info = np.iinfo(dtype)
    rounded = math.copysign(math.floor(abs(fill) + 0.5), fill)
    return float(min(max(rounded, info.min), info.max))


def derive_affine(call: Call, inverse: np.ndarray, out_hw: np.ndarray) -> np.ndarray:
    """Store the inverse maps, fill and interpolation for the kernels; returns output shapes."""
    bad = np.flatnonzero(~np.isfinite(inverse).reshape(len(inverse), -1).all(axis=1))
    if bad.size:
        i = int(bad[0])
        raise call.error(
            f"sample {i}: the affine matrix is singular or not finite: "
            f"{np.round(inverse[i], 6).tolist()}"
        )
    call.derive("affine_matrix", np.ascontiguousarray(inverse, np.float64), per_sample=True)
    call.derive("affine_interp", check_interp(call))
    interp = check_interp(call)
    fill = None if call.fill_value is None else float(call.fill_value)
    if fill is not None and interp == INTERP_LINEAR:  # NN writes the fill as it is (DALI 2.4)
        fill = _input_typed_fill(call)
    call.derive("affine_fill", fill)
    layout = call.inputs[0].layout or "HWC"
    shapes = call.inputs[0].shapes.copy()
    for k, c in enumerate(c for c in "DHW" if c in layout):
        shapes[:, layout.index(c)] = out_hw[:, k]
    return shapes


def rotation_3d(angle_deg: float, axis: np.ndarray) -> np.ndarray:
    """3x3 rotation in (x, y, z) = (W, H, D) index order about `axis` (x, y, z; Rodrigues);
    about (0, 0, 1) it is the 2-D rotate matrix [[cos, -sin], [sin, cos]]."""
    u = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    a = math.radians(angle_deg)
    k = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    return np.eye(3) + math.sin(a) * k + (1 - math.cos(a)) * (k @ k)  # type: ignore[no-any-return]


def rotated_canvas_3d(rot: np.ndarray, dhw: np.ndarray) -> np.ndarray:
    """(D, H, W) canvas of a rotated volume: ceil of the bounding box, each extent keeping the
    parity of the input extent that contributes most to it (the 2-D rule, generalised)."""
    ext_xyz = np.asarray(dhw, np.float64)[::-1]
    box = np.ceil(np.abs(rot) @ ext_xyz - 1e-4).astype(np.int64)
    like = ext_xyz[np.argmax(np.abs(rot) + 1e-9 * np.eye(3), axis=1)].astype(np.int64)
    box += (box - like) % 2
    return box[::-1]


def rotation_inverse_3d(rot: np.ndarray, in_dhw: np.ndarray, out_dhw: np.ndarray) -> np.ndarray:
    """3x4 inverse map `src = rot (p - c_out) + c_in` in (x, y, z), `c = size / 2`."""
    c_in = np.asarray(in_dhw, np.float64)[::-1] / 2
    c_out = np.asarray(out_dhw, np.float64)[::-1] / 2
    return np.concatenate([rot, (c_in - rot @ c_out)[:, None]], axis=1)
