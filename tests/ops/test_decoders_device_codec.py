"""GPU decoding through nvImageCodec, with a stand-in codec (no CUDA here): outputs against the
CPU decoder, decoding into the output's slots, stream handling, fallbacks, truncated files. On
real CUDA the stand-in writes into device memory, and the last test runs the real codec."""

from __future__ import annotations

import ctypes
import math
import os
import threading

import numpy as np
import pytest
import torch
from _check import assert_close, samples_of
from _decoder_data import ANY, BGR, GRAY, RGB, YCBCR, _pixels, encode, ref_decode

import ndd_triton as ndd

REAL_CUDA = os.environ.get("NDD_TRITON_TEST_DEVICE") == "cuda"  # (tests/conftest.py)

class _FakeNvImgCodec:
    """Stands in for `nvidia.nvimgcodec` (>= 0.6 names): decodes with Pillow into HWC tensors."""

    calls = 0
    fail = False

    class ColorSpec:
        SRGB, GRAY, UNCHANGED = "rgb", "gray", "unchanged"

    class DecodeParams:
        def __init__(self, color_spec, apply_exif_orientation):
            self.color_spec, self.orient = color_spec, apply_exif_orientation

    class CodeStream:
        def __init__(self, data):
            self.data = np.frombuffer(data, np.uint8)

    class Image:
        """An Image wrapping a caller's buffer (`as_images`): a tensor, or any object with a
        `__cuda_array_interface__` (here, on the emulated gpu, the address is host memory)."""

        def __init__(self, t):
            if not isinstance(t, torch.Tensor):
                iface = t.__cuda_array_interface__
                assert (iface["typestr"], iface["version"], iface["strides"]) == ("|u1", 3, None)
                assert "stream" not in iface  # (the real one refuses 0; ours: as_images' own)
                shape, pointer = iface["shape"], iface["data"][0]
                if REAL_CUDA:  # device memory: torch reads the interface
                    t = torch.as_tensor(t, device="cuda")
                else:
                    memory = (ctypes.c_uint8 * math.prod(shape)).from_address(pointer)
                    t = torch.from_numpy(np.ctypeslib.as_array(memory).reshape(shape))
                _FakeNvImgCodec.slots += 1
            self.t = t
            self.__cuda_array_interface__ = {"data": (t.data_ptr(), False)}

    into = 0  # decodes into caller buffers
    slots = 0  # buffers given as interface objects (not tensors)
    own_images = False  # ignore `images=` and return new ones
    none_at = None  # sample that cannot be decoded

    @staticmethod
    def as_images(targets, cuda_stream):
        return [_FakeNvImgCodec.Image(t) for t in targets]

    class Decoder:
        def decode(self, streams, params, cuda_stream, images=None):
            _FakeNvImgCodec.calls += 1
            if _FakeNvImgCodec.fail:
                raise RuntimeError("nvImageCodec failure")
            kind = {"rgb": RGB, "gray": GRAY}.get(params.color_spec, ANY)
            got = [torch.from_numpy(np.array(ref_decode(s.data, kind,
                                                        adjust_orientation=params.orient)))
                   for s in streams]  # fmt: skip
            if _FakeNvImgCodec.none_at is not None:
                got[_FakeNvImgCodec.none_at] = None
            if images is None or _FakeNvImgCodec.own_images:
                return got
            _FakeNvImgCodec.into += 1
            for image, pixels in zip(images, got, strict=True):
                if pixels is not None:
                    image.t.copy_(pixels.reshape(image.t.shape))  # the real one: size checked
            return [im if px is not None else None for im, px in zip(images, got, strict=True)]


@pytest.fixture
def fake_device_codec(monkeypatch):
    import ndd_triton.kernels.gpu.decoders as gpu_decoders
    from ndd_triton.decoders import _header_hints

    codec = (_FakeNvImgCodec, _FakeNvImgCodec.Decoder())
    monkeypatch.setattr(_header_hints, "_stream_maker", None)  # (readers: back to none after)
    monkeypatch.setattr(gpu_decoders, "_device_codec_wanted", lambda out: True)
    monkeypatch.setattr(gpu_decoders, "_nvimgcodec", lambda: codec)
    monkeypatch.setattr(gpu_decoders, "_warned", False)
    monkeypatch.setattr(gpu_decoders, "_INTO_OUTPUT", [True])
    monkeypatch.setattr(gpu_decoders, "_SLOTS", [True])
    _FakeNvImgCodec.calls, _FakeNvImgCodec.fail, _FakeNvImgCodec.into = 0, False, 0
    _FakeNvImgCodec.slots = 0
    _FakeNvImgCodec.own_images, _FakeNvImgCodec.none_at = False, None
    return _FakeNvImgCodec


@pytest.mark.parametrize(("op", "args"), [
    ("image", {}), ("image", {"output_type": BGR}), ("image", {"output_type": GRAY}),
    ("image", {"output_type": YCBCR}), ("image", {"output_type": ANY}),
    ("image", {"dtype": ndd.float32}), ("image", {"dtype": ndd.uint16}),
    ("image", {"dtype": ndd.int16}), ("image_crop", {"crop": (3, 2), "crop_pos_x": 0.2}),
    ("image_slice", {"start": [1, 1], "shape": [3, 2]}),
])  # fmt: skip
def test_device_codec_path_matches_cpu(files, fake_device_codec, op, args):
    batch = ndd.as_batch([files["png"], files["png_rgba"], files["png_gray"], files["bmp"]])
    fn = getattr(ndd.decoders, op)
    gpu = fn(batch, device="gpu", **args)
    cpu = fn(batch, **args)
    assert gpu.shape == cpu.shape
    for g, c in zip(samples_of(gpu), samples_of(cpu), strict=True):
        assert_close(g, c, where=f"{op} {args}")
    assert fake_device_codec.calls == 1


def test_device_codec_decodes_rgb_into_the_output(files, fake_device_codec):
    """A plain RGB uint8 batch is decoded straight into the output's slots (no per-image
    wrap, no packing copy); other outputs (BGR here) take the per-image path."""
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    batch = ndd.as_batch([files["png"], files["png_rgba"], files["png_gray"], files["bmp"]])
    for args, into in (({}, 1), ({"output_type": BGR}, 0)):
        fake_device_codec.calls = fake_device_codec.into = 0
        gpu = ndd.decoders.image(batch, device="gpu", **args)
        cpu = ndd.decoders.image(batch, **args)
        for g, c in zip(samples_of(gpu), samples_of(cpu), strict=True):
            assert_close(g, c, where=f"into the output {args}")
        assert (fake_device_codec.calls, fake_device_codec.into) == (1, into)
        assert fake_device_codec.slots == 4 * into  # the slots as interface objects
        fake_device_codec.slots = 0
    assert gpu_decoders._INTO_OUTPUT[0]
    assert gpu_decoders._SLOTS[0]


def test_device_codec_refusing_slot_objects_gets_tensor_views(files, fake_device_codec,
                                                                monkeypatch):  # fmt: skip
    """An nvImageCodec whose `as_images` refuses the light slot objects is given torch views of
    the same slots instead (and from then on): still decoded straight into the output."""
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    wrap = fake_device_codec.as_images

    def tensors_only(targets, cuda_stream):
        if not all(isinstance(t, torch.Tensor) for t in targets):
            raise TypeError("Object does not support neither __cuda_array_interface__ nor ...")
        return wrap(targets, cuda_stream)

    monkeypatch.setattr(fake_device_codec, "as_images", staticmethod(tensors_only))
    jpegs = [encode(_pixels(h, w, 3, h), "JPEG", quality=90) for h, w in ((9, 13), (16, 7))]
    batch = ndd.as_batch([*jpegs, files["png"]])
    for _ in range(2):
        fake_device_codec.calls = fake_device_codec.into = 0
        gpu = ndd.decoders.image(batch, device="gpu")
        for g, c in zip(samples_of(gpu), samples_of(ndd.decoders.image(batch)), strict=True):
            assert_close(g, c, where="tensor views")
        assert (fake_device_codec.calls, fake_device_codec.into) == (1, 1)
        assert not gpu_decoders._SLOTS[0]
    assert fake_device_codec.slots == 0


def test_device_codec_batch_completeness_is_the_per_file_check(files):
    """`all_complete` (plain JPEG rows ending in the end marker: no scan) answers as
    `complete` of every file, for plain JPEGs cut, padded, re-terminated or whole, beside
    PNGs and Pillow-read files."""
    from ndd_triton.decoders import _image_infos
    from ndd_triton.kernels.gpu import _complete_files as complete_files

    jpeg = encode(_pixels(40, 56, 3, 23), "JPEG", quality=90)
    other = encode(_pixels(21, 17, 3, 24), "JPEG", quality=75)
    kinds = [jpeg, other, jpeg[: len(jpeg) // 2], np.concatenate([jpeg[: len(jpeg) // 2],
             np.array([0xFF, 0xD9], np.uint8)]), np.concatenate([jpeg, np.zeros(7, np.uint8)]),
             files["png"], files["png"][:-20], files["bmp"]]  # fmt: skip
    rs = np.random.default_rng(3)
    for _ in range(60):
        data = [np.ascontiguousarray(kinds[i]) for i in rs.integers(0, len(kinds), 5)]
        infos, todo = _image_infos.plain_infos(data, None)
        for i in todo:  # (as `read_headers` does: these are Pillow's)
            infos.given[i] = _image_infos.ImageInfo("PNG", "RGB", 1, 1, 3, 1)
        want = all(complete_files.complete(d) for d in data)
        assert complete_files.all_complete(data, infos) == want
        assert complete_files.all_complete(data, None) == want
        eoi = np.array([d[-2:].tobytes() == b"\xff\xd9" for d in data])  # a reader's hint
        assert complete_files.all_complete(data, infos, eoi) == want
        assert complete_files.all_complete(data, None, eoi) == want
        if eoi.all():  # a reader's `HINT_ALL_EOI`
            assert complete_files.all_complete(data, infos, True) == want


def test_device_codec_truncated_file_from_a_reader(files, fake_device_codec, tmp_path):
    """A reader batch carries whether each file ends in the end marker (computed for the whole
    batch on its prefetch thread); a truncated JPEG in it still never reaches the codec and
    fails naming the sample, and whole files decode through the codec as from bytes."""
    from ndd_triton.decoders import _header_hints

    jpeg = encode(_pixels(40, 56, 3, 20), "JPEG", quality=90)
    cut = jpeg[: len(jpeg) * 2 // 3]
    padded = np.concatenate([jpeg, np.zeros(5, np.uint8)])  # whole, but no marker at the end
    (tmp_path / "c").mkdir()
    for i, data in enumerate([jpeg, files["jpeg420"], padded, cut]):
        data.tofile(tmp_path / "c" / f"{i}.jpg")
    reader = ndd.readers.File(file_root=str(tmp_path))
    (whole, _), (rest, _) = list(reader.next_epoch(batch_size=2))
    for batch, ends in ((whole, [True, True]), (rest, [False, False])):
        hints = batch._storage_or_raise().hints
        np.testing.assert_array_equal(hints[_header_hints.HINT_EOI], ends)
        assert hints[_header_hints.HINT_ALL_EOI] is all(ends)
        assert hints[_header_hints.HINT_FLAT] is True  # files of two sizes: one flat buffer
    (tmp_path / "u" / "c").mkdir(parents=True)  # files of one size: a uniform batch
    unterminated = jpeg.copy()
    unterminated[-2:] = 0
    for i, data in enumerate([jpeg, unterminated]):
        data.tofile(tmp_path / "u" / "c" / f"{i}.jpg")
    (uniform, _), = list(ndd.readers.File(file_root=str(tmp_path / "u")).next_epoch(batch_size=2))
    uniform_hints = uniform._storage_or_raise().hints
    np.testing.assert_array_equal(uniform_hints[_header_hints.HINT_EOI], [True, False])
    assert uniform_hints[_header_hints.HINT_ALL_EOI] is False
    got = ndd.decoders.image(whole, device="gpu")
    for g, c in zip(samples_of(got), samples_of(ndd.decoders.image(whole)), strict=True):
        assert_close(g, c, where="reader batch")
    assert fake_device_codec.calls == 1
    with pytest.raises(RuntimeError, match="sample 1 from 'c/3.jpg': cannot decode the JPEG "
                                           "image: OSError: image file is truncated"):  # fmt: skip
        ndd.decoders.image(rest, device="gpu").evaluate()
    assert fake_device_codec.calls == 1  # (the padded file is whole: the host decodes both)


def test_device_codec_not_writing_into_the_output_is_not_trusted(files, fake_device_codec):
    """A codec that returns its own images (not the buffers it was given) is not trusted: the
    batch is decoded again the per-image way, and later batches go that way directly; an image
    the codec cannot decode sends the batch to the other paths without that verdict."""
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    batch = ndd.as_batch([files["png"], files["bmp"]])
    cpu = ndd.decoders.image(batch)
    fake_device_codec.none_at = 1
    for g, c in zip(samples_of(ndd.decoders.image(batch, device="gpu")), samples_of(cpu),
                    strict=True):  # fmt: skip
        assert_close(g, c, where="an image the codec cannot decode")
    assert gpu_decoders._INTO_OUTPUT[0]
    fake_device_codec.none_at, fake_device_codec.own_images = None, True
    fake_device_codec.calls = fake_device_codec.into = 0
    for _ in range(2):
        for g, c in zip(samples_of(ndd.decoders.image(batch, device="gpu")), samples_of(cpu),
                        strict=True):  # fmt: skip
            assert_close(g, c, where="codec images not in the output")
    assert not gpu_decoders._INTO_OUTPUT[0]
    assert (fake_device_codec.calls, fake_device_codec.into) == (3, 0)


def test_device_codec_images_take_the_ops_stream_only_on_the_device():
    """A decoded image in device memory is taken over DLPack with the op's stream (no lookup
    per image); a host image (the codec's CPU backends) with none: its `__dlpack__` refuses a
    stream (found on an H100: the codec path fell back to host decoding)."""
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    class Image:
        def __init__(self, device_type: int) -> None:
            self.t = torch.arange(6, dtype=torch.uint8).reshape(1, 2, 3)
            self.device_type, self.streams = device_type, []

        def __dlpack_device__(self) -> tuple[int, int]:
            return (self.device_type, 0)

        def __dlpack__(self, stream=None):
            if self.device_type == 1:
                assert stream is None, "stream should be None on cpu."
            self.streams.append(stream)
            return self.t.__dlpack__()

    host, device = Image(1), Image(2)
    for image in (host, device):
        assert torch.equal(gpu_decoders._to_torch(image, 1234), image.t)
    assert gpu_decoders._to_torch(device, None).shape == (1, 2, 3)  # emulated gpu: no stream
    assert host.streams == [None]
    assert device.streams == [1234, None]


def test_device_codec_failure_falls_back_to_host_decode(files, fake_device_codec):
    fake_device_codec.fail = True
    with pytest.warns(RuntimeWarning, match="nvImageCodec failed .*decoding on the host"):
        out = ndd.decoders.image(ndd.as_batch([files["png"], files["jpeg420"]]), device="gpu")
        out.evaluate()
    for got, data in zip(samples_of(out), [files["png"], files["jpeg420"]], strict=True):
        assert_close(got, ref_decode(data), where="fallback")
    assert fake_device_codec.calls == 2  # into the output, then per image (which warns)


def test_device_codec_jpeg_grey_and_truncated_files(files, fake_device_codec):
    """JPEG grey asks the codec for its own luma (libjpeg's grey on the CPU); a truncated JPEG
    never reaches the codec (nvJPEG would decode it silently) and fails naming the sample."""
    mixed = ndd.as_batch([files["png"], files["jpeg420"]])
    grey = ndd.decoders.image(mixed, device="gpu", output_type=GRAY)
    for got, want in zip(samples_of(grey), samples_of(ndd.decoders.image(mixed, output_type=GRAY)),
                         strict=True):  # fmt: skip
        assert_close(got, want, where="grey")
    assert fake_device_codec.calls == 2  # JPEGs as the codec's grey, the PNG as sRGB
    fake_device_codec.calls = 1
    jpeg = encode(_pixels(40, 56, 3, 20), "JPEG", quality=90)
    cut = jpeg[: len(jpeg) * 2 // 3]  # the header is whole: fails while decoding pixels
    with pytest.raises(RuntimeError, match="sample 1: cannot decode the JPEG image: OSError: "
                                           "image file is truncated"):  # fmt: skip
        ndd.decoders.image(ndd.as_batch([jpeg, cut]), device="gpu").evaluate()
    assert fake_device_codec.calls == 1


def test_device_codec_completeness_check_reads_head_and_tail_like_the_whole_file():
    """`complete` (is the end marker there?) looks at the header and the tail first: the same
    answers as searching the whole file, on cut, padded and marker-stuffed files."""
    from ndd_triton.kernels.gpu import _complete_files as complete_files

    def whole(data: bytes) -> bool:
        if data[:2] == b"\xff\xd8":
            scan = data.find(b"\xff\xda")
            return scan >= 0 and data.rfind(b"\xff\xd9") > scan
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            return data.rfind(b"IEND") > 8
        return True

    rs = np.random.default_rng(1)
    jpeg = encode(_pixels(200, 300, 3, 21), "JPEG", quality=95).tobytes()
    png = encode(_pixels(60, 80, 3, 22), "PNG").tobytes()
    app = b"\xff\xe2" + (40002).to_bytes(2, "big") + bytes(40000)
    big_head = jpeg[:2] + app + app + jpeg[2:]  # the scan starts after the first 64 KiB
    variants = [b"", jpeg[:1], jpeg, png, big_head, big_head[:70000], jpeg + bytes(5000),
                jpeg + bytes(5000) + b"\xff", png + bytes(9000), jpeg[: len(jpeg) // 2],
                png[:-20], b"\xff\xd8" + bytes(10), b"\xff\xd8\xff\xd9", jpeg[:100] + b"\xff\xd9",
                jpeg[: len(jpeg) // 2] + b"\xff\xd9"]  # ending in the marker, scan or not
    for base in (jpeg, png):
        for _ in range(40):
            cut = base[: rs.integers(0, len(base) + 1)]
            pad = bytes(rs.integers(0, 256, rs.integers(0, 9000)).astype(np.uint8))
            variants.append(cut + pad)
    for data in variants:
        arr = np.frombuffer(data, np.uint8)
        assert complete_files.complete(arr) == whole(data), (len(data), data[:4])


def test_packed_outputs_are_known_without_looking(fake_device_codec, monkeypatch):
    """The decoder decodes into the output's slots only when the samples lie back to back:
    an output the runtime allocated says so (`GpuBatch.packed`), any other batch is checked."""
    import ndd_triton.kernels.gpu.decoders as decoders
    from ndd_triton.kernels.gpu._tables import GpuBatch

    shapes = np.array([[2, 3, 3], [1, 4, 3]], np.int64)
    data = torch.zeros(64, dtype=torch.uint8)
    back_to_back = GpuBatch(data, np.array([0, 18], np.int64), shapes, "HWC", ndd.uint8)
    gap = GpuBatch(data, np.array([0, 20], np.int64), shapes, "HWC", ndd.uint8)
    assert decoders._packed(back_to_back) and not decoders._packed(gap)
    gap.packed = True  # (what the runtime sets for its own allocations only)
    assert decoders._packed(gap)
    seen = []
    original = decoders._packed
    monkeypatch.setattr(decoders, "_packed", lambda out: seen.append(out.packed) or original(out))
    pixels = [_pixels(5, 7, 3, seed=1), _pixels(4, 9, 3, seed=2)]
    jpegs = ndd.as_batch([encode(p, "jpeg") for p in pixels])
    ndd.decoders.image(jpegs, device="gpu").evaluate()
    assert seen and all(seen) and fake_device_codec.into  # decoded into the flagged output


def test_device_codec_takes_the_readers_code_streams(fake_device_codec, tmp_path, monkeypatch):
    """Once the GPU decoder has decoded through the codec, readers make the codec's code
    streams of their batches on their own thread; the decoder takes them instead of making
    its own, and only those made by the codec it decodes with."""
    from ndd_triton.decoders import _header_hints

    made = []  # outside the readers' threads (which go on with the next epoch)
    other = fake_device_codec.CodeStream  # another codec's maker (the hint's is not used)

    class Counted(other):
        def __init__(self, data):
            if not threading.current_thread().name.startswith("ndd-reader"):
                made.append(len(data))
            super().__init__(data)

    monkeypatch.setattr(fake_device_codec, "CodeStream", Counted)
    jpegs = [encode(_pixels(h, w, 3, h + w), "JPEG", quality=90)
             for h, w in ((9, 13), (16, 7), (12, 12), (5, 20))]  # fmt: skip
    (tmp_path / "c").mkdir()
    for i, data in enumerate(jpegs):
        data.tofile(tmp_path / "c" / f"{i}.jpg")
    ndd.decoders.image(ndd.as_batch(jpegs[:1]), device="gpu").evaluate()  # the codec is used
    assert _header_hints.stream_maker() is Counted
    for maker, decoded_here in ((Counted, 0), (other, 4)):
        _header_hints.want_code_streams(maker)
        reader = ndd.readers.File(file_root=str(tmp_path), random_shuffle=False)
        batches = [jpegs for jpegs, _ in reader.next_epoch(batch_size=2)]
        for batch in batches:
            streams = batch._storage_or_raise().hints[_header_hints.HINT_CODE_STREAMS]
            assert streams[0] is maker
        made.clear()
        for batch in batches:
            got = ndd.decoders.image(batch, device="gpu")
            for g, c in zip(samples_of(got), samples_of(ndd.decoders.image(batch)), strict=True):
                assert_close(g, c, where="reader's code streams")
        assert len(made) == decoded_here
        _header_hints.want_code_streams(Counted)


@pytest.mark.skipif(not REAL_CUDA, reason="the real nvImageCodec, on a CUDA device")
def test_real_codec_decodes_a_jpeg_batch_into_the_output():
    """nvImageCodec itself: a batch of RGB JPEGs is decoded into the output's slots, handed to
    the codec as light interface objects (both paths still trusted after it), with libjpeg's
    pixels up to nvJPEG's own rounding."""
    pytest.importorskip("nvidia.nvimgcodec")
    import ndd_triton.kernels.gpu.decoders as gpu_decoders

    jpegs = [encode(_pixels(h, w, 3, h + w), "JPEG", quality=90)
             for h, w in ((64, 48), (40, 72), (96, 96))]  # fmt: skip
    out = ndd.decoders.image(ndd.as_batch(jpegs), device="gpu").evaluate()
    assert gpu_decoders._INTO_OUTPUT[0] and gpu_decoders._SLOTS[0]
    for got, data in zip(samples_of(out), jpegs, strict=True):
        diff = np.abs(np.asarray(got, np.int16) - ref_decode(data).astype(np.int16))
        assert diff.max() <= 4 and diff.mean() < 0.5, (diff.max(), diff.mean())
