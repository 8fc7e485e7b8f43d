"""power_spectrum: FFT power or magnitude along one axis (DALI `power_spectrum`, ops.md §6.3).

The axis is zero-padded or truncated to `nfft` (DALI truncates a longer axis) and
replaced by `nfft // 2 + 1` bins.
DALI runs it on the CPU only; here the GPU backend uses torch.fft with Triton kernels around it.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float32
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != float32:
        raise call.error(f"input 0 has dtype {inp.dtype}; expected float32", RuntimeError)
    ndim = inp.ndim
    axis = int(call.axis)
    if not -ndim <= axis < ndim:
        raise call.error(f"argument 'axis' ({axis}) is out of range for {ndim}-D samples",
                         RuntimeError)  # fmt: skip
    axis %= ndim
    if call.power not in (1, 2):
        raise call.error(f"argument 'power' must be 1 or 2; got {call.power}", RuntimeError)
    lengths = inp.shapes[:, axis]
    nfft = lengths.copy() if call.nfft is None else np.full_like(lengths, int(call.nfft))
    if (nfft < 1).any():
        raise call.error("argument 'nfft' must be positive (empty transform axis)", RuntimeError)
    call.derive("fft_axis", axis)
    call.derive("nfft_per_sample", nfft, per_sample=True)
    shapes = inp.shapes.copy()
    shapes[:, axis] = nfft // 2 + 1
    return OutputSpec(float32, shapes, inp.layout)


schema = OpSchema(
    name="power_spectrum",
    doc="Computes the power (or magnitude) spectrum along one axis of float32 samples.",
    inputs=(Input("input"),),
    args=(
        Arg("nfft", "int", doc="FFT size (default: the axis length; larger values zero-pad)."),
        Arg("axis", "int", default=-1, doc="Axis to transform."),
        Arg("power", "int", default=2, doc="2: squared magnitude, 1: magnitude."),
    ),
    infer=_infer,
    examples="`power_spectrum([1, 2, 3, 4], nfft=8)` -> `[100, 52.627, 8, 7.373, 4]`.",
)
