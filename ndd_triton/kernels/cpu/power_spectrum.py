"""power_spectrum on the CPU: `numpy.fft.rfft` along the axis."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import power_spectrum
from ndd_triton.ops.schema import SampleArgs


@register(power_spectrum.schema, "cpu")
def power_spectrum_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """|rfft(x, nfft)|^2 (power 2) or |rfft(x, nfft)| (power 1) along `fft_axis`."""
    if not out.size:
        return
    spectrum = np.fft.rfft(inp.astype(np.float64), n=int(arg.nfft_per_sample),
                           axis=arg.fft_axis)  # fmt: skip
    power = spectrum.real**2 + spectrum.imag**2
    out[...] = np.sqrt(power) if arg.power == 1 else power
