"""jpeg_compression_distortion on the GPU: a host round trip (no Triton kernel).

JPEG encoding is entropy coding plus DCT; without nvJPEG encode bindings it runs on the host:
the packed batch is downloaded once, every frame goes through Pillow, and the result is
uploaded into the output buffer once. Zero Triton launches; correct on the emulated device and
on real CUDA (two transfers per batch). TODO(issue "Color, filter and noise ops"): nvImageCodec.
"""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._jpeg_roundtrip import jpeg_roundtrip
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import jpeg_compression_distortion
from ndd_triton.ops.schema import Call


@register(jpeg_compression_distortion.schema, "gpu")
def jpeg_compression_distortion_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Download, round-trip each sample on the host, upload."""
    host_in = inp.data.cpu().numpy()
    host_out = np.empty(out.data.numel(), dtype=np.uint8)
    for i, shape in enumerate(inp.shapes):
        size = int(np.prod(shape))
        src = host_in[inp.offsets[i]:inp.offsets[i] + size].reshape(shape)
        dst = host_out[out.offsets[i]:out.offsets[i] + size].reshape(shape)
        jpeg_roundtrip(src, int(arg.qualities[i]), dst)
    out.data.copy_(torch.from_numpy(host_out).to(out.data.device))
