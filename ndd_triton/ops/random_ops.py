"""random.uniform / normal / coin_flip / choice / beta: distribution functions (DALI `ndd.random`).

Determinism: infer reserves a contiguous, block-aligned range of draw indices per sample from the
op's RNG (`rng=` or the thread's default RNG), which advances it; kernels compute every value as
a pure function of (RNG key, draw index), so CPU and GPU give the same numbers for any thread
count, and checkpoints only hold the RNG state. Draw budgets per output element:

* uniform: f32 1 draw, f64 2 draws, integer dtypes and `values=` 2 draws (a 64-bit index);
* normal: 2 draws (Box-Muller, one value per pair); coin_flip: 1 draw;
* choice: 2 draws per drawn index; beta: 1 reserved draw per value (the values come from a NumPy
  Philox generator keyed by (RNG key, sample base), on the host: DALI has beta/choice on CPU only,
  and the GPU kernels compute on the host and upload).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core.dtype import (
    DType,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ndd_triton.ops import limits
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

MODE_FLOAT, MODE_INT, MODE_VALUES = 0, 1, 2
UNIFORM_DTYPES = (uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32, float64)
NORMAL_DTYPES = (uint8, int8, uint16, int16, uint32, int32, uint64, int64, float16, float32,
                 float64)  # fmt: skip
COIN_DTYPES = (bool_, uint8, int32)
BETA_DTYPES = (float32, float64)
CHOICE_TOLERANCE = 1e-4

_RNG = Arg("rng", "rng", doc="The ndd.random.RNG to draw from (default: the thread's default RNG).")


def _flat_shape(value: Any) -> str | None:
    """Schema `check=` of `shape`: one extent per dimension, a flat list per sample (DALI: "Shapes
    must be 1D tensors"); a nested list would otherwise be read as a shape of its own."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        arr = np.asarray(item)
        if arr.ndim > (1 if isinstance(value, list) else 2):
            return f"must be an int or a flat list of ints per sample; got shape {arr.shape[1:]}"
    return None


_SHAPE = Arg("shape", "int", per_sample=True, vector=True, check=_flat_shape,
             doc="Output shape per sample (int or list); default: a scalar.")  # fmt: skip
_SHAPE_LIKE = Input("shape_like", optional=True,
                    doc="Optional: each output sample takes the shape of this input's sample.")


def _names(dtypes: tuple[DType, ...]) -> str:
    return ", ".join(str(d) for d in dtypes)


def _dtype(call: Call, default: DType, allowed: tuple[DType, ...]) -> DType:
    dtype = call.dtype if call.dtype is not None else default
    if dtype not in allowed:
        raise call.error(f"argument 'dtype' must be one of {_names(allowed)}; got {dtype}",
                         RuntimeError)  # fmt: skip
    return dtype  # type: ignore[no-any-return]


def _vectors(value: object, n: int) -> list[np.ndarray]:
    """Per-sample vector argument (array `[N]`, `[N, m]` or a ragged list) as N 1-D arrays."""
    if isinstance(value, list):
        return [np.asarray(v).reshape(-1) for v in value]
    arr = np.asarray(value)
    return [arr[i].reshape(-1) for i in range(n)]


def output_shapes(call: Call, like: int) -> np.ndarray:
    """`[N, ndim]` output shapes from input `like` (shape_like), `shape=`, or scalars."""
    n = call.batch_size
    meta = call.inputs[like] if like < len(call.inputs) else None
    if meta is not None:
        if call.shape is not None:
            raise call.error("'shape' and 'shape_like' cannot both be given; got shape="
                             f"{_vectors(call.shape, n)[0].tolist()} and a shape_like input")
        return meta.shapes.copy()
    if call.shape is None:
        return np.zeros((n, 0), dtype=np.int64)
    shapes = _vectors(call.shape, n)
    for i, s in enumerate(shapes):
        if len(s) != len(shapes[0]):
            raise call.error(f"argument 'shape' sample {i}: all samples need the same number of "
                             f"dimensions; got {s.tolist()} after {shapes[0].tolist()}")
        if (s < 0).any():
            raise call.error(f"argument 'shape' sample {i}: extents must be non-negative; got "
                             f"{s.tolist()}", RuntimeError)  # fmt: skip
    out = np.stack(shapes).astype(np.int64).reshape(n, len(shapes[0]) if shapes else 0)
    if out.size:  # (before draws are reserved for them: the product may overflow int64)
        limits.check_count(call, "shape", np.prod(out.astype(np.float64), axis=1))
    return out


def reserve(call: Call, counts: np.ndarray) -> None:
    """Reserve `counts[i]` draws for sample i; derive `rng_key` and per-sample `rng_base`."""
    from ndd_triton.random import get_default_rng

    rng = call.rng if call.rng is not None else get_default_rng()
    key, bases = rng.reserve(counts)
    call.derive("rng_key", key)
    call.derive("rng_base", bases, per_sample=True)


def f32_args(values: np.ndarray) -> np.ndarray:
    """Per-sample float arguments rounded to float32 (DALI's argument type), kept as float64."""
    return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64)


def sizes_of(shapes: np.ndarray) -> np.ndarray:
    """Elements per sample of `[N, ndim]` shapes (1 for scalars)."""
    return np.prod(shapes, axis=1, dtype=np.int64) if shapes.shape[1] else \
        np.ones(len(shapes), dtype=np.int64)  # fmt: skip


def _fmt(x: float) -> str:
    return f"{x:g}"


def _int_bounds(x: np.ndarray, dtype: DType) -> list[int]:
    """Bounds converted to an integer dtype: round half away from zero, then saturate."""
    info = np.iinfo(dtype.numpy_dtype)
    rounded = np.copysign(np.floor(np.abs(x) + 0.5), x)
    return [min(max(int(v), int(info.min)), int(info.max)) for v in rounded]


def _uniform_infer(call: Call) -> OutputSpec:
    dtype = _dtype(call, float32, UNIFORM_DTYPES)
    shapes = output_shapes(call, 0)
    n = call.batch_size
    sizes = sizes_of(shapes)
    if call.values.get("values") is not None:
        values = _vectors(call.values["values"], n)
        for i, v in enumerate(values):
            if v.size == 0:
                raise call.error(f"argument 'values' sample {i}: needs at least one value; got "
                                 "an empty list", RuntimeError)  # fmt: skip
        counts = np.array([v.size for v in values], dtype=np.int64)
        call.derive("mode", MODE_VALUES)
        call.derive("value_table", np.concatenate(values).astype(np.float64))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        call.derive("value_start", starts, per_sample=True)
        call.derive("span", (counts - 1).astype(np.uint64), per_sample=True)
        reserve(call, sizes * 2)
        return OutputSpec(dtype, shapes, None)
    ranges = _vectors(call.range, n)
    lo = np.zeros(n, np.float64)
    hi = np.zeros(n, np.float64)
    for i, r in enumerate(ranges):
        if r.size not in (1, 2):
            raise call.error(f"argument 'range' sample {i}: expected [lo, hi]; got "
                             f"{len(r)} values {r.tolist()}")
        lo[i], hi[i] = (r[0], r[0]) if r.size == 1 else (r[0], r[1])
        if not (np.isfinite(lo[i]) and np.isfinite(hi[i]) and hi[i] > lo[i]):
            raise call.error(f"Invalid range [{_fmt(lo[i])}, {_fmt(hi[i])}).", RuntimeError)
    if dtype.is_float:
        call.derive("mode", MODE_FLOAT)
        ftype = dtype.numpy_dtype
        lo_t, hi_t = lo.astype(ftype), hi.astype(ftype)
        call.derive("lo", lo_t.astype(np.float64), per_sample=True)
        call.derive("hi", hi_t.astype(np.float64), per_sample=True)
        below = np.nextafter(hi_t, np.array(-np.inf, ftype)).astype(np.float64)
        call.derive("below_hi", np.maximum(below, lo_t.astype(np.float64)), per_sample=True)
        reserve(call, sizes * (1 if dtype == float32 else 2))
    else:
        call.derive("mode", MODE_INT)
        lo_i, hi_i = _int_bounds(lo, dtype), _int_bounds(hi, dtype)
        # lo as uint64 bits, span = hi - lo (both wrap-free in Python ints, stored as uint64)
        call.derive("lo_bits", np.array([v % (1 << 64) for v in lo_i], np.uint64),
                    per_sample=True)  # fmt: skip
        spans = [max(high - low, 0) for low, high in zip(lo_i, hi_i, strict=True)]
        call.derive("span", np.array(spans, np.uint64), per_sample=True)
        reserve(call, sizes * 2)
    return OutputSpec(dtype, shapes, None)


def _normal_infer(call: Call) -> OutputSpec:
    dtype = _dtype(call, float32, NORMAL_DTYPES)
    shapes = output_shapes(call, 0)
    # DALI's arguments are float32; rounding them here also makes `mean + stddev * z` exact in
    # float64 (24-bit factors), so fused multiply-add on a GPU cannot change the result.
    call.derive("mean", f32_args(call.mean), per_sample=True)
    call.derive("stddev", f32_args(call.stddev), per_sample=True)
    reserve(call, sizes_of(shapes) * 2)
    return OutputSpec(dtype, shapes, None)


def _coin_flip_infer(call: Call) -> OutputSpec:
    dtype = _dtype(call, int32, COIN_DTYPES)
    shapes = output_shapes(call, 0)
    reserve(call, sizes_of(shapes))
    return OutputSpec(dtype, shapes, None)


def _choice_infer(call: Call) -> OutputSpec:
    a = call.inputs[0]
    base = output_shapes(call, 1)
    n = call.batch_size
    if a.ndim == 0:
        if not a.dtype.is_integer:
            raise call.error(f"input 'a' must be an integer (the number of choices) or an array "
                             f"of choices; got a {a.dtype} scalar", RuntimeError)  # fmt: skip
        dtype, shapes, choices = int32, base, None
    else:
        dtype = a.dtype
        shapes = np.concatenate([base, a.shapes[:, 1:]], axis=1)
        choices = a.shapes[:, 0]
        empty = np.flatnonzero(choices == 0)
        if len(empty):
            raise call.error(f"input 'a' sample {int(empty[0])}: needs at least one choice; got "
                             "an empty array", RuntimeError)  # fmt: skip
    if call.p is not None:
        probs = _vectors(call.p, n)
        for i, p in enumerate(probs):
            if choices is not None and p.size != choices[i]:
                raise call.error(f"argument 'p' sample {i}: expected {int(choices[i])} "
                                 f"probabilities (one per choice); got {p.size}", RuntimeError)
            if (p < 0).any() or not np.isfinite(p).all():
                raise call.error(f"argument 'p' sample {i}: probabilities must be finite and "
                                 f"non-negative; got {p.tolist()}", RuntimeError)  # fmt: skip
            if abs(float(p.sum()) - 1.0) > CHOICE_TOLERANCE:
                raise call.error(f"argument 'p' sample {i}: probabilities must sum to 1 (within "
                                 f"{CHOICE_TOLERANCE:g}); got sum {float(p.sum()):.6g}",
                                 RuntimeError)  # fmt: skip
        call.derive("p", probs, per_sample=True)
    reserve(call, sizes_of(base) * 2)
    call.derive("draw_shapes", base, per_sample=True)
    return OutputSpec(dtype, shapes, None)


def _beta_infer(call: Call) -> OutputSpec:
    dtype = _dtype(call, float32, BETA_DTYPES)
    shapes = output_shapes(call, 0)
    for name in ("alpha", "beta"):
        values = np.asarray(call.values[name], dtype=np.float64)
        bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
        if len(bad):
            raise call.error(f"argument '{name}' sample {int(bad[0])}: must be positive and "
                             f"finite; got {values[bad[0]]:g}", RuntimeError)  # fmt: skip
    reserve(call, sizes_of(shapes))
    return OutputSpec(dtype, shapes, None)


def _schema(name: str, doc: str, args: tuple[Arg, ...], infer: object,
            inputs: tuple[Input, ...] = (_SHAPE_LIKE,), dtypes: str = "") -> OpSchema:
    """A `random.<name>` schema: the op's args plus shape, dtype (if `dtypes`) and rng."""
    dtype = (Arg("dtype", "dtype", doc=f"Output type ({dtypes})."),) if dtypes else ()
    return OpSchema(name=f"random.{name}", doc=doc, inputs=inputs,
                    args=(*args, _SHAPE, *dtype, _RNG), infer=infer,  # type: ignore[arg-type]
                    random=True, module="random_ops")  # fmt: skip


schemas = [
    _schema("uniform", "Uniformly distributed values: continuous on [lo, hi) for float dtypes, "
            "the closed range [lo, hi] for integer dtypes, or picks from a discrete set.",
            (Arg("range", "float", default=[-1.0, 1.0], per_sample=True, vector=True,
                 doc="[lo, hi] of the distribution."),
             Arg("values", "float", per_sample=True, vector=True,
                 doc="Discrete set to draw from (wins over range).")),
            _uniform_infer, dtypes=f"{_names(UNIFORM_DTYPES)}; default f32"),
    _schema("normal", "Normally distributed values N(mean, stddev).",
            (Arg("mean", "float", default=0.0, per_sample=True, doc="Mean."),
             Arg("stddev", "float", default=1.0, per_sample=True, doc="Standard deviation.")),
            _normal_infer, dtypes=f"{_names(NORMAL_DTYPES)}; default f32; integers round"),
    _schema("coin_flip", "Bernoulli draws: 1 with the given probability, else 0.",
            (Arg("probability", "float", default=0.5, per_sample=True,
                 doc="Probability of a 1."),), _coin_flip_infer,
            dtypes=f"{_names(COIN_DTYPES)}; default i32"),
    _schema("choice", "Random picks from `a` (an integer n: 0..n-1; an array: its elements along "
            "the first axis), optionally weighted by `p`.",
            (Arg("p", "float", per_sample=True, vector=True,
                 doc="Probability of each choice (default: uniform)."),), _choice_infer,
            inputs=(Input("a", doc="Number of choices or the array to choose from."),
                    _SHAPE_LIKE)),
    _schema("beta", "Beta(alpha, beta) distributed values in [0, 1].",
            (Arg("alpha", "float", default=1.0, per_sample=True, doc="Shape parameter alpha > 0."),
             Arg("beta", "float", default=1.0, per_sample=True, doc="Shape parameter beta > 0.")),
            _beta_infer, dtypes=f"{_names(BETA_DTYPES)}; default f32"),
]  # fmt: skip
uniform, normal, coin_flip, choice, beta = schemas
