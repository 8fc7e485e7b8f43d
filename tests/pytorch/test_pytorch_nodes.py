"""`ndd_triton.pytorch.nodes`: torchdata.nodes with real state (DALI 2.4 has the names, with an
empty state). The reference for a resumed pipeline is the same pipeline run without a break;
the reference for the outputs is the file list (labels are file indices)."""

from __future__ import annotations

import json
import os
import sys

import pytest
import torch
import torchdata.nodes as tn  # a test dependency (pyproject: test extra)

import ndd_triton as ndd
from ndd_triton.pytorch import nodes

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import loader_job  # noqa: E402

DEVICES = ["cpu", "gpu"]


def _files():
    return [f"img{i:02d}.jpg" for i in range(7)]


def test_reader_node_yields_dicts_epoch_by_epoch(photos):
    node = nodes.Reader(ndd.readers.File, batch_size=3, file_root=photos, files=_files(),
                        labels=list(range(7)), pad_last_batch=True)  # fmt: skip
    assert node.get_metadata()["epoch_size"] == 7
    loader = tn.Loader(node)
    for _ in range(2):
        items = list(loader)
        assert [sorted(i) for i in items] == [["data", "label"]] * 3
        labels = [i["label"].torch().flatten().tolist() for i in items]
        assert labels == [[0, 1, 2], [3, 4, 5], [6, 6, 6]]


def test_dict_mapper_and_to_torch(photos):
    node = nodes.Reader(ndd.readers.File, batch_size=2, file_root=photos, files=_files()[:4],
                        labels=[5, 6, 7, 8])  # fmt: skip
    node = nodes.DictMapper(node, lambda jpegs: ndd.resize(ndd.decoders.image(jpegs),
                                                           size=(4, 3)))  # fmt: skip
    out = list(tn.Loader(nodes.ToTorch(node)))
    assert [tuple(x.shape) for x, _ in out] == [(2, 4, 3, 3)] * 2
    assert torch.cat([y for _, y in out]).flatten().tolist() == [5, 6, 7, 8]
    wrong = nodes.Reader(ndd.readers.File, batch_size=2, output_names=("a", "b", "c"),
                         file_root=photos, files=_files())  # fmt: skip
    with pytest.raises(ValueError, match="output_names names 3 outputs; the reader has 2"):
        next(iter(tn.Loader(wrong)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("prefetch", [0, 2])
def test_state_resumes_a_pipeline_exactly(photos, device, prefetch):
    full = loader_job.build_nodes(photos, device, prefetch=prefetch)
    states, records = [], []
    for epoch in range(2):
        for batch in full:
            records.append(loader_job.record(epoch, loader_job.as_dict(batch)))
            states.append(json.loads(json.dumps(full.state_dict())))
    assert len(records) == 6
    same_job = loader_job.build(photos, device)
    assert records == [loader_job.record(e, b) for e in range(2) for b in same_job]
    for step in (0, 2, 4):
        resumed = loader_job.build_nodes(photos, device, prefetch=prefetch, seed=1)
        resumed.load_state_dict(states[step])
        rest = []
        while len(rest) < 5 - step:
            rest += [loader_job.record(0, loader_job.as_dict(b)) for b in resumed]
        expected = [{**r, "epoch": 0} for r in records[step + 1:]]
        assert rest == expected, f"resumed after step {step}"


def test_reset_mid_epoch_starts_the_next_epoch(photos):
    def make():
        return nodes.Reader(ndd.readers.File, batch_size=2, file_root=photos, files=_files(),
                            labels=list(range(7)), pad_last_batch=True)  # fmt: skip

    node = make()
    node.reset()
    next(node)
    node.reset()  # skip the rest of epoch 0
    assert node.next()["label"].torch().flatten().tolist() == [0, 1]
    state = node.state_dict()
    assert state["exhausted"] is False
    again = make()
    again.reset(state)
    assert again.next()["label"].torch().flatten().tolist() == [2, 3]


def test_bad_arguments(photos):
    with pytest.raises(TypeError, match="argument 'reader_type'"):
        nodes.Reader("File", batch_size=2)
    with pytest.raises(TypeError, match="argument 'rngs'"):
        nodes.Map(tn.IterableWrapper([]), lambda d: d, rngs=[1])
