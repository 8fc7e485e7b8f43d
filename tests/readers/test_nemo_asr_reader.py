"""readers.NemoAsr on manifests and audio files the test writes (core.md §14.4)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import soundfile as sf

import ndd_triton as ndd

RATE = 8000


def _clip(k: int, channels: int = 1) -> np.ndarray:
    t = np.arange(200 + 37 * k) / RATE
    x = 0.3 * np.sin(2 * np.pi * (200 + 50 * k) * t)
    return np.stack([x] * channels, 1) if channels > 1 else x


@pytest.fixture
def dataset(tmp_path):
    """Five clips (one stereo FLAC, one at a relative path), a manifest with durations 0.1..0.5."""
    (tmp_path / "sub").mkdir()
    entries = []
    for k in range(5):
        name = f"sub/c{k}.flac" if k == 2 else f"c{k}.wav"
        sf.write(tmp_path / name, _clip(k, 2 if k == 2 else 1), RATE, subtype="PCM_16")
        path = name if k == 1 else str(tmp_path / name)
        entries.append({"audio_filepath": path, "duration": 0.1 * (k + 1), "text": f"clip {k} é"})
    manifest = tmp_path / "manifest.json"
    manifest.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    return tmp_path, manifest


def _expected(k, downmix=True):
    """Clip k as libsndfile reads it back from the 16-bit file the fixture wrote."""
    buf = io.BytesIO()
    sf.write(buf, _clip(k, 2 if k == 2 else 1), RATE, format="FLAC" if k == 2 else "WAV",
             subtype="PCM_16")  # fmt: skip
    buf.seek(0)
    x, _ = sf.read(buf, dtype="float64")
    if x.ndim == 1:
        return x if downmix else x[:, None]
    return x.mean(axis=1) if downmix else x


def test_outputs_in_manifest_order(dataset):
    _, manifest = dataset
    reader = ndd.readers.NemoAsr(manifest_filepaths=[str(manifest)], read_idxs=True)
    batches = list(reader.next_epoch(batch_size=2))
    assert len(batches) == 3
    audio, rate, _, idx = batches[0]
    assert audio.dtype == ndd.float32
    assert rate.dtype == ndd.float32
    assert idx.dtype == ndd.int64
    got = [np.asarray(t) for b in batches for t in b[0].tensors]
    for k in range(5):
        assert np.allclose(got[k], _expected(k), atol=1e-6)
    texts = [bytes(np.asarray(t)).decode("utf-8") for b in batches for t in b[2].tensors]
    assert texts[:5] == [f"clip {k} é" for k in range(5)]
    assert [int(np.asarray(t)[0]) for b in batches for t in b[3].tensors][:5] == list(range(5))
    assert [float(np.asarray(t)) for t in rate.tensors] == [RATE, RATE]


def test_duration_filter_downmix_dtype_and_resampling(dataset):
    _, manifest = dataset
    reader = ndd.readers.NemoAsr(manifest_filepaths=str(manifest), min_duration=0.15,
                                 max_duration=0.35, downmix=False, read_sample_rate=False,
                                 read_text=False, dtype=ndd.int16)  # fmt: skip
    ((audio,),) = list(reader.next_epoch(batch_size=3))
    assert [t.shape for t in audio.tensors] == [(237, 1), (274, 2), (237, 1)]  # wraps
    assert np.array_equal(
        np.asarray(audio.tensors[1]), np.round(_expected(2, downmix=False) * 32768).astype(np.int16)
    )
    up = ndd.readers.NemoAsr(manifest_filepaths=[manifest], sample_rate=16000.0)
    audio, rate, _ = next(iter(up.next_epoch(batch_size=1)))
    assert audio.shape == [(400,)]
    assert float(np.asarray(rate.tensors[0])) == 16000.0


def test_sharding_shuffle_and_checkpoint(dataset):
    _, manifest = dataset

    def idxs(reader, n=1):
        return [int(np.asarray(t)[0]) for _ in range(n)
                for b in reader.next_epoch(batch_size=2) for t in b[-1].tensors]  # fmt: skip

    shard = ndd.readers.NemoAsr(manifest_filepaths=[manifest], read_idxs=True, num_shards=2,
                                shard_id=1, pad_last_batch=True)  # fmt: skip
    assert idxs(shard) == [2, 3, 4, 4]
    assert shard.get_metadata()["epoch_size"] == 5
    a = ndd.readers.NemoAsr(manifest_filepaths=[manifest], read_idxs=True, random_shuffle=True,
                            seed=3, enable_checkpointing=True)  # fmt: skip
    first = idxs(a)
    assert len(first) == 6
    assert set(first) <= {0, 1, 2, 3, 4}
    state = a.get_state()
    b = ndd.readers.NemoAsr(manifest_filepaths=[manifest], read_idxs=True, random_shuffle=True,
                            seed=3, enable_checkpointing=True)  # fmt: skip
    b.set_state(state)
    assert idxs(b) == idxs(a)


def test_corrupt_file_fails_its_batch_naming_the_file(dataset):
    root, manifest = dataset
    (root / "c3.wav").write_bytes(b"RIFF1234WAVEnot audio at all")
    reader = ndd.readers.NemoAsr(manifest_filepaths=[manifest], read_idxs=True)
    epoch = reader.next_epoch(batch_size=2)
    audio, *_ = next(epoch)
    assert audio.shape[0] == (200,)
    audio, *_ = next(epoch)
    with pytest.raises(RuntimeError, match=r"decoders.audio: sample 1 from '.*c3.wav'"):
        audio.evaluate()
    audio, *_ = next(epoch)  # the reader moved on
    assert np.allclose(np.asarray(audio.tensors[0]), _expected(4), atol=1e-6)


def test_errors(tmp_path, dataset):
    _, manifest = dataset
    with pytest.raises(TypeError, match="missing required argument 'manifest_filepaths'"):
        ndd.readers.NemoAsr()
    with pytest.raises(ValueError, match="'dtype' must be float32, int16 or int32"):
        ndd.readers.NemoAsr(manifest_filepaths=[manifest], dtype=ndd.uint8)
    bad = tmp_path / "bad.json"
    bad.write_text('{"duration": 1}\n')
    with pytest.raises(RuntimeError, match="line 1: expected a JSON object with 'audio_filepath'"):
        list(ndd.readers.NemoAsr(manifest_filepaths=[bad]).next_epoch(batch_size=1))
    with pytest.raises(RuntimeError, match="cannot read manifest"):
        list(ndd.readers.NemoAsr(manifest_filepaths=[tmp_path / "none.json"]).next_epoch())
