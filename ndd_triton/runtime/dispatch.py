"""The run phase: allocate outputs from the inferred specs and call the op's kernel.

CPU kernels get one sample per call, mapped over the context's thread pool; GPU kernels get the
whole batch as packed buffers and launch once. Stream selection and completion events for real
CUDA live here, so kernels never see them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from ndd_triton.core.batch import Batch
from ndd_triton.core.device import Device
from ndd_triton.core.host_views import dense_array, sample_arrays, sample_getter, to_numpy
from ndd_triton.core.storage import NUMPY_DTYPES, BatchStorage
from ndd_triton.kernels import KernelEntry
from ndd_triton.ops.schema import Call, OutputSpec, SampleArgs
from ndd_triton.runtime.gpu_run import _run_gpu
from ndd_triton.runtime.packed_run import run_packed
from ndd_triton.runtime.pipeline import ChainOutputs, Stage
from ndd_triton.runtime.thread_pool import POOL_MIN_BYTES, largest_first
from ndd_triton.runtime.torch_threads import SerialBlas, SingleThreadedTorch, single_already

# Below this many bytes read, a kernel's torch ops stay under torch's parallel grain (32768
# elements) and never start its OpenMP team: only `SerialBlas` (MKL's own threading changes a
# GEMM's rounding), not the whole `SingleThreadedTorch` (~2-6 us of ctypes calls).
TORCH_PARALLEL_BYTES = 1 << 16


def make_run(call: Call, kernel: KernelEntry, batches: list[Batch], specs: list[OutputSpec],
             device: Device, ctx: Any,
             allocators: Sequence[Callable[[], BatchStorage]] | None = None
             ) -> Callable[[Any], list[BatchStorage]]:  # fmt: skip
    """The run closure of one invocation (`allocators`: a GPU call's outputs', when kept)."""
    kernel = kernel.for_call(call)
    if device.device_type == "cpu":
        def run(inv: Any) -> list[BatchStorage]:
            ins = [b._storage_or_raise() if b is not None else None for b in batches]
            if single_already():  # a pool or executor thread: it may help the pool
                return _run_cpu(call, kernel, ins, specs, device, ctx, True)
            if _nbytes(ins, []) < TORCH_PARALLEL_BYTES:  # torch stays serial; MKL: one thread
                with SerialBlas():
                    return _run_cpu(call, kernel, ins, specs, device, ctx, False)
            with SingleThreadedTorch():  # (on the caller's thread in sync modes, inline runs)
                return _run_cpu(call, kernel, ins, specs, device, ctx, True)
    else:
        def run(inv: Any) -> list[BatchStorage]:
            ins = [b._storage_or_raise() if b is not None else None for b in batches]
            return _run_gpu(call, kernel, ins, specs, device, ctx, inv.record, allocators)
    return run


def make_stage(call: Call, kernel: KernelEntry, batches: list[Batch | None],
               specs: list[OutputSpec], device: Device,
               ctx: Any) -> Callable[[ChainOutputs], Stage | None]:  # fmt: skip
    """The stage function of a CPU invocation (see `_executor._Chain`): its run as one kernel
    call per sample into outputs allocated now, when it is one (per-sample kernel, output shapes
    known, enough work for the pool); inputs may be outputs of earlier stages of the chain."""
    kernel = kernel.for_call(call)

    def stage(chain_outputs: ChainOutputs) -> Stage | None:
        n = call.batch_size
        if kernel.batched or kernel.packed is not None or not kernel.inline or n <= 1 or \
                ctx.thread_pool.num_threads <= 1 or any(spec.shapes is None for spec in specs):
            return None  # whole-batch or packed kernels run as one invocation
        ins: list[BatchStorage | None] = []
        deps: list[int] = []
        for b in batches:
            if b is None or b._storage is not None:
                ins.append(b._storage if b is not None else None)
                continue
            producer = getattr(b._producer, "inv", None)
            found = chain_outputs(producer) if producer is not None else None
            if found is not None:
                deps.append(found[0])
                ins.append(found[1][b._producer.index])
            elif producer is not None and producer.done:
                ins.append(b._storage_or_raise())
            else:
                return None  # pending outside the chain
        outs = [BatchStorage.allocate(spec.shapes, spec.dtype.torch_dtype, device)  # type: ignore[arg-type]
                for spec in specs]  # fmt: skip
        work = _nbytes(ins, outs)
        if work < POOL_MIN_BYTES or (kernel.dense and work < _DENSE_MAX_BYTES):
            return None  # run inline or as one dense call: the normal run does that
        return Stage(n, _per_sample(call, kernel, ins, outs), outs, tuple(sorted(set(deps))),
                     lambda: _sample_order(ins, outs, ctx.thread_pool.num_threads))  # fmt: skip

    return stage


def _per_sample(call: Call, kernel: KernelEntry, ins: list[BatchStorage | None],
                outs: list[BatchStorage]) -> Callable[[int], None]:  # fmt: skip
    """`one(i)`: the kernel on sample i of known-shape outputs."""
    op = call.schema.name
    first = call.inputs[0] if call.inputs else None
    layout = first.layout if first is not None else None
    # Views are made per sample on the pool threads: the setup before the first sample starts
    # stays O(1) (a batch boundary waits for it).
    out_get = [sample_getter(storage, op) for storage in outs]
    single = len(outs) == 1
    bound = kernel.bind(call) if kernel.bind is not None and single else None
    if bound is not None:
        get_out = out_get[0]

        def one_bound(i: int) -> None:
            bound(get_out(i), i)

        return one_bound
    in_get = [sample_getter(storage, op) if storage is not None else _none for storage in ins]

    def one(i: int) -> None:
        dst = out_get[0](i) if single else tuple(get(i) for get in out_get)
        kernel.fn(dst, *[get(i) for get in in_get], SampleArgs(call, i, layout))

    return one


def _none(i: int) -> None:
    return None


def _run_cpu(call: Call, kernel: KernelEntry, ins: list[BatchStorage], specs: list[OutputSpec],
             device: Device, ctx: Any, helps: bool) -> list[BatchStorage]:  # fmt: skip
    """`helps`: this thread's torch is single-threaded, so it may run samples beside the pool's
    (else its OpenMP team would spin)."""
    op = call.schema.name
    n = call.batch_size
    known = True
    for spec in specs:
        if spec.shapes is None:
            known = False
    outs = [BatchStorage.allocate(spec.shapes, spec.dtype.torch_dtype, device)  # type: ignore[arg-type]
            for spec in specs] if known else []  # fmt: skip
    first = call.inputs[0] if call.inputs else None
    layout = first.layout if first is not None else None
    work = _nbytes(ins, outs)
    if kernel.dense and known and n > 1 and work < _DENSE_MAX_BYTES and \
            _run_dense(call, kernel, ins, outs):  # fmt: skip
        return outs
    if kernel.packed is not None and known and n > 1 and \
            run_packed(call, kernel, ins, outs, ctx.thread_pool, work, helps):  # fmt: skip
        return outs
    in_np = [sample_arrays(storage, op) if storage is not None else [None] * n
             for storage in ins]  # fmt: skip
    out_np = [sample_arrays(storage, op) for storage in outs]
    if kernel.batched:
        produced = kernel.fn(call, out_np if known else None, in_np)
        return outs if known else _wrap_produced(produced, specs, device)
    single = len(specs) == 1
    produced_samples: list[Any] = [None] * n
    bound = kernel.bind(call) if kernel.bind is not None and known and single else None

    def one(i: int) -> None:
        if bound is not None:
            bound(out_np[0][i], i)
            return
        arg = SampleArgs(call, i, layout)
        sample_ins = [inp[i] for inp in in_np]
        if known:
            dst = out_np[0][i] if single else tuple(o[i] for o in out_np)
            kernel.fn(dst, *sample_ins, arg)
        else:
            produced_samples[i] = kernel.fn(*sample_ins, arg)

    pooled = not known or work >= max(POOL_MIN_BYTES, kernel.pool_min_bytes)
    order = _sample_order(ins, outs, ctx.thread_pool.num_threads) if pooled else None
    ctx.thread_pool.run(one, n, work_bytes=(work if pooled else 0) if known else 1 << 30,
                        order=order, caller_helps=helps)  # fmt: skip
    if known:
        return outs
    per_output = [[p if not isinstance(p, tuple) else p[k] for p in produced_samples]
                  for k in range(len(specs))] if len(specs) > 1 else [produced_samples]  # fmt: skip
    return _wrap_produced(per_output, specs, device)


# Small uniform batches run as one dense NumPy call; larger ones go per sample over the pool.
_DENSE_MAX_BYTES = 1 << 18


def _sample_order(ins: Sequence[BatchStorage | None], outs: Sequence[BatchStorage],
                  num_threads: int) -> list[int] | None:  # fmt: skip
    """Largest samples first (`largest_first`), by the bytes each sample of the ragged
    storages reads and writes; None when every sample is the same size."""
    costs: np.ndarray | None = None
    for s in (*ins, *outs):
        sizes = s.sample_sizes() if s is not None else None
        if sizes is not None and len(sizes) > num_threads:
            nbytes = sizes * s.dtype.itemsize  # type: ignore[union-attr]
            costs = nbytes if costs is None else costs + nbytes
    return largest_first(costs, num_threads) if costs is not None else None


def _nbytes(ins: list[BatchStorage | None], outs: list[BatchStorage]) -> int:
    """Bytes an op reads and writes (decides dense vs per-sample and pool fan-out)."""
    total = 0
    for s in (*ins, *outs):
        if s is None:
            continue
        host = s._dense_np if s._dense_np is not None else s._buffer_np
        if host is not None:
            total += host.nbytes
            continue
        buf = s._dense_t if s._dense_t is not None else s.buffer
        if buf is not None:
            total += buf.numel() * buf.itemsize
        else:
            total += sum(t.numel() * t.itemsize for t in s.samples)
    return total


def _dense_inputs(ins: list[BatchStorage | None]) -> tuple[list[np.ndarray | None], int] | None:
    """`(N, ...)` arrays of the inputs and their bytes, or None when one is not uniform or the
    ranks differ: only equal ranks make NumPy broadcasting of the `(N, ...)` arrays the same as
    per-sample broadcasting (elementwise kernels)."""
    arrays: list[np.ndarray | None] = []
    total, rank = 0, -1
    for storage in ins:
        if storage is None:
            arrays.append(None)
            continue
        arr = dense_array(storage)
        if arr is None or (rank >= 0 and arr.ndim != rank):
            return None
        rank = arr.ndim
        total += arr.nbytes
        arrays.append(arr)
    return arrays, total


def _call_dense(call: Call, kernel: KernelEntry, outs: list[np.ndarray],
                arrays: list[np.ndarray | None]) -> None:  # fmt: skip
    """The one kernel call over whole uniform batches (`arg.dense`, layout "N...")."""
    first = call.inputs[0] if call.inputs else None
    layout = first.layout if first is not None else None
    arg = SampleArgs(call, 0, "N" + layout if layout else None, dense=True)
    kernel.fn(outs[0] if len(outs) == 1 else tuple(outs), *arrays, arg)


def run_dense_now(call: Call, kernel: KernelEntry, ins: list[BatchStorage | None],
                  specs: list[OutputSpec], device: Device, known_uniform: dict[str, Any],
                  max_bytes: int = _DENSE_MAX_BYTES) -> list[BatchStorage] | None:  # fmt: skip
    """Run a small uniform CPU call right away as one dense kernel call; None if it can't.

    The caller's shortcut for tiny work (sync_cpu, or eager with an idle worker): no invocation
    object, closure, thread or torch call; the same kernel call and results as `_run_cpu`'s
    dense path. `known_uniform` maps names to per-sample values already known to be uniform;
    calls that read and write `max_bytes` or more are left to the normal path.
    """
    dense = _dense_inputs(ins)
    if dense is None:
        return None
    arrays, total = dense
    outs = []
    for spec in specs:
        shapes = spec.shapes
        np_dtype = NUMPY_DTYPES.get(spec.dtype.torch_dtype)
        if shapes is None or np_dtype is None or not len(shapes):
            return None
        rows = shapes.tolist()
        if rows.count(rows[0]) != len(rows):
            return None
        out = np.empty((len(rows), *rows[0]), np_dtype)
        total += out.nbytes
        outs.append(out)
    if total >= max_bytes or not _uniform_args(call, known_uniform):
        return None
    if total < TORCH_PARALLEL_BYTES:
        with SerialBlas():
            _call_dense(call, kernel, outs, arrays)
    else:
        with SingleThreadedTorch():
            _call_dense(call, kernel, outs, arrays)
    return [BatchStorage.from_numpy_dense(out, device) for out in outs]


def _uniform_value(value: Any) -> bool:
    """A per-sample argument array whose samples are all equal."""
    if not isinstance(value, np.ndarray):
        return False
    return not value.ndim or value.shape[0] <= 1 or value.strides[0] == 0 or \
        bool((value == value[:1]).all())  # fmt: skip


def _uniform_args(call: Call, known: dict[str, Any] | None = None) -> bool:
    """Every per-sample value equal across samples (`known`: values already checked)."""
    values = call.values
    for name in call.per_sample:
        value = values[name]
        if (known is None or known.get(name) is not value) and not _uniform_value(value):
            return False
    return True


def _run_dense(call: Call, kernel: KernelEntry, ins: list[BatchStorage | None],
               outs: list[BatchStorage]) -> bool:  # fmt: skip
    """One kernel call over dense `(N, ...)` views when shapes and arguments are uniform."""
    dense = _dense_inputs(ins)
    dense_outs = [s.dense() for s in outs]
    if dense is None or any(v is None for v in dense_outs) or not _uniform_args(call):
        return False
    out_np = [s._dense_np if s._dense_np is not None else to_numpy(v)
              for s, v in zip(outs, dense_outs, strict=True)]  # fmt: skip
    _call_dense(call, kernel, out_np, dense[0])
    return True


def _wrap_produced(produced: list[list[Any]], specs: list[OutputSpec], device: Device
                   ) -> list[BatchStorage]:  # fmt: skip
    result = []
    for samples, spec in zip(produced, specs, strict=False):
        # (np.ascontiguousarray would turn a 0-D sample into shape (1,))
        tensors = [torch.from_numpy(s if s.flags.c_contiguous else np.ascontiguousarray(s))
                   if isinstance(s, np.ndarray) else s for s in samples]  # fmt: skip
        tensors = [t if t.dtype == spec.dtype.torch_dtype else t.to(spec.dtype.torch_dtype)
                   for t in tensors]  # fmt: skip
        result.append(BatchStorage(tensors, device))
    return result


