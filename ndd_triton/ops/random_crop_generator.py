"""random_crop_generator: random crop windows from image shapes (DALI `random_crop_generator`).

Input: one 1-D integer shape per sample, `(H, W)` or `(H, W, C)`. Outputs: the window's anchor
and shape, int32 `(2,)` each, `(y, x)` / `(h, w)` order. Windows are drawn in infer from `rng`
(or the thread's default RNG) exactly as random_resized_crop draws them (area uniform in
`random_area`, aspect ratio log-uniform, `num_attempts` tries, then the largest centred window
with an allowed aspect ratio). CPU only, as in DALI.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import int32, int64
from ndd_triton.ops import limits
from ndd_triton.ops.random_resized_crop import _range, _window
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> tuple[OutputSpec, OutputSpec]:
    from ndd_triton.random import get_default_rng

    meta = call.inputs[0]
    assert meta.values is not None
    if meta.dtype not in (int32, int64):
        raise call.error(f"input 0 must be an int32/int64 shape; got {meta.dtype}", TypeError)
    if call.num_attempts < 1:
        raise call.error(f"argument 'num_attempts' must be at least 1; got {call.num_attempts}")
    limits.check_count(call, "num_attempts", 4 * call.num_attempts, "random draws")
    area, ratio = _range(call, "random_area", False), _range(call, "random_aspect_ratio", True)
    n = call.batch_size
    draws = (call.rng or get_default_rng()).take_uniform(n * call.num_attempts * 4, np.float64)
    draws = draws.reshape(n, call.num_attempts, 4)
    windows = np.zeros((n, 4), np.int64)
    for i, shape in enumerate(meta.values):
        shape = np.asarray(shape).reshape(-1)
        if shape.size not in (2, 3) or (shape[:2] <= 0).any():
            raise call.error(
                f"input 0 sample {i}: expected a shape (H, W) or (H, W, C) with "
                f"positive extents; got {shape.tolist()}"
            )
        windows[i] = _window(int(shape[0]), int(shape[1]), draws[i], area, ratio)
    call.derive("crop_window", windows.astype(np.int32), per_sample=True)
    shapes = np.full((n, 1), 2, np.int64)
    return OutputSpec(int32, shapes, None), OutputSpec(int32, shapes.copy(), None)


schema = OpSchema(
    name="random_crop_generator",
    doc="Draws a random crop window (anchor, shape) for each input shape.",
    inputs=(Input("input", host_values=True, doc="Shape (H, W) or (H, W, C) per sample."),),
    args=(
        Arg("random_area", "float", default=(0.08, 1.0), vector=True,
            doc="Range of the window area as a fraction of the image area."),
        Arg("random_aspect_ratio", "float", default=(0.75, 4.0 / 3.0), vector=True,
            doc="Range of the window aspect ratio (W/H), drawn log-uniformly."),
        Arg("num_attempts", "int", default=10, doc="Draws before the fallback window."),
        Arg("rng", "rng", doc="Random generator (default: the thread's)."),
    ),
    infer=_infer,
    num_outputs=2,
    random=True,
    devices=("cpu",),
)  # fmt: skip
