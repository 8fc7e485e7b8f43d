"""mfcc on the GPU: the (liftered) DCT matrix along `axis` (`_audio_matrix.py`)."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._audio_matrix import launch_axis_matrix
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import mfcc
from ndd_triton.ops.schema import Call


@register(mfcc.schema, "gpu", replay=True)
def mfcc_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """One launch for the ragged batch."""
    launch_axis_matrix(run, out, inp, arg)
