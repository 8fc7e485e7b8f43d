"""Compile mode's trace: the op calls of one loop iteration as plain data (`CallRecord`).

A call is its schema, the eval mode and context it ran under, and one `Ref` per input, argument
value, batch size and device: where the value comes from. `src` is output j of the epoch's
source (the reader's batch of this iteration), `op` output k of an earlier call of the same
iteration, `const` a value compared by content (numbers, strings, NumPy arrays, lists of them, small
computed host Batches built outside the traced calls),
`obj` an object compared by identity (an RNG, a Batch built outside the loop). Two iterations
issue the same program when their records are equal (`CallRecord.same_as`); a program can be
re-issued on the next iteration's source values (`resolve`) and rewritten (fusion) because
nothing in it refers to one iteration's data.
"""

from __future__ import annotations

import dataclasses
import enum
from array import array
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ndd_triton.core.batch import Batch
from ndd_triton.core.host_views import sample_arrays
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops.schema import OpSchema
from ndd_triton.random._rng import RNG
from ndd_triton.runtime.eval_mode import EvalMode

_SCALARS = (bool, int, str, bytes, type(None))


@dataclass(frozen=True, slots=True)
class Ref:
    """Where a call's input or argument value comes from (see the module docstring)."""

    kind: str  # "src", "op", "const" or "obj"
    index: int = 0  # src: source output; op: the producing call
    output: int = 0  # op: the producer's output
    key: Any = None  # const: content key; obj: id()
    value: Any = None  # const/obj: the value itself (what a re-issued call passes)

    def same_as(self, other: Ref) -> bool:
        """Equal source, producer or content (the value object itself may differ)."""
        return (self.kind == other.kind and self.index == other.index and
                self.output == other.output and self.key == other.key)  # fmt: skip

    def describe(self) -> str:
        """Short text for warnings."""
        if self.kind == "src":
            return f"source output {self.index}"
        if self.kind == "op":
            return f"output {self.output} of call {self.index}"
        if self.kind == "obj":
            return f"the {type(self.value).__name__} object at {self.key:#x}"
        value = self.value
        if isinstance(value, Tensor | Batch):
            samples = [np.asarray(s) for s in value.cpu()] if type(value) is Batch else \
                [np.asarray(value.cpu())]  # fmt: skip
            text = f"{type(value).__name__} {[s.tolist() for s in samples]}"
        else:
            text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."


@dataclass(slots=True)
class CallRecord:
    """One traced op call (plain data: no reference to any iteration's batches)."""

    schema: OpSchema
    inputs: tuple[Ref, ...]
    args: tuple[Ref, ...]
    batch_size: Ref
    device: Ref
    mode: EvalMode
    ctx: Any
    callsite: tuple[str, int] | None = None
    gpu: bool = False  # it ran on the GPU (what fusion plans for; not part of the call's identity)

    @property
    def name(self) -> str:
        """The op's name."""
        return self.schema.name

    def where(self) -> str:
        """`op (called at file:line)`."""
        at = f" (called at {self.callsite[0]}:{self.callsite[1]})" if self.callsite else ""
        return f"'{self.name}'{at}"

    def difference(self, other: CallRecord) -> str | None:
        """None when `other` is the same call; else what differs, in words."""
        if other.schema is not self.schema:
            return f"the trace has '{self.name}' here"
        if other.mode is not self.mode or other.ctx is not self.ctx:
            return "another eval mode or EvalContext than in the trace"
        pairs = [("input", self.inputs, other.inputs), ("argument", self.args, other.args)]
        for what, mine, theirs in pairs:
            if len(mine) != len(theirs):
                return f"a different number of {what}s"
            for k, (a, b) in enumerate(zip(mine, theirs, strict=True)):
                if not a.same_as(b):
                    label = f"{what} {k}" if what == "input" else \
                        f"argument '{self.schema.args[k].name}'"  # fmt: skip
                    return f"{label} is {b.describe()}; the trace has {a.describe()}"
        for what, a, b in (("batch_size", self.batch_size, other.batch_size),
                           ("device", self.device, other.device)):  # fmt: skip
            if not a.same_as(b):
                return f"{what} is {b.describe()}; the trace has {a.describe()}"
        return None

    def rngs(self) -> list[RNG]:
        """The explicit RNG objects among the arguments."""
        return [r.value for r in self.args if r.kind == "obj" and isinstance(r.value, RNG)]


def content_key(value: Any) -> Any:
    """A hashable key equal for equal constant values, or None when only identity can tell."""
    t = type(value)
    if t in _SCALARS:
        return (t, value)
    if t is float:
        return (float, value.hex())  # NaN equals NaN, -0.0 differs from 0.0
    if isinstance(value, enum.Enum):
        return (t, value.value)
    if isinstance(value, np.generic):
        return ("np", value.dtype.str, value.tobytes())
    if t is np.ndarray:
        if value.nbytes > 1 << 16:
            return None
        return ("nd", value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
    if t is list or t is tuple:
        if len(value) > _LONG:  # e.g. SSD anchors: thousands of floats, compared every call
            packed = _packed_key(value)
            if packed is not None:
                return (t, packed)
        keys = tuple(content_key(v) for v in value)
        return None if any(k is None for k in keys) else (t, keys)
    if dataclasses.is_dataclass(value):
        keys = tuple(content_key(getattr(value, f.name)) for f in dataclasses.fields(value))
        return None if any(k is None for k in keys) else (t, keys)
    if t.__eq__ is not object.__eq__ and t.__hash__ is not None and \
            not isinstance(value, torch.Tensor | Tensor | Batch):  # fmt: skip
        try:  # value types (DType, Device, ...): equal when == says so
            hash(value)
        except TypeError:
            return None
        return (t, value)
    return None


_LONG = 16


def _packed_key(values: list[Any] | tuple[Any, ...]) -> tuple[str, bytes] | None:
    """The key of a long list of only floats (their IEEE bytes: equal exactly when every
    `float.hex` is) or only ints (int64 bytes), built in C (per element, `content_key` costs
    ~0.5 µs: milliseconds for an argument of thousands of values, twice per compiled call);
    None for other lists."""
    kinds = set(map(type, values))
    if kinds == {float}:
        return "f8", array("d", values).tobytes()
    if kinds == {int}:
        try:
            return "i8", array("q", values).tobytes()
        except OverflowError:  # beyond int64: element by element
            return None
    return None


def data_key(value: Tensor | Batch) -> Any:
    """A content key of a small, computed host Tensor/Batch made outside the traced calls (a
    per-sample argument built in the loop from constants), or None."""
    if value.device.device_type != "cpu":
        return None
    if type(value) is Batch:
        storage = value._storage
        if storage is None:
            return None
        arrays = sample_arrays(storage, "compile mode")
    else:
        t = value._t
        if t is None:
            return None
        arrays = [t.numpy()]
    if sum(a.nbytes for a in arrays) > 1 << 12:
        return None
    return ("data", type(value).__name__, value.dtype.name, value.layout,
            tuple((a.shape, a.tobytes()) for a in arrays))


class IterationRefs:
    """Where the values seen in one iteration came from: its source outputs and call results
    (kept alive, so that their ids stay theirs for the whole iteration)."""

    __slots__ = ("_ids", "_keep", "results")

    def __init__(self, source_values: tuple[Any, ...]) -> None:
        self._ids: dict[int, tuple[str, int, int]] = {}
        self._keep: list[Any] = list(source_values)
        self.results: list[Any] = []
        for j, value in enumerate(source_values):
            self._ids[id(value)] = ("src", j, 0)

    def add_results(self, results: Any) -> None:
        """Register the results of the next call (one object or a tuple)."""
        p = len(self.results)
        self.results.append(results)
        if isinstance(results, tuple):
            for k, out in enumerate(results):
                self._ids[id(out)] = ("op", p, k)
        else:
            self._ids[id(results)] = ("op", p, 0)

    def truncate(self, count: int) -> None:
        """Forget the results of calls `count` and later (a re-trace goes on from there)."""
        for results in self.results[count:]:
            for out in results if isinstance(results, tuple) else (results,):
                self._ids.pop(id(out), None)
        del self.results[count:]

    def ref(self, value: Any) -> Ref:
        """The Ref of `value` as seen in this iteration."""
        found = self._ids.get(id(value))
        if found is not None:
            return Ref(found[0], found[1], found[2])
        if isinstance(value, Tensor | Batch):
            key = data_key(value)
            if key is not None:
                return Ref("const", key=key, value=value)
            return Ref("obj", key=id(value), value=value)
        if isinstance(value, RNG):
            return Ref("obj", key=id(value), value=value)
        key = content_key(value)
        if key is None:
            return Ref("obj", key=id(value), value=value)
        return Ref("const", key=key, value=value)

    def record(self, schema: OpSchema, inputs: Any, arg_values: Any, batch_size: Any,
               device: Any, mode: EvalMode, ctx: Any,
               callsite: tuple[str, int] | None) -> CallRecord:  # fmt: skip
        """The record of a call made in this iteration."""
        ref = self.ref
        return CallRecord(schema, tuple(ref(x) for x in inputs), tuple(ref(v) for v in arg_values),
                          ref(batch_size), ref(device), mode, ctx, callsite,
                          runs_on_gpu(device, inputs))  # fmt: skip

    def resolve(self, ref: Ref) -> Any:
        """The value a Ref stands for in this iteration."""
        if ref.kind == "src":
            return self._keep[ref.index]
        if ref.kind == "op":
            results = self.results[ref.index]
            return results[ref.output] if isinstance(results, tuple) else results
        return ref.value


def runs_on_gpu(device: Any, inputs: Any) -> bool:
    """Whether a call runs on the GPU, as prepare picks its device (`resolve_device`): its
    `device` argument, else a GPU input."""
    if device is not None:
        kind = getattr(device, "device_type", None) or str(device)
        return kind.startswith(("gpu", "cuda"))
    return any(isinstance(x, Tensor | Batch) and x.device.device_type == "gpu" for x in inputs)
