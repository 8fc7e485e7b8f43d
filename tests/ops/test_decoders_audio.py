"""decoders.audio on WAV/FLAC/OGG files the test writes with libsndfile (core.md §17.1)."""

import io

import numpy as np
import pytest
import soundfile as sf
from _check import raises_at_call, samples_of
from reference.audio import resample

import ndd_triton as ndd

T = np.arange(301) / 8000.0
STEREO = np.stack([0.5 * np.sin(2 * np.pi * 440 * T), 0.25 * np.cos(2 * np.pi * 300 * T)], 1)


def encode(signal, fmt="WAV", subtype="PCM_16", rate=8000):
    buf = io.BytesIO()
    sf.write(buf, signal, rate, format=fmt, subtype=subtype)
    return np.frombuffer(buf.getvalue(), np.uint8)


def pcm16(signal, fmt="WAV"):
    """What libsndfile stores for `signal` in 16-bit PCM (`fmt`), read back as float."""
    return sf.read(io.BytesIO(encode(signal, fmt).tobytes()), dtype="float64")[0]


@pytest.mark.parametrize(("fmt", "subtype"), [("WAV", "PCM_16"), ("FLAC", "PCM_16")])
def test_decode_lossless_float_int16_int32(fmt, subtype):
    data = encode(STEREO, fmt, subtype)
    audio, rate = ndd.decoders.audio(data)
    assert audio.shape == (301, 2)
    assert audio.dtype == ndd.float32
    assert np.allclose(np.asarray(audio), pcm16(STEREO, fmt), atol=1e-7)
    assert rate.shape == ()
    assert float(np.asarray(rate)) == 8000.0
    i16, _ = ndd.decoders.audio(data, dtype=ndd.int16)
    assert np.array_equal(np.asarray(i16), np.round(pcm16(STEREO, fmt) * 32768).astype(np.int16))
    i32, _ = ndd.decoders.audio(data, dtype=ndd.int32)
    assert np.array_equal(np.asarray(i32), np.asarray(i16).astype(np.int64) << 16)


def test_decode_mono_is_n_by_1_and_downmix_averages():
    audio, _ = ndd.decoders.audio(encode(STEREO[:, 0]))
    assert audio.shape == (301, 1)
    mixed, _ = ndd.decoders.audio(encode(STEREO), downmix=True)
    assert mixed.shape == (301,)
    assert np.allclose(np.asarray(mixed), pcm16(STEREO).mean(axis=1), atol=1e-7)


def test_decode_ogg_is_close():
    audio, _ = ndd.decoders.audio(encode(STEREO[:, 0], "OGG", "VORBIS"))
    assert audio.shape == (301, 1)
    assert np.abs(np.asarray(audio)[:, 0] - STEREO[:, 0]).max() < 0.05


def test_decode_resamples_per_sample_rate():
    batch = ndd.as_batch([encode(STEREO[:, 0]), encode(STEREO[:40, 1])])
    audio, rate = ndd.decoders.audio(batch, downmix=True, sample_rate=ndd.as_batch(
        [np.float32(16000), np.float32(12000)]))  # fmt: skip
    got = samples_of(audio)
    assert [g.shape for g in got] == [(602,), (60,)]
    assert [float(r) for r in samples_of(rate)] == [16000.0, 12000.0]
    expected = resample(pcm16(STEREO[:, 0]), 602, 0.5)
    assert np.abs(got[0] - expected).max() < 2e-3


def test_decode_truncated_file_gives_the_frames_present():
    data = encode(STEREO)[:500]
    audio, _ = ndd.decoders.audio(data)
    assert 0 < audio.shape[0] < 301


def test_decode_errors_name_the_sample_and_later_batches_work():
    bad = ndd.as_batch([encode(STEREO), np.frombuffer(b"RIFF1234WAVEjunk", np.uint8)])
    audio, _ = ndd.decoders.audio(bad)
    with pytest.raises(RuntimeError, match=r"decoders\.audio: sample 1: cannot decode audio"):
        audio.evaluate()
    good, _ = ndd.decoders.audio(ndd.as_batch([encode(STEREO)]))
    assert good.shape == [(301, 2)]
    with raises_at_call(RuntimeError, match="unsupported output type u8"):
        ndd.decoders.audio(encode(STEREO), dtype=ndd.uint8)
    with raises_at_call(RuntimeError, match="must hold encoded bytes as uint8"):
        ndd.decoders.audio(np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="not supported"):
        ndd.decoders.audio(ndd.as_tensor(encode(STEREO)).gpu())
