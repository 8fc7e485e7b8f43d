"""Host-side colour matrices: every colour op is `out = M · pixel + offset` per sample.

brightness/contrast give a 1x1 matrix applied to every element (any channel count); hue,
saturation, hsv and color_twist give a 3x3 matrix built in YIQ space (spec ops.md §2.4);
color_space_conversion gives `[C_out, C_in]` matrices (BT.601 studio swing for YCbCr). One CPU
kernel and one Triton kernel apply them, so fusing colour ops later is a matrix product.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import DType

# RGB -> YIQ (NTSC), and its exact inverse (spec ops.md §2.4, golden README "Colour").
RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114],
                       [0.596, -0.274, -0.321],
                       [0.211, -0.523, 0.311]], dtype=np.float64)  # fmt: skip
YIQ_TO_RGB = np.linalg.inv(RGB_TO_YIQ)

# BT.601 studio swing, RGB in [0, 255] -> YCbCr (spec ops.md §2.9).
RGB_TO_YCBCR = np.array([[65.481, 128.553, 24.966],
                         [-37.797, -74.203, 112.0],
                         [112.0, -93.786, -18.214]], dtype=np.float64) / 255.0  # fmt: skip
YCBCR_OFFSET = np.array([16.0, 128.0, 128.0])
GRAY_WEIGHTS = np.array([0.299, 0.587, 0.114])


def type_range(dtype: DType) -> float:
    """1.0 for floating types, the largest value for integer types (DALI's "output range")."""
    if dtype.is_float:
        return 1.0
    return float(np.iinfo(dtype.numpy_dtype).max)


def half_range(dtype: DType) -> float:
    """Default contrast centre: 0.5 for floats, `2^(value bits - 1)` for integers (u8 -> 128)."""
    if dtype.is_float:
        return 0.5
    value_bits = dtype.bits - (1 if dtype.kind is DType.Kind.signed else 0)
    return float(2 ** (value_bits - 1))


def hsv_matrices(hue: np.ndarray, saturation: np.ndarray, value: np.ndarray) -> np.ndarray:
    """`[N, 3, 3]` matrices `value · YIQ⁻¹ · R(hue, saturation) · YIQ` (hue in degrees)."""
    h = np.deg2rad(np.asarray(hue, dtype=np.float64).reshape(-1))
    s = np.asarray(saturation, dtype=np.float64).reshape(-1)
    v = np.asarray(value, dtype=np.float64).reshape(-1)
    n = len(h)
    rot = np.zeros((n, 3, 3))
    rot[:, 0, 0] = 1.0
    rot[:, 1, 1] = rot[:, 2, 2] = s * np.cos(h)
    rot[:, 1, 2] = s * np.sin(h)
    rot[:, 2, 1] = -s * np.sin(h)
    return v[:, None, None] * (YIQ_TO_RGB @ rot @ RGB_TO_YIQ)


def scalar_affine(gain: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`([N, 1, 1], [N, 1])` matrices for an elementwise `gain · x + offset`."""
    gain = np.asarray(gain, dtype=np.float64).reshape(-1, 1, 1)
    offset = np.asarray(offset, dtype=np.float64).reshape(-1, 1)
    return gain, offset


_SWAP = np.eye(3)[::-1]  # RGB <-> BGR


def conversion_matrix(src: str, dst: str) -> tuple[np.ndarray, np.ndarray]:
    """`([C_out, C_in], [C_out])` for a colour space conversion between RGB/BGR/GRAY/YCbCr."""
    to_rgb = {"RGB": (np.eye(3), np.zeros(3)), "BGR": (_SWAP, np.zeros(3)),
              "GRAY": (np.ones((3, 1)), np.zeros(3))}  # fmt: skip
    if src == "YCbCr" and dst == "GRAY":  # Y only, back to full swing
        return np.array([[255.0 / 219.0, 0.0, 0.0]]), np.array([-16.0 * 255.0 / 219.0])
    if src == "GRAY" and dst == "YCbCr":
        return np.array([[219.0 / 255.0], [0.0], [0.0]]), YCBCR_OFFSET.copy()
    if src == "YCbCr":
        inv = np.linalg.inv(RGB_TO_YCBCR)
        m, o = inv, -inv @ YCBCR_OFFSET  # -> RGB
    else:
        m, o = to_rgb[src]
    if dst == "RGB":
        return m, o
    if dst == "BGR":
        return _SWAP @ m, _SWAP @ o
    if dst == "GRAY":
        return GRAY_WEIGHTS[None, :] @ m, GRAY_WEIGHTS[None, :] @ o
    return RGB_TO_YCBCR @ m, RGB_TO_YCBCR @ o + YCBCR_OFFSET  # YCbCr
