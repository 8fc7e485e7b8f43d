"""The interpreter's bounds check (tools/interp_bounds.py, installed by conftest for every test):
an interpreted load or store outside the kernel's tensor arguments raises, masked-off lanes and
accesses inside any argument do not; and the memory poisoning that makes unwritten output
elements visible is on."""

from __future__ import annotations

import os

import interp_bounds
import pytest
import torch
import triton
import triton.language as tl

pytestmark = pytest.mark.skipif(
    os.environ.get("NDD_TRITON_TEST_DEVICE") == "cuda" or not interp_bounds._installed,
    reason="checks Triton's interpreter")  # fmt: skip


@triton.jit
def _copy_kernel(src, dst, n, SHIFT: tl.constexpr, MASKED: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    if MASKED:
        tl.store(dst + offs, tl.load(src + offs + SHIFT, mask=mask), mask=mask)
    else:
        tl.store(dst + offs, tl.load(src + offs + SHIFT))


def _run(n: int, shift: int, masked: bool) -> torch.Tensor:
    src = torch.arange(n, dtype=torch.float32)
    dst = torch.zeros(n, dtype=torch.float32)
    _copy_kernel[(1,)](src, dst, n, SHIFT=shift, MASKED=masked, BLOCK=16)
    return dst


def test_masked_tail_lanes_are_not_checked():
    assert _run(10, 0, True).tolist() == list(range(10))  # lanes 10-15 masked off


def test_a_load_past_the_end_raises():
    with pytest.raises(Exception, match=r"a load of \d+ lane.*outside the kernel.s tensor arguments"):
        _run(10, 0, False)  # 16 unmasked lanes of a 10-element buffer (6 past its end)
    with pytest.raises(Exception, match="first at byte 40 of 'src'"):
        _run(10, 1, True)  # one past: lane 9 reads src[10]


def test_a_read_past_a_view_into_the_rest_of_its_storage_raises():
    """Tables uploaded together are views of one buffer: reading past one is caught."""
    both = torch.arange(20, dtype=torch.float32)
    src, dst = both[:10], torch.zeros(10, dtype=torch.float32)
    with pytest.raises(Exception, match="first at byte 40 of 'src'"):
        _copy_kernel[(1,)](src, dst, 10, SHIFT=1, MASKED=True, BLOCK=16)


def test_a_store_past_the_end_raises():
    @triton.jit
    def store_kernel(dst, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(dst + offs, offs.to(tl.float32))

    dst = torch.zeros(8, dtype=torch.float32)
    with pytest.raises(Exception, match=r"a store of \d+ lane"):
        store_kernel[(1,)](dst, BLOCK=16)


def test_output_and_scratch_buffers_start_poisoned():
    """conftest poisons new buffers (storage.POISON_MEMORY): an element a kernel never writes
    reads NaN/-1/255 instead of a zero that could pass for a result."""
    import numpy as np

    from ndd_triton.core.device import Device
    from ndd_triton.core.storage import BatchStorage
    from ndd_triton.kernels.gpu._tables import GpuRun

    for device in (Device.CPU, Device("gpu", 0)):
        for shapes in ([[2, 3, 3]] * 2, [[2, 3, 3], [4, 1, 3]]):
            storage = BatchStorage.allocate(shapes, torch.float32, device)
            for sample in storage.samples:
                assert torch.isnan(sample).all()
    scratch = GpuRun(torch.device("cpu")).empty(5, torch.int32)
    np.testing.assert_array_equal(scratch.numpy(), -1)
