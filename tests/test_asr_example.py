"""The ASR example (examples/asr.py, docs/audio.md) runs end to end on the bundled clips, on
the cpu and on the emulated gpu; trimming agrees with an independent silence reference."""

import importlib.util
import json
import os

import pytest
import soundfile as sf
import torch
from reference.audio import nonsilent_region

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example():
    spec = importlib.util.spec_from_file_location("asr_example",
                                                  os.path.join(ROOT, "examples", "asr.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entries(manifest):
    with open(manifest, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _expected_frames(path):
    x, _ = sf.read(path, dtype="float32")
    _, length = nonsilent_region(x, cutoff_db=-60.0, window_length=256)
    assert 0 < length < len(x)  # every clip has silence to trim
    return 1 + length // 160


def test_asr_recipe_on_the_cpu():
    example = _example()
    entries = _entries(example.MANIFEST)
    folder = os.path.dirname(example.MANIFEST)
    batches = list(example.asr_batches(batch_size=3))
    assert len(batches) == 2
    features, frames, texts = batches[0]
    assert features.dtype == torch.float32
    assert features.shape == (3, 64, int(frames.max()))
    assert texts == [e["text"] for e in entries[:3]]
    expected = [_expected_frames(os.path.join(folder, e["audio_filepath"])) for e in entries[:3]]
    assert frames.tolist() == expected
    for sample, n in zip(features, frames.tolist(), strict=True):
        assert not sample[:, n:].any()  # zero padding past the sample's frames
        valid = sample[:, :n].double()
        assert torch.allclose(valid.mean(dim=1), torch.zeros(64, dtype=torch.float64), atol=1e-4)


@pytest.mark.parametrize("device", ["gpu"])
def test_asr_recipe_on_the_gpu_matches_the_cpu(tmp_path, device):
    example = _example()
    # the shortest clip: the interpreter is slow
    entry = next(e for e in _entries(example.MANIFEST) if "noise" in e["text"])
    entry["audio_filepath"] = os.path.join(os.path.dirname(example.MANIFEST),
                                           entry["audio_filepath"])  # fmt: skip
    manifest = tmp_path / "one.json"
    manifest.write_text(json.dumps(entry) + "\n")
    (gpu_features, gpu_frames, texts), = example.asr_batches(1, device, str(manifest))
    (cpu_features, cpu_frames, _), = example.asr_batches(1, "cpu", str(manifest))
    assert texts == ["a burst of noise"]
    assert gpu_frames.tolist() == cpu_frames.tolist()
    assert torch.allclose(gpu_features.cpu(), cpu_features, atol=2e-3)
