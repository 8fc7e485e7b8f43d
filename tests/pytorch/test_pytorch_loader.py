"""`ndd_triton.pytorch.Loader`: outputs, policies, padding, placement and exact resumption.

The reference for what a batch holds is the file list itself (labels are file indices and the
names come from the reader's source_info); the reference for a resumed run is the same job run
without interruption.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

import ndd_triton as ndd
from ndd_triton.pytorch import LastBatchPolicy, Loader

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import loader_job  # noqa: E402

DEVICES = ["cpu", "gpu"]


def _reader(root, count=7, **kw):
    files = [f"img{i:02d}.jpg" for i in range(count)]
    return ndd.readers.File(file_root=root, files=files, labels=list(range(count)), **kw)


def _decode(device):
    def fn(jpegs, labels):
        images = ndd.decoders.image(jpegs)
        if device == "gpu":
            images = images.gpu()
        return ndd.resize(images, size=(4, 5)), labels

    return fn


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("policy", "sizes", "labels"), [
    ("fill", [3, 3, 3], [0, 1, 2, 3, 4, 5, 6, 0, 1]),
    ("drop", [3, 3], [0, 1, 2, 3, 4, 5]),
    ("partial", [3, 3, 1], [0, 1, 2, 3, 4, 5, 6]),
])  # fmt: skip
def test_last_batch_policies_len_and_outputs(photos, device, policy, sizes, labels):
    loader = Loader(_reader(photos), _decode(device), batch_size=3, squeeze=[1],
                    last_batch_policy=policy)  # fmt: skip
    assert len(loader) == len(sizes)
    for _ in range(2):  # the policy holds in every epoch
        got = list(loader)
        assert [len(lab) for _, lab in got] == sizes
        assert [x.shape[1:] for x, _ in got] == [(4, 5, 3)] * len(sizes)
        assert all(isinstance(x, torch.Tensor) and x.dtype == torch.uint8 for x, _ in got)
        assert all(lab.dim() == 1 for _, lab in got)
        if policy != "fill":  # drop and partial read each epoch from the shard's start
            assert torch.cat([lab for _, lab in got]).tolist() == labels
    if policy == "fill":  # the ring continues: the second epoch starts after the wrapped 0, 1
        assert torch.cat([lab for _, lab in got]).tolist() == [2, 3, 4, 5, 6, 0, 1, 2, 3]


def test_first_epoch_labels_in_order_and_padding_with_pad_last_batch(photos):
    loader = Loader(_reader(photos, pad_last_batch=True), None, batch_size=3,
                    output_names=("jpeg", "label"), pad=True, squeeze="label")  # fmt: skip
    got = list(loader)
    assert [b["label"].tolist() for b in got] == [[0, 1, 2], [3, 4, 5], [6, 6, 6]]
    # encoded files have different lengths: zero-padded to the longest
    sizes = [os.path.getsize(os.path.join(photos, f"img{i:02d}.jpg")) for i in range(7)]
    assert got[0]["jpeg"].shape == (3, max(sizes[:3]))
    assert LastBatchPolicy.parse("PARTIAL", "x") is LastBatchPolicy.PARTIAL


@pytest.mark.parametrize("device", DEVICES)
def test_ragged_outputs_need_pad(photos, device):
    def fn(jpegs, labels):
        images = ndd.decoders.image(jpegs)
        return images.gpu() if device == "gpu" else images

    with pytest.raises(ValueError, match="ragged batch; pass pad=True"):
        next(iter(Loader(_reader(photos), fn, batch_size=2)))
    (images,) = next(iter(Loader(_reader(photos), fn, batch_size=2, pad=True)))
    first = np.asarray(ndd.decoders.image(ndd.readers.File(
        file_root=photos, files=["img01.jpg"]).next_epoch(batch_size=1).__next__()[0]).cpu()
        .select(0))  # fmt: skip
    assert images.shape == (2, 10, 12, 3)  # img01 is 10x12, img00 9x11 is zero-padded
    assert torch.equal(images[1].cpu(), torch.from_numpy(first))
    assert images[0, 9:].abs().sum() == 0
    assert images[0, :, 11:].abs().sum() == 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("prefetch", "mode"), [(0, "eager"), (3, "eager"), (2, "sync_cpu"),
                                           (1, "deferred")])  # fmt: skip
def test_prefetch_and_eval_mode_do_not_change_the_stream(photos, device, prefetch, mode):
    def stream(**kw):
        loader = loader_job.build(photos, device, **kw)
        return [loader_job.record(e, b) for e in range(2) for b in loader]

    assert stream(prefetch=prefetch, eval_mode=getattr(ndd.EvalMode, mode)) == stream()


@pytest.mark.parametrize("device", DEVICES)
def test_state_dict_resumes_in_process_at_every_step(photos, device):
    full = loader_job.build(photos, device)
    states, records = [full.state_dict()], []
    for epoch in range(2):
        for batch in full:
            records.append(loader_job.record(epoch, batch))
            states.append(json.loads(json.dumps(full.state_dict())))  # JSON round trip
    assert len(records) == 6
    assert len({r["pixels"] for r in records}) == 6
    for step in (0, 2, 3, 5):
        resumed = loader_job.build(photos, device, seed=1)  # the state overrides the seed
        resumed.load_state_dict(states[step])
        rest = []
        while resumed.state_dict()["epoch"] < 2:
            epoch = resumed.state_dict()["epoch"]
            rest += [loader_job.record(epoch, b) for b in resumed]
        assert rest == records[step:], f"resumed after step {step}"


def test_load_state_dict_on_an_iterated_loader_and_an_early_break(photos):
    loader = loader_job.build(photos, "cpu")
    it = iter(loader)
    first = loader_job.record(0, next(it))
    state = loader.state_dict()
    second = loader_job.record(0, next(it))
    # leaving the epoch early: the next iter() continues it
    assert next(loader_job.record(0, b) for b in loader)["pixels"] != second["pixels"]
    loader.load_state_dict(state)
    assert loader_job.record(0, next(iter(loader))) == second
    loader.load_state_dict(loader_job.build(photos, "cpu").state_dict())
    assert loader_job.record(0, next(iter(loader))) == first


def test_extra_generators_are_saved(photos):
    gen, rng = torch.Generator().manual_seed(5), ndd.random.RNG(seed=9)
    npgen = np.random.default_rng(3)

    def fn(jpegs, labels):
        noise = torch.rand(2, generator=gen) + npgen.random() + float(rng())
        return noise, labels

    loader = Loader(_reader(photos), fn, batch_size=2, rngs=[gen, rng, npgen])
    it = iter(loader)
    next(it)
    state = json.loads(json.dumps(loader.state_dict()))
    expected = next(it)[0]
    loader.load_state_dict(state)
    assert torch.equal(next(iter(loader))[0], expected)


def test_ndd_pytorch_attribute():
    assert ndd.pytorch.Loader is Loader
    assert ndd.pytorch.ops.flip is not None


def test_bad_arguments(photos):
    reader = _reader(photos)
    with pytest.raises(TypeError, match="argument 'reader'"):
        Loader([1, 2], batch_size=2)
    with pytest.raises(ValueError, match="argument 'batch_size'"):
        Loader(reader)
    with pytest.raises(ValueError, match="argument 'last_batch_policy'"):
        Loader(reader, batch_size=2, last_batch_policy="wrap")
    with pytest.raises(TypeError, match="argument 'rngs'"):
        Loader(reader, batch_size=2, rngs=[object()])
    with pytest.raises(ValueError, match="output_names names 3"):
        next(iter(Loader(reader, batch_size=2, output_names=("a", "b", "c"))))
    with pytest.raises(ValueError, match="built with pad_last_batch=False"):
        Loader(_reader(photos, pad_last_batch=False), batch_size=2, last_batch_policy="drop")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            Loader(reader, batch_size=2, device="cuda")
    with pytest.raises(ValueError, match="argument 'shard'"):
        Loader(reader, batch_size=2, shard=True)
    saved = Loader(_reader(photos), batch_size=2).state_dict()
    with pytest.raises(ValueError, match=r"another sample order; .*pad_last_batch=True \(saved"):
        Loader(_reader(photos), batch_size=2, last_batch_policy="partial").load_state_dict(saved)
    with pytest.raises(ValueError, match="format"):
        Loader(reader, batch_size=2).load_state_dict({"epoch": 0})


@pytest.mark.parametrize("device", [*DEVICES, "cpu:nodes", "gpu:nodes"])
def test_kill_and_resume_in_a_subprocess_at_a_random_step(photos, tmp_path, device):
    """The Loader, and the same job as torchdata nodes (Reader -> Map -> Prefetcher -> ToTorch
    -> torchdata Loader): killed at a random step, resumed from the saved state."""
    paths = [os.path.dirname(os.path.dirname(ndd.__file__)), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    script = os.path.join(HERE, "loader_job.py")
    full, cut = str(tmp_path / "full.jsonl"), str(tmp_path / "cut.jsonl")
    kill_at = random.Random().randrange(0, 6)

    def job(out, *extra):
        return subprocess.run([sys.executable, script, photos, out, device, "2", *extra],
                              env=env, capture_output=True, text=True, timeout=300)  # fmt: skip

    loader_job.run(photos, full, device, 2)  # the uninterrupted reference, in this process
    killed = job(cut, str(kill_at))
    assert killed.returncode == 3, killed.stderr
    resumed = job(cut, "-1", "resume")
    assert resumed.returncode == 0, resumed.stderr
    with open(full) as f, open(cut) as g:
        expected, got = f.read().splitlines(), g.read().splitlines()
    assert len(expected) == 6
    assert got == expected, f"killed after step {kill_at}"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("device", DEVICES)
def test_cuda_placement_matches_the_cpu_stream(photos, device):
    """device="cuda": pinned non-blocking copies (cpu pipeline) or the stream hand-over (gpu
    pipeline) give the same tensors, on the GPU."""
    reference = [loader_job.record(0, b) for b in loader_job.build(photos, device)]
    loader = loader_job.build(photos, device, device="cuda")
    batches = list(loader)
    assert all(b["image"].is_cuda and b["label"].is_cuda for b in batches)
    assert [loader_job.record(0, b) for b in batches] == reference


def test_an_error_in_fn_then_reloading_the_state_reads_the_batch_again(photos):
    fail = {"at": 2}
    calls = []

    def fn(jpegs, labels):
        calls.append(1)
        if len(calls) == fail["at"]:
            raise RuntimeError("flaky storage")
        return labels

    loader = Loader(_reader(photos), fn, batch_size=2, squeeze=[0], prefetch=0)
    it = iter(loader)
    assert next(it)[0].tolist() == [0, 1]
    with pytest.raises(RuntimeError, match="flaky storage"):
        next(it)
    loader.load_state_dict(loader.state_dict())
    assert [b[0].tolist() for b in loader] == [[2, 3], [4, 5], [6, 0]]
