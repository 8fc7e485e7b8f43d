"""The run phase of a GPU call: outputs allocated, the kernel called on the context's stream.

Stream selection, waits on the inputs' events and the outputs' completion event live here, so
kernels never see them: a kernel gets packed buffers (`GpuBatch`) and a launch context
(`GpuRun`) and launches on torch's current stream. Both a call's first run (`_run_gpu`: the
kernel's host work, through the launch memo) and a replayed call (`runtime/call_replay.py`:
recorded launches on new buffers) go through `on_stream`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import torch

from ndd_triton.core.device import Device, is_emulated
from ndd_triton.core.storage import BatchStorage
from ndd_triton.kernels import KernelEntry
from ndd_triton.ops.schema import Call, OutputSpec
from ndd_triton.runtime.launch_memo import forget_last, run_kernel

# Triton's interpreter patches `triton.language` globally while a kernel runs, so two threads
# (two contexts' executors) must not interpret at the same time.
_INTERPRETER_LOCK = threading.RLock()
_gpu_types: tuple[Any, Any] | None = None
_worker_tls = threading.local()  # `stream`: the torch stream an executor thread has set


def mark_worker_thread() -> None:
    """Called by an executor thread when it starts: GPU runs there leave the context's stream
    set as torch's current stream between runs (nothing else runs on that thread), instead of
    setting and restoring it around every run."""
    _worker_tls.worker = True


def run_gpu_call(call: Call, kernel: KernelEntry, ins: list[BatchStorage | None],
                 specs: list[OutputSpec], device: Device, ctx: Any,
                 allocators: Sequence[Callable[[], BatchStorage]] | None = None
                 ) -> list[BatchStorage]:  # fmt: skip
    """A GPU call's run on this thread without an invocation (`run_now.run_gpu_now`)."""
    return _run_gpu(call, kernel, ins, specs, device, ctx, None, allocators)  # type: ignore[arg-type]


def _run_gpu(call: Call, kernel: KernelEntry, ins: list[BatchStorage], specs: list[OutputSpec],
             device: Device, ctx: Any, record: Any,
             allocators: Sequence[Callable[[], BatchStorage]] | None = None
             ) -> list[BatchStorage]:  # fmt: skip
    def launch(torch_stream: Any) -> list[BatchStorage]:
        return _launch_gpu(call, kernel, ins, specs, device, ctx, record, torch_stream,
                           allocators)  # fmt: skip

    return on_stream(ctx, ins, launch)


def on_stream(ctx: Any, ins: list[BatchStorage | None],
              launch: Callable[[Any], list[BatchStorage]]) -> list[BatchStorage]:  # fmt: skip
    """`launch(torch_stream)` with the context's stream as torch's current stream, after the
    inputs' events; its outputs get one event marking their completion. On the emulated gpu
    (no streams, no events) only the interpreter's lock."""
    stream = ctx.cuda_stream
    torch_stream = stream.torch_stream if stream is not None else None
    if torch_stream is None:
        if is_emulated():
            with _INTERPRETER_LOCK:
                return launch(None)
        return launch(None)
    for storage in ins:
        if storage is not None and storage.event is not None:
            storage.event.wait_stream(torch_stream)
    if getattr(_worker_tls, "worker", False):
        if getattr(_worker_tls, "stream", None) is not torch_stream:
            torch.cuda.set_stream(torch_stream)
            _worker_tls.stream = torch_stream
        outs = launch(torch_stream)
    else:
        outs = _on_caller_thread(torch_stream, launch)
    from ndd_triton.runtime.stream import Event

    event = Event(stream)
    for storage in outs:
        storage.event = event
    return outs


def _on_caller_thread(torch_stream: Any, launch: Callable[[Any], list[BatchStorage]]
                      ) -> list[BatchStorage]:  # fmt: skip
    """`launch` with `torch_stream` as torch's current stream, the caller's own restored after
    it. On the current device through torch's two raw stream calls: `torch.cuda.stream(...)`
    costs ~15 µs of device-index and availability lookups per call on an H200 host (a tiny
    call's whole budget is 25); on another device through it."""
    c = torch._C
    index = torch_stream.device_index
    if c._cuda_getDevice() != index:
        with torch.cuda.stream(torch_stream):
            return launch(torch_stream)
    prev = c._cuda_getCurrentStream(index)  # (stream_id, device_index, device_type)
    if prev[0] == torch_stream.stream_id:
        return launch(torch_stream)
    c._cuda_setStream(stream_id=torch_stream.stream_id, device_index=index,
                      device_type=torch_stream.device_type)  # fmt: skip
    try:
        return launch(torch_stream)
    finally:
        c._cuda_setStream(stream_id=prev[0], device_index=prev[1], device_type=prev[2])


def gpu_types() -> tuple[Any, Any]:
    """(`GpuBatch`, `GpuRun`), imported on first use (they import Triton)."""
    global _gpu_types
    if _gpu_types is None:
        from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun

        _gpu_types = (GpuBatch, GpuRun)
    return _gpu_types


def _launch_gpu(call: Call, kernel: KernelEntry, ins: list[BatchStorage], specs: list[OutputSpec],
                device: Device, ctx: Any, record: Any, torch_stream: Any,
                allocators: Sequence[Callable[[], BatchStorage]] | None = None
                ) -> list[BatchStorage]:  # fmt: skip
    """Outputs allocated (by `allocators`, one per spec, when given), the kernel called (on
    torch's current stream, the context's)."""
    gpu_batch, gpu_run = gpu_types()
    gpu_ins = []
    # The inputs of a `cpu_inputs` op (the decoders' encoded files) stay on the host and its
    # GPU kernel reads them from the call (`encoded`): not packed into one buffer for it (an
    # 11 MB copy for 64 scattered JPEGs, ~2.5 ms, every call on a new batch)
    host_inputs = call.schema.cpu_inputs
    for storage, meta in zip(ins, call.inputs, strict=False):
        if storage is None or meta is None or host_inputs:
            gpu_ins.append(None)
            continue
        gpu_ins.append(gpu_batch(*storage.packed(), meta.shapes, meta.layout, meta.dtype))
    outs = []
    gpu_outs = []
    for k, spec in enumerate(specs):
        storage = allocators[k]() if allocators is not None else \
            BatchStorage.allocate(spec.shapes, spec.dtype.torch_dtype, device)  # type: ignore[arg-type]  # fmt: skip
        outs.append(storage)
        out = gpu_batch(*storage.packed(), spec.shapes, spec.layout, spec.dtype)
        out.packed = storage.contiguous
        gpu_outs.append(out)
    run = gpu_run(device.torch_device, record, ctx.thread_pool)
    if call.batch_size > 0:
        dst = gpu_outs[0] if len(gpu_outs) == 1 else tuple(gpu_outs)
        run_kernel(kernel, run, dst, gpu_ins, call, torch_stream)
    else:
        forget_last()
    return outs
