"""Operator schemas: the one declarative definition every op is generated from.

A schema names the op, its positional inputs (accepted layouts/dtypes), its keyword arguments
(type, default, per-sample support, checks) and a pure `infer` function that maps input
metadata and argument values to output specs. The public function, its docstring, argument
validation and the docs page all derive from it; kernels register against it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ndd_triton.core.dtype import DType


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True, slots=True)
class Input:
    """A positional data input."""

    name: str
    layouts: tuple[str, ...] | None = None
    dtypes: tuple[DType, ...] | None = None
    optional: bool = False
    variadic: bool = False
    doc: str = ""
    host_values: bool = False  # argument-like input: prepare reads its (small) values for infer


@dataclass(frozen=True, slots=True)
class Arg:
    """A keyword argument.

    `kind` is one of int, float, bool, str, dtype, layout, enum, rng, any. `per_sample` marks
    arguments that accept a Tensor (one value for all) or a Batch (one value per sample); prepare
    turns those into a host array `[batch_size, *shape]`. `vector` marks list-valued arguments
    (`length` fixes their size; a scalar is broadcast to it). `check` gets the converted value
    (array for per-sample args) and returns an error text or None. `per_frame` marks arguments
    that also take one value per frame of a sequence input (`ndd.per_frame`, see `_per_frame`).
    """

    name: str
    kind: str
    default: Any = None
    per_sample: bool = False
    vector: bool = False
    length: int | None = None
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], str | None] | None = None
    doc: str = ""
    per_frame: bool = False


@dataclass(slots=True)
class OutputSpec:
    """Inferred metadata of one output: dtype, per-sample shapes `[N, ndim]`, layout.

    `shapes=None` means the shapes depend on the data (decoders, readers): the kernel returns
    its outputs instead of writing into preallocated ones; `ndim` then says their rank if known.
    """

    dtype: DType
    shapes: np.ndarray | None
    layout: str | None
    ndim: int | None = None


@dataclass(slots=True)
class InputMeta:
    """What prepare knows about one input batch without waiting for its data."""

    dtype: DType
    layout: str | None
    shapes: np.ndarray  # [N, ndim] int64
    values: list[np.ndarray] | None = None  # per-sample host values (Input.host_values only)
    hints: dict[str, Any] | None = None  # the host values' producer hints (BatchStorage)

    @property
    def ndim(self) -> int:
        """Per-sample ndim."""
        return int(self.shapes.shape[1])


@dataclass(slots=True)
class Call:
    """Everything infer and the kernels see of one op call (plain data, no runtime objects).

    `values` holds argument values by name (per-sample ones as `[N, ...]` arrays, listed in
    `per_sample`) plus anything infer derives for the kernels (e.g. per-sample crop windows).
    """

    schema: OpSchema
    batch_size: int
    device: str
    inputs: list[InputMeta]
    values: dict[str, Any]
    per_sample: set[str] = field(default_factory=set)
    given: set[str] = field(default_factory=set)
    # Set by prepare when `values` are a plan's remembered infer result: equal serials mean
    # equal values (the GPU launch memo keys on it instead of the values' contents)
    signature: int | None = None
    # `(key, offset)` of the RNG draws reserved for this call, for ops with `draws`
    draw_at: tuple[int, int] | None = None

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(f"{self.schema.name}: no argument {name!r}") from None

    def derive(self, name: str, value: Any, per_sample: bool = False) -> None:
        """Store a value computed by infer for the kernels (per-sample: `[N, ...]` array)."""
        self.values[name] = value
        if per_sample:
            self.per_sample.add(name)

    def error(self, message: str, exc: type[Exception] = ValueError) -> Exception:
        """An exception whose message starts with the op name."""
        return exc(f"{self.schema.name}: {message}")


class SampleArgs:
    """Argument values of one sample, for CPU kernels (`arg.horizontal`, `arg.layout`, ...).

    `dense` is True when a dense kernel gets a whole uniform batch as one `(N, ...)` array
    (then `layout`, if any, starts with "N" and the values are those of every sample).
    """

    __slots__ = ("_call", "dense", "index", "layout")

    def __init__(self, call: Call, index: int, layout: str | None, dense: bool = False) -> None:
        self._call = call
        self.index = index
        self.layout = layout
        self.dense = dense

    @property
    def batch_values(self) -> dict[str, Any]:
        """Every argument of the call, per-sample ones as whole `[N, ...]` arrays (read only):
        for kernels that share work across the samples of one call."""
        return self._call.values

    def __getattr__(self, name: str) -> Any:
        call = self._call
        value = call.values.get(name, _MISSING)
        if value is _MISSING:
            raise AttributeError(f"{call.schema.name}: no argument {name!r}")
        if name in call.per_sample:
            return value[self.index]
        return value


_MISSING = object()

InferFn = Callable[[Call], "OutputSpec | Sequence[OutputSpec]"]
# A value infer derives (True) where the GPU kernel computes a call's random values from its
# reserved draws itself (`OpSchema.draws`)
DRAWS_ON_DEVICE = "draws_on_device"


@dataclass(frozen=True)
class OpSchema:
    """One operator: name (dotted for namespaces), inputs, arguments, inference."""

    name: str
    doc: str
    inputs: tuple[Input, ...]
    args: tuple[Arg, ...]
    infer: InferFn
    # outputs of a call; a function `(inputs, {arg name: value as given}) -> int` where optional
    # inputs or arguments add outputs (only consulted for calls that fail before infer returns)
    num_outputs: int | Callable[[Sequence[Any], dict[str, Any]], int] = 1
    random: bool = False
    # A random op whose output specs do not depend on its random numbers: `infer` draws
    # nothing (so its result is remembered per input shapes like a deterministic op's), and
    # each call reserves `draws(call)` uint32 draws of its RNG after infer (`Call.draw_at`).
    # `draw_values(call)` turns them into the values the host-side kernels read; it is skipped
    # where infer derived `draws_on_device` (the GPU kernel computes them from `draw_at`), and
    # called by a GPU kernel that needs them on the host after all (compile mode's fused pass
    # where its one-launch form does not apply).
    draws: Callable[[Call], int] | None = None
    draw_values: Callable[[Call], None] | None = None
    devices: tuple[str, ...] = ("cpu", "gpu")
    module: str = ""
    public: bool = True
    examples: str = ""
    # A hand-written public function installed instead of the generated one, for ops whose
    # operands are not plain inputs (math.pow/min/max/clamp take Python scalars as constants).
    function: Callable[..., Any] | None = None
    cpu_inputs: bool = False  # inputs stay on the host even for device="gpu" (decoders)
    # `infer` reads the inputs' host values (image headers) on every call and always returns
    # output shapes: a GPU call then keeps only its run's setup per inferred outputs
    # (`runtime/data_calls.py`), not prepare's whole path (whole-call replay needs shapes that
    # follow from the input shapes)
    shapes_from_data: bool = False

    def __post_init__(self) -> None:
        if not self.module:
            object.__setattr__(self, "module", self.name.replace(".", "_"))
        object.__setattr__(self, "_arg_map", {a.name: a for a in self.args})
        object.__setattr__(self, "_rng_arg", next((a.name for a in self.args if a.kind == "rng"),
                                                  None))  # fmt: skip

    @property
    def rng_arg(self) -> str | None:
        """The name of the `rng` argument (random ops), or None."""
        return self._rng_arg  # type: ignore[attr-defined,no-any-return]

    @property
    def arg_map(self) -> dict[str, Arg]:
        """Arguments by name."""
        return self._arg_map  # type: ignore[attr-defined,no-any-return]

    @property
    def short_name(self) -> str:
        """The last component of the dotted name."""
        return self.name.rsplit(".", 1)[-1]


# ---- common inference helpers ---------------------------------------------------------------
def same_as_input(call: Call) -> OutputSpec:
    """Output has the dtype, shapes and layout of input 0."""
    first = call.inputs[0]
    return OutputSpec(first.dtype, first.shapes.copy(), first.layout)
