"""crop_mirror_normalize on the CPU: `crop_into` with a per-channel gain/bias and a mirror.

Fast path (`_u8_tables`) for the common training case: a uint8 HWC window that lies inside
the image, to float32 CHW (or HWC). Every output is a 256-entry float32 table of its channel,
`float32(float32(v * gain) + bias)`, the same two float32 roundings as the torch path
(`copy_`, `mul_`, `add_`), so the results are bit-identical. For CHW OpenCV splits the
interleaved window into channel planes (uint8, kept per pool thread) and maps each plane
through its table (`cv2.LUT`); for HWC one `cv2.LUT` with a table per channel does it all.
The sample's arguments go straight to the fast path (no `Window`). Measured on a 224x224 crop
of 480x640x3 to CHW: 2.2x less CPU per image than the torch passes, op included
(perf/geometry.md); the per-thread planes and the direct arguments take 10-20% more off
(perf/README.md, RN50).
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu._opencv import cv2_module
from ndd_triton.kernels.cpu.crop import Window, crop_into
from ndd_triton.ops import crop_mirror_normalize
from ndd_triton.ops.schema import SampleArgs

_LEVELS = np.arange(256, dtype=np.float32)
_PLANES = threading.local()  # per pool thread: uint8 planes of the last window shape


def _u8_tables(out: np.ndarray, inp: np.ndarray, out_layout: str, start: np.ndarray,
               size: np.ndarray, gain: np.ndarray, bias: np.ndarray, mirror: bool) -> bool:
    """uint8 HWC -> float32 CHW or HWC of the window `[start, start + size)` inside the
    image, through per-channel tables (`gain`, `bias`: float64 per channel); False when it
    does not apply."""
    if inp.dtype != np.uint8 or out.dtype != np.float32 or inp.ndim != 3:
        return False
    if out_layout not in ("CHW", "HWC"):
        return False
    (y0, x0), (h, w), c = start.tolist(), size.tolist(), inp.shape[2]
    y0, x0, h, w = int(y0), int(x0), int(h), int(w)
    if y0 < 0 or x0 < 0 or y0 + h > inp.shape[0] or x0 + w > inp.shape[1]:
        return False
    planar = out_layout == "CHW"
    if out.shape != ((c, h, w) if planar else (h, w, c)) or not out.flags.c_contiguous:
        return False
    if not 1 <= c <= 4 or h * w == 0 or inp.strides[1:] != (c, 1):
        return False  # OpenCV reads interleaved pixels (rows may be strided)
    cv2 = cv2_module()
    window = inp[y0:y0 + h, x0:x0 + w] if c > 1 else inp[y0:y0 + h, x0:x0 + w, 0]
    if mirror:
        window = cv2.flip(window, 1)  # a copy; flips W
    tables = _tables(np.asarray(gain[:c], np.float64).tobytes(),
                     np.asarray(bias[:c], np.float64).tobytes())  # fmt: skip
    if not planar:  # one pass: a table per channel of the interleaved pixels
        cv2.LUT(window, tables.T.reshape(256, 1, c) if c > 1 else tables[0],
                dst=out if c > 1 else out[..., 0])  # fmt: skip
        return True
    if c > 1:
        # Into this thread's planes of the last shape: 4x faster than new ones (measured,
        # 224x224x3: the fresh pages cost more than the split).
        planes = getattr(_PLANES, "planes", None)
        if planes is None or planes[0].shape != (h, w) or len(planes) != c:
            planes = _PLANES.planes = [np.empty((h, w), np.uint8) for _ in range(c)]
        cv2.split(window, planes)
    else:
        planes = [np.ascontiguousarray(window)]
    for k in range(c):
        cv2.LUT(planes[k], tables[k], dst=out[k])
    return True


@functools.lru_cache(maxsize=64)
def _tables(gain: bytes, bias: bytes) -> np.ndarray:
    """`[C, 256]` float32 tables `float32(float32(v * gain) + bias)` of float64 `gain`, `bias`
    rounded to float32 (cached: a batch usually shares one mean/std)."""
    # (std == 0 or tiny gives inf/nan gains on purpose, as DALI: no NumPy warning for them)
    with np.errstate(over="ignore", invalid="ignore"):
        g = np.frombuffer(gain, np.float64).astype(np.float32)[:, None]
        b = np.frombuffer(bias, np.float64).astype(np.float32)[:, None]
        tables = _LEVELS * g
        tables += b
    tables.setflags(write=False)
    return tables


@register(crop_mirror_normalize.schema, "cpu")
def crop_mirror_normalize_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Crop, mirror, normalise and permute one sample."""
    layout = arg.layout or "HWC"
    start, size, gain, bias = arg.window_start, arg.window_size, arg.gain, arg.bias
    if layout == "HWC" and _u8_tables(out, inp, arg.out_layout, start, size, gain, bias,
                                      bool(arg.mirror)):  # fmt: skip
        return
    crop_into(out, inp, Window(layout, arg.out_layout, start, size, arg.out_of_bounds_policy,
                               arg.fill, gain, bias, bool(arg.mirror)))  # fmt: skip
