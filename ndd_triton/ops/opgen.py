"""Installs public op functions generated from schemas (signature, docstring, namespace).

Each function is compiled from source so `inspect.signature` shows DALI's exact signature
(inputs positional-only, arguments keyword-only defaulting to None) and the call costs no
`**kwargs` packing: the body forwards a tuple of argument values in schema order.
"""

from __future__ import annotations

import importlib
import keyword
import pkgutil
import sys
import types
from collections.abc import Callable
from typing import Any

from ndd_triton.core.batch import Batch
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops import calls
from ndd_triton.ops.schema import REQUIRED, OpSchema

_NAMESPACE_DOCS = {
    "math": "Elementwise math functions (DALI `ndd.math`).",
    "reductions": "Reductions over axes (DALI `ndd.reductions`).",
    "noise": "Noise augmentations (DALI `ndd.noise`).",
    "transforms": "Affine transform matrix builders (DALI `ndd.transforms`).",
    "io": "File input (DALI `ndd.io`).",
    "io.file": "File reading (DALI `ndd.io.file`).",
    "experimental": "Experimental operators.",
    "segmentation": "Segmentation helpers.",
}


def _ordered_args(schema: OpSchema) -> list[Any]:
    args = sorted((a for a in schema.args if a.name != "rng"), key=lambda a: a.name)
    return args + [a for a in schema.args if a.name == "rng"]


def _doc(schema: OpSchema) -> str:
    lines = [schema.doc.strip(), ""]
    if schema.inputs:
        lines.append("Args:")
        for inp in schema.inputs:
            layouts = f" Layouts: {', '.join(inp.layouts)}." if inp.layouts else ""
            lines.append(f"    {inp.name}: {inp.doc or 'Input data.'}{layouts}")
    lines.append("    batch_size: Number of samples when no input or argument is a Batch.")
    lines.append("    device: 'cpu' or 'gpu'; default: gpu if any input is on the gpu.")
    for a in _ordered_args(schema):
        default = "required" if a.default is REQUIRED else f"default {a.default!r}"
        per_sample = " Accepts a Tensor or a per-sample Batch." if a.per_sample else ""
        if a.per_frame:
            per_sample += " Per-frame values (`ndd.per_frame`) for sequence inputs."
        lines.append(f"    {a.name}: {a.doc or a.kind} ({default}).{per_sample}")
    if schema.examples:
        lines += ["", "Example:", schema.examples]
    return "\n".join(lines)


def _per_frame_route(schema: OpSchema, forwarded: list[str], inputs_expr: str,
                     order: str) -> str:  # fmt: skip
    """Source lines sending calls with per-frame-marked values to `_per_frame` ('' if none).

    Only ops with per-frame arguments get the test; it costs a type check per such argument
    (a constant fails it at once), so ordinary calls stay on the direct path.
    """
    if not any(a.per_frame for a in schema.args):
        return ""
    names = [a.name for a in schema.args if a.per_frame]
    names += [name for inp, name in zip(schema.inputs[1:], forwarded[1:], strict=False)
              if inp.host_values]  # argument-like inputs (warp_affine's mtx) may be per-frame
    test = " or ".join(f"(type({n}) in __TB and __marked({n}))" for n in names)
    return (f"    if {test}:\n"
            f"        return __per_frame(__schema, {inputs_expr}, ({order}), batch_size, "
            "device)\n")


def make_function(schema: OpSchema) -> Callable[..., Any]:
    """Build the public function of `schema`."""
    params: list[str] = []
    forwarded: list[str] = []
    variadic = None
    for inp in schema.inputs:
        name = inp.name if not keyword.iskeyword(inp.name) else inp.name + "_"
        if inp.variadic:
            variadic = name
        else:
            params.append(f"{name}=None" if inp.optional else name)
            forwarded.append(name)
    head = ", ".join(params)
    if head:
        head += ", /"
    star = f"*{variadic}" if variadic else "*"
    kw = ["batch_size=None", "device=None"]
    arg_names = []
    for a in _ordered_args(schema):
        kw.append(a.name if a.default is REQUIRED else f"{a.name}=None")
        arg_names.append(a.name)
    by_name = {a.name: a for a in schema.args}
    order = ", ".join(by_name[a.name].name for a in schema.args) + ("," if schema.args else "")
    inputs_expr = f"({', '.join(forwarded)}{',' if forwarded else ''})"
    if variadic:
        inputs_expr = f"{inputs_expr} + tuple({variadic})"
    pieces = [p for p in (head, star + ", " + ", ".join(kw)) if p]
    src = (f"def {schema.short_name}({', '.join(pieces)}):\n"
           f"{_per_frame_route(schema, forwarded, inputs_expr, order)}"
           f"    return __call_op(__schema, {inputs_expr}, ({order}), batch_size, device)\n")
    scope: dict[str, Any] = {"__call_op": calls.call_op, "__schema": schema}
    if "__per_frame" in src:
        # A frozenset lookup is the cheapest type test (~30 ns per argument; perf/bench_per_frame)
        scope.update(__per_frame=calls.call_per_frame, __marked=calls.is_per_frame,
                     __TB=frozenset((Tensor, Batch)))  # fmt: skip
    exec(compile(src, f"<ndd op {schema.name}>", "exec"), scope)
    fn = scope[schema.short_name]
    fn.__doc__ = _doc(schema)
    fn.__module__ = "ndd_triton"
    fn.__qualname__ = schema.short_name
    fn._schema = schema
    # torch.compile: break the graph here rather than trace the call (runtime/torch_compile.py)
    fn._torchdynamo_disable = True
    return fn  # type: ignore[no-any-return]


def _adopt(schema: OpSchema) -> Callable[..., Any]:
    """A schema's hand-written public function, documented and tagged like generated ones."""
    fn = schema.function
    assert fn is not None
    fn.__doc__ = fn.__doc__ or _doc(schema)
    fn.__module__ = "ndd_triton"
    fn.__qualname__ = fn.__name__ = schema.short_name
    fn._schema = schema  # type: ignore[attr-defined]
    return fn


def all_schemas() -> list[OpSchema]:
    """Every schema defined in `ndd_triton.ops` (modules expose `schema` or `schemas`)."""
    import ndd_triton.ops as ops_pkg

    found: list[OpSchema] = []
    for info in pkgutil.iter_modules(ops_pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"ndd_triton.ops.{info.name}")
        found.extend(getattr(module, "schemas", ()))
        if hasattr(module, "schema"):
            found.append(module.schema)
    return found


def namespace(root: types.ModuleType, dotted: str) -> types.ModuleType:
    """The (possibly new) submodule `root.<dotted>` where dotted op names are installed."""
    target = root
    path = root.__name__
    for part in dotted.split("."):
        path = f"{path}.{part}"
        child = getattr(target, part, None)
        if child is None:
            try:
                child = importlib.import_module(path)
            except ModuleNotFoundError:
                child = types.ModuleType(path, _NAMESPACE_DOCS.get(path.split(".", 1)[1]))
                sys.modules[path] = child
            setattr(target, part, child)
        target = child
    return target


_PUBLIC: dict[str, Callable[..., Any]] = {}


def public_function(name: str) -> Callable[..., Any]:
    """The installed public function of op `name` (e.g. "decoders.image"), for code above the
    ops (readers) that calls ops by name without importing the public package."""
    return _PUBLIC[name]


def install(root: types.ModuleType) -> list[str]:
    """Install every public op function into `root` and its namespaces; returns the names."""
    installed = []
    for schema in all_schemas():
        if not schema.public:
            continue
        fn = make_function(schema) if schema.function is None else _adopt(schema)
        space, _, short = schema.name.rpartition(".")
        target = namespace(root, space) if space else root
        setattr(target, short, fn)
        _PUBLIC[schema.name] = fn
        installed.append(schema.name)
    return installed
