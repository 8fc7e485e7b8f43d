"""What the GPU kernel benchmark's kernels compile to, on a machine without a GPU.

Runs every row of `perf/bench_gpu_kernels.py` once on its full-size batch (`--kbatch` uint8
480x640x3 HWC) on the emulated gpu with the kernel launches made no-ops, records each launch as
Triton's JIT would specialise it on a GPU (`_tables._log_launch`: int types, 16-byte
divisibility), compiles those specialisations for sm_90 and prints, per row and kernel:
registers, spills, shared memory and the global memory instructions by width in bytes
(`st 16x2` = two 16-byte stores per thread). A streaming kernel whose data accesses are 1-byte
(`ld 1x32`) is not vectorised; one with shared memory converts layouts. This is the static half
of a kernel's speed (STYLE.md §4); the device time needs a GPU (`bench_gpu_kernels.py`).

    .venv/bin/python perf/kernel_report_bench.py [--only erase,noise] [--kbatch 32]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
_ACCESS = re.compile(r"^\s*(?:@!?%\w+\s+)?(ld|st)\.global[.\w]*?(?:\.v(\d))?\.[bsuf](\d+)\s")


def accesses(ptx: str) -> dict[str, collections.Counter[int]]:
    """Global loads and stores of a kernel's PTX: {"ld"/"st": Counter(bytes per thread)}."""
    found: dict[str, collections.Counter[int]] = {"ld": collections.Counter(),
                                                  "st": collections.Counter()}  # fmt: skip
    for line in ptx.splitlines():
        m = _ACCESS.match(line)
        if m:
            found[m.group(1)][int(m.group(2) or 1) * int(m.group(3)) // 8] += 1
    return found


def _widths(counts: collections.Counter[int]) -> str:
    return " ".join(f"{w}x{n}" for w, n in sorted(counts.items(), reverse=True)) or "-"


def record(kbatch: int, only: str | None) -> list[tuple[str, list[Any]]]:
    """(row name, launch log entries) of every bench row, launches as no-ops."""
    import bench_gpu_host
    import bench_gpu_kernels
    import torch

    import ndd_triton as ndd
    from ndd_triton.kernels.gpu import _tables

    bench_gpu_host._no_launch()
    gen = torch.Generator().manual_seed(0)
    host = torch.randint(0, 256, (kbatch, 480, 640, 3), dtype=torch.uint8, generator=gen)
    batch = ndd.as_batch([host[i].numpy() for i in range(kbatch)], layout="HWC").gpu()
    out = []
    for name, ndd_fn, _, _ in bench_gpu_kernels.cases(batch, host, None):
        if only and not any(key in name for key in only.split(",")):
            continue
        _tables.LAUNCH_LOG = None
        ndd_fn()  # a compiled row traces on its first call and runs its fused program after
        _tables.LAUNCH_LOG = []
        ndd_fn()
        out.append((name, list(_tables.LAUNCH_LOG)))
        bench_gpu_kernels._Epoch.close_started()  # (a compiled row's epoch ends with its row)
    _tables.LAUNCH_LOG = None
    return out


def report(kbatch: int, only: str | None) -> list[dict[str, Any]]:
    """One row per bench row and kernel it launches: row, kernel, error, regs, spills, smem,
    ld and st ({bytes per access: count per thread})."""
    sys.path[:0] = [ROOT, HERE, os.path.join(ROOT, "tools")]
    import tempfile

    import kernel_compile
    import kernel_report

    recorded = record(kbatch, only)
    per_row = [(name, kernel_compile.launch_jobs(log)) for name, log in recorded]
    jobs = kernel_compile.merge_jobs([jobs for _, jobs in per_row])

    def key(job: dict[str, Any]) -> tuple[str, ...]:
        return (job["module"], job["name"], str(job["signature"]), str(job["constexprs"]),
                str(job.get("divisible")))  # fmt: skip

    with tempfile.TemporaryDirectory() as ptx_dir:
        results = kernel_compile.compile_jobs(jobs, targets=(kernel_compile.REPORT_TARGET,),
                                              ptx_dir=ptx_dir)  # fmt: skip
        stats = {}
        for r in results:
            ptx = r["stats"] and r["stats"].get("ptx")
            with open(os.path.join(ptx_dir, ptx)) if ptx else open(os.devnull) as f:
                stats[key(r)] = (r, accesses(f.read()))
    rows = []
    for name, row_jobs in per_row:
        for job in row_jobs:
            r, acc = stats[key(job)]
            s = r["stats"] or {}
            rows.append({"row": name, "kernel": kernel_report.kernel_id(job["module"], job["name"]),
                         "error": r["error"], "regs": s.get("regs"), "spills": s.get("spills"),
                         "smem": s.get("smem"), "ld": dict(acc["ld"]), "st": dict(acc["st"])})
        if not row_jobs:
            rows.append({"row": name, "kernel": None, "error": None})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kbatch", type=int, default=32)
    parser.add_argument("--only", help="comma-separated substrings of row names")
    parser.add_argument("--json", action="store_true", help="the rows as JSON")
    opts = parser.parse_args()
    os.environ["NDD_TRITON_EMULATE_GPU"] = "1"
    os.environ["TRITON_INTERPRET"] = "1"
    rows = report(opts.kbatch, opts.only)
    if opts.json:
        print(json.dumps(rows))
        return
    print(f"# kernels of perf/bench_gpu_kernels.py (batch {opts.kbatch} x 480x640x3 uint8), "
          "sm_90, as a GPU launch specialises them; ld/st: global accesses per thread, "
          "bytes x count")
    print(f"{'row':<44} {'kernel':<40} {'regs':>4} {'spill':>5} {'smem':>6}  ld / st")
    for r in rows:
        name, kernel = r["row"][:44], (r["kernel"] or "")[:40]
        if r["kernel"] is None:
            print(f"{name:<44} (no Triton launch)")
        elif r["error"]:
            print(f"{name:<44} {kernel:<40} compile error: {r['error'][:80]}")
        else:
            ld, st = (collections.Counter(r[k]) for k in ("ld", "st"))
            print(f"{name:<44} {kernel:<40} {r['regs']:>4} {r['spills']:>5} {r['smem']:>6}  "
                  f"{_widths(ld)} / {_widths(st)}")


if __name__ == "__main__":
    main()
