"""uint8 -> uint8 fast paths of the CPU colour kernels (OpenCV fixed point, within 1 of exact).

Precision contract: every uint8 output of these paths is within 1 of DALI's result, which is
the float32 affine map rounded half away from zero and saturated; that is the golden tolerance
of the colour ops (atol 1). Outputs are exactly DALI's wherever the paths below say "exact".

Proof for the fixed-point paths (`cv2.transform` on uint8, 3 channels in and out). OpenCV
(`transform_8u`, 10 fractional bits, checked against `transform_u8_model` by a probe on first
use and exhaustively by tests) computes `S = Σ_c q_c·p_c + q_o` in int32 with
`q_c = rint(1024·m_c)`, `q_o = rint(1024·o)`, and stores `sat(floor(S/1024 + 1/2))` (the scalar
tail uses `rint(1024·fl(o + 1/2))` and a floor, the same up to 2^-12). 1024·m is exact in
float32, so `|q_c/1024 - m_c| <= 2^-11`, and with `p_c <= 255`:
`|S/1024 - (m·p + o)| <= (3·255 + 2)/2048 < 0.375`. DALI's float32 evaluation of `m·p + o`
errs by under 0.01 (terms below 31·255, four roundings). The two values before rounding thus
differ by less than 1, so their roundings differ by at most 1 (half up and half away agree on
non-negative values; negative values saturate to 0 either way), and saturation keeps that.
The bound needs `q_c` in int16 and the int32 sums free of overflow, so the path runs only for
`|m_c| <= MAX_COEFFICIENT` and `|o| <= MAX_OFFSET`; other matrices take the exact float path.
Elementwise maps (brightness/contrast) use the same call with a diagonal matrix on the bytes
taken three at a time (error < (255 + 2)/2048 < 0.13).

Exact paths: RGB<->BGR swaps and gray replication (`cvtColor`, byte moves), the identity
(copy), and 256-entry tables built in float32 (`cv2.LUT`) for single-column and
gray-to-colour maps. RGB/BGR -> gray uses `cvtColor`'s 15-bit weights (9798, 19235, 3735 for
0.299, 0.587, 0.114, rounding half up): error `<= 255·Σ|w_cv - w| < 0.01`, within 1 as above
(and checked on all 2^24 colours by the tests).

Samples under `MIN_ELEMENTS` elements keep the exact path (no gain there, and small examples
stay bit-exact). Speed (480x640x3, 1 thread, perf/color.md): transform 0.16-0.3 ms, LUT 0.3 ms,
against 0.8 ms for the exact float32 transform.
"""

from __future__ import annotations

import functools

import numpy as np

from ndd_triton.kernels.cpu._opencv import cv2_module

FRACTION_BITS = 10  # OpenCV transform_8u: weights in units of 2^-10
MAX_COEFFICIENT = 31.0  # |m| * 1024 must fit int16 (OpenCV falls back to float at 32)
MAX_OFFSET = 4096.0  # keeps the int32 sums far from overflow (OpenCV's own limit is 8192)
MIN_ELEMENTS = 256
# OpenCV treats a 3x3 matrix with off-diagonal entries <= FLT_EPSILON as diagonal and applies it
# with a scalar float loop (4x slower); this entry is above that and still rounds to weight 0.
OFF_DIAGONAL = 2.0**-16
GRAY_WEIGHTS = np.array([0.299, 0.587, 0.114], np.float32)  # BT.601, as ops/_color_matrix.py
GRAY_FIXED = np.array([9798, 19235, 3735])  # cvtColor's RGB2GRAY weights, units of 2^-15


def apply_u8(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray, offset: np.ndarray) -> bool:
    """Apply `out = matrix · inp + offset` by a fast path if one applies; False otherwise.

    Only uint8 in and out, C-contiguous, at least `MIN_ELEMENTS` elements, and matrices the
    paths can hold (see the module docstring for the precision contract).
    """
    if (inp.dtype != np.uint8 or out.dtype != np.uint8 or inp.size < MIN_ELEMENTS
            or not inp.flags.c_contiguous or not out.flags.c_contiguous
            or not (np.isfinite(matrix).all() and np.isfinite(offset).all())):
        return False
    matrix, offset = matrix.astype(np.float32), offset.astype(np.float32)
    cout, cin = matrix.shape
    if cout == cin == 1:
        return _elementwise(out.reshape(-1), inp.reshape(-1), matrix[0, 0], offset[0])
    width = inp.shape[-2] if inp.ndim >= 3 else 1
    if cout == cin == 3:
        return _three_to_three(out.reshape(-1, width, 3), inp.reshape(-1, width, 3), matrix,
                               offset)  # fmt: skip
    if cin == 3 and cout == 1:
        return _three_to_one(out.reshape(-1, width), inp.reshape(-1, width, 3), matrix, offset)
    if cin == 1 and cout == 3:
        return _one_to_three(out.reshape(-1, width, 3), inp.reshape(-1, width), matrix, offset)
    return False


def fits_fixed_point(matrix: np.ndarray, offset: np.ndarray) -> bool:
    """Whether the 10-bit path keeps its error bound for this matrix (module docstring)."""
    return bool(np.abs(matrix).max() <= MAX_COEFFICIENT and np.abs(offset).max() <= MAX_OFFSET)


def transform_table(matrix: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """`[3, 4]` float32 `[matrix | offset]` for `cv2.transform`, never seen as diagonal."""
    table = np.empty((3, 4), np.float32)
    table[:, :3] = matrix
    table[:, 3] = offset
    off = table[:, :3][~np.eye(3, dtype=bool)]
    if np.abs(off).max() <= OFF_DIAGONAL:  # same weights (0), but the SIMD fixed-point loop
        table[0, 1] = OFF_DIAGONAL
    return table


def transform_u8_model(pixels: np.ndarray, table: np.ndarray) -> np.ndarray:
    """What OpenCV's uint8 `transform` computes (its SIMD body), in int64 NumPy: `[N, 3]`."""
    scale = np.float32(1 << FRACTION_BITS)
    weights = np.rint(table[:, :3].astype(np.float32) * scale).astype(np.int64)
    bias = np.rint(table[:, 3].astype(np.float32) * scale).astype(np.int64)
    sums = pixels.reshape(-1, 3).astype(np.int64) @ weights.T + bias + (1 << (FRACTION_BITS - 1))
    return np.clip(sums >> FRACTION_BITS, 0, 255).astype(np.uint8)


def gray_u8_model(pixels: np.ndarray, bgr: bool = False) -> np.ndarray:
    """What `cvtColor(RGB2GRAY)` computes on uint8 (15-bit weights), in NumPy: `[N]`."""
    weights = GRAY_FIXED[::-1] if bgr else GRAY_FIXED
    return ((pixels.reshape(-1, 3).astype(np.int64) @ weights + (1 << 14)) >> 15).astype(np.uint8)


@functools.cache
def opencv_matches_model() -> bool:
    """One-time probe: OpenCV's uint8 transform and gray conversion equal the models above.

    The error bound is proved for those models; an OpenCV build that computes something else
    (other weight precision, no SIMD body) turns the fixed-point paths off instead.
    """
    cv2 = cv2_module()
    rng = np.random.default_rng(1234)
    pixels = rng.integers(0, 256, (4096, 1, 3), dtype=np.uint8)
    pixels[:8] = [[[0, 0, 0]], [[255, 255, 255]], [[255, 0, 0]], [[0, 255, 0]], [[0, 0, 255]],
                  [[255, 255, 0]], [[0, 255, 255]], [[255, 0, 255]]]  # fmt: skip
    tables = [transform_table(rng.uniform(-2, 2, (3, 3)), rng.uniform(-300, 300, 3)),
              transform_table(np.diag([1.37] * 3), np.full(3, -21.3)),
              transform_table(rng.uniform(-MAX_COEFFICIENT, MAX_COEFFICIENT, (3, 3)),
                              rng.uniform(-MAX_OFFSET, MAX_OFFSET, 3))]  # fmt: skip
    for table in tables:
        got = cv2.transform(pixels, table).reshape(-1, 3)
        if not np.array_equal(got, transform_u8_model(pixels, table)):
            return False
    for code, bgr in ((cv2.COLOR_RGB2GRAY, False), (cv2.COLOR_BGR2GRAY, True)):
        got = cv2.cvtColor(pixels.reshape(64, 64, 3), code).reshape(-1)
        if not np.array_equal(got, gray_u8_model(pixels, bgr)):
            return False
    return True


def exact_table(gain: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """`[256, K]` uint8 table of `gain[k] · i + offset[k]` for every byte `i`, as DALI rounds it.

    float32 `gain · i`, plus `offset + 0.5`, clamped to [0.5, 255.5], truncated: the exact
    path's arithmetic (`color.store_rounded`), so a lookup gives the exact path's bytes.
    """
    levels = np.arange(256, dtype=np.float32)[:, None]
    values = levels * np.asarray(gain, np.float32).reshape(1, -1)
    values += np.asarray(offset, np.float32).reshape(1, -1) + np.float32(0.5)
    np.clip(values, 0.5, 255.5, out=values)
    return values.astype(np.uint8)


def _into(out: np.ndarray, result: np.ndarray) -> None:
    """Copy an OpenCV result into `out` unless OpenCV already wrote it there."""
    if result is not out:
        out[...] = np.asarray(result).reshape(out.shape)


def _transform(out: np.ndarray, inp: np.ndarray, table: np.ndarray) -> None:
    """`cv2.transform` of 3-channel bytes straight into `out`."""
    _into(out, cv2_module().transform(inp, table, dst=out))


def _elementwise(out: np.ndarray, inp: np.ndarray, gain: np.float32, bias: np.float32) -> bool:
    """`gain · x + bias` on flat bytes: three at a time through a diagonal 3x3 transform."""
    if not fits_fixed_point(np.array([gain]), np.array([bias])) or not opencv_matches_model():
        return False
    whole = len(inp) // 3 * 3
    table = transform_table(np.diag([gain] * 3), np.full(3, bias))
    _transform(out[:whole].reshape(-1, 1, 3), inp[:whole].reshape(-1, 1, 3), table)
    if whole < len(inp):  # at most two bytes left: the exact table
        out[whole:] = exact_table(gain, bias)[inp[whole:], 0]
    return True


def _three_to_three(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray,
                    offset: np.ndarray) -> bool:  # fmt: skip
    """Identity, R/B swap (exact byte moves) or any other 3x3 map (10-bit fixed point)."""
    cv2 = cv2_module()
    if not offset.any():
        if np.array_equal(matrix, np.eye(3)):
            np.copyto(out, inp)
            return True
        if np.array_equal(matrix, np.eye(3)[::-1]):
            _into(out, cv2.cvtColor(inp, cv2.COLOR_RGB2BGR, dst=out))
            return True
    if not fits_fixed_point(matrix, offset) or not opencv_matches_model():
        return False
    _transform(out, inp, transform_table(matrix, offset))
    return True


def _three_to_one(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray,
                  offset: np.ndarray) -> bool:  # fmt: skip
    """One input channel (exact: extract + table) or BT.601 gray (`cvtColor`, 15-bit)."""
    cv2 = cv2_module()
    used = np.flatnonzero(matrix[0])
    if len(used) == 1:
        c = int(used[0])
        _into(out, cv2.extractChannel(inp, c, dst=out))
        _into(out, cv2.LUT(out, exact_table(matrix[0, c], offset[0]), dst=out))
        return True
    if offset[0] != 0 or not opencv_matches_model():
        return False
    for weights, code in ((GRAY_WEIGHTS, cv2.COLOR_RGB2GRAY), (GRAY_WEIGHTS[::-1],
                                                               cv2.COLOR_BGR2GRAY)):  # fmt: skip
        if np.abs(matrix[0] - weights).max() <= 1e-6:
            _into(out, cv2.cvtColor(inp, code, dst=out))
            return True
    return False


def _one_to_three(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray,
                  offset: np.ndarray) -> bool:  # fmt: skip
    """Gray replicated (exact), or per-channel tables merged (exact; constant channels filled).

    A 3-channel table in `cv2.LUT` is 3x slower than three 1-channel lookups and a merge, and
    gray -> YCbCr needs only one lookup (Cb and Cr are constant).
    """
    cv2 = cv2_module()
    if not (offset.any() or (matrix != 1).any()):
        _into(out, cv2.cvtColor(inp, cv2.COLOR_GRAY2RGB, dst=out))
        return True
    table = exact_table(matrix[:, 0], offset)
    planes: dict[bytes, np.ndarray] = {}
    for k in range(3):
        column = np.ascontiguousarray(table[:, k])
        if column.tobytes() not in planes:
            planes[column.tobytes()] = (np.full(inp.shape, column[0], np.uint8)
                                        if (column == column[0]).all()
                                        else cv2.LUT(inp, column))  # fmt: skip
    _into(out, cv2.merge([planes[np.ascontiguousarray(table[:, k]).tobytes()]
                          for k in range(3)], dst=out))  # fmt: skip
    return True
