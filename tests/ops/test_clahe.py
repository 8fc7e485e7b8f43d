"""clahe: a plain-loop reference of OpenCV 4.x CLAHE, on the cpu and the emulated gpu (the CPU
kernel was also checked bit-exact against cv2.createCLAHE(...).apply on 60 random
single-channel configurations, OpenCV 5.0.0)."""

import math

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def ref_plane(img, tiles_x, tiles_y, clip_limit):
    h, w = img.shape
    ext = img
    if h % tiles_y or w % tiles_x:
        ext = np.pad(img, ((0, tiles_y - h % tiles_y), (0, tiles_x - w % tiles_x)),
                     mode="reflect")  # fmt: skip
    th, tw = ext.shape[0] // tiles_y, ext.shape[1] // tiles_x
    area = th * tw
    luts = np.zeros((tiles_y, tiles_x, 256), np.float32)
    for ty in range(tiles_y):
        for tx in range(tiles_x):
            hist = [0] * 256
            for v in ext[ty * th:(ty + 1) * th, tx * tw:(tx + 1) * tw].reshape(-1):
                hist[int(v)] += 1
            if clip_limit > 0:
                limit = max(int(clip_limit * area / 256), 1)
                clipped = sum(max(c - limit, 0) for c in hist)
                hist = [min(c, limit) + clipped // 256 for c in hist]
                residual = clipped % 256
                step = max(256 // residual, 1) if residual else 1
                i = 0
                while i < 256 and residual > 0:
                    hist[i] += 1
                    i += step
                    residual -= 1
            total = 0
            for v in range(256):
                total += hist[v]
                luts[ty, tx, v] = min(255, round(np.float32(total) * (np.float32(255) / area)))
    out = np.empty_like(img)
    for y in range(h):
        fy = np.float32(y) * (np.float32(1) / th) - np.float32(0.5)
        y1 = math.floor(fy)
        ya = fy - np.float32(y1)
        y1, y2 = max(y1, 0), min(y1 + 1, tiles_y - 1)
        for x in range(w):
            fx = np.float32(x) * (np.float32(1) / tw) - np.float32(0.5)
            x1 = math.floor(fx)
            xa = fx - np.float32(x1)
            x1, x2 = max(x1, 0), min(x1 + 1, tiles_x - 1)
            v = img[y, x]
            top = luts[y1, x1, v] * (1 - xa) + luts[y1, x2, v] * xa
            bot = luts[y2, x1, v] * (1 - xa) + luts[y2, x2, v] * xa
            out[y, x] = min(255, max(0, round(float(top * (1 - ya) + bot * ya))))
    return out


def ref_clahe(x, tiles_x, tiles_y, clip_limit, luma_only=True):
    if x.shape[2] == 3 and luma_only:
        rgb = x.astype(np.float32)
        luma = rgb @ np.array([0.299, 0.587, 0.114], np.float32)
        y = np.clip(np.rint(luma), 0, 255).astype(np.uint8)
        gain = ref_plane(y, tiles_x, tiles_y, clip_limit) / np.maximum(luma, np.float32(1e-3))
        return np.clip(np.rint(rgb * gain[..., None]), 0, 255).astype(np.uint8)
    return np.stack([ref_plane(x[..., c], tiles_x, tiles_y, clip_limit)
                     for c in range(x.shape[2])], axis=-1)  # fmt: skip


def images(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [np.clip(rng.normal(90, 25, size=s), 0, 255).astype(np.uint8) for s in shapes]


@pytest.mark.parametrize(("tiles", "clip"), [((2, 3), 2.0), ((4, 4), 0.0), ((3, 1), 40.0)])
def test_gray_and_per_channel(tiles, clip):
    args = {"tiles_x": tiles[0], "tiles_y": tiles[1], "clip_limit": clip, "luma_only": False}
    check_op(ndd.clahe, images([(12, 17, 1), (9, 8, 3), (2, 3, 1)]), ref_clahe, args=args,
             layout="HWC", all_modes=clip == 2.0)  # fmt: skip


def test_rgb_luma_only():
    check_op(ndd.clahe, images([(10, 13, 3), (16, 16, 3)]), ref_clahe,
             args={"tiles_x": 2, "tiles_y": 2, "clip_limit": 1.5}, layout="HWC",
             all_modes=False)  # fmt: skip


def test_one_launch_per_ragged_batch():
    batch = ndd.as_batch(images([(7, 9, 3), (12, 5, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.clahe(batch, tiles_x=3, tiles_y=2, clip_limit=2.0).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


def test_clahe_errors():
    x = np.zeros((8, 8, 3), np.uint8)
    with raises_at_call(TypeError, match="missing 3 required keyword-only arguments"):
        ndd.clahe(x)
    with raises_at_call(ValueError, match="clahe: argument 'tiles_x' must be > 0; got 0"):
        ndd.clahe(x, tiles_x=0, tiles_y=2, clip_limit=1.0)
    with raises_at_call(ValueError, match="argument 'clip_limit' must be >= 0"):
        ndd.clahe(x, tiles_x=2, tiles_y=2, clip_limit=-1.0)
    with raises_at_call(TypeError, match="clahe: input 0 has dtype f32; only uint8"):
        ndd.clahe(x.astype(np.float32), tiles_x=2, tiles_y=2, clip_limit=1.0)
    with raises_at_call(ValueError, match="input 0 sample 0: expected 1 or 3 channels; got 2"):
        ndd.clahe(np.zeros((8, 8, 2), np.uint8), tiles_x=2, tiles_y=2, clip_limit=1.0)
    with raises_at_call(ValueError, match="clahe: input 0 has layout 'HW'"):
        ndd.clahe(ndd.as_tensor(np.zeros((8, 8), np.uint8), layout="HW"), tiles_x=2, tiles_y=2,
                  clip_limit=1.0)  # fmt: skip
    with raises_at_call(ValueError, match="clahe: argument 'bins' must be 256 on the gpu; got 64"):
        ndd.clahe(ndd.as_tensor(x).gpu(), tiles_x=2, tiles_y=2, clip_limit=1.0, bins=64)
    mixed = ndd.as_batch([x, np.zeros((8, 8, 1), np.uint8)]).gpu()
    with raises_at_call(ValueError, match="mixing 1- and 3-channel samples with luma_only=True"):
        ndd.clahe(mixed, tiles_x=2, tiles_y=2, clip_limit=1.0)
