"""Every Triton kernel compiles for real CUDA targets (sm_80, sm_90) without a GPU.

The interpreter accepts code the compiler rejects (plain-int globals, for one), so the kernels
launched during this test session (recorded by GpuRun.launch) are compiled in a subprocess with
`triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))`. Run alone, the test first
runs the op tests and golden cases in a subprocess to record their launches.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import tempfile

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


def _serialise(v):
    if type(v).__module__.startswith("triton"):
        return {"tl_dtype": str(v).replace("tl.", "")}
    return v


def launch_jobs(log) -> list[dict]:
    """Compile jobs covering every constexpr specialisation and every argument-type signature
    of each launched kernel at least once (not their full cross product, which would take CI
    many minutes for no new coverage: a kernel body either lowers for a dtype or it does not)."""
    jobs, by_consts, by_signature = [], set(), set()
    for kernel, signature, constexprs in log:
        module, name = kernel.fn.__module__, kernel.fn.__name__
        consts = {k: _serialise(v) for k, v in constexprs.items()}
        key_c = (module, name, json.dumps(consts, sort_keys=True))
        key_s = (module, name, json.dumps(signature, sort_keys=True))
        if key_c in by_consts and key_s in by_signature:
            continue
        by_consts.add(key_c)
        by_signature.add(key_s)
        jobs.append({"module": module, "name": name, "signature": signature,
                     "constexprs": consts, "targets": TARGETS})  # fmt: skip
    return jobs


def _jobs_from_op_tests() -> list[dict]:
    """Run alone: record launches by running the op tests in a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "launches.json")
        env = dict(os.environ, NDD_TRITON_LAUNCH_LOG=path)
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", os.path.join(HERE, "ops"),
                        os.path.join(HERE, "test_golden.py")], env=env, check=True,
                       capture_output=True, timeout=1800)  # fmt: skip
        with open(path) as f:
            return json.load(f)


def test_every_triton_kernel_compiles_for_sm80_and_sm90():
    jobs = launch_jobs(_tables.LAUNCH_LOG) if _tables.LAUNCH_LOG else _jobs_from_op_tests()
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


# Triton 3.6's generated argument binder keeps the bound arguments in a local named `params`
# (and uses these other names too), so a kernel parameter of one of these names is shadowed:
# every launch fails with "failed to specialize argument of type: dict" on real CUDA, while
# the interpreter and the AOT compile above accept it. Seen on an H200 (torch 2.11, Triton 3.6).
_BINDER_NAMES = {"params", "specialization", "options", "backend", "specialize_impl",
                 "JITCallable"}


def test_no_kernel_parameter_shadows_triton_binder_locals():
    clashes = []
    for module, name in sorted(_jit_kernels()):
        kernel = getattr(importlib.import_module(module), name)
        clashes += [f"{module}.{name}({arg})" for arg in kernel.arg_names if arg in _BINDER_NAMES]
    assert not clashes, f"rename these Triton kernel parameters: {clashes}"
