"""Case model and random input helpers of tools/dali_diff.py (a case = one literal op call)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class E:
    """An enum member: `types.<kind>.<name>`."""

    kind: str
    name: str

@dataclass
class D:
    """A dtype: `ndd.<name>`."""

    name: str

@dataclass
class PS:
    """A per-sample (Batch) argument."""

    samples: list

@dataclass
class T:
    """A Tensor argument (used for every sample)."""

    value: np.ndarray

@dataclass
class Inp:
    kind: str  # "batch" | "tensor" | "scalar"
    data: Any
    layout: str = ""

@dataclass
class Case:
    op: str
    inputs: list
    args: dict = field(default_factory=dict)
    tol: dict = field(default_factory=lambda: {"atol": 0, "rtol": 0, "mismatch_frac": 0})
    src: str = ""

U8, I16, F32 = np.uint8, np.int16, np.float32

EXACT = {"atol": 0, "rtol": 0, "mismatch_frac": 0}

ATOL1 = {"atol": 1, "rtol": 0, "mismatch_frac": 0}

def _img(rng, h, w, c, dtype, lo=None, hi=None):
    if np.dtype(dtype).kind == "f":
        lo = 0.0 if lo is None else lo
        hi = 1.0 if hi is None else hi
        return rng.uniform(lo, hi, (h, w, c) if c else (h, w)).astype(dtype)
    info = np.iinfo(dtype)
    lo = max(info.min, -1000) if lo is None else lo
    hi = min(info.max, 1000) if hi is None else hi
    return rng.integers(lo, hi + 1, (h, w, c) if c else (h, w)).astype(dtype)

def _hw(rng, big=40):
    r = rng.random()
    if r < 0.1:
        return 1, int(rng.integers(1, 6))
    if r < 0.2:
        return int(rng.integers(1, 6)), 1
    return int(rng.integers(2, big)), int(rng.integers(2, big))

def _images(rng, n=None, dtypes=(U8,), c=None, big=40, seq=False, **kw):
    """A random ragged HWC batch (or FHWC if seq)."""
    n = n or int(rng.integers(1, 4))
    dt = dtypes[int(rng.integers(len(dtypes)))]
    ch = c if c is not None else int(rng.choice([1, 3, 3, 4]))
    out = []
    for _ in range(n):
        h, w = _hw(rng, big)
        if seq:
            f = int(rng.integers(1, 4))
            out.append(np.stack([_img(rng, h, w, ch, dt, **kw) for _ in range(f)]))
        else:
            out.append(_img(rng, h, w, ch, dt, **kw))
    return out

def _f(rng, lo, hi, nd=3):
    return round(float(rng.uniform(lo, hi)), nd)

def _maybe(rng, p=0.5):
    return rng.random() < p

def _per_sample_f(rng, n, lo, hi, nd=3):
    return PS([np.float32(round(float(rng.uniform(lo, hi)), nd)) for _ in range(n)])

def _layout_imgs(rng, dtypes=(U8, I16, F32, np.int32)):
    imgs = _images(rng, dtypes=dtypes)
    lay = str(rng.choice(["HWC", "CHW", "FHWC"]))
    if lay == "CHW":
        imgs = [np.ascontiguousarray(i.transpose(2, 0, 1)) for i in imgs]
    if lay == "FHWC":
        imgs = [np.stack([i, i[::-1, ::-1]]) for i in imgs]
    return imgs, lay
