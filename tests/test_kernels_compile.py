"""Every Triton kernel compiles for real CUDA targets without a GPU: every launched
specialisation for sm_90, and each kernel's argument-type signatures for sm_80 too.

The interpreter accepts code the compiler rejects (plain-int globals, for one), so the kernels
launched during this test session (recorded by GpuRun.launch) are compiled in a subprocess with
`triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))`: the `compiled_kernels`
fixture (tests/conftest.py, tools/kernel_compile.py), which test_kernel_report.py shares. Run
alone, the fixture first runs the op tests and golden cases in a subprocess to record their
launches.
"""

from __future__ import annotations

import importlib

from kernel_compile import jit_kernels


def test_every_triton_kernel_compiles_for_sm80_and_sm90(compiled_kernels):
    jobs, results = compiled_kernels
    launched = {(j["module"], j["name"]) for j in jobs}
    never = sorted(f"{m}.{n}" for m, n in jit_kernels() - launched
                   if not n.startswith("_helper"))  # fmt: skip
    assert not never, f"Triton kernels never launched in tests (so never compile-checked): {never}"
    errors = [r["error"] for r in results if r["error"]]
    assert not errors, "\n\n".join(errors)


# Triton 3.6's generated argument binder keeps the bound arguments in a local named `params`
# (and uses these other names too), so a kernel parameter of one of these names is shadowed:
# every launch fails with "failed to specialize argument of type: dict" on real CUDA, while
# the interpreter and the AOT compile above accept it. Seen on an H200 (torch 2.11, Triton 3.6).
_BINDER_NAMES = {"params", "specialization", "options", "backend", "specialize_impl",
                 "JITCallable"}


def test_no_kernel_parameter_shadows_triton_binder_locals():
    clashes = []
    for module, name in sorted(jit_kernels()):
        kernel = getattr(importlib.import_module(module), name)
        clashes += [f"{module}.{name}({arg})" for arg in kernel.arg_names if arg in _BINDER_NAMES]
    assert not clashes, f"rename these Triton kernel parameters: {clashes}"


def test_worker_job_lists_merge_into_one():
    """`make test` runs the suite in pytest-xdist workers, each saving its own launches: the
    compile check reads them merged (a job two workers saw once, with both target lists)."""
    from kernel_compile import merge_jobs

    def job(name, consts, targets):
        return {"module": "m", "name": name, "signature": {"x": "*fp32"},
                "constexprs": {"BLOCK": consts}, "targets": targets}  # fmt: skip

    merged = merge_jobs([[job("a", 64, [80, 90]), job("b", 32, [90])],
                         [job("b", 32, [80, 90]), job("a", 128, [90])]])  # fmt: skip
    assert sorted((j["name"], j["constexprs"]["BLOCK"], j["targets"]) for j in merged) == [
        ("a", 64, [80, 90]), ("a", 128, [90]), ("b", 32, [80, 90])]
