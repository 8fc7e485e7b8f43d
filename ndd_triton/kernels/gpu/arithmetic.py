"""Arithmetic operators on the GPU: the generic elementwise kernels, one launch per call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._elementwise import launch_elementwise
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import arithmetic
from ndd_triton.ops.schema import Call, OpSchema


def make_gpu_kernel(schema: OpSchema, op: str) -> Callable[..., None]:
    """The GPU launcher of one elementwise schema (`op`: its operator or function name)."""

    def launcher(run: GpuRun, out: GpuBatch, *rest: Any) -> None:
        *operands, call = rest
        assert isinstance(call, Call)
        launch_elementwise(run, out, list(operands), call, op)

    launcher.__name__ = launcher.__qualname__ = f"{schema.module}_{op}_gpu"
    return launcher


for _schema in arithmetic.schemas:
    register(_schema, "gpu", replay=True)(make_gpu_kernel(_schema, _schema.name.strip("_")))
