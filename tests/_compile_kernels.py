"""Compile logged Triton launches for real CUDA targets (run in a subprocess without the
interpreter: `python tests/_compile_kernels.py < jobs.json`, prints failures as JSON)."""

from __future__ import annotations

import importlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

os.environ.pop("TRITON_INTERPRET", None)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def _value(v):
    if isinstance(v, dict) and "tl_dtype" in v:
        import triton.language as tl

        name = v["tl_dtype"]  # str(tl.float32) is "fp32": not an attribute of tl
        return getattr(tl, name) if hasattr(tl, name) else tl.dtype(name)
    return v


def compile_one(job: dict) -> str | None:
    """Compile one launch for every target; an error text or None."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    kernel = getattr(importlib.import_module(job["module"]), job["name"])
    constexprs = {k: _value(v) for k, v in job["constexprs"].items()}
    try:
        src = ASTSource(fn=kernel, signature=job["signature"], constexprs=constexprs)
        for cc in job["targets"]:
            triton.compile(src, target=GPUTarget("cuda", cc, 32))
    except Exception as e:
        return f"{job['module']}.{job['name']} {job['signature']} {job['constexprs']}: " \
               f"{type(e).__name__}: {str(e)[:2000]}"
    return None


if __name__ == "__main__":
    jobs = json.load(sys.stdin)
    with ProcessPoolExecutor(max_workers=int(os.environ.get("NDD_COMPILE_WORKERS", "2"))) as pool:
        errors = [e for e in pool.map(compile_one, jobs) if e]
    print(json.dumps(errors))
