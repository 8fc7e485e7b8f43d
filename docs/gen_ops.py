"""Generate docs/ops.md (the operator reference) from the schemas: `python docs/gen_ops.py`.

tests/test_docs.py checks that the committed file matches what this prints.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def render() -> str:
    """The markdown reference of every public operator, sorted by name."""
    from ndd_triton.ops.opgen import _ordered_args, all_schemas
    from ndd_triton.ops.schema import REQUIRED

    lines = ["# Operator reference", "",
             "Generated from the schemas by `python docs/gen_ops.py`; do not edit by hand.",
             "Column T: the argument accepts a Tensor or a per-sample Batch; T (per-frame): also",
             "one value per frame of a sequence input, marked with `ndd.per_frame`",
             "(see [per_frame.md](per_frame.md)).", ""]  # fmt: skip
    for schema in sorted((s for s in all_schemas() if s.public), key=lambda s: s.name):
        inputs = ", ".join(("*" if i.variadic else "") + i.name for i in schema.inputs)
        lines += [f"## `{schema.name}({inputs})`", "", schema.doc.strip(), "",
                  f"Devices: {', '.join(schema.devices)}."]  # fmt: skip
        for inp in schema.inputs:
            if inp.layouts:
                lines.append(f"Input `{inp.name}` layouts: {', '.join(inp.layouts)}.")
        args = _ordered_args(schema)
        if args:
            lines += ["", "| argument | kind | default | T | meaning |", "|---|---|---|---|---|"]
            for a in args:
                default = "required" if a.default is REQUIRED else \
                    ("—" if a.default is None else f"`{a.default!r}`")  # fmt: skip
                kind = f"{a.kind}[]" if a.vector else a.kind
                doc = a.doc.replace("|", "\\|").replace("\n", " ")
                tensor = "T (per-frame)" if a.per_frame else "T" if a.per_sample else ""
                lines.append(f"| `{a.name}` | {kind} | {default} | {tensor} | {doc} |")
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    with open(os.path.join(HERE, "ops.md"), "w") as f:
        f.write(render())
    print("wrote docs/ops.md")
