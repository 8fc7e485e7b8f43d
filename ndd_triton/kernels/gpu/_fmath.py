"""Float math for the elementwise Triton kernels, built from `tl` primitives only.

libdevice calls (`tan`, `asinh`, `pow`, ...) cannot run in the Triton interpreter, which is
how every kernel is tested, so these functions use exp/log/sqrt/sin/cos plus range reduction
and short series. They work in the input's type: float32, or float64 for float64 data
(constants are built with `tl.full` so they are exact in float64). Accuracy: a few ulp, except
`pow` with a non-integral exponent (exp2(y * log2(x)), about |y * log2(x)| ulp).
Jit helpers are named `_helper_*`: the compile check skips them (only kernels are launched).
"""

from __future__ import annotations

import triton
import triton.language as tl

PI_2: tl.constexpr = tl.constexpr(1.5707963267948966)
PI: tl.constexpr = tl.constexpr(3.141592653589793)
LN2: tl.constexpr = tl.constexpr(0.6931471805599453)
LOG10_2: tl.constexpr = tl.constexpr(0.30102999566398120)
ATAN_TERMS: tl.constexpr = tl.constexpr(11)  # |t| <= _helper_tan(pi/16): t^22/23 < 1e-17
SINH_TERMS: tl.constexpr = tl.constexpr(9)  # |x| < 1: x^19/19! < 1e-17
BIG: tl.constexpr = tl.constexpr(1e18)  # above this, sqrt(1 + x^2) == |x| in float64
POWI_BITS: tl.constexpr = tl.constexpr(16)  # integral exponents below 2^16 use squaring


@triton.jit
def _helper_full_like(x, value: tl.constexpr):
    """A block shaped and typed like `x`, filled with `value` (exact in float64)."""
    return tl.full(x.shape, value, x.dtype)


@triton.jit
def _helper_nan_like(x):
    """NaN in x's type."""
    return tl.sqrt(_helper_full_like(x, -1.0))


@triton.jit
def _helper_log1p(u):
    """log(1 + u) without cancellation for small u (Goldberg's trick)."""
    w = u + _helper_full_like(u, 1.0)
    d = w - _helper_full_like(u, 1.0)
    safe = tl.where(d == 0, _helper_full_like(u, 1.0), d)
    r = tl.log(w) * (u / safe)
    r = tl.where(d == 0, u, r)
    return tl.where(w == u, tl.log(w), r)  # huge u (and inf): log(w) is already exact


@triton.jit
def _helper_atan_unit(t):
    """atan(t) for 0 <= t <= 1 (or inf/nan passed through by the callers)."""
    one = _helper_full_like(t, 1.0)
    t = t / (one + tl.sqrt(one + t * t))  # atan(t) = 2 atan(t / (1 + sqrt(1 + t^2)))
    t = t / (one + tl.sqrt(one + t * t))
    z = t * t
    s = _helper_full_like(t, 0.0)
    for i in tl.static_range(ATAN_TERMS):
        j = ATAN_TERMS - 1 - i
        # Integer arithmetic on j, then one division in t's type: a float computed from j
        # would be rounded to float32 by the interpreter (j is a tensor there).
        s = s * z + _helper_full_like(t, 1.0) * (1 - 2 * (j % 2)) / (2 * j + 1)
    return _helper_full_like(t, 4.0) * t * s


@triton.jit
def _helper_atan(x):
    """Arctangent: atan(|x|) = pi/2 - atan(1/|x|) above 1, then the sign of x."""
    one = _helper_full_like(x, 1.0)
    ax = tl.abs(x)
    big = ax > one
    t = tl.where(big, one / tl.where(big, ax, one), ax)
    r = _helper_atan_unit(t)
    r = tl.where(big, _helper_full_like(x, PI_2) - r, r)
    return tl.where(x < 0, -r, r)


@triton.jit
def _helper_atan2(y, x):
    """Angle of (x, y) in (-pi, pi], as C's atan2(y, x)."""
    ay = tl.abs(y)
    ax = tl.abs(x)
    hi = tl.where(ay > ax, ay, ax)
    lo = tl.where(ay > ax, ax, ay)
    safe_hi = tl.where(hi == 0, _helper_full_like(x, 1.0), hi)
    t = tl.where(hi == 0, _helper_full_like(x, 0.0), lo / safe_hi)
    r = _helper_atan_unit(t)
    r = tl.where(ay > ax, _helper_full_like(x, PI_2) - r, r)
    r = tl.where(x < 0, _helper_full_like(x, PI) - r, r)
    r = tl.where(y < 0, -r, r)
    return tl.where((x != x) | (y != y), x + y, r)


@triton.jit
def _helper_asin(x):
    """asin(x) = atan(x / sqrt((1 - x)(1 + x)))."""
    one = _helper_full_like(x, 1.0)
    return _helper_atan(x / tl.sqrt((one - x) * (one + x)))


@triton.jit
def _helper_acos(x):
    """acos(x) = 2 atan(sqrt((1 - x) / (1 + x)))."""
    one = _helper_full_like(x, 1.0)
    return _helper_full_like(x, 2.0) * _helper_atan(tl.sqrt((one - x) / (one + x)))


@triton.jit
def _helper_sinh_series(ax):
    """sinh for |x| < 1: x (1 + z/(2*3) (1 + z/(4*5) (1 + ...))) with z = x^2 (no cancellation)."""
    z = ax * ax
    s = _helper_full_like(ax, 1.0)
    for i in tl.static_range(SINH_TERMS - 1):
        j = SINH_TERMS - 1 - i
        s = _helper_full_like(ax, 1.0) + z * s / ((2 * j) * (2 * j + 1))  # integer divisor: exact
    return ax * s


@triton.jit
def _helper_sinh(x):
    """Hyperbolic sine: series below 1, (e^x - e^-x) / 2 above."""
    ax = tl.abs(x)
    e = tl.exp(ax)
    large = (e - _helper_full_like(x, 1.0) / e) * _helper_full_like(x, 0.5)
    r = tl.where(ax < 1, _helper_sinh_series(ax), large)
    return tl.where(x < 0, -r, r)


@triton.jit
def _helper_cosh(x):
    """Hyperbolic cosine."""
    e = tl.exp(tl.abs(x))
    return (e + _helper_full_like(x, 1.0) / e) * _helper_full_like(x, 0.5)


@triton.jit
def _helper_tanh(x):
    """Hyperbolic tangent: s / sqrt(1 + s^2) below 1, 1 - 2 / (e^2|x| + 1) above."""
    ax = tl.abs(x)
    one = _helper_full_like(x, 1.0)
    s = _helper_sinh_series(ax)
    small = s / tl.sqrt(one + s * s)
    large = one - _helper_full_like(x, 2.0) / (tl.exp(_helper_full_like(x, 2.0) * ax) + one)
    r = tl.where(ax < 1, small, large)
    return tl.where(x < 0, -r, r)


@triton.jit
def _helper_asinh(x):
    """log(|x| + sqrt(x^2 + 1)) via log1p, with the sign of x."""
    ax = tl.abs(x)
    one = _helper_full_like(x, 1.0)
    ax_safe = tl.where(ax > BIG, one, ax)
    z = ax_safe * ax_safe
    r = _helper_log1p(ax_safe + z / (one + tl.sqrt(one + z)))
    r = tl.where(ax > BIG, tl.log(ax) + _helper_full_like(x, LN2), r)
    return tl.where(x < 0, -r, r)


@triton.jit
def _helper_acosh(x):
    """log(x + sqrt(x^2 - 1)) = log1p(t + sqrt(2t + t^2)) with t = x - 1."""
    one = _helper_full_like(x, 1.0)
    t = tl.where(x > BIG, one, x - one)
    r = _helper_log1p(t + tl.sqrt(_helper_full_like(x, 2.0) * t + t * t))
    return tl.where(x > BIG, tl.log(x) + _helper_full_like(x, LN2), r)


@triton.jit
def _helper_atanh(x):
    """0.5 * log1p(2x / (1 - x))."""
    one = _helper_full_like(x, 1.0)
    return _helper_full_like(x, 0.5) * _helper_log1p(_helper_full_like(x, 2.0) * x / (one - x))


@triton.jit
def _helper_cbrt(x):
    """Cube root: exp2(log2|x| / 3) refined by one Newton step, with the sign of x."""
    ax = tl.abs(x)
    special = (ax == 0) | ((ax - ax) != 0)  # 0, inf and nan are their own cube roots
    safe = tl.where(special, _helper_full_like(x, 1.0), ax)
    y = tl.exp2(tl.log2(safe) / _helper_full_like(x, 3.0))
    y = (_helper_full_like(x, 2.0) * y + safe / (y * y)) / _helper_full_like(x, 3.0)
    r = tl.where(special, ax, y)
    return tl.where(x < 0, -r, r)


@triton.jit
def _helper_log10(x):
    """Base-10 logarithm."""
    return tl.log2(x) * _helper_full_like(x, LOG10_2)


@triton.jit
def _helper_tan(x):
    """Tangent."""
    return tl.sin(x) / tl.cos(x)


@triton.jit
def _helper_fpow(a, b):
    """Float power with C pow's special cases; integral |b| < 2^16 uses exact squaring."""
    one = _helper_full_like(a, 1.0)
    aa = tl.abs(a)
    b_int = tl.floor(b) == b
    ab = tl.abs(b)
    small_int = b_int & (ab < _helper_full_like(b, 65536.0))
    n = tl.where(small_int, ab, _helper_full_like(b, 0.0)).to(tl.int32)
    r_int = one
    square = aa
    for _ in tl.static_range(POWI_BITS):
        r_int = tl.where((n & 1) != 0, r_int * square, r_int)
        square = square * square
        n = n >> 1
    r_int = tl.where(b < 0, one / r_int, r_int)
    r = tl.where(small_int, r_int, tl.exp2(b * tl.log2(aa)))
    half = b * _helper_full_like(b, 0.5)
    odd = b_int & (tl.floor(half) != half)
    r = tl.where(a < 0, tl.where(b_int, tl.where(odd, -r, r), _helper_nan_like(a)), r)
    return tl.where((b == 0) | (a == one), one, r)
