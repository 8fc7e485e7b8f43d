"""tools/dali_diff.py generators: filters, normalize and colour ops."""

from __future__ import annotations

import numpy as np
from dali_cases import (
    ATOL1,
    F32,
    I16,
    PS,
    U8,
    Case,
    D,
    E,
    Inp,
    _f,
    _images,
    _layout_imgs,
    _maybe,
    _per_sample_f,
)


def g_gaussian_blur(rng):
    imgs, lay = _layout_imgs(rng, (U8, I16, F32))
    a: dict = {}
    r = rng.random()
    if r < 0.4:
        a["sigma"] = _f(rng, 0.2, 3) if _maybe(rng) else [_f(rng, 0.2, 3), _f(rng, 0.2, 3)]
    elif r < 0.7:
        a["window_size"] = int(rng.choice([1, 3, 5, 7, 9]))
    else:
        a["sigma"] = _f(rng, 0.2, 3)
        a["window_size"] = [int(rng.choice([1, 3, 5, 7])), int(rng.choice([1, 3, 5, 7]))]
    if _maybe(rng, 0.2):
        a["dtype"] = D("float32")
    fl = imgs[0].dtype == F32 or "dtype" in a
    return Case(
        "gaussian_blur",
        [Inp("batch", imgs, lay)],
        a,
        {"atol": 1e-3, "rtol": 1e-4, "mismatch_frac": 0} if fl else ATOL1,
    )

def g_laplacian(rng):
    imgs, lay = _layout_imgs(rng, (U8, I16, F32))
    a: dict = {}
    a["window_size"] = int(rng.choice([1, 3, 5, 7])) if _maybe(rng) else 3
    if a["window_size"] == 1:
        a["window_size"] = 3
    if _maybe(rng):
        a["smoothing_size"] = int(rng.choice([1, 3, 5]))
    if _maybe(rng, 0.3):
        a["normalized_kernel"] = True
    elif _maybe(rng, 0.4):
        a["scale"] = _f(rng, 0.01, 2)
    if _maybe(rng, 0.3):
        a["dtype"] = D("float32")
    fl = imgs[0].dtype == F32 or "dtype" in a
    return Case(
        "laplacian",
        [Inp("batch", imgs, lay)],
        a,
        {"atol": 1e-2, "rtol": 1e-4, "mismatch_frac": 0} if fl else ATOL1,
    )

def g_filter(rng):
    imgs = _images(rng, dtypes=(U8, I16, F32, np.uint16))  # DALI's CPU filter rejects int8
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    k = rng.uniform(-1, 1, (kh, kw)).astype(F32).round(3)
    a: dict = {}
    a["border"] = str(rng.choice(["reflect_101", "reflect_1001", "wrap", "clamp", "constant"]))
    if _maybe(rng, 0.3):
        a["mode"] = "valid"
    elif _maybe(rng, 0.3):
        a["anchor"] = [int(rng.integers(0, kh)), int(rng.integers(0, kw))]
    if _maybe(rng, 0.3):
        a["dtype"] = D("float32")
    ins = [Inp("batch", imgs, "HWC"), Inp("tensor", k)]
    if a["border"] == "constant" and _maybe(rng):
        ins.append(Inp("tensor", np.array(7, imgs[0].dtype)))
    fl = imgs[0].dtype == F32 or "dtype" in a
    return Case("filter", ins, a, {"atol": 1e-3, "rtol": 1e-4, "mismatch_frac": 0} if fl else ATOL1)

def g_normalize(rng):
    imgs = _images(rng, dtypes=(U8, F32, I16))
    a: dict = {}
    r = rng.random()
    if r < 0.3:
        a["axes"] = [int(v) for v in sorted(rng.choice(3, int(rng.integers(1, 3)), False))]
    elif r < 0.5:
        a["axis_names"] = str(rng.choice(["HW", "W", "C", "HWC"]))
    if _maybe(rng, 0.2) and len({i.shape[2] for i in imgs}) == 1:
        a["batch"] = True
        a.pop("axis_names", None)
        a["axes"] = [0, 1]
    # DALI wants mean/stddev shaped like the reduced sample (reduced axes 1, others full)
    if "axes" in a:
        red = set(a["axes"])
    elif "axis_names" in a:
        red = {"HWC".index(c) for c in a["axis_names"]}
    else:
        red = {0, 1, 2}

    def param(lo, hi):
        return PS([np.full([1 if d in red else e for d, e in enumerate(i.shape)], _f(rng, lo, hi),
                           F32) for i in imgs])  # fmt: skip

    if _maybe(rng, 0.3) and not a.get("batch"):
        a["mean"] = param(0, 100)
    if _maybe(rng, 0.2) and not a.get("batch"):
        a["stddev"] = param(1, 50)
    if _maybe(rng, 0.3):
        a["ddof"] = int(rng.integers(0, 2))
    if _maybe(rng, 0.3):
        a["epsilon"] = _f(rng, 0, 5)
    if _maybe(rng, 0.4):
        a["scale"] = _f(rng, 0.5, 60)
        a["shift"] = _f(rng, 0, 128)
    if _maybe(rng, 0.2):
        a["dtype"] = D(str(rng.choice(["uint8", "int16", "int32"])))
    tol = ATOL1 if "dtype" in a else {"atol": 2e-3, "rtol": 1e-4, "mismatch_frac": 0}
    return Case("normalize", [Inp("batch", imgs, "HWC")], a, tol)

def g_equalize(rng):
    imgs = _images(rng, big=30, lo=int(rng.integers(0, 100)), hi=int(rng.integers(100, 256)))
    return Case("equalize", [Inp("batch", imgs, "HWC")], {}, ATOL1)

_CSC = [
    ("RGB", "BGR", 3),
    ("RGB", "GRAY", 3),
    ("BGR", "GRAY", 3),
    ("GRAY", "RGB", 1),
    ("RGB", "YCbCr", 3),
    ("YCbCr", "RGB", 3),
    ("GRAY", "YCbCr", 1),
    ("YCbCr", "GRAY", 3),
    ("BGR", "YCbCr", 3),
    ("YCbCr", "BGR", 3),
    ("BGR", "RGB", 3),
    ("GRAY", "BGR", 1),
]

def g_color_space_conversion(rng):
    src, dst, c = _CSC[int(rng.integers(len(_CSC)))]
    imgs = _images(rng, c=c, seq=_maybe(rng, 0.2))
    lay = "FHWC" if imgs[0].ndim == 4 else "HWC"
    return Case(
        "color_space_conversion",
        [Inp("batch", imgs, lay)],
        {"image_type": E("DALIImageType", src), "output_type": E("DALIImageType", dst)},
        ATOL1,
    )

def _color(rng, op, params, c=None, dtypes=(U8, F32, I16)):
    imgs = _images(rng, dtypes=dtypes, c=c, seq=_maybe(rng, 0.15))
    if imgs[0].dtype == I16:
        imgs = [np.abs(i) for i in imgs]
    lay = "FHWC" if imgs[0].ndim == 4 else "HWC"
    a: dict = {}
    for k, lo, hi in params:
        if _maybe(rng, 0.7):
            a[k] = _f(rng, lo, hi) if _maybe(rng, 0.7) else _per_sample_f(rng, len(imgs), lo, hi)
    if _maybe(rng, 0.2):
        a["dtype"] = D(str(rng.choice(["float32", "uint8", "int16"])))
    fl = (imgs[0].dtype == F32 and "dtype" not in a and op != "hsv") or (
        "dtype" in a and a["dtype"].name == "float32"
    )
    tol = {"atol": 1e-3, "rtol": 1e-4, "mismatch_frac": 0} if fl else ATOL1
    return Case(op, [Inp("batch", imgs, lay)], a, tol)

def g_brightness(rng):
    return _color(rng, "brightness", [("brightness", 0, 2), ("brightness_shift", -0.3, 0.3)])

def g_contrast(rng):
    return _color(rng, "contrast", [("contrast", 0, 2), ("contrast_center", 0, 200)])

def g_brightness_contrast(rng):
    return _color(rng, "brightness_contrast", [("brightness", 0, 2), ("brightness_shift",
                  -0.3, 0.3), ("contrast", 0, 2), ("contrast_center", 0, 200)])  # fmt: skip

def g_hue(rng):
    return _color(rng, "hue", [("hue", -400, 400)], c=3)

def g_saturation(rng):
    return _color(rng, "saturation", [("saturation", -1, 3)], c=3)

def g_hsv(rng):
    return _color(rng, "hsv", [("hue", -400, 400), ("saturation", 0, 2), ("value", 0, 2)], c=3)

def g_color_twist(rng):
    return _color(rng, "color_twist", [("hue", -400, 400), ("saturation", 0, 2),
                  ("brightness", 0, 2), ("contrast", 0, 2)], c=3)  # fmt: skip
