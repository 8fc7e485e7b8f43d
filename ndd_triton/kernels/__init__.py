"""Kernels: `cpu/<op>.py` (NumPy, one sample per call) and `gpu/<op>.py` (Triton, one launch
per batch), registered against op schemas and imported lazily on first dispatch.

May import `core`, `random`, `decoders` and `ops` (the schemas), never the runtime: what a
kernel needs from the call (stream, pool, launch counting) comes in its arguments (`GpuRun`).
"""

from ndd_triton.kernels._registry import KernelEntry, lookup, register

__all__ = ["KernelEntry", "lookup", "register"]
