"""Kernel report: what every launched Triton kernel compiles to on sm_90, without a GPU.

One row per compiled specialisation (kernel, constexprs, pointer dtypes): registers, spill bytes,
shared memory, 64-bit integer divisions/remainders (total / inside a loop) and the widest global
load and store in bytes, then a summary naming the offenders (spills, 64-bit division in a loop).
tests/test_kernel_report.py runs the same checks in CI (perf/README.md, "Kernel report").

    python tools/kernel_report.py [--jobs FILE] [-k REGEX] [--offenders] [--json]
                                  [--workers N] [--ptx-dir DIR]

The jobs (kernel, argument types, constexprs of each distinct launch) come from the tests' launch
log: `--jobs FILE` reads FILE, or when it does not exist records it there first by running the op
tests and golden cases (minutes; NDD_TRITON_LAUNCH_LOG=FILE on any pytest run saves one too).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_compile  # after the path set-up: tools/ is not a package

SPILLS, DIV64_IN_LOOP = "spills", "div64 in loop"
_COLUMNS = (("kernel", 36, "<"), ("constexprs", 34, "<"), ("ptrs", 16, "<"), ("regs", 4, ">"),
            ("spills", 6, ">"), ("smem", 6, ">"), ("div64", 7, ">"), ("ld", 3, ">"),
            ("st", 3, ">"))  # fmt: skip


def kernel_id(module: str, name: str) -> str:
    """Short kernel name: "flip._flip_kernel" for ndd_triton.kernels.gpu.flip._flip_kernel."""
    return f"{module.rsplit('.', 1)[-1]}.{name}"


def _short(value: Any) -> str:
    if isinstance(value, dict) and "tl_dtype" in value:
        return str(value["tl_dtype"])
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per compiled job, sorted by kernel: kernel, constexprs, ptrs, error, stats."""
    out = []
    for r in results:
        ptrs = [t[1:] for t in r["signature"].values() if t.startswith("*")]
        out.append({"kernel": kernel_id(r["module"], r["name"]),
                    "constexprs": " ".join(f"{k}={_short(v)}" for k, v in r["constexprs"].items()),
                    "ptrs": ",".join(dict.fromkeys(ptrs)), "error": r["error"],
                    **(r["stats"] or {})})  # fmt: skip
    return sorted(out, key=lambda row: (row["kernel"], row["ptrs"], row["constexprs"]))


def offences(row: dict[str, Any]) -> list[str]:
    """What the CI gate rejects in one compiled row: spills, 64-bit division inside a loop."""
    if row["error"]:
        return []
    return [name for name, bad in ((SPILLS, row["spills"] > 0),
                                   (DIV64_IN_LOOP, row["div64_in_loop"] > 0)) if bad]  # fmt: skip


def offenders(table: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Kernel name -> its offences in any specialisation."""
    found: dict[str, set[str]] = defaultdict(set)
    for row in table:
        found[row["kernel"]].update(offences(row))
    return {k: v for k, v in found.items() if v}


def summary(table: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and the kernels behind each finding (div64 outside loops: info only)."""
    ok = [r for r in table if not r["error"]]

    def kernels(pred: Any) -> list[str]:
        return sorted({r["kernel"] for r in ok if pred(r)})

    worst = max(ok, key=lambda r: r["regs"], default=None)
    return {"specialisations": len(table), "kernels": len({r["kernel"] for r in table}),
            "compile_errors": [r["error"] for r in table if r["error"]],
            "spills": kernels(lambda r: r["spills"] > 0),
            "div64_in_loop": kernels(lambda r: r["div64_in_loop"] > 0),
            "div64_outside_loops": kernels(lambda r: r["div64"] > r["div64_in_loop"]),
            "max_regs": worst and {"kernel": worst["kernel"], "regs": worst["regs"]}}  # fmt: skip


def _cells(row: dict[str, Any]) -> dict[str, str]:
    if row["error"]:
        return {"kernel": row["kernel"], "constexprs": row["constexprs"], "ptrs": row["ptrs"],
                "regs": "ERROR"}  # fmt: skip
    return {"kernel": row["kernel"], "constexprs": row["constexprs"], "ptrs": row["ptrs"],
            "regs": str(row["regs"]), "spills": str(row["spills"]), "smem": str(row["smem"]),
            "div64": f"{row['div64']}/{row['div64_in_loop']}", "ld": str(row["widest_ld"]),
            "st": str(row["widest_st"])}  # fmt: skip


def format_table(table: list[dict[str, Any]], shown: list[dict[str, Any]] | None = None) -> str:
    """The rows (or those `shown`) as fixed-width text (long cells cut with "~"), then the
    summary of the whole table."""

    def fit(text: str, width: int, align: str) -> str:
        text = text if len(text) <= width else text[:width - 1] + "~"
        return f"{text:{align}{width}}"

    lines = ["  ".join(fit(name, w, a) for name, w, a in _COLUMNS)]
    for row in table if shown is None else shown:
        cells = _cells(row)
        lines.append("  ".join(fit(cells.get(name, ""), w, a) for name, w, a in _COLUMNS))
    s = summary(table)
    lines += ["", f"{s['specialisations']} specialisations of {s['kernels']} kernels, sm_90; "
                  "div64 = total/in loops, ld/st = widest global access in bytes",
              f"compile errors: {len(s['compile_errors'])}",
              f"spills: {', '.join(s['spills']) or 'none'}",
              f"div64 in loops: {', '.join(s['div64_in_loop']) or 'none'}",
              f"div64 outside loops (info): {', '.join(s['div64_outside_loops']) or 'none'}"]
    if s["max_regs"]:
        lines.append(f"most registers: {s['max_regs']['kernel']} ({s['max_regs']['regs']})")
    return "\n".join(lines)


def _jobs(path: str | None, pattern: str | None) -> list[dict[str, Any]]:
    jobs = kernel_compile.load_or_record_jobs(path)
    if pattern:
        jobs = [j for j in jobs if re.search(pattern, kernel_id(j["module"], j["name"]))]
    return jobs


def main(argv: list[str] | None = None) -> int:
    """Command line; exit status 1 when a kernel fails to compile, spills or divides 64-bit
    integers in a loop (the CI test allows today's known offenders; this tool does not)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", help="launch log (jobs JSON); recorded there first when missing")
    p.add_argument("-k", "--kernel", help="regex on module.kernel names, e.g. 'flip|pad'")
    p.add_argument("--offenders", action="store_true",
                   help="only the rows that spill or divide 64-bit integers in a loop")
    p.add_argument("--json", action="store_true", help="rows and summary as JSON")
    p.add_argument("--workers", type=int, help="compile processes (default 2)")
    p.add_argument("--ptx-dir", help="write each specialisation's sm_90 PTX there")
    args = p.parse_args(argv)
    jobs = _jobs(args.jobs, args.kernel)
    results = kernel_compile.compile_jobs(jobs, targets=(kernel_compile.REPORT_TARGET,),
                                          workers=args.workers, ptx_dir=args.ptx_dir)  # fmt: skip
    table = rows(results)
    shown = [r for r in table if offences(r) or r["error"]] if args.offenders else table
    if args.json:
        print(json.dumps({"rows": shown, "summary": summary(table)}, indent=1))
    else:
        print(format_table(table, shown))
    return int(bool(offenders(table)) or any(r["error"] for r in table))


if __name__ == "__main__":
    sys.exit(main())
