"""crop_mirror_normalize as the last member of a fused group (compile mode, `runtime/fusion.py`):
its call reading a flip's input instead of the flip's output (the windows mirrored), and the
per-channel gain and bias, window and mirror flags that a fused kernel's store applies."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


def mirrored_cmn(flip: Any, cmn: Any) -> Any:
    """crop_mirror_normalize's call reading flip's input: where flip mirrored a sample, the crop
    window is mirrored and so is `mirror` (exact: only which pixels are read changes; a padded
    window's fill is the same at mirrored positions), or None when that does not hold
    (vertical/depthwise flips, frames, windows beyond the image that are not padded)."""
    layout = flip.inputs[0].layout or "HWC"
    if layout not in ("HWC", "CHW") or cmn.inputs[0].layout != flip.inputs[0].layout:
        return None
    n = cmn.batch_size
    if np.asarray(flip.vertical).reshape(n).any() or np.asarray(flip.depthwise).reshape(n).any():
        return None
    h = np.asarray(flip.horizontal).reshape(n) != 0
    width = flip.inputs[0].shapes[:, layout.index("W")]
    start = np.array(cmn.window_start, copy=True)
    size = np.asarray(cmn.window_size)
    inside = (start[:, -1] >= 0) & (start[:, -1] + size[:, -1] <= width)
    if not inside[h].all() and cmn.out_of_bounds_policy != "pad":
        return None
    start[h, -1] = width[h] - start[h, -1] - size[h, -1]
    mirror = np.asarray(cmn.mirror)
    values = dict(cmn.values)
    values["window_start"] = start
    values["mirror"] = ((mirror.reshape(n) != 0) ^ h).astype(mirror.dtype).reshape(mirror.shape)
    return dataclasses.replace(cmn, values=values, per_sample=set(cmn.per_sample))


def gpu_norm(cmn: Any, spec: Any, mirror_ok: bool = False, crop_ok: bool = False,
             pad_ok: bool = False) -> tuple[np.ndarray, np.ndarray, bool] | None:  # fmt: skip
    """(gain, bias, CHW) of a crop_mirror_normalize a fused kernel can store for: HWC RGB
    input, no crop (unless `crop_ok`: then a window inside the image, or with `pad_ok` any
    padded window), no mirror (unless `mirror_ok`), no channel padding, a float output in HWC
    or CHW."""
    meta = cmn.inputs[0]
    if meta.layout != "HWC" or (meta.shapes[:, 2] != 3).any() or cmn.pad_output:
        return None
    if cmn.out_layout not in ("HWC", "CHW") or spec.dtype.name not in ("f32", "f16"):
        return None
    start, size = np.asarray(cmn.window_start), np.asarray(cmn.window_size)
    if crop_ok:  # any window inside the image (no fill), or padded where `pad_ok`
        fits = start.shape == size.shape == (len(meta.shapes), 2) and (
            (pad_ok and cmn.out_of_bounds_policy == "pad") or
            bool(((start >= 0) & (start + size <= meta.shapes[:, :2])).all()))  # fmt: skip
    else:  # the whole image
        fits = not start.any() and np.array_equal(size, meta.shapes[:, :2])
    if (np.asarray(cmn.mirror).any() and not mirror_ok) or not fits:
        return None
    gain, bias = np.asarray(cmn.gain), np.asarray(cmn.bias)
    return gain[:, :3], bias[:, :3], cmn.out_layout == "CHW"


@dataclasses.dataclass(frozen=True, slots=True)
class NormStore:
    """A one-pass resample's or warp's normalising store: per sample `v * gain[c] + bias[c]`
    (`[N, 3]`), the window of the core's output it keeps (`(start, size)`, `[N, 2]` rows and
    columns) and whether it mirrors it; CHW or HWC."""

    gain: np.ndarray
    bias: np.ndarray
    chw: bool
    mirror: np.ndarray
    window: tuple[np.ndarray, np.ndarray]
    fill: np.ndarray | None = None  # `[N, 3]`: the window reaches beyond the core's output,
    # whose missing pixels take these values as stored (crop_mirror_normalize's pad)


LIMIT = 2**30  # elements of a source or output sample the one-pass kernels index in int32


def normalising_store(members: list[Any], source: Any, pad_ok: bool = False
                      ) -> NormStore | None:  # fmt: skip
    """The store of `[core, (flip,) crop_mirror_normalize]` (prepared members; the flip folded
    into the window and `mirror`), or None when a fused store cannot make it (see `gpu_norm`;
    `pad_ok`: the kernel fills a window's pixels beyond the core's output) or a sample of
    `source` (the pass's input description) or of the output is too large."""
    cmn = members[-1]
    call = cmn.call
    if len(members) == 3:
        call = mirrored_cmn(members[1].call, call)
        if call is None:
            return None
    norm = gpu_norm(call, cmn.specs[0], mirror_ok=True, crop_ok=True, pad_ok=pad_ok)
    if norm is None or max(int(source.shapes.prod(axis=1).max(initial=0)),
                           int(cmn.specs[0].shapes.prod(axis=1).max(initial=0))) >= LIMIT:
        return None  # fmt: skip
    start, size = np.asarray(call.window_start), np.asarray(call.window_size)
    extent = call.inputs[0].shapes[:, :2]
    inside = bool(((start >= 0) & (start + size <= extent)).all())
    fill = None if inside else np.asarray(call.fill, np.float64)[:, :3]
    return NormStore(*norm, np.asarray(call.mirror), (start, size), fill)
