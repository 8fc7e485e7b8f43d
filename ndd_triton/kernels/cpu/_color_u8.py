"""uint8 -> uint8 fast paths of the CPU colour kernels (OpenCV fixed point, within 1 of exact).

Precision contract: every uint8 output of these paths is within 1 of DALI's result, which is
the float32 affine map rounded half away from zero and saturated; that is the golden tolerance
of the colour ops (atol 1). Paths marked "exact" give the exact float path's bytes.

Proof for the fixed-point paths (`cv2.transform` on uint8, 3 channels in and out). OpenCV
(`transform_8u`, 10 fractional bits, checked against `transform_u8_model` by a probe on first
use and by tests) computes `S = Σ_c q_c·p_c + q_o` in int32 with
`q_c = rint(1024·m_c)`, `q_o = rint(1024·o)`, and stores `sat(floor(S/1024 + 1/2))` (the scalar
tail uses `rint(1024·fl(o + 1/2))` and a floor: its offset errs by at most 2^-10). 1024·m is
exact in float32, so `|q_c/1024 - m_c| <= 2^-11`, and with `p_c <= 255`:
`|S/1024 - (m·p + o)| <= (3·255 + 2)/2048 < 0.375`. DALI's float32 evaluation of `m·p + o`
errs by under 0.01 (sums below 3·31·255 + 4096 < 2^15, six roundings of at most 2^-10
each). The two values before rounding thus differ by less than 1, so their roundings differ
by at most 1 (half up and half away agree on non-negative values; negative values saturate
to 0 either way), and saturation keeps that.
The bound needs `q_c` in int16 and the int32 sums free of overflow, so the path runs only for
`|m_c| <= MAX_COEFFICIENT` and `|o| <= MAX_OFFSET`; other matrices take the exact float path.
Elementwise maps (brightness/contrast) use the same call with a diagonal matrix on the bytes
taken three at a time (error < (255 + 2)/2048 < 0.13).

Exact paths: RGB<->BGR swaps and gray replication (`cvtColor`, byte moves), the identity
(copy), and 256-entry tables built in float32 (`cv2.LUT`) for single-column and
gray-to-colour maps. RGB/BGR -> gray uses `cvtColor`'s 15-bit weights (9798, 19235, 3735 for
0.299, 0.587, 0.114, rounding half up): error `<= 255·Σ|w_cv - w| < 0.01`, within 1 as above
(and checked on all 2^24 colours by the tests).

Samples under `MIN_ELEMENTS` elements keep the exact path (no gain there, and tiny examples
stay bit-exact); golden-sized samples (17x23 and up) take the fast paths, so the golden cases
test them. Speed (480x640x3, 1 thread, perf/color.md): 0.2-0.3 CPU ms per image for every
colour op and conversion, against 0.4-1.0 on the exact float32 path and 5-12 in DALI.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ndd_triton.kernels.cpu._opencv import cv2_module

FRACTION_BITS = 10  # OpenCV transform_8u: weights in units of 2^-10
MAX_COEFFICIENT = 31.0  # |m| * 1024 must fit int16 (OpenCV falls back to float at 32)
MAX_OFFSET = 4096.0  # keeps the int32 sums far from overflow (OpenCV's own limit is 8192)
MIN_ELEMENTS = 256
# OpenCV treats a 3x3 matrix with off-diagonal entries <= FLT_EPSILON as diagonal and applies it
# with a scalar float loop (4x slower); this entry is above that and still rounds to weight 0.
OFF_DIAGONAL = 2.0**-16
_OFF_DIAGONAL_INDEX = np.array([1, 2, 3, 5, 6, 7])  # of a flat 3x3 matrix
_IDENTITY = np.eye(3, dtype=np.float32)
_SWAP = np.ascontiguousarray(_IDENTITY[::-1])  # RGB <-> BGR
GRAY_WEIGHTS = np.array([0.299, 0.587, 0.114], np.float32)  # BT.601, as ops/_color_matrix.py
GRAY_FIXED = np.array([9798, 19235, 3735])  # cvtColor's RGB2GRAY weights, units of 2^-15


def apply_u8(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray, offset: np.ndarray) -> bool:
    """Apply `out = matrix · inp + offset` by a fast path if one applies; False otherwise.

    Only uint8 in and out, C-contiguous, at least `MIN_ELEMENTS` elements, and matrices the
    paths can hold (see the module docstring for the precision contract). The choice of path
    and its tables are cached per matrix (`_plan`): batches usually repeat one matrix, and
    deciding costs 30 us of Python per sample, a fifth of a 480x640 transform.
    """
    if (inp.dtype != np.uint8 or out.dtype != np.uint8 or inp.size < MIN_ELEMENTS
            or not inp.flags.c_contiguous or not out.flags.c_contiguous):
        return False
    matrix, offset = np.asarray(matrix, np.float32), np.asarray(offset, np.float32)
    run = _plan(matrix.shape, matrix.tobytes(), offset.tobytes())
    if run is None:
        return False
    width = inp.shape[-2] if inp.ndim >= 3 else 1  # 2-D views for OpenCV: [rows, W(, C)]
    run(out.reshape(-1, width, matrix.shape[0]), inp.reshape(-1, width, matrix.shape[1]))
    return True


Runner = Callable[[np.ndarray, np.ndarray], None]


@functools.lru_cache(maxsize=256)
def _plan(shape: tuple[int, int], matrix_bytes: bytes, offset_bytes: bytes) -> Runner | None:
    """The fast path for one float32 matrix and offset, as `run(out, inp)`; None: exact path.

    `out` and `inp` come as `[rows, W, C_out]` and `[rows, W, C_in]` uint8 views.
    """
    matrix = np.frombuffer(matrix_bytes, np.float32).reshape(shape)
    offset = np.frombuffer(offset_bytes, np.float32)
    if not (np.isfinite(matrix).all() and np.isfinite(offset).all()):
        return None
    cout, cin = shape
    if cout == cin == 1:
        return _elementwise_plan(matrix[0, 0], offset[0])
    if cout == cin == 3:
        return _three_to_three_plan(matrix, offset)
    if cin == 3 and cout == 1:
        return _three_to_one_plan(matrix, offset)
    if cin == 1 and cout == 3:
        return _one_to_three_plan(matrix, offset)
    return None


def fits_fixed_point(matrix: np.ndarray, offset: np.ndarray) -> bool:
    """Whether the 10-bit path keeps its error bound for this matrix (module docstring)."""
    return bool(np.abs(matrix).max() <= MAX_COEFFICIENT and np.abs(offset).max() <= MAX_OFFSET)


def transform_table(matrix: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """`[3, 4]` float32 `[matrix | offset]` for `cv2.transform`, never seen as diagonal."""
    table = np.empty((3, 4), np.float32)
    table[:, :3] = matrix
    table[:, 3] = offset
    if np.abs(table[:, :3].ravel()[_OFF_DIAGONAL_INDEX]).max() <= OFF_DIAGONAL:
        table[0, 1] = OFF_DIAGONAL  # same weights (0), but OpenCV's SIMD fixed-point loop
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


def _probe_pixels() -> np.ndarray:
    """4096 random colours and the 8 corners of the RGB cube, as `[4096, 1, 3]` uint8."""
    pixels = np.random.default_rng(1234).integers(0, 256, (4096, 1, 3), dtype=np.uint8)
    pixels[:8] = [[[0, 0, 0]], [[255, 255, 255]], [[255, 0, 0]], [[0, 255, 0]], [[0, 0, 255]],
                  [[255, 255, 0]], [[0, 255, 255]], [[255, 0, 255]]]  # fmt: skip
    return pixels


@functools.cache
def transform_matches_model() -> bool:
    """One-time probe: OpenCV's uint8 `transform` equals `transform_u8_model`.

    The error bound is proved for that model; an OpenCV build that computes something else
    (other weight precision, no SIMD body) turns the fixed-point transform paths off instead.
    """
    cv2 = cv2_module()
    rng = np.random.default_rng(4321)
    pixels = _probe_pixels()
    tables = [transform_table(rng.uniform(-2, 2, (3, 3)), rng.uniform(-300, 300, 3)),
              transform_table(np.diag([1.37] * 3), np.full(3, -21.3)),
              transform_table(rng.uniform(-MAX_COEFFICIENT, MAX_COEFFICIENT, (3, 3)),
                              rng.uniform(-MAX_OFFSET, MAX_OFFSET, 3))]  # fmt: skip
    return all(np.array_equal(cv2.transform(pixels, table).reshape(-1, 3),
                              transform_u8_model(pixels, table)) for table in tables)  # fmt: skip


@functools.cache
def gray_matches_model() -> bool:
    """One-time probe: OpenCV's uint8 RGB/BGR -> GRAY `cvtColor` equals `gray_u8_model`."""
    cv2 = cv2_module()
    square = _probe_pixels().reshape(64, 64, 3)
    return all(np.array_equal(cv2.cvtColor(square, code).reshape(-1),
                              gray_u8_model(square, bgr))
               for code, bgr in ((cv2.COLOR_RGB2GRAY, False),
                                 (cv2.COLOR_BGR2GRAY, True)))  # fmt: skip


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


def _elementwise_plan(gain: np.float32, bias: np.float32) -> Runner | None:
    """`gain · x + bias` on flat bytes: three at a time through a diagonal 3x3 transform."""
    if not fits_fixed_point(np.array([gain]), np.array([bias])) or not transform_matches_model():
        return None
    table = transform_table(np.diag([gain] * 3), np.full(3, bias))
    tail = exact_table(gain, bias)[:, 0]

    def run(out: np.ndarray, inp: np.ndarray) -> None:
        out, inp = out.reshape(-1), inp.reshape(-1)
        whole = len(inp) // 3 * 3
        _transform(out[:whole].reshape(-1, 1, 3), inp[:whole].reshape(-1, 1, 3), table)
        if whole < len(inp):  # at most two bytes left: the exact table
            out[whole:] = tail[inp[whole:]]

    return run


def _three_to_three_plan(matrix: np.ndarray, offset: np.ndarray) -> Runner | None:
    """Identity, R/B swap (exact byte moves) or any other 3x3 map (10-bit fixed point)."""
    cv2 = cv2_module()
    if not offset.any() and (matrix == _IDENTITY).all():
        return lambda out, inp: np.copyto(out, inp)
    if not offset.any() and (matrix == _SWAP).all():
        return lambda out, inp: _into(out, cv2.cvtColor(inp, cv2.COLOR_RGB2BGR, dst=out))
    if not fits_fixed_point(matrix, offset) or not transform_matches_model():
        return None
    table = transform_table(matrix, offset)
    return lambda out, inp: _transform(out, inp, table)


def _three_to_one_plan(matrix: np.ndarray, offset: np.ndarray) -> Runner | None:
    """One input channel (exact: extract + table) or BT.601 gray (`cvtColor`, 15-bit)."""
    cv2 = cv2_module()
    used = np.flatnonzero(matrix[0])
    if len(used) == 1:
        channel, table = int(used[0]), exact_table(matrix[0, used[0]], offset[0])

        def run(out: np.ndarray, inp: np.ndarray) -> None:
            plane = out[..., 0]
            _into(plane, cv2.extractChannel(inp, channel, dst=plane))
            _into(plane, cv2.LUT(plane, table, dst=plane))

        return run
    if offset[0] != 0 or not gray_matches_model():
        return None
    for weights, code in ((GRAY_WEIGHTS, cv2.COLOR_RGB2GRAY), (GRAY_WEIGHTS[::-1],
                                                               cv2.COLOR_BGR2GRAY)):  # fmt: skip
        if np.abs(matrix[0] - weights).max() <= 1e-6:
            return functools.partial(_gray, code)
    return None


def _gray(code: int, out: np.ndarray, inp: np.ndarray) -> None:
    plane = out[..., 0]
    _into(plane, cv2_module().cvtColor(inp, code, dst=plane))


def _one_to_three_plan(matrix: np.ndarray, offset: np.ndarray) -> Runner | None:
    """Gray replicated (exact), or per-channel tables merged (exact; constant channels filled).

    A 3-channel table in `cv2.LUT` is 3x slower than three 1-channel lookups and a merge, and
    gray -> YCbCr needs only one lookup (Cb and Cr are constant).
    """
    cv2 = cv2_module()
    if not (offset.any() or (matrix != 1).any()):
        return lambda out, inp: _into(out, cv2.cvtColor(inp[..., 0], cv2.COLOR_GRAY2RGB,
                                                        dst=out))  # fmt: skip
    columns = [np.ascontiguousarray(c) for c in exact_table(matrix[:, 0], offset).T]

    def run(out: np.ndarray, inp: np.ndarray) -> None:
        gray = inp[..., 0]
        planes: dict[bytes, np.ndarray] = {}
        for column in columns:
            if column.tobytes() not in planes:
                planes[column.tobytes()] = (np.full(gray.shape, column[0], np.uint8)
                                            if (column == column[0]).all()
                                            else cv2.LUT(gray, column))  # fmt: skip
        _into(out, cv2.merge([planes[c.tobytes()] for c in columns], dst=out))

    return run
