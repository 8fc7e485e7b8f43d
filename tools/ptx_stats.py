"""What a compiled kernel's PTX and its `ptxas -v` log say about its speed (no GPU needed).

`ptx_stats(ptx)`: 64-bit integer divisions and remainders (`div.s64`, `div.u64`, `rem.s64`,
`rem.u64`: ptxas expands each into a slow software routine, dozens of instructions on every
NVIDIA GPU), in total and inside loops, and the widest global load and store in bytes (16 is a
128-bit vector access, the widest one thread can do). A loop is a label with a later backward
branch to it: the instructions between the label and that branch form its body.

`ptxas_stats(log)`: registers, spill bytes (stores plus loads), static shared memory and stack
frame, parsed from ptxas's verbose output.
"""

from __future__ import annotations

import re

_PREDICATE = re.compile(r"^@!?%\w+\s+")
_DIV64 = re.compile(r"^(?:div|rem)\.[su]64$")
_TYPE_BITS = re.compile(r"^[bsuf](8|16|32|64|128)$")
_PTXAS = {
    "regs": re.compile(r"Used (\d+) registers"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
    "stack": re.compile(r"(\d+) bytes stack frame"),
    "static_smem": re.compile(r"(\d+) bytes smem"),
}


def _instructions(ptx: str) -> list[tuple[str, str, str]]:
    """(kind, opcode or label, operand text) of the lines that matter (labels, branches, 64-bit
    div/rem, global loads and stores; the rest skipped fast); kind is "label" or "op"."""
    out = []
    for raw in ptx.splitlines():
        if not (":" in raw or "bra" in raw or "64" in raw or "global" in raw):
            continue
        line = raw.split("//", 1)[0].strip()
        if not line or line.startswith((".", "{", "}")):
            continue
        if line.endswith(":"):
            out.append(("label", line[:-1], ""))
            continue
        line = _PREDICATE.sub("", line)
        opcode, _, operands = line.partition(" ")
        out.append(("op", opcode.rstrip(";"), operands.strip()))
    return out


def _in_loop(code: list[tuple[str, str, str]]) -> list[bool]:
    """Whether each line lies between a label and a later backward branch to it."""
    where = {name: i for i, (kind, name, _) in enumerate(code) if kind == "label"}
    inside = [False] * len(code)
    for j, (kind, opcode, operands) in enumerate(code):
        if kind != "op" or not opcode.startswith("bra"):
            continue
        i = where.get(operands.rstrip(";").strip())
        if i is not None and i < j:
            for k in range(i, j + 1):
                inside[k] = True
    return inside


def _global_bytes(opcode: str) -> tuple[str, int] | None:
    """("ld" or "st", bytes per thread) of a global load or store opcode, else None."""
    parts = opcode.split(".")
    if parts[0] not in ("ld", "st") or "global" not in parts[1:]:
        return None
    bits = _TYPE_BITS.match(parts[-1])
    if bits is None:
        return None
    vector = next((int(p[1:]) for p in parts[1:-1] if re.fullmatch(r"v\d+", p)), 1)
    return parts[0], vector * int(bits.group(1)) // 8


def ptx_stats(ptx: str) -> dict[str, int]:
    """64-bit div/rem counts (total, in loops) and the widest global load/store (bytes, 0: none)."""
    code = _instructions(ptx)
    inside = _in_loop(code)
    stats = {"div64": 0, "div64_in_loop": 0, "widest_ld": 0, "widest_st": 0}
    for (kind, opcode, _), looped in zip(code, inside, strict=True):
        if kind != "op":
            continue
        if _DIV64.match(opcode):
            stats["div64"] += 1
            stats["div64_in_loop"] += looped
            continue
        access = _global_bytes(opcode)
        if access is not None:
            key = "widest_" + access[0]
            stats[key] = max(stats[key], access[1])
    return stats


def ptxas_stats(log: str) -> dict[str, int] | None:
    """Registers, spills (store plus load bytes), static smem and stack of a `ptxas -v` log.

    Several functions (an entry and non-inlined device functions): the most registers and the
    sums of the byte counts. None when the log has no register line.
    """
    found = {key: [int(v) for v in rx.findall(log)] for key, rx in _PTXAS.items()}
    if not found["regs"]:
        return None
    return {"regs": max(found["regs"]),
            "spills": sum(found["spill_stores"]) + sum(found["spill_loads"]),
            "stack": sum(found["stack"]), "static_smem": sum(found["static_smem"])}  # fmt: skip
