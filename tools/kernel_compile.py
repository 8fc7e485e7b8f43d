"""Compile the Triton kernels the tests launch for real CUDA targets, without a GPU.

Shared by tests/test_kernels_compile.py, tests/test_kernel_report.py (through the session fixture
`compiled_kernels` in tests/conftest.py, so CI compiles each job once) and tools/kernel_report.py.

The tests record every launch (`_tables.LAUNCH_LOG`, set up in tests/conftest.py); `launch_jobs`
turns that log into compile jobs; `compile_jobs` compiles them in a subprocess without the Triton
interpreter, in parallel worker processes, with the options of a real launch
(`_tables.LAUNCH_OPTIONS`), and returns per job its error or the statistics of its code for the
report target (registers and spills from ptxas, 64-bit divisions and access widths from the PTX:
tools/ptx_stats.py). Run as a script it is that subprocess:
`python tools/kernel_compile.py request.json results.json`.
"""

from __future__ import annotations

import contextlib
import glob
import importlib
import io
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from typing import Any

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
TARGETS = (80, 90)
REPORT_TARGET = 90


def jit_kernels() -> set[tuple[str, str]]:
    """(module, name) of every @triton.jit kernel defined in ndd_triton.kernels.gpu."""
    import ndd_triton.kernels.gpu as gpu_pkg

    found = set()
    for info in pkgutil.iter_modules(gpu_pkg.__path__):
        module = importlib.import_module(f"ndd_triton.kernels.gpu.{info.name}")
        for name, obj in vars(module).items():
            if hasattr(obj, "arg_names") and hasattr(obj, "fn") and \
                    getattr(obj.fn, "__module__", "") == module.__name__:  # fmt: skip
                found.add((module.__name__, name))
    return found


def _serialise(v: Any) -> Any:
    if type(v).__module__.startswith("triton"):
        return {"tl_dtype": str(v).replace("tl.", "")}
    return v


def launch_jobs(log: list[tuple[Any, dict[str, str], dict[str, Any], tuple[str, ...]]]
                ) -> list[dict[str, Any]]:  # fmt: skip
    """Compile jobs covering every constexpr specialisation and every argument-type signature
    of each launched kernel at least once (not their full cross product, which would take CI
    many minutes for no new coverage: a kernel body either lowers for a dtype or it does not).
    A signature includes which arguments were divisible by 16 (`divisible`), as Triton's JIT
    specialises on it (`_tables._log_launch`)."""
    jobs, by_consts, by_signature = [], set(), set()
    for kernel, signature, constexprs, divisible in log:
        module, name = kernel.fn.__module__, kernel.fn.__name__
        consts = {k: _serialise(v) for k, v in constexprs.items()}
        key_c = (module, name, json.dumps(consts, sort_keys=True))
        key_s = (module, name, json.dumps([signature, sorted(divisible)], sort_keys=True))
        if key_c in by_consts and key_s in by_signature:
            continue
        # Every target for a new argument-type signature (what lowers differently per
        # architecture is the types: fp16/bf16, 64-bit atomics...); further constexpr
        # specialisations (tile sizes, channel counts) on the report target only. Halves CI's
        # compile time now that the row-tiled kernels have many tile-size specialisations.
        every_target = key_s not in by_signature
        by_consts.add(key_c)
        by_signature.add(key_s)
        jobs.append({"module": module, "name": name, "signature": signature,
                     "constexprs": consts, "divisible": sorted(divisible),
                     "targets": list(TARGETS) if every_target else [REPORT_TARGET]})  # fmt: skip
    return jobs


def record_jobs(path: str | None = None) -> list[dict[str, Any]]:
    """Record launches by running the op tests and golden cases in a subprocess (minutes);
    the jobs are saved to `path` when given."""
    with tempfile.TemporaryDirectory() as tmp:
        out = path or os.path.join(tmp, "launches.json")
        env = dict(os.environ, NDD_TRITON_LAUNCH_LOG=os.path.abspath(out))
        tests = os.path.join(ROOT, "tests")
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", os.path.join(tests, "ops"),
                        os.path.join(tests, "test_golden.py")], env=env, check=True, cwd=ROOT,
                       capture_output=True, timeout=1800)  # fmt: skip
        with open(out) as f:
            return json.load(f)


def merge_jobs(job_lists: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One job list from several (one per pytest-xdist worker): a job that several lists hold
    (same kernel, signature and constexprs) once, with the union of their targets."""
    merged: dict[str, dict[str, Any]] = {}
    for jobs in job_lists:
        for job in jobs:
            key = json.dumps([job["module"], job["name"], job["signature"], job["constexprs"],
                              job.get("divisible", [])], sort_keys=True)  # fmt: skip
            if key in merged:
                merged[key]["targets"] = sorted(set(merged[key]["targets"]) | set(job["targets"]))
            else:
                merged[key] = dict(job)
    return list(merged.values())


def load_or_record_jobs(path: str | None) -> list[dict[str, Any]]:
    """The jobs saved in `path` (a file, or a glob pattern: the files of every pytest-xdist
    worker, merged), or when nothing matches (or None) recorded first (record_jobs)."""
    files = sorted(glob.glob(path)) if path else []
    if files:
        lists = []
        for name in files:
            with open(name) as f:
                lists.append(json.load(f))
        return merge_jobs(lists)
    print("recording kernel launches: running the op tests (minutes)...", file=sys.stderr)
    return record_jobs(path if path and not glob.has_magic(path) else None)


def compile_jobs(jobs: list[dict[str, Any]], targets: tuple[int, ...] = TARGETS,
                 report_target: int | None = REPORT_TARGET, workers: int | None = None,
                 ptx_dir: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Each job with "error" (None or text) and "stats" (for report_target; None when it
    failed or is None), compiled in a subprocess with `workers` processes (default
    $NDD_COMPILE_WORKERS or 2); the report target's PTX is written to ptx_dir when given."""
    request = {"jobs": jobs, "targets": list(targets), "report_target": report_target,
               "ptx_dir": ptx_dir,
               "workers": workers or int(os.environ.get("NDD_COMPILE_WORKERS", "2"))}  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory() as tmp:
        req, res = os.path.join(tmp, "request.json"), os.path.join(tmp, "results.json")
        with open(req, "w") as f:
            json.dump(request, f)
        cmd = [sys.executable, os.path.abspath(__file__), req, res]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800,
                              check=False)  # fmt: skip
        if proc.returncode != 0:
            raise RuntimeError(f"kernel compile subprocess failed:\n{proc.stderr[-4000:]}")
        with open(res) as f:
            return json.load(f)


def _value(v: Any) -> Any:
    if isinstance(v, dict) and "tl_dtype" in v:
        import triton.language as tl

        name = v["tl_dtype"]  # str(tl.float32) is "fp32": not an attribute of tl
        return getattr(tl, name) if hasattr(tl, name) else tl.dtype(name)
    return v


def _attrs(kernel: Any, divisible: list[str]) -> dict[tuple[int, ...], list[list[Any]]]:
    """Triton's attributes for the arguments its JIT found divisible by 16 (`tt.divisibility`:
    the alignment and contiguity analysis that decides vector widths starts from them)."""
    names = list(kernel.arg_names)
    return {(names.index(n),): [["tt.divisibility", 16]] for n in divisible}


def _run_ptxas(ptx: str, cc: int) -> str:
    """`ptxas -v` on the PTX, as Triton runs it (a Triton cache hit skips ptxas, so no log)."""
    from triton.backends.nvidia import compiler

    ptxas = compiler.get_ptxas(cc).path
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        fmad = [] if _options().get("enable_fp_fusion", True) else ["--fmad=false"]
        arch = compiler.sm_arch_from_capability(cc)
        cmd = [ptxas, "-lineinfo", *fmad, "-v", "--regAllocOptLevel=2", f"--gpu-name={arch}",
               src, "-o", src + ".o"]  # fmt: skip
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stderr


def _options() -> dict[str, Any]:
    from ndd_triton.kernels.gpu._tables import LAUNCH_OPTIONS

    return dict(LAUNCH_OPTIONS)


def _stats(compiled: Any, log: str, cc: int) -> dict[str, Any]:
    """Registers, spills and smem (metadata, else the ptxas log) plus the PTX statistics."""
    from ptx_stats import ptx_stats, ptxas_stats

    ptx = compiled.asm["ptx"]
    md = compiled.metadata
    res = ptxas_stats(log) or ptxas_stats(_run_ptxas(ptx, cc))
    assert res is not None, "no register count in the ptxas log"
    for key, attr in (("regs", "n_regs"), ("spills", "n_spills")):
        if getattr(md, attr, None) is not None:  # filled only by a GPU load today
            res[key] = getattr(md, attr)
    res["smem"] = int(getattr(md, "shared", 0) or 0) + res.pop("static_smem")
    return {**res, **ptx_stats(ptx)}


def compile_one(job: dict[str, Any], targets: list[int], report_target: int | None,
                ptx_dir: str | None) -> dict[str, Any]:  # fmt: skip
    """Compile one job for every target (PTX, ptxas); the job with "error" and "stats"."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    knobs.nvidia.dump_ptxas_log = True  # printed to stdout: captured below
    out = {**job, "error": None, "stats": None}
    try:
        kernel = getattr(importlib.import_module(job["module"]), job["name"])
        constexprs = {k: _value(v) for k, v in job["constexprs"].items()}
        src = ASTSource(fn=kernel, signature=job["signature"], constexprs=constexprs,
                        attrs=_attrs(kernel, job.get("divisible", [])))
        for cc in [cc for cc in targets if cc in job.get("targets", targets)]:
            log = io.StringIO()
            with contextlib.redirect_stdout(log):
                compiled = triton.compile(src, target=GPUTarget("cuda", cc, 32),
                                          options=_options())  # fmt: skip
            if cc == report_target:
                out["stats"] = _stats(compiled, log.getvalue(), cc)
                if ptx_dir:
                    with open(os.path.join(ptx_dir, f"{compiled.metadata.hash}.ptx"), "w") as f:
                        f.write(compiled.asm["ptx"])
                    out["stats"]["ptx"] = f"{compiled.metadata.hash}.ptx"
    except Exception as e:  # reported to the caller
        out["error"] = f"{job['module']}.{job['name']} {job['signature']} {job['constexprs']}: " \
                       f"{type(e).__name__}: {str(e)[:2000]}"  # fmt: skip
    return out


def _main(request_path: str, results_path: str) -> None:
    os.environ.pop("TRITON_INTERPRET", None)  # before triton is imported (workers fork later)
    with open(request_path) as f:
        req = json.load(f)
    if req["ptx_dir"]:
        os.makedirs(req["ptx_dir"], exist_ok=True)
    n = len(req["jobs"])
    with ProcessPoolExecutor(max_workers=req["workers"]) as pool:
        results = list(pool.map(compile_one, req["jobs"], [req["targets"]] * n,
                                [req["report_target"]] * n, [req["ptx_dir"]] * n))  # fmt: skip
    with open(results_path, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2])
