"""tools/dali_diff.py generators: reductions, tensor ops, math and arithmetic."""

from __future__ import annotations

import numpy as np
from dali_cases import EXACT, F32, I16, U8, Case, D, Inp, _f, _img, _maybe


def g_reductions(rng):
    op = str(rng.choice(["sum", "mean", "mean_square", "rms", "min", "max", "std_dev",
                         "variance"]))  # fmt: skip
    dt = [U8, I16, F32, np.int32, np.uint16][int(rng.integers(5))]
    n = int(rng.integers(1, 4))
    nd = int(rng.integers(1, 4))
    base = [int(v) for v in rng.integers(1, 6, nd)]
    samples = []
    for _ in range(n):
        shp = list(base)
        shp[0] = int(rng.integers(1, 6))
        samples.append(
            _img(
                rng,
                int(np.prod(shp)),
                1,
                0,
                dt,
                lo=0 if dt != F32 else None,
                hi=100 if dt != F32 else None,
            ).reshape(shp)
        )
    a: dict = {}
    if _maybe(rng, 0.6):
        k = int(rng.integers(0, nd + 1))
        a["axes"] = [int(v) for v in sorted(rng.choice(nd, k, replace=False))]
        if k == 1 and _maybe(rng):
            a["axes"] = a["axes"][0] - (nd if _maybe(rng) else 0)
    if _maybe(rng, 0.3):
        a["keep_dims"] = True
    ins = [Inp("batch", samples, "")]
    if op in ("std_dev", "variance"):
        ax = a.get("axes", list(range(nd)))
        ax = [ax % nd] if isinstance(ax, int) else list(ax)
        if len(ax) == nd:  # full reduction: a scalar mean
            ins.append(Inp("scalar", _f(rng, 0, 50)))
        else:  # DALI reads a scalar mean as the first of the per-output means: give them all
            keep = _maybe(rng)
            ins.append(Inp("batch", [np.mean(smp, axis=tuple(ax), keepdims=keep).astype(F32) +
                                     F32(_f(rng, -3, 3)) for smp in samples]))  # fmt: skip
        if _maybe(rng):
            a["ddof"] = int(rng.integers(0, 2))
    elif op in ("sum", "mean") and _maybe(rng, 0.2) and dt != F32:
        a["dtype"] = D(str(rng.choice(["int32", "float32", "int64"])))
    return Case(f"reductions.{op}", ins, a, {"atol": 1e-3, "rtol": 1e-4, "mismatch_frac": 0})

def g_transpose(rng):
    nd = int(rng.integers(2, 5))
    dt = [U8, I16, F32][int(rng.integers(3))]
    samples = [
        _img(rng, int(np.prod(s)), 1, 0, dt).reshape(s)
        for s in ([int(v) for v in rng.integers(1, 6, nd)] for _ in range(2))
    ]
    lay = "FHWC"[:nd] if nd < 4 else "FHWC"
    a: dict = {}
    if _maybe(rng, 0.8):
        a["perm"] = [int(v) for v in rng.permutation(nd)]
    if _maybe(rng, 0.2):
        a["transpose_layout"] = False
    return Case("transpose", [Inp("batch", samples, lay if _maybe(rng) else "")], a, EXACT)

def g_cast(rng):
    src = [U8, I16, F32, np.int32, np.int8, np.uint16, np.float64, np.int64][int(rng.integers(8))]
    x = rng.uniform(-70000, 70000, 40)
    if np.dtype(src).kind == "f":
        x = np.concatenate([x, [0.5, 1.5, -0.5, 2.5, 254.6, 255.5, np.nan, np.inf, -np.inf]])
    else:
        info = np.iinfo(src)
        x = np.clip(x, info.min, info.max)
    x = x.astype(src)
    dst = str(rng.choice(["uint8", "int8", "int16", "uint16", "int32", "float32", "float16",
                          "int64", "bool", "float64", "uint32"]))  # fmt: skip
    tol = {"atol": 1e-3, "rtol": 2e-3, "mismatch_frac": 0} if dst.startswith("float") else EXACT
    return Case("cast", [Inp("batch", [x, x[::-1].copy()], "")], {"dtype": D(dst)}, tol)

def g_one_hot(rng):
    dt = [np.int32, U8, F32, np.int64][int(rng.integers(4))]
    nd = int(rng.integers(0, 3))
    samples = [
        rng.integers(-2, 7, [int(v) for v in rng.integers(1, 4, nd)]).astype(dt)
        for _ in range(int(rng.integers(1, 3)))
    ]
    if dt == F32:
        samples = [s + F32(0.7) for s in samples]
    a: dict = {"num_classes": int(rng.integers(0, 7))}
    if _maybe(rng) and nd > 0:
        a["axis"] = int(rng.integers(-1, nd + 1))
    if _maybe(rng, 0.3):
        a["dtype"] = D(str(rng.choice(["uint8", "int32", "float32"])))
    if _maybe(rng, 0.4):
        a["on_value"] = _f(rng, -3, 300, 1)
        a["off_value"] = _f(rng, -3, 3, 1)
    return Case(
        "one_hot", [Inp("batch", samples, "")], a, {"atol": 1e-6, "rtol": 0, "mismatch_frac": 0}
    )

def g_lookup_table(rng):
    dt = [U8, np.int32, np.int64, I16, np.uint16][int(rng.integers(5))]
    samples = [
        _img(
            rng,
            int(rng.integers(1, 8)),
            int(rng.integers(1, 5)),
            0,
            dt,
            lo=0 if dt in (U8, np.uint16) else -3,
            hi=12,
        )
        for _ in range(2)
    ]
    k = int(rng.integers(1, 8))
    a: dict = {
        "keys": [int(v) for v in rng.integers(0, 12, k)],
        "values": [_f(rng, -300, 300, 2) for _ in range(k)],
    }
    if _maybe(rng):
        a["default_value"] = _f(rng, -5, 5)
    if _maybe(rng):
        a["dtype"] = D(str(rng.choice(["uint8", "int32", "float32", "int16"])))
    return Case(
        "lookup_table",
        [Inp("batch", samples, "")],
        a,
        {"atol": 1e-4, "rtol": 1e-6, "mismatch_frac": 0},
    )

def g_cat(rng):
    nd = int(rng.integers(1, 4))
    dt = [U8, F32, I16][int(rng.integers(3))]
    axis = int(rng.integers(-nd, nd))
    k = int(rng.integers(1, 4))
    n = int(rng.integers(1, 3))
    base = [[int(v) for v in rng.integers(1, 5, nd)] for _ in range(n)]
    ins = []
    stack = _maybe(rng, 0.4)
    for _ in range(k):
        ss = []
        for b in base:
            s = list(b)
            if not stack:
                s[axis] = int(rng.integers(1, 5))
            ss.append(_img(rng, int(np.prod(s)), 1, 0, dt).reshape(s))
        ins.append(Inp("batch", ss, ""))
    op = "stack" if stack else "cat"
    a = {"axis": int(rng.integers(-nd - 1, nd + 1)) if stack else axis}
    return Case(op, ins, a, EXACT)

def g_math(rng):
    fn = str(rng.choice(["abs", "fabs", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10",
                         "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                         "asinh", "acosh", "atanh", "floor", "ceil", "pow", "fpow", "min",
                         "max", "atan2", "clamp"]))  # fmt: skip
    dt = [F32, np.int32, U8, I16, np.float64][int(rng.integers(5))]
    x = rng.uniform(-3, 3, (3, 4)) if dt != U8 else rng.uniform(0, 9, (3, 4))
    x = x.astype(dt)
    ins = [Inp("batch", [x])]
    if fn in ("pow", "fpow", "min", "max", "atan2"):
        y = (
            rng.uniform(-2, 3, (3, 4)).astype(dt)
            if dt != U8
            else rng.integers(0, 4, (3, 4)).astype(dt)
        )
        ins.append(Inp("batch", [y]) if _maybe(rng) else Inp("scalar", 2))
    elif fn == "clamp":
        ins += [Inp("scalar", 1), Inp("scalar", 2.5 if _maybe(rng) else 5)]
    return Case(f"math.{fn}", ins, {}, {"atol": 1e-5, "rtol": 1e-5, "mismatch_frac": 0})

_ARITH_DT = [U8, np.int8, I16, np.int32, np.int64, F32, np.uint16, np.float64]

def g_arithmetic(rng):
    op = str(
        rng.choice(
            [
                "__add__",
                "__sub__",
                "__mul__",
                "__truediv__",
                "__floordiv__",
                "__lt__",
                "__ge__",
                "__eq__",
                "__and__",
                "__pow__",
                "__mod__",
            ]
        )
    )
    d1 = _ARITH_DT[int(rng.integers(len(_ARITH_DT)))]
    d2 = _ARITH_DT[int(rng.integers(len(_ARITH_DT)))]
    if op in ("__and__",):
        d1 = d1 if np.dtype(d1).kind != "f" else np.int32
        d2 = d2 if np.dtype(d2).kind != "f" else U8
    shp = [int(v) for v in rng.integers(1, 5, 2)]
    x = (
        (rng.uniform(-50, 120, shp)).astype(d1)
        if np.dtype(d1).kind != "u"
        else rng.integers(0, 250, shp).astype(d1)
    )
    r = rng.random()
    if r < 0.3:
        y = Inp(
            "scalar",
            float(rng.choice([2, -3, 0.5, 7, 250]))
            if _maybe(rng)
            else int(rng.choice([2, -3, 7, 250, 3])),
        )
    else:
        yshape = shp if r < 0.6 else [1, shp[1]] if r < 0.8 else [shp[0], 1]
        yv = (
            rng.uniform(1, 9, yshape).astype(d2)
            if np.dtype(d2).kind != "u"
            else rng.integers(1, 9, yshape).astype(d2)
        )
        y = Inp("tensor", yv) if _maybe(rng) else Inp("batch", [yv])
    if op in ("__floordiv__", "__mod__", "__truediv__") and y.kind == "scalar" and y.data == 0:
        y.data = 3
    ins = [Inp("batch", [x]), y]
    if _maybe(rng, 0.2):
        ins = ins[::-1]
    return Case(op, ins, {}, {"atol": 1e-4, "rtol": 1e-5, "mismatch_frac": 0})
