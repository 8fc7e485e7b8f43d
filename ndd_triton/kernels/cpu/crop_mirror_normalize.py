"""crop_mirror_normalize on the CPU: `crop_into` with a per-channel gain/bias and a mirror."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.crop import Window, crop_into
from ndd_triton.ops import crop_mirror_normalize
from ndd_triton.schema import SampleArgs


@register(crop_mirror_normalize.schema, "cpu")
def crop_mirror_normalize_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Crop, mirror, normalise and permute one sample."""
    layout = arg.layout or "HWC"
    crop_into(out, inp, Window(layout, arg.out_layout, arg.window_start, arg.window_size,
                               arg.out_of_bounds_policy, arg.fill, arg.gain, arg.bias,
                               bool(arg.mirror)))  # fmt: skip
