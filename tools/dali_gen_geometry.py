"""tools/dali_diff.py generators: geometry ops (one random case per call)."""

from __future__ import annotations

import numpy as np
from dali_cases import (
    ATOL1,
    EXACT,
    F32,
    I16,
    PS,
    U8,
    Case,
    D,
    E,
    Inp,
    T,
    _f,
    _images,
    _img,
    _layout_imgs,
    _maybe,
    _per_sample_f,
)


def g_rotate(rng):
    seq = _maybe(rng, 0.15)
    imgs = _images(rng, dtypes=(U8, U8, I16, F32, np.int32), seq=seq)
    nn = _maybe(rng, 0.3)
    a: dict = {}
    r = rng.random()
    if r < 0.3:
        a["angle"] = float(rng.choice([0, 45, 90, 135, 180, -90, 270, 360, -45, 450]))
    elif r < 0.6 or seq:
        a["angle"] = _f(rng, -400, 400, 2)
    else:
        a["angle"] = _per_sample_f(rng, len(imgs), -400, 400, 2)
    if _maybe(rng, 0.4):
        a["fill_value"] = _f(rng, 0, 255, 1)
    if nn:
        a["interp_type"] = E("DALIInterpType", "INTERP_NN")
    r = rng.random()
    if r < 0.15:
        a["keep_size"] = True
    elif r < 0.3:
        a["size"] = [int(rng.integers(1, 50)), int(rng.integers(1, 50))]
    if _maybe(rng, 0.15):
        a["dtype"] = D("float32")
    tol = {"atol": 1, "rtol": 0, "mismatch_frac": 0.02 if nn else 0.005}
    if imgs[0].dtype == F32 or "dtype" in a:
        tol = {"atol": 1e-3, "rel_max": 1e-4, "rtol": 1e-5, "mismatch_frac": tol["mismatch_frac"]}
    return Case("rotate", [Inp("batch", imgs, "FHWC" if seq else "HWC")], a, tol)

def g_warp_affine(rng):
    imgs = _images(rng, dtypes=(U8, I16, F32))
    nn = _maybe(rng, 0.3)
    s, t = _f(rng, 0.3, 2.0), _f(rng, -0.5, 0.5)
    m = [s, t, _f(rng, -10, 10, 2), _f(rng, -0.5, 0.5), _f(rng, 0.3, 2.0), _f(rng, -10, 10, 2)]
    a: dict = {"matrix": m}
    if _maybe(rng, 0.3):
        a["inverse_map"] = False
    if _maybe(rng, 0.5):
        a["fill_value"] = _f(rng, 0, 255, 1)
    if nn:
        a["interp_type"] = E("DALIInterpType", "INTERP_NN")
    if _maybe(rng, 0.4):
        a["size"] = [int(rng.integers(1, 50)), int(rng.integers(1, 50))]
    tol = {"atol": 1, "rtol": 0, "mismatch_frac": 0.02 if nn else 0.005}
    if imgs[0].dtype == F32:
        tol = {"atol": 1e-3, "rel_max": 1e-4, "rtol": 1e-5, "mismatch_frac": tol["mismatch_frac"]}
    if _maybe(rng, 0.3):  # the matrix as a second input, one per sample
        del a["matrix"]
        mats = [np.array(m, F32).reshape(2, 3) + rng.uniform(-0.2, 0.2, (2, 3)).astype(F32)
                for _ in imgs]  # fmt: skip
        return Case("warp_affine", [Inp("batch", imgs, "HWC"), Inp("batch", mats)], a, tol)
    return Case("warp_affine", [Inp("batch", imgs, "HWC")], a, tol)

def g_flip(rng):
    imgs, lay = _layout_imgs(rng)
    a = {}
    for k in ("horizontal", "vertical"):
        if _maybe(rng, 0.7):
            a[k] = (
                int(rng.integers(0, 2))
                if _maybe(rng)
                else PS([np.int32(rng.integers(0, 2)) for _ in imgs])
            )
    return Case("flip", [Inp("batch", imgs, lay)], a, EXACT)

def g_crop(rng):
    imgs, lay = _layout_imgs(rng, (U8, I16, F32))
    a: dict = {}
    hmax = max(i.shape[lay.index("H")] for i in imgs)
    wmax = max(i.shape[lay.index("W")] for i in imgs)
    if _maybe(rng, 0.6):
        a["crop"] = [_f(rng, 1, hmax + 0.99, 2), _f(rng, 1, wmax + 0.99, 2)]
    else:
        a["crop_h"] = int(rng.integers(1, hmax + 1))
        a["crop_w"] = int(rng.integers(1, wmax + 1))
    for k in ("crop_pos_x", "crop_pos_y"):
        if _maybe(rng):
            a[k] = _f(rng, 0, 1) if _maybe(rng) else _per_sample_f(rng, len(imgs), 0, 1)
    if _maybe(rng, 0.3):
        a["rounding"] = "truncate"
    pol = str(rng.choice(["error", "pad", "trim_to_shape", "error"]))
    if pol != "error":
        a["out_of_bounds_policy"] = pol
    else:
        a["out_of_bounds_policy"] = "pad"
    if pol == "pad" and _maybe(rng):
        a["fill_values"] = [float(rng.choice([_f(rng, 0, 255, 1), 300.0, -5.0, 2.5, 70000.0]))]
    if _maybe(rng, 0.25):
        a["dtype"] = D(str(rng.choice(["float32", "uint8"])))
    return Case("crop", [Inp("batch", imgs, lay)], a, ATOL1 if "dtype" in a else EXACT)

def g_pad(rng):
    n = int(rng.integers(1, 4))
    nd = int(rng.integers(1, 4))
    dt = [U8, I16, F32, np.int32][int(rng.integers(4))]
    ch = int(rng.integers(1, 4))
    samples = []
    for _ in range(n):
        shp = [int(v) for v in rng.integers(1, 7, nd)]
        if nd > 1:
            shp[-1] = ch
        samples.append(_img(rng, int(np.prod(shp)), 1, 0, dt).reshape(shp))
    a: dict = {}
    nd = samples[0].ndim
    axes = None
    if _maybe(rng):
        k = int(rng.integers(1, nd + 1))
        axes = sorted(int(v) for v in rng.choice(nd, k, replace=False))
        if _maybe(rng, 0.3):
            axes = [ax - nd for ax in axes]
        a["axes"] = axes
    npad = len(axes) if axes is not None else nd
    if _maybe(rng):
        a["shape"] = [int(rng.choice([-1, int(rng.integers(1, 9))])) for _ in range(npad)]
        if _maybe(rng, 0.3):
            a["shape"] = a["shape"][:1]
    if _maybe(rng):
        a["align"] = (
            [int(rng.integers(1, 6)) for _ in range(npad)]
            if _maybe(rng)
            else int(rng.integers(1, 6))
        )
    if _maybe(rng):
        a["fill_value"] = float(rng.choice([-1.0, 300.0, 7.0, 2.5, -3.7]))
    return Case("pad", [Inp("batch", samples, "")], a, EXACT)

def g_slice(rng):
    imgs = _images(rng, dtypes=(U8, I16, F32))
    a: dict = {}
    mode = rng.integers(4)
    hmax = max(i.shape[0] for i in imgs)
    wmax = max(i.shape[1] for i in imgs)
    if mode == 0:
        a["rel_start"] = [_f(rng, 0, 0.6), _f(rng, 0, 0.6)]
        a["rel_shape"] = [_f(rng, 0.05, 0.4), _f(rng, 0.05, 0.4)]
    elif mode == 1:
        a["start"] = [int(rng.integers(-3, 4)), int(rng.integers(-3, 4))]
        a["shape"] = [int(rng.integers(1, wmax + 4)), int(rng.integers(1, hmax + 4))]
    elif mode == 2:
        a["rel_start"] = [_f(rng, 0, 0.5), _f(rng, 0, 0.5)]
        a["rel_end"] = [_f(rng, 0.5, 1), _f(rng, 0.5, 1)]
    else:
        a["start"] = [int(rng.integers(0, 3)), int(rng.integers(0, 3))]
        a["end"] = [int(rng.integers(3, 9)), int(rng.integers(3, 9))]
    if _maybe(rng, 0.4):
        a["axes"] = [0, 1]
    elif _maybe(rng, 0.3):
        a["axis_names"] = "HW"
    pol = str(rng.choice(["pad", "edge", "reflect_1001", "reflect_101", "wrap", "trim_to_shape"]))
    a["out_of_bounds_policy"] = pol
    if pol == "pad" and _maybe(rng):
        a["fill_values"] = [float(rng.choice([_f(rng, 0, 255, 1), 300.0, -5.0, 2.5, 70000.0]))]
    if _maybe(rng, 0.2):
        a["dtype"] = D(str(rng.choice(["float32", "uint8"])))
    tol = ATOL1 if "dtype" in a else EXACT
    if _maybe(rng, 0.3):  # positional anchor / shape (float: relative; int: absolute)
        for k in ("start", "shape", "end", "rel_start", "rel_shape", "rel_end"):
            a.pop(k, None)
        if _maybe(rng):
            anc = [np.array([_f(rng, 0, 0.5), _f(rng, 0, 0.5)], F32) for _ in imgs]
            shp = [np.array([_f(rng, 0.1, 0.5), _f(rng, 0.1, 0.5)], F32) for _ in imgs]
            if _maybe(rng):
                a["normalized_anchor"] = a["normalized_shape"] = True
        else:
            anc = [np.array([int(rng.integers(-2, 5)), int(rng.integers(-2, 5))], np.int32)
                   for _ in imgs]  # fmt: skip
            shp = [np.array([int(rng.integers(1, 9)), int(rng.integers(1, 9))], np.int32)
                   for _ in imgs]  # fmt: skip
        return Case("slice", [Inp("batch", imgs, "HWC"), Inp("batch", anc), Inp("batch", shp)],
                    a, tol)  # fmt: skip
    return Case("slice", [Inp("batch", imgs, "HWC")], a, tol)

def g_paste(rng):
    c = int(rng.choice([1, 3, 4]))
    imgs = _images(rng, c=c)
    a = {
        "ratio": _f(rng, 1, 2.5) if _maybe(rng) else _per_sample_f(rng, len(imgs), 1, 2.5),
        "fill_value": [int(v) for v in rng.integers(0, 256, c)],
        "n_channels": c,
    }
    for k in ("paste_x", "paste_y"):
        if _maybe(rng):
            a[k] = _f(rng, 0, 1)
    if _maybe(rng, 0.3):
        a["min_canvas_size"] = _f(rng, 1, 60, 1)
    return Case("paste", [Inp("batch", imgs, "HWC")], a, EXACT)

def g_erase(rng):
    imgs, lay = _layout_imgs(rng, (U8, I16, F32))
    nreg = int(rng.integers(1, 4))
    a: dict = {}
    norm = _maybe(rng, 0.3)
    lo, hi = (-0.2, 1.0) if norm else (-3, 30)
    a["anchor"] = [_f(rng, lo, hi, 2) for _ in range(2 * nreg)]
    a["shape"] = [_f(rng, 0, (hi - lo) / 2, 2) for _ in range(2 * nreg)]
    a["axis_names"] = "HW"
    if norm:
        a["normalized"] = True
    if _maybe(rng, 0.3):
        a["centered_anchor"] = True
    if _maybe(rng):
        a["fill_value"] = [float(rng.choice([7.0, -1.0, 300.0, 2.5]))]
    return Case("erase", [Inp("batch", imgs, lay)], a, EXACT)

def g_water(rng):
    imgs = _images(rng, dtypes=(U8, F32), big=50)
    a: dict = {}
    for k, lo, hi in (("ampl_x", -15, 15), ("ampl_y", -15, 15), ("freq_x", 0, 0.3),
                      ("freq_y", 0, 0.3), ("phase_x", -3, 3), ("phase_y", -3, 3),
                      ("fill_value", 0, 200)):  # fmt: skip
        if _maybe(rng):
            a[k] = _f(rng, lo, hi)
    if _maybe(rng, 0.3):
        a["interp_type"] = E("DALIInterpType", "INTERP_LINEAR")
    tol = {"atol": 1, "rtol": 1e-4, "mismatch_frac": 0.02}
    return Case("water", [Inp("batch", imgs, "HWC")], a, tol)

def g_sphere(rng):
    imgs = _images(rng, dtypes=(U8, F32), big=50)
    a: dict = {}
    if _maybe(rng):
        a["fill_value"] = _f(rng, 0, 200)
    if _maybe(rng, 0.3):
        a["interp_type"] = E("DALIInterpType", "INTERP_LINEAR")
    return Case(
        "sphere", [Inp("batch", imgs, "HWC")], a, {"atol": 1, "rtol": 1e-4, "mismatch_frac": 0.02}
    )

def g_resize(rng):
    imgs = _images(rng, dtypes=(U8, F32, I16), big=50)
    a: dict = {}
    r = rng.random()
    if r < 0.35:
        a["size"] = [_f(rng, 1, 60, 1), _f(rng, 1, 60, 1)]
        if _maybe(rng, 0.2):
            a["size"][int(rng.integers(2))] = 0
    elif r < 0.55:
        a["resize_x"] = _f(rng, 1, 60, 1)
        if _maybe(rng):
            a["resize_y"] = _f(rng, 1, 60, 1)
    elif r < 0.7:
        a["resize_shorter"] = _f(rng, 1, 60, 1)
    elif r < 0.8:
        a["resize_longer"] = _f(rng, 1, 60, 1)
    else:
        a["size"] = int(rng.integers(1, 60))
    if (_maybe(rng, 0.3) and "size" in a) or ("resize_x" in a and "resize_y" in a):
        a["mode"] = str(rng.choice(["default", "stretch", "not_larger", "not_smaller"]))
    if _maybe(rng, 0.2):
        a["max_size"] = int(rng.integers(5, 50))
    interp = str(rng.choice(["INTERP_LINEAR", "INTERP_NN", "INTERP_CUBIC", "INTERP_LANCZOS3",
                             "INTERP_TRIANGULAR", "INTERP_GAUSSIAN"]))  # fmt: skip
    if interp != "INTERP_LINEAR" or _maybe(rng, 0.3):
        a["interp_type"] = E("DALIInterpType", interp)
    if _maybe(rng, 0.3):
        a["antialias"] = False
    if _maybe(rng, 0.2):
        a["roi_start"] = [_f(rng, 0, 0.4), _f(rng, 0, 0.4)]
        a["roi_end"] = [_f(rng, 0.6, 1), _f(rng, 0.6, 1)]
        a["roi_relative"] = True
    if _maybe(rng, 0.2):
        a["dtype"] = D("float32")
    if _maybe(rng, 0.15):
        a["subpixel_scale"] = False
    fl = imgs[0].dtype == F32 or "dtype" in a
    nn = interp == "INTERP_NN"
    tol = {"atol": 1e-2 if fl else 1, "rtol": 1e-4, "mismatch_frac": 0.01 if nn else 0}
    return Case("resize", [Inp("batch", imgs, "HWC")], a, tol)

def g_resize_nd(rng):
    """resize beyond HWC: CHW, sequences (FHWC), volumes (DHWC); per-axis sizes, min/mag filters,
    absolute (possibly flipped) ROIs; NN must match exactly."""
    layout = str(rng.choice(["CHW", "FHWC", "DHWC", "HWC"]))
    dt = [U8, F32, I16][int(rng.integers(3))]
    if layout == "DHWC":
        imgs = [np.stack([_img(rng, h, w, c, dt) for _ in range(d)])
                for d, h, w, c in (rng.integers(1, 12, 3).tolist() + [int(rng.integers(1, 4))]
                                   for _ in range(int(rng.integers(1, 3))))]  # fmt: skip
    elif layout == "FHWC":
        imgs = _images(rng, dtypes=(dt,), seq=True, big=30)
    else:
        imgs = _images(rng, dtypes=(dt,), big=40)
        if layout == "CHW":
            imgs = [np.ascontiguousarray(np.moveaxis(i, 2, 0)) for i in imgs]
    spatial = [c for c in layout if c in "DHW"]
    a: dict = {}
    if _maybe(rng, 0.7):
        a["size"] = [_f(rng, 1, 40, int(rng.integers(0, 3))) for _ in spatial]
        if _maybe(rng, 0.2):
            a["size"][int(rng.integers(len(spatial)))] = 0
    else:
        for c in spatial:
            if _maybe(rng, 0.7):
                a[f"resize_{c.lower().replace('w', 'x').replace('h', 'y').replace('d', 'z')}"] = \
                    _f(rng, 1, 40, 1)  # fmt: skip
        if not a:
            a["resize_x"] = _f(rng, 1, 40, 1)
    names = ["INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3",
             "INTERP_TRIANGULAR", "INTERP_GAUSSIAN"]  # fmt: skip
    if _maybe(rng, 0.3):
        # NN on some axes and a filter on others hits another DALI 2.4 bug (a column repeated,
        # one lost, with a fractional size): min and mag are both NN or both filters.
        pool = names[:1] if _maybe(rng, 0.2) else names[1:]
        a["min_filter"] = E("DALIInterpType", str(rng.choice(pool)))
        a["mag_filter"] = E("DALIInterpType", str(rng.choice(pool)))
        nn = a["min_filter"].name == "INTERP_NN" and a["mag_filter"].name == "INTERP_NN"
    else:
        interp = str(rng.choice(names))
        a["interp_type"] = E("DALIInterpType", interp)
        nn = interp == "INTERP_NN"
    if _maybe(rng, 0.3):
        a["antialias"] = False
    # An absolute ROI with min/mag filters that differ per axis hits a DALI 2.4 bug (its output
    # columns come out rotated by one, e.g. NN on H and LINEAR on W): not combined.
    if "min_filter" not in a and _maybe(rng, 0.25):  # absolute ROI, an axis maybe flipped
        ext = [min(i.shape[layout.index(c)] for i in imgs) for c in spatial]
        lo = [_f(rng, 0, e * 0.4, 1) for e in ext]
        hi = [_f(rng, e * 0.6, e, 1) for e in ext]
        if _maybe(rng, 0.3):
            k = int(rng.integers(len(spatial)))
            lo[k], hi[k] = hi[k], lo[k]
        a["roi_start"], a["roi_end"], a["roi_relative"] = lo, hi, False
    if _maybe(rng, 0.15):
        a["subpixel_scale"] = False
    fl = dt == F32
    tol = {"atol": 0 if nn else (1e-2 if fl else 1), "rtol": 0 if nn else 1e-4,
           "mismatch_frac": 0}  # fmt: skip
    return Case("resize", [Inp("batch", imgs, layout)], a, tol)


def g_crop_mirror_normalize(rng):
    imgs, lay = _layout_imgs(rng, (U8, F32, I16))
    c = imgs[0].shape[lay.index("C")]
    if lay == "FHWC" or len({i.shape[lay.index("C")] for i in imgs}) > 1:
        imgs, lay = _images(rng, c=3), "HWC"
        c = 3
    a: dict = {}
    hmin = min(i.shape[lay.index("H")] for i in imgs)
    wmin = min(i.shape[lay.index("W")] for i in imgs)
    if _maybe(rng, 0.7):
        a["crop"] = [int(rng.integers(1, hmin + 1)), int(rng.integers(1, wmin + 1))]
        for k in ("crop_pos_x", "crop_pos_y"):
            if _maybe(rng):
                a[k] = _f(rng, 0, 1)
    if _maybe(rng):
        a["mean"] = [_f(rng, 0, 128, 2) for _ in range(c)] if _maybe(rng) else _f(rng, 0, 128)
    if _maybe(rng):
        a["std"] = [_f(rng, 1, 60, 2) for _ in range(c)] if _maybe(rng) else _f(rng, 1, 60)
    if _maybe(rng, 0.3):
        a["scale"] = _f(rng, 0.5, 2)
    if _maybe(rng, 0.3):
        a["shift"] = _f(rng, 0, 128)
    if _maybe(rng, 0.4):
        a["mirror"] = (
            int(rng.integers(0, 2))
            if _maybe(rng)
            else PS([np.int32(rng.integers(0, 2)) for _ in imgs])
        )
    if _maybe(rng, 0.3):
        a["dtype"] = D(str(rng.choice(["uint8", "int8", "float16"])))
    a["output_layout"] = str(rng.choice(["CHW", "HWC"])) if lay == "HWC" else lay
    if _maybe(rng, 0.2):
        a["pad_output"] = True
    dt = a.get("dtype", D("float32")).name
    tol = (
        ATOL1
        if dt in ("uint8", "int8")
        else {"atol": 2e-3 if dt == "float32" else 5e-2, "rtol": 2e-3, "mismatch_frac": 0}
    )
    return Case("crop_mirror_normalize", [Inp("batch", imgs, lay)], a, tol)

def g_grid_mask(rng):
    imgs = _images(rng, dtypes=(U8, F32, I16), big=60)
    a: dict = {}
    if _maybe(rng, 0.8):
        a["tile"] = int(rng.integers(1, 40))
    if _maybe(rng, 0.8):
        a["ratio"] = _f(rng, 0, 1.2)
    if _maybe(rng, 0.6):
        a["angle"] = _f(rng, -3.2, 3.2)
    for k in ("shift_x", "shift_y"):
        if _maybe(rng):
            a[k] = _f(rng, -20, 20)
    return Case(
        "grid_mask", [Inp("batch", imgs, "HWC")], a, {"atol": 0, "rtol": 0, "mismatch_frac": 0.01}
    )

def g_multi_paste(rng):
    c = int(rng.choice([1, 3]))
    imgs = _images(rng, n=int(rng.integers(2, 4)), c=c, big=20)
    n = len(imgs)
    oh, ow = int(rng.integers(10, 30)), int(rng.integers(10, 30))
    ids, anchors, shapes, outs = [], [], [], []
    for _ in range(n):
        r = int(rng.integers(1, 3))
        ids.append(np.array([int(rng.integers(0, n)) for _ in range(r)], np.int32))
        sh, an, ou = [], [], []
        for k in ids[-1]:
            h, w = imgs[k].shape[:2]
            ph, pw = int(rng.integers(1, min(h, oh) + 1)), int(rng.integers(1, min(w, ow) + 1))
            sh.append([ph, pw])
            an.append([int(rng.integers(0, h - ph + 1)), int(rng.integers(0, w - pw + 1))])
            ou.append([int(rng.integers(0, oh - ph + 1)), int(rng.integers(0, ow - pw + 1))])
        shapes.append(np.array(sh, np.int32))
        anchors.append(np.array(an, np.int32))
        outs.append(np.array(ou, np.int32))
    a = {"in_ids": PS(ids), "output_size": [oh, ow], "shapes": PS(shapes),
         "in_anchors": PS(anchors), "out_anchors": PS(outs)}  # fmt: skip
    return Case("multi_paste", [Inp("batch", imgs, "HWC")], a, EXACT)

def g_coord_flip(rng):
    d = int(rng.integers(2, 4))
    pts = [rng.uniform(-0.5, 1.5, (int(rng.integers(1, 6)), d)).astype(F32) for _ in range(2)]
    a: dict = {}
    for k in ("flip_x", "flip_y", "flip_z")[:d]:
        if _maybe(rng):
            a[k] = int(rng.integers(0, 2))
    for k in ("center_x", "center_y", "center_z")[:d]:
        if _maybe(rng):
            a[k] = _f(rng, -1, 2)
    if _maybe(rng, 0.3):
        a["layout"] = "".join(rng.permutation(list("xyz"[:d])))
    return Case(
        "coord_flip", [Inp("batch", pts, "")], a, {"atol": 1e-6, "rtol": 1e-6, "mismatch_frac": 0}
    )

def g_coord_transform(rng):
    n = int(rng.integers(1, 4))
    m = int(rng.integers(1, 4))
    dt = [F32, np.int32, U8][int(rng.integers(3))]
    pts = [(rng.uniform(0, 50, (int(rng.integers(1, 6)), n))).astype(dt) for _ in range(2)]
    a: dict = {}
    r = rng.random()
    if r < 0.4:
        a["M"] = T(rng.uniform(-2, 2, (m, n)).astype(F32).round(3))
        if _maybe(rng):
            a["T"] = T(rng.uniform(-5, 5, (m,)).astype(F32).round(3))
    elif r < 0.7:
        a["MT"] = T(rng.uniform(-2, 2, (m, n + 1)).astype(F32).round(3))
    else:
        a["M"] = _f(rng, -2, 2)
    return Case(
        "coord_transform",
        [Inp("batch", pts, "")],
        a,
        {"atol": 1e-4, "rtol": 1e-5, "mismatch_frac": 0},
    )

def g_bb_flip(rng):
    a: dict = {}
    for k in ("horizontal", "vertical"):
        if _maybe(rng):
            a[k] = int(rng.integers(0, 2))
    if _maybe(rng):
        a["ltrb"] = True
    boxes = []
    for _ in range(2):  # valid boxes in [0, 1]: start in [0, 0.5), size in [0, 0.5)
        start = rng.uniform(0, 0.5, (int(rng.integers(1, 6)), 2))
        size = rng.uniform(0, 0.5, start.shape)
        end_or_size = start + size if a.get("ltrb") else size
        boxes.append(np.concatenate([start, end_or_size], axis=1).astype(F32))
    return Case(
        "bb_flip", [Inp("batch", boxes, "")], a, {"atol": 1e-6, "rtol": 1e-6, "mismatch_frac": 0}
    )
