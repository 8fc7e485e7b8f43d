"""The run phase: allocate outputs from the inferred specs and call the op's kernel.

CPU kernels get one sample per call, mapped over the context's thread pool; GPU kernels get the
whole batch as packed buffers and launch once. Stream selection and completion events for real
CUDA live here, so kernels never see them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ndd_triton._batch import Batch
from ndd_triton._device import Device
from ndd_triton._storage import BatchStorage
from ndd_triton.kernels import KernelEntry
from ndd_triton.schema import Call, OutputSpec, SampleArgs


def to_numpy(t: torch.Tensor, what: str = "") -> np.ndarray:
    """Zero-copy NumPy view of CPU storage."""
    if t.dtype == torch.bfloat16:
        raise TypeError(f"{what}: bfloat16 data is not supported by CPU kernels")
    return t.numpy()


def make_run(call: Call, kernel: KernelEntry, batches: list[Batch], specs: list[OutputSpec],
             device: Device, ctx: Any) -> Callable[[Any], list[BatchStorage]]:  # fmt: skip
    """The run closure of one invocation."""
    if device.device_type == "cpu":
        def run(inv: Any) -> list[BatchStorage]:
            ins = [b._storage_or_raise() if b is not None else None for b in batches]
            return _run_cpu(call, kernel, ins, specs, device, ctx)
    else:
        def run(inv: Any) -> list[BatchStorage]:
            ins = [b._storage_or_raise() if b is not None else None for b in batches]
            return _run_gpu(call, kernel, ins, specs, device, ctx, inv.record)
    return run


def _run_cpu(call: Call, kernel: KernelEntry, ins: list[BatchStorage], specs: list[OutputSpec],
             device: Device, ctx: Any) -> list[BatchStorage]:  # fmt: skip
    op = call.schema.name
    n = call.batch_size
    known = all(spec.shapes is not None for spec in specs)
    outs = [BatchStorage.allocate(spec.shapes, spec.dtype.torch_dtype, device)  # type: ignore[arg-type]
            for spec in specs] if known else []  # fmt: skip
    in_np = [[to_numpy(s, op) for s in storage.samples] if storage is not None else [None] * n
             for storage in ins]  # fmt: skip
    out_np = [[to_numpy(s, op) for s in storage.samples] for storage in outs]
    if kernel.batched:
        produced = kernel.fn(call, out_np if known else None, in_np)
        if not known:
            return _wrap_produced(produced, specs, device)
        return outs
    layout = call.inputs[0].layout if call.inputs and call.inputs[0] is not None else None
    single = len(specs) == 1
    produced_samples: list[Any] = [None] * n

    def one(i: int) -> None:
        arg = SampleArgs(call, i, layout)
        sample_ins = [inp[i] for inp in in_np]
        if known:
            dst = out_np[0][i] if single else tuple(o[i] for o in out_np)
            kernel.fn(dst, *sample_ins, arg)
        else:
            produced_samples[i] = kernel.fn(*sample_ins, arg)

    work = sum(int(s.buffer.numel() * s.buffer.element_size()) if s.buffer is not None
               else sum(t.numel() * t.element_size() for t in s.samples)
               for s in ins + outs if s is not None)  # fmt: skip
    ctx.thread_pool.run(one, n, work_bytes=work if known else 1 << 30)
    if known:
        return outs
    per_output = [[p if not isinstance(p, tuple) else p[k] for p in produced_samples]
                  for k in range(len(specs))] if len(specs) > 1 else [produced_samples]  # fmt: skip
    return _wrap_produced(per_output, specs, device)


def _wrap_produced(produced: list[list[Any]], specs: list[OutputSpec], device: Device
                   ) -> list[BatchStorage]:  # fmt: skip
    result = []
    for samples, spec in zip(produced, specs):
        tensors = [torch.from_numpy(np.ascontiguousarray(s)) if isinstance(s, np.ndarray) else s
                   for s in samples]  # fmt: skip
        tensors = [t if t.dtype == spec.dtype.torch_dtype else t.to(spec.dtype.torch_dtype)
                   for t in tensors]  # fmt: skip
        result.append(BatchStorage(tensors, device))
    return result


def _run_gpu(call: Call, kernel: KernelEntry, ins: list[BatchStorage], specs: list[OutputSpec],
             device: Device, ctx: Any, record: Any) -> list[BatchStorage]:  # fmt: skip
    from ndd_triton._stream import Event
    from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun

    stream = ctx.cuda_stream
    torch_stream = stream.torch_stream if stream is not None else None
    with torch.cuda.stream(torch_stream) if torch_stream is not None else _nullcontext():
        for storage in ins:
            if storage is not None and storage.event is not None and torch_stream is not None:
                storage.event.wait_stream(torch_stream)
        gpu_ins = [GpuBatch(*storage.packed(), meta.shapes, meta.layout, meta.dtype)
                   if storage is not None and meta is not None else None
                   for storage, meta in zip(ins, call.inputs)]  # fmt: skip
        outs = [BatchStorage.allocate(spec.shapes, spec.dtype.torch_dtype, device)  # type: ignore[arg-type]
                for spec in specs]  # fmt: skip
        gpu_outs = [GpuBatch(*storage.packed(), spec.shapes, spec.layout, spec.dtype)
                    for storage, spec in zip(outs, specs)]  # fmt: skip
        run = GpuRun(device.torch_device, record)
        if call.batch_size > 0:
            dst = gpu_outs[0] if len(gpu_outs) == 1 else tuple(gpu_outs)
            kernel.fn(run, dst, *gpu_ins, call)
        event = Event(stream)
    for storage in outs:
        storage.event = event if torch_stream is not None else None
    return outs


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
