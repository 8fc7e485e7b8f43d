"""random_resized_crop: a random window of random area and aspect ratio, resized to a fixed
size (DALI `random_resized_crop`).

Windows are drawn from `rng` (or the thread's default RNG), 4 float64 uniforms per attempt and
`num_attempts` attempts per sample whatever is accepted, so a seed gives the same windows on
every backend. Infer draws nothing (the output size is fixed): each call reserves its draws
after infer (`OpSchema.draws`, `runtime/draws.py`), the host computes the windows from them
(`_draw_values`) or, on the GPU with triangle filters, the kernel does (`draws_on_device`:
`kernels/gpu/random_resized_crop.py`), with the same float64 operations.

An attempt draws the area fraction uniformly in `random_area` and the aspect
ratio (W/H) log-uniformly in `random_aspect_ratio`; it is accepted when the window fits. When
no attempt fits, the window is the largest centred one whose aspect ratio is in range.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.enums import DALIInterpType
from ndd_triton.ops import _resize_params as rp
from ndd_triton.ops import limits
from ndd_triton.ops.resize import RESIZE_DTYPES
from ndd_triton.ops.schema import DRAWS_ON_DEVICE, REQUIRED, Arg, Call, Input, OpSchema, OutputSpec
from ndd_triton.random._philox import draws_u32, to_unit_float64

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


_TRIANGLES = (DALIInterpType.INTERP_LINEAR, DALIInterpType.INTERP_TRIANGULAR)
MAX_DEVICE_TAPS = 128  # the device tap tables' limit (`kernels/gpu/_resample_tables.MAX_TAPS`)
MAX_DEVICE_ATTEMPTS = 1024  # attempts the device kernel tries side by side in one program


def _infer(call: Call) -> OutputSpec:
    """Output shapes and the deterministic part of the plan; the windows come per call from
    the draws reserved after infer (`draws`, `_draw_values`, or the GPU kernel)."""
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
    limits.check_count(call, "size", np.prod(np.maximum(size, 1.0)))
    out = np.maximum(np.floor(size + 0.5), 1).astype(np.int64)  # as `rp.mapping` rounds
    log_lo, log_hi = np.log(ratio[0]), np.log(ratio[1])
    # what the windows are made of (the device kernel reads the same float64 values)
    call.derive("rrc_consts", np.array([area[0], area[1], log_lo, log_hi, ratio[0], ratio[1],
                                        size[0], size[1]], np.float64))  # fmt: skip
    call.derive("resample_axes", rp.spatial_letters(layout))
    call.derive("resample_in", extents.astype(np.int64), per_sample=True)
    call.derive("resample_out", np.broadcast_to(out, (n, 2)).copy(), per_sample=True)
    call.derive(DRAWS_ON_DEVICE, call.device == "gpu" and _device_windows(call, extents, size))
    shapes = call.inputs[0].shapes.copy()
    shapes[:, layout.index("H")], shapes[:, layout.index("W")] = out[0], out[1]
    return OutputSpec(rp.output_dtype(call), shapes, layout)


def _triangle(value: object) -> bool:
    """Whether a filter argument (None: the default, LINEAR) selects a triangle filter."""
    if value is None:
        return True
    return bool(np.isin(np.asarray(value), _TRIANGLES).all())


def _device_windows(call: Call, extents: np.ndarray, size: np.ndarray) -> bool:
    """Whether the GPU kernel can draw the windows and build the tap tables itself: triangle
    filters whatever the scale, a tap bound (from the largest possible window, the whole
    image) the device tables take, sizes of at least 1 (then no window can trip the
    antialiasing filter's size check, `rp.check_filter`) and attempts one program tries."""
    if not all(_triangle(call.values.get(a)) for a in ("interp_type", "min_filter",
                                                       "mag_filter")):  # fmt: skip
        return False
    return bool((size >= 1).all()) and call.num_attempts <= MAX_DEVICE_ATTEMPTS and \
        tap_bound(extents, size, call.antialias is not False) <= MAX_DEVICE_TAPS  # fmt: skip


def tap_bound(extents: np.ndarray, size: np.ndarray, antialias: bool) -> int:
    """Taps per output of any window of these `[N, k]` input extents resized to `size`
    (`[k]`): the widest triangle filter, over the whole image (`triangle_plan`'s rule)."""
    widest = float((extents / size).max(initial=1.0)) if antialias else 1.0
    return int(np.floor(2.0 * max(widest, 1.0))) + 2


def _draws(call: Call) -> int:
    """uint32 draws per call: 4 float64 uniforms (2 draws each) per attempt and sample."""
    return 8 * call.batch_size * int(call.num_attempts)


def _draw_values(call: Call) -> None:
    """The call's windows and resampling plan from its reserved draws (host kernels)."""
    assert call.draw_at is not None
    key, offset = call.draw_at
    n, attempts = call.batch_size, int(call.num_attempts)
    words = draws_u32(key, offset, 8 * n * attempts).reshape(-1, 2)
    draws = to_unit_float64(words[:, 0], words[:, 1]).reshape(n, attempts, 4)
    c = call.rrc_consts
    area = (float(c[0]), float(c[1]))
    ratio = (float(c[4]), float(c[5]))
    extents = np.asarray(call.resample_in)
    win = _windows(extents, draws, area, ratio)
    lo = win[:, :2].astype(np.float64)
    hi = lo + win[:, 2:]
    call.derive("window", win, per_sample=True)
    out, origin, step = rp.mapping(lo, hi, np.broadcast_to(c[6:8], (n, 2)).copy(), True)
    rp.check_filter(call, "size", lo, hi, step)
    layout = call.inputs[0].layout or "HWC"
    rp.derive_plan(call, layout, extents, out, origin, step)


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
    draws=_draws,
    draw_values=_draw_values,
)  # fmt: skip
