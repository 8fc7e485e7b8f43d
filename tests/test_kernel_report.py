"""The kernel report's CI gate (tools/kernel_report.py, perf/README.md "Kernel report").

Every kernel launched in the test session, compiled for sm_90 by the `compiled_kernels` fixture
(the same compile as test_kernels_compile.py, done once), must not spill registers and must not
divide or take the remainder of 64-bit integers inside a loop (each one is a call into a software
routine of dozens of instructions: STYLE.md §4). 64-bit division outside loops (once per program)
and narrow global accesses are reported, not gated.

`ALLOWED` lists today's offenders, kernel by kernel with their offences, while their rewrites land:
remove a kernel when its rewrite is merged. The list cannot go stale: a listed kernel that no longer
exists, is no longer compiled, or no longer commits a listed offence fails the test too.
"""

from __future__ import annotations

import kernel_report
from kernel_compile import jit_kernels
from ptx_stats import ptx_stats, ptxas_stats

SPILLS, DIV64 = kernel_report.SPILLS, kernel_report.DIV64_IN_LOOP

# Kernel ("module.name" under ndd_triton.kernels.gpu) -> offences allowed until its rewrite lands
# (`python tools/kernel_report.py --offenders`). Empty since 2026-11-27 (Triton 3.9, ptxas 13,
# sm_90): no launched specialisation spills or divides 64-bit integers in a loop.
ALLOWED: dict[str, set[str]] = {}


def _table(compiled_kernels):
    return kernel_report.rows(compiled_kernels[1])


def test_no_spills_and_no_div64_in_loops(compiled_kernels):
    table = _table(compiled_kernels)
    new = {kernel: sorted(found - ALLOWED.get(kernel, set()))
           for kernel, found in kernel_report.offenders(table).items()}  # fmt: skip
    new = {k: v for k, v in new.items() if v}
    bad = [kernel_report.format_table(table, [r for r in table if r["kernel"] in new])]
    assert not new, f"kernels that spill or divide 64-bit integers in a loop: {new}\n" + bad[0]


def test_allow_list_is_current(compiled_kernels):
    table = _table(compiled_kernels)
    known = {kernel_report.kernel_id(m, n) for m, n in jit_kernels()}
    found = kernel_report.offenders(table)
    stale = {kernel: sorted(allowed - found.get(kernel, set()))
             for kernel, allowed in ALLOWED.items()}  # fmt: skip
    assert not set(ALLOWED) - known, f"ALLOWED names missing kernels: {set(ALLOWED) - known}"
    assert not any(stale.values()), f"no longer offending, remove from ALLOWED: {stale}"


def test_report_table_has_a_row_per_compiled_job(compiled_kernels):
    jobs, results = compiled_kernels
    table = _table(compiled_kernels)
    text = kernel_report.format_table(table)
    assert len(table) == len(jobs) == len(results)
    assert len(text.splitlines()) > len(table)
    ok = [r for r in table if not r["error"]]
    assert ok
    assert all(r["regs"] > 0 for r in ok)
    assert max(r["widest_ld"] for r in ok) >= 8, "no 64-bit global load: the PTX parse broke"


_PTX = """
.visible .entry k(
	.param .u64 k_param_0
)
{
	@%p1 bra 	$L__BB0_3;
	ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
	div.s64 	%rd9, %rd8, %rd5;
$L__BB0_2:                              // %.lr.ph
	@%p2 ld.global.L1::evict_last.b16 { %rs1 }, [ %rd16 + 0 ];
	rem.u64 	%rd11, %rd10, %rd5;
	div.rn.f64 	%fd1, %fd2, %fd3;
	@!%p3 st.global.v2.b32 [ %rd17 + 0 ], { %r6, %r7 };
	@%p4 bra 	$L__BB0_2;
$L__BB0_3:
	rem.s32 	%r12, %r11, %r10;
	st.global.b8 [ %rd8 + 0 ], { %rs2 };   // div.s64 in a comment
	ret;
}
"""


def test_ptx_stats_counts_div64_in_loops_and_access_widths():
    stats = ptx_stats(_PTX)
    assert stats == {"div64": 2, "div64_in_loop": 1, "widest_ld": 16, "widest_st": 8}


def test_ptx_stats_nested_loops_and_forward_branches():
    ptx = "\n".join(["$L__A:", "$L__B:", "div.u64 %rd1, %rd2, %rd3;", "@%p1 bra $L__B;",
                     "bra.uni $L__C;", "$L__C:", "rem.s64 %rd1, %rd2, %rd3;", "@%p2 bra $L__A;",
                     "rem.s64 %rd4, %rd2, %rd3;"])  # fmt: skip
    assert ptx_stats(ptx) == {"div64": 3, "div64_in_loop": 2, "widest_ld": 0, "widest_st": 0}


def test_ptxas_stats_parses_the_verbose_log():
    log = """ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Function properties for k
    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 256 bytes smem, 400 bytes cmem[0]
"""
    assert ptxas_stats(log) == {"regs": 40, "spills": 20, "stack": 16, "static_smem": 256}
    assert ptxas_stats("no log: a Triton cache hit") is None


def test_offences_of_a_row():
    row = {"error": None, "spills": 0, "div64_in_loop": 2}
    assert kernel_report.offences(row) == [DIV64]
    assert kernel_report.offences({**row, "spills": 4, "div64_in_loop": 0}) == [SPILLS]
    assert kernel_report.offences({**row, "error": "failed"}) == []
