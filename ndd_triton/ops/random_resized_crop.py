"""random_resized_crop: a random window of random area and aspect ratio, resized to a fixed
size (DALI `random_resized_crop`).

Windows are drawn in infer from `rng` (or the thread's default RNG), 4 uniforms per attempt
and `num_attempts` attempts per sample whatever is accepted, so a seed gives the same windows
on every backend. An attempt draws the area fraction uniformly in `random_area` and the aspect
ratio (W/H) log-uniformly in `random_aspect_ratio`; it is accepted when the window fits. When
no attempt fits, the window is the largest centred one whose aspect ratio is in range.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.ops import _resize_params as rp
from ndd_triton.ops import limits
from ndd_triton.ops.resize import RESIZE_DTYPES
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec

RRC_LAYOUTS = ("HWC", "CHW", "FHWC", "FCHW", "CFHW")


def _range(call: Call, name: str, positive: bool) -> tuple[float, float]:
    """`[min, max]` of `random_area` (a fraction: 0 < min <= max <= 1) or
    `random_aspect_ratio` (`positive`: 0 < min <= max). DALI 2.4 accepts [0, 0], [2, 3] and
    [-1, 1] areas and draws garbage windows from them (docs/differences.md)."""
    v = np.asarray(call.values[name], dtype=np.float64).reshape(-1)
    if v.size != 2 or not 0 < v[0] <= v[1] or (not positive and v[1] > 1):
        rule = "0 < min <= max" if positive else "0 < min <= max <= 1"
        raise call.error(f"argument '{name}' expects [min, max] with {rule}; got "
                         f"{v.tolist()}")  # fmt: skip
    return float(v[0]), float(v[1])


def _windows(extents: np.ndarray, u: np.ndarray, area: tuple[float, float],
             ratio: tuple[float, float]) -> np.ndarray:  # fmt: skip
    """`[N, 4]` int64 (y, x, height, width) from `[N, 2]` (H, W) extents and uniforms `u`
    `[N, attempts, 4]`: the first attempt that fits, else the largest centred window whose
    aspect ratio is in range. Vectorised over samples and attempts (float64 throughout, the
    same operations in the same order as one attempt at a time)."""
    h = extents[:, 0:1].astype(np.float64)
    w = extents[:, 1:2].astype(np.float64)
    log_lo, log_hi = np.log(ratio[0]), np.log(ratio[1])
    a, r, py, px = u[..., 0], u[..., 1], u[..., 2], u[..., 3]
    frac = area[0] + a * (area[1] - area[0])
    aspect = np.exp(log_lo + r * (log_hi - log_lo))
    cw = np.floor(np.sqrt(frac * h * w * aspect) + 0.5)
    ch = np.floor(np.sqrt(frac * h * w / aspect) + 0.5)
    fits = (cw > 0) & (cw <= w) & (ch > 0) & (ch <= h)
    first = fits.argmax(axis=1)
    rows = np.arange(len(u))
    cw, ch = cw[rows, first], ch[rows, first]
    y = np.trunc(py[rows, first] * (h[:, 0] - ch + 1))
    x = np.trunc(px[rows, first] * (w[:, 0] - cw + 1))
    out = np.stack([y, x, ch, cw], axis=1).astype(np.int64)
    for i in np.flatnonzero(~fits.any(axis=1)):  # rare: no attempt fits
        out[i] = _fallback(int(extents[i, 0]), int(extents[i, 1]), ratio)
    return out


def _fallback(h: int, w: int, ratio: tuple[float, float]) -> tuple[int, int, int, int]:
    in_ratio = w / h if h else 1.0
    cw, ch = w, h
    if in_ratio < ratio[0]:
        ch = max(1, int(np.floor(w / ratio[0] + 0.5)))
    elif in_ratio > ratio[1]:
        cw = max(1, int(np.floor(h * ratio[1] + 0.5)))
    return (h - ch) // 2, (w - cw) // 2, ch, cw


def _window(h: int, w: int, u: np.ndarray, area: tuple[float, float],
            ratio: tuple[float, float]) -> tuple[int, int, int, int]:  # fmt: skip
    """(y, x, height, width) of one sample from its uniforms `u` `[attempts, 4]`."""
    y, x, ch, cw = _windows(np.array([[h, w]]), np.asarray(u)[None], area, ratio)[0]
    return int(y), int(x), int(ch), int(cw)


def _infer(call: Call) -> OutputSpec:
    from ndd_triton.random import get_default_rng

    layout = call.inputs[0].layout or "HWC"
    extents = rp.spatial_extents(call, layout)
    size = np.asarray(call.size, dtype=np.float64).reshape(-1)
    if size.size not in (1, 2) or (size <= 0).any():
        raise call.error(f"argument 'size' expects 1 or 2 positive values (H, W); got "
                         f"{size.tolist()}")  # fmt: skip
    size = np.broadcast_to(size, (2,))
    if call.num_attempts < 1:
        raise call.error(f"argument 'num_attempts' must be at least 1; got {call.num_attempts}")
    limits.check_count(call, "num_attempts", 4 * call.num_attempts, "random draws")
    area, ratio = _range(call, "random_area", False), _range(call, "random_aspect_ratio", True)
    n = call.batch_size
    rng = call.rng or get_default_rng()
    draws = rng.take_uniform(n * call.num_attempts * 4, np.float64)
    draws = draws.reshape(n, call.num_attempts, 4)
    win = _windows(np.asarray(extents[:, :2]), draws, area, ratio)
    lo = win[:, :2].astype(np.float64)
    hi = lo + win[:, 2:]
    call.derive("window", win, per_sample=True)
    limits.check_count(call, "size", np.prod(np.maximum(size, 1.0)))
    out, origin, step = rp.mapping(lo, hi, np.broadcast_to(size, (n, 2)).copy(), True)
    rp.check_filter(call, "size", lo, hi, step)
    rp.derive_plan(call, layout, extents, out, origin, step)
    shapes = call.inputs[0].shapes.copy()
    shapes[:, layout.index("H")], shapes[:, layout.index("W")] = out[:, 0], out[:, 1]
    return OutputSpec(rp.output_dtype(call), shapes, layout)


schema = OpSchema(
    name="random_resized_crop",
    doc="Crops a random window (random area fraction and aspect ratio) and resizes it to size.",
    inputs=(Input("input", layouts=RRC_LAYOUTS, dtypes=RESIZE_DTYPES),),
    args=(Arg("size", "float", default=REQUIRED, vector=True,
              doc="Output (H, W); a scalar gives a square."),
          Arg("random_area", "float", default=(0.08, 1.0), vector=True,
              doc="Range of the window area as a fraction of the input area."),
          Arg("random_aspect_ratio", "float", default=(0.75, 4.0 / 3.0), vector=True,
              doc="Range of the window aspect ratio (W/H), drawn log-uniformly."),
          Arg("num_attempts", "int", default=10, doc="Draws before the fallback window."),
          *rp.filter_args(), Arg("rng", "rng", doc="Random generator (default: thread's).")),
    infer=_infer,
    random=True,
)  # fmt: skip
