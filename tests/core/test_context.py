"""EvalContext, thread counts, devices, streams and multithreaded use."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from _check import raises_at_call

import ndd_triton as ndd
from ndd_triton.core import device as ndd_device


def test_default_and_current_contexts():
    default = ndd.EvalContext.default()
    assert ndd.EvalContext.current() is default
    ctx = ndd.EvalContext(num_threads=2)
    with ctx:
        assert ndd.EvalContext.current() is ctx
        assert ctx.num_threads == 2
        out = ndd.flip(ndd.batch([np.zeros((2, 2, 1))]))
        assert out.select(0).shape == (2, 2, 1)
    assert ndd.EvalContext.current() is default
    other = []
    t = threading.Thread(target=lambda: other.append(ndd.EvalContext.default()))
    t.start()
    t.join()
    assert other[0] is not default


def test_context_arguments():
    with pytest.raises(ValueError, match="thread_pool and num_threads cannot be specified"):
        ndd.EvalContext(num_threads=2, thread_pool=ndd.ThreadPool(2))
    with pytest.raises(TypeError):
        ndd.EvalContext(2)
    pool = ndd.ThreadPool(3)
    assert ndd.EvalContext(thread_pool=pool).thread_pool is pool
    assert ndd.EvalContext(device_id=0).device_id == 0
    with pytest.raises(ValueError, match="Invalid device id"):
        ndd.EvalContext(device_id=7)
    assert ndd.EvalContext().cuda_stream is not None  # emulated gpu: an inert stream


def test_context_in_two_threads_at_once_raises():
    ctx = ndd.EvalContext(num_threads=1)
    entered, release = threading.Event(), threading.Event()

    def hold():
        with ctx:
            entered.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    entered.wait(10)
    try:
        with pytest.raises(RuntimeError, match="already active in another thread"), ctx:
            pass
    finally:
        release.set()
        t.join()
    with ctx:  # free again
        pass


def test_num_threads_api(monkeypatch):
    try:
        ndd.set_num_threads(3)
        assert ndd.get_num_threads() == 3
        assert ndd.EvalContext().num_threads == 3
        with pytest.raises(ValueError, match="must be positive; got 0"):
            ndd.set_num_threads(0)
        with pytest.raises(TypeError, match="must be an integer"):
            ndd.set_num_threads(2.5)
        with pytest.raises(ValueError, match="per CPU core must not exceed 100"):
            ndd.set_num_threads(100000)
        ndd.set_num_threads(None)
        monkeypatch.setenv("DALI_NUM_THREADS", "5")
        assert ndd.get_num_threads() == 5
        monkeypatch.delenv("DALI_NUM_THREADS")
        assert ndd.get_num_threads() == len(os.sched_getaffinity(0))
    finally:
        ndd.set_num_threads(None)


def test_device_objects():
    cpu = ndd.Device("cpu")
    assert cpu.device_type == "cpu" and cpu.device_id is None
    assert repr(cpu) == "Device(device_type='cpu')" and str(cpu) == "cpu"
    assert cpu == ndd.Device.CPU and cpu == "cpu"
    gpu = ndd.Device("gpu")
    assert gpu.device_id == 0 and ndd.Device("gpu:0") == gpu == ndd.Device("cuda:0")
    for bad in ("tpu", "GPU", "mixed"):
        with pytest.raises(ValueError, match="Invalid device type"):
            ndd.Device(bad)
    with pytest.raises(ValueError, match="Invalid device id: 0 for device type: cpu"):
        ndd.Device("cpu", 0)
    with pytest.raises(ValueError, match="Invalid device id: 3"):
        ndd.Device("gpu", 3)
    with pytest.raises(ValueError, match="given twice"):
        ndd.Device("gpu:0", 0)
    assert ndd.device(None) is None and ndd.device("gpu") == gpu
    with pytest.raises(TypeError, match="Cannot convert <class 'int'> to Device"):
        ndd.device(5)
    assert ndd.Device.current() == cpu
    with ndd.Device("gpu", 0) as d:
        assert ndd.Device.current() is d
    assert ndd.Device.current() == cpu
    assert ndd.Device.default_device_id("cpu") is None


def test_device_inference_and_mixed_rejected():
    x = ndd.batch([np.zeros((2, 2, 3), np.uint8)])
    assert ndd.flip(x.gpu()).device.device_type == "gpu"
    assert ndd.flip(x, device="gpu").device.device_type == "gpu"
    with raises_at_call(ValueError, match="'mixed'"):
        ndd.flip(x, device="mixed")
    with raises_at_call(ValueError, match="device='cpu' but input 0 is on the gpu"):
        ndd.flip(x.gpu(), device="cpu")


def test_streams_on_emulated_gpu():
    s = ndd.stream()
    assert isinstance(s, ndd.Stream) and s.device_id == 0
    assert ndd.stream(stream=None) is None
    assert ndd.stream(stream=s) is s
    wrapped = ndd.stream(stream=1234)
    assert wrapped.handle == 1234 and wrapped == ndd.stream(stream=1234)
    ndd.set_current_stream(s)
    try:
        assert ndd.get_current_stream() == s
        assert ndd.flip(ndd.batch([np.zeros((1, 2, 1))]).gpu()).select(0).shape == (1, 2, 1)
    finally:
        ndd.set_current_stream(None)
    ndd.set_default_stream(s)
    try:
        assert ndd.get_default_stream() == s
        assert ndd.EvalContext().cuda_stream == s
    finally:
        ndd.set_default_stream(None)
    with pytest.raises(TypeError, match="Cannot use str as a CUDA stream"):
        ndd.stream(stream="x")
    s.synchronize()


def test_ops_from_many_threads():
    rng = np.random.default_rng(1)
    data = [rng.integers(0, 255, (4, 5, 3), dtype=np.uint8) for _ in range(8)]
    results, errors = {}, []

    def work(i):
        try:
            for _ in range(5):
                out = ndd.flip(ndd.batch([data[i]]), vertical=1)
            results[i] = np.asarray(out.select(0))
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(8):
        np.testing.assert_array_equal(results[i], data[i][::-1, ::-1])


def test_no_cuda_without_emulation_gives_clear_error():
    code = ("import numpy as np, ndd_triton as ndd\n"
            "t = ndd.tensor(np.zeros(3))\n"
            "try:\n    t.gpu()\nexcept RuntimeError as e:\n    print('ERR', e)\n"
            "try:\n    ndd.flip(np.zeros((2, 2, 3)), device='gpu')\nexcept RuntimeError as e:\n"
            "    print('ERR', e)\n"
            "print(ndd.get_current_stream())\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NDD_TRITON_EMULATE_GPU",
                                                            "TRITON_INTERPRET")}
    env["CUDA_VISIBLE_DEVICES"] = ""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, check=True).stdout
    lines = out.strip().splitlines()
    assert lines[0].startswith("ERR") and "no CUDA device is available" in lines[0]
    assert "flip: device='gpu'" in lines[1]
    assert lines[2] == "None"


@pytest.mark.skipif(ndd_device.gpu_count() < 2, reason="needs two gpu devices")
def test_device_pinning_on_a_second_emulated_gpu():
    x = ndd.batch([np.arange(6, dtype=np.uint8).reshape(1, 2, 3)])
    with ndd.Device("gpu", device_id=1):
        moved = x.gpu()
        assert moved.device == ndd.Device("gpu", 1)
        out = ndd.flip(x, device="gpu")
        assert out.device.device_id == 1
    assert ndd.flip(moved).device.device_id == 1  # inferred from the input
    with ndd.EvalContext(device_id=1):
        assert ndd.flip(x, device="gpu").device.device_id == 1
    np.testing.assert_array_equal(np.asarray(out.cpu().select(0)), x.select(0).torch().numpy()[:, ::-1])


def test_gpu_ops_from_several_contexts_at_once():
    rng = np.random.default_rng(2)
    data = [rng.integers(0, 255, (5, 6, 3), dtype=np.uint8) for _ in range(4)]
    results, errors = {}, []

    def work(i):
        try:
            with ndd.EvalContext(num_threads=1):
                out = ndd.flip(ndd.batch([data[i]]).gpu(), vertical=1)
                results[i] = np.asarray(out.cpu().select(0))
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        np.testing.assert_array_equal(results[i], data[i][::-1, ::-1])


_NO_CUDA_INIT = """
import sys
import numpy as np
import torch

def refused(*args, **kwargs):
    raise RuntimeError("CUDA initialised")

if "--fake" in sys.argv:  # a CUDA machine as this process sees it, where touching CUDA fails
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.is_initialized = lambda: False
    torch.cuda.current_device = refused
    torch.cuda.set_device = refused
import ndd_triton as ndd

x = ndd.as_batch([np.arange(12, dtype=np.uint8).reshape(3, 4, 1)], layout="HWC")
assert np.asarray(ndd.flip(x).select(0))[0, 0, 0] == 3  # the thread's default context
ctx = ndd.EvalContext(num_threads=2)
with ctx:
    assert np.asarray(ndd.flip(x, vertical=1, horizontal=0).select(0))[0, 0, 0] == 8
assert ctx.device_id == 0
with ndd.Device("gpu", 0):
    pass
assert not torch.cuda.is_initialized()
print("ok")
"""


@pytest.mark.parametrize("fake", [False, True], ids=["as-is", "fake-cuda"])
def test_cpu_work_and_contexts_do_not_initialise_cuda(fake):
    # a CUDA context costs ~0.5 GB of GPU memory per process and cannot be made in a forked
    # child of a process that used CUDA (DataLoader workers): CPU-only work must not make one
    env = {k: v for k, v in os.environ.items() if k not in ("NDD_TRITON_EMULATE_GPU",
                                                            "TRITON_INTERPRET")}  # fmt: skip
    if not fake and ndd_device.gpu_backend() != "cuda":
        env["NDD_TRITON_EMULATE_GPU"] = "1"
        env["TRITON_INTERPRET"] = "1"
    done = subprocess.run([sys.executable, "-c", _NO_CUDA_INIT] + (["--fake"] if fake else []),
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
