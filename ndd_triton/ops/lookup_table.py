"""lookup_table: map integer inputs through a key -> value table (ops.md §4.11).

Keys are in [0, 65535]; with duplicate keys the last one wins; inputs that are not keys
(negative or above the largest key included) map to `default_value`. Values and the default are
converted to `dtype` with DALI's round + saturate rule by the kernels.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import bfloat16, float32
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

MAX_KEY = 65535


def dense_table(keys: list[int], values: list[float], default: float) -> np.ndarray:
    """float64 table indexed by key (length max key + 1, at least 1); the last duplicate wins."""
    size = max(keys) + 1 if keys else 1
    table = np.full(size, default, dtype=np.float64)
    if keys:
        reversed_keys = np.asarray(keys, dtype=np.int64)[::-1]
        unique, first = np.unique(reversed_keys, return_index=True)
        table[unique] = np.asarray(values, dtype=np.float64)[::-1][first]
    return table


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if not inp.dtype.is_integer:
        raise call.error(f"input 0 has dtype {inp.dtype}; lookup_table expects integer inputs "
                         "(u8, u16, u32, u64, i8, i16, i32, i64)", RuntimeError)  # fmt: skip
    if call.dtype == bfloat16:
        raise call.error("argument 'dtype' is bfloat16; lookup_table does not support it",
                         TypeError)  # fmt: skip
    keys = [int(k) for k in call.keys or []]
    values = [float(v) for v in call.values["values"] or []]  # `call.values` is the arg dict
    if len(keys) != len(values):
        raise call.error(f"arguments 'keys' and 'values' must have the same length; got "
                         f"{len(keys)} keys and {len(values)} values", RuntimeError)  # fmt: skip
    bad = [k for k in keys if not 0 <= k <= MAX_KEY]
    if bad:
        raise call.error(f"argument 'keys': keys must be in [0, {MAX_KEY}]; got {bad[0]}",
                         RuntimeError)  # fmt: skip
    call.derive("table", dense_table(keys, values, float(call.default_value)))
    return OutputSpec(call.dtype, inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="lookup_table",
    doc="Maps integer inputs through a table: `values[i]` for input `keys[i]`, else the default.",
    inputs=(Input("input"),),
    args=(
        Arg("keys", "int", default=(), vector=True, doc="Input values to map, in [0, 65535]."),
        Arg("values", "float", default=(), vector=True, doc="Output value of each key."),
        Arg("default_value", "float", default=0.0, doc="Output for inputs that are not keys."),
        Arg("dtype", "dtype", default=float32, doc="Output data type."),
    ),
    infer=_infer,
)
