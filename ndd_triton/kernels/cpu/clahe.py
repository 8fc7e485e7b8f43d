"""clahe on the CPU: vectorised NumPy port of OpenCV 4.x CLAHE arithmetic (float32 blend)."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import clahe
from ndd_triton.ops.schema import SampleArgs


def clip_histograms(hist: np.ndarray, limit: int) -> np.ndarray:
    """Cap every `[T, bins]` histogram at `limit`; spread the excess as OpenCV does."""
    bins = hist.shape[1]
    clipped = np.maximum(hist - limit, 0).sum(axis=1, keepdims=True)
    hist = np.minimum(hist, limit) + clipped // bins
    residual = clipped - (clipped // bins) * bins
    step = np.maximum(bins // np.maximum(residual, 1), 1)
    i = np.arange(bins)[None, :]
    hist += ((i % step == 0) & (i // step < residual)).astype(hist.dtype)
    return hist


def tile_luts(plane: np.ndarray, tiles_x: int, tiles_y: int, clip_limit: float, bins: int
              ) -> tuple[np.ndarray, int, int]:  # fmt: skip
    """`([tiles_y, tiles_x, 256] float32 LUTs, tile_h, tile_w)` of one uint8 plane."""
    h, w = plane.shape
    if h % tiles_y or w % tiles_x:  # OpenCV pads bottom/right (reflect-101) to the grid
        plane = np.pad(plane, ((0, tiles_y - h % tiles_y), (0, tiles_x - w % tiles_x)),
                       mode="reflect")  # fmt: skip
    th, tw = plane.shape[0] // tiles_y, plane.shape[1] // tiles_x
    area = th * tw
    tiles = plane[:tiles_y * th, :tiles_x * tw].reshape(tiles_y, th, tiles_x, tw)
    codes = (plane_bins(tiles, bins).transpose(0, 2, 1, 3).reshape(tiles_y * tiles_x, area)
             + np.arange(tiles_y * tiles_x)[:, None] * bins)  # fmt: skip
    hist = np.bincount(codes.reshape(-1), minlength=tiles_y * tiles_x * bins).reshape(-1, bins)
    if clip_limit > 0:
        # (a limit >= the tile area clips nothing: also keeps clip_limit=1e30 a C long)
        hist = clip_histograms(hist, max(int(min(clip_limit * area / bins, area)), 1))
    scale = np.float32(255.0) / np.float32(area)
    luts = np.clip(np.rint(np.cumsum(hist, axis=1).astype(np.float32) * scale), 0, 255)
    luts = luts.astype(np.float32).reshape(tiles_y, tiles_x, bins)
    return luts[:, :, plane_bins(np.arange(256), bins)], th, tw


def plane_bins(values: np.ndarray, bins: int) -> np.ndarray:
    """Histogram bin of each uint8 value (identity for 256 bins)."""
    return values.astype(np.int64) if bins == 256 else values.astype(np.int64) * bins // 256


def _axis_weights(n: int, tile: int, tiles: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pos = np.arange(n, dtype=np.float32) * (np.float32(1.0) / np.float32(tile)) - np.float32(0.5)
    first = np.floor(pos)
    frac = (pos - first).astype(np.float32)
    first = first.astype(np.int64)
    return np.maximum(first, 0), np.minimum(first + 1, tiles - 1), frac


def clahe_plane(plane: np.ndarray, tiles_x: int, tiles_y: int, clip_limit: float,
                bins: int = 256) -> np.ndarray:  # fmt: skip
    """CLAHE of one `[H, W]` uint8 plane (OpenCV's bilinear blend of the 4 nearest LUTs)."""
    luts, th, tw = tile_luts(plane, tiles_x, tiles_y, clip_limit, bins)
    y1, y2, ya = _axis_weights(plane.shape[0], th, tiles_y)
    x1, x2, xa = _axis_weights(plane.shape[1], tw, tiles_x)
    v = plane.astype(np.int64)
    ya, xa = ya[:, None], xa[None, :]
    one = np.float32(1.0)
    top = luts[y1[:, None], x1[None, :], v] * (one - xa) + luts[y1[:, None], x2[None, :], v] * xa
    bot = luts[y2[:, None], x1[None, :], v] * (one - xa) + luts[y2[:, None], x2[None, :], v] * xa
    res = top * (one - ya) + bot * ya
    return np.clip(np.rint(res), 0, 255).astype(np.uint8)  # type: ignore[no-any-return]


@register(clahe.schema, "cpu")
def clahe_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Equalise one HWC sample (per channel, or the luma of RGB when `luma_only`)."""
    grid = (arg.tiles_x, arg.tiles_y, arg.clip_limit, arg.bins)
    if inp.size == 0:
        return
    if inp.shape[2] == 3 and arg.luma_only:
        rgb = inp.astype(np.float32)
        luma = rgb @ np.array([0.299, 0.587, 0.114], np.float32)
        y = np.clip(np.rint(luma), 0, 255).astype(np.uint8)
        gain = clahe_plane(y, *grid).astype(np.float32) / np.maximum(luma, np.float32(1e-3))
        out[...] = np.clip(np.rint(rgb * gain[..., None]), 0, 255).astype(np.uint8)
        return
    for c in range(inp.shape[2]):
        out[..., c] = clahe_plane(np.ascontiguousarray(inp[..., c]), *grid)
