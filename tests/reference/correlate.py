"""Reference N-D correlation with NumPy padding (used by the filter-op tests).

`correlate(x, kernel, axes, anchor, border, fill)` pads the chosen axes with np.pad and sums
shifted slices in float64; NumPy's "reflect" is reflect_101, "symmetric" is reflect_1001.
"""

import numpy as np

PAD_MODES = {"reflect_101": "reflect", "reflect_1001": "symmetric", "wrap": "wrap",
             "clamp": "edge", "constant": "constant"}  # fmt: skip


def pad_axes(x, axes, before, after, border="reflect_101", fill=0.0):
    """`x` in float64, padded on `axes` by `before`/`after` per axis."""
    widths = [(0, 0)] * x.ndim
    for a, b, c in zip(axes, before, after, strict=False):
        widths[a] = (b, c)
    x = x.astype(np.float64)
    if border == "constant":
        return np.pad(x, widths, mode="constant", constant_values=fill)
    return np.pad(x, widths, mode=PAD_MODES[border])


def correlate(x, kernel, axes, anchor=None, border="reflect_101", fill=0.0, valid=False):
    """`out[p] = Σ_i k[i] · x[p - anchor + i]` over `axes` (float64)."""
    kernel = np.asarray(kernel, dtype=np.float64)
    ks = kernel.shape
    if valid:
        xp = x.astype(np.float64)
        out_shape = list(x.shape)
        for a, k in zip(axes, ks, strict=False):
            out_shape[a] -= k - 1
    else:
        anchor = [k // 2 for k in ks] if anchor is None else anchor
        after = [k - 1 - a for k, a in zip(ks, anchor, strict=True)]
        xp = pad_axes(x, axes, anchor, after, border, fill)
        out_shape = list(x.shape)
    out = np.zeros(out_shape)
    for idx in np.ndindex(*ks):
        sl = [slice(None)] * x.ndim
        for a, i in zip(axes, idx, strict=False):
            sl[a] = slice(i, i + out_shape[a])
        out += kernel[idx] * xp[tuple(sl)]
    return out


def to_dtype(values, dtype, ties_to_even=False):
    """Round (half away, or ties to even) and saturate to an integer dtype; floats pass."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return values.astype(dtype)
    info = np.iinfo(dtype)
    r = np.rint(values) if ties_to_even else np.sign(values) * np.floor(np.abs(values) + 0.5)
    return np.clip(r, info.min, info.max).astype(dtype)
