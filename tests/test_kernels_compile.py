"""Every Triton kernel compiles for real CUDA targets (sm_80, sm_90) without a GPU.

The interpreter accepts code the compiler rejects (plain-int globals, for one), so the kernels
launched during this test session (recorded by GpuRun.launch) are compiled in a subprocess with
`triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))`. Run alone, the test first
exercises one golden case per op on the emulated gpu to record launches.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys

import ndd_triton as ndd
import ndd_triton.kernels.gpu as gpu_pkg
from ndd_triton.kernels.gpu import _tables

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = [80, 90]


def _jit_kernels() -> set[tuple[str, str]]:
    found = set()
    for info in pkgutil.iter_modules(gpu_pkg.__path__):
        module = importlib.import_module(f"ndd_triton.kernels.gpu.{info.name}")
        for name, obj in vars(module).items():
            if hasattr(obj, "arg_names") and hasattr(obj, "fn") and \
                    getattr(obj.fn, "__module__", "") == module.__name__:  # fmt: skip
                found.add((module.__name__, name))
    return found


def _exercise_golden() -> None:
    import golden
    from test_golden import CASES, run_case

    seen: set[str] = set()
    for case in CASES:
        if case.op in seen:
            continue
        seen.add(case.op)
        try:
            run_case(case, "gpu")
        except Exception:  # noqa: BLE001, S110 (only launches matter here)
            pass
    assert golden is not None


def _serialise(v):
    if type(v).__module__.startswith("triton"):
        return {"tl_dtype": str(v).replace("tl.", "")}
    return v


def test_every_triton_kernel_compiles_for_sm80_and_sm90():
    if not _tables.LAUNCH_LOG:
        _exercise_golden()
    jobs, keys = [], set()
    for kernel, signature, constexprs in _tables.LAUNCH_LOG or []:
        module, name = kernel.fn.__module__, kernel.fn.__name__
        consts = {k: _serialise(v) for k, v in constexprs.items()}
        key = (module, name, json.dumps(signature, sort_keys=True), json.dumps(consts, sort_keys=True))
        if key in keys:
            continue
        keys.add(key)
        jobs.append({"module": module, "name": name, "signature": signature,
                     "constexprs": consts, "targets": TARGETS})
    launched = {(j["module"], j["name"]) for j in jobs}
    never = sorted(f"{m}.{n}" for m, n in _jit_kernels() - launched
                   if not n.startswith("_helper"))  # fmt: skip
    assert not never, f"Triton kernels never launched in tests (so never compile-checked): {never}"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, os.path.join(HERE, "_compile_kernels.py")],
                          input=json.dumps(jobs), capture_output=True, text=True, env=env,
                          timeout=1800, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    errors = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not errors, "\n\n".join(errors)
    assert ndd is not None
