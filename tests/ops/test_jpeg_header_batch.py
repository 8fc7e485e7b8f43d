"""The batch header walk (`decoders/_jpeg_batch.py`, `_image_infos.py`) answers exactly as the
per-sample walk and `_pillow.read_info` do, sample by sample, errors included: on the bundled
photos, on Pillow-made JPEGs of many kinds, on hand-edited headers (16-bit tables, fill bytes,
APPn segments), on every truncation and on random byte changes (fixed seeds)."""

from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest
from _check import raises_at_call, samples_of
from _decoder_data import _pixels, encode, photo_jpegs, with_orientation

import ndd_triton as ndd
from ndd_triton.decoders import _image_infos, _jpeg_batch, _jpeg_header, _pillow

# ---- building headers by hand ----------------------------------------------------------------
def _split(data: np.ndarray) -> tuple[list[tuple[int, bytes]], bytes]:
    """The marker segments of a JPEG up to its start of scan (marker, content) and the rest."""
    raw = data.tobytes()
    segs, at = [], 2
    while True:
        marker, size = raw[at + 1], struct.unpack(">H", raw[at + 2:at + 4])[0]
        if marker == 0xDA:
            return segs, raw[at:]
        segs.append((marker, raw[at + 4:at + 2 + size]))
        at += 2 + size


def _join(segs: list[tuple[int, bytes]], rest: bytes, fill: dict[int, int] | None = None
          ) -> np.ndarray:  # fmt: skip
    """A JPEG from segments (`fill[k]`: 0xFF fill bytes before segment k)."""
    out = b"\xff\xd8"
    for k, (marker, content) in enumerate(segs):
        out += b"\xff" * (fill or {}).get(k, 0)
        out += bytes([0xFF, marker]) + struct.pack(">H", len(content) + 2) + content
    return np.frombuffer(out + rest, np.uint8).copy()


def _edit(data: np.ndarray, at: int = 1, insert: tuple[tuple[int, bytes], ...] = ()
          ) -> np.ndarray:  # fmt: skip
    """The same JPEG with segments inserted before segment `at`."""
    segs, rest = _split(data)
    segs[at:at] = list(insert)
    return _join(segs, rest)


def _dqt16(data: np.ndarray, sof1: bool = False) -> np.ndarray:
    """The same JPEG with 16-bit quantisation tables (and SOF1 instead of SOF0)."""
    segs, rest = _split(data)
    out = []
    for marker, content in segs:
        if marker == 0xDB:
            tables, q = b"", 0
            while q < len(content):
                tables += bytes([0x10 | content[q] & 0x0F]) + np.asarray(
                    list(content[q + 1:q + 65]), ">u2").tobytes()
                q += 65
            content = tables
        elif marker == 0xC0 and sof1:
            marker = 0xC1
        out.append((marker, content))
    return _join(out, rest)


def _variants() -> dict[str, np.ndarray]:
    """JPEGs whose headers exercise every branch of the walk, by name."""
    rgb, grey = _pixels(12, 20, 3, 40), _pixels(9, 13, 1, 41)
    plain = encode(rgb, "JPEG", quality=90)
    cmyk = _pillow_cmyk(_pixels(8, 6, 4, 42))
    segs, rest = _split(plain)
    return {
        "plain": plain, "gray": encode(grey, "JPEG"), "cmyk": cmyk,
        "progressive": encode(rgb, "JPEG", progressive=True),
        "optimized": encode(rgb, "JPEG", optimize=True),
        "s444": encode(rgb, "JPEG", subsampling=0), "restart": encode(rgb, "JPEG",
                                                                       restart_marker_rows=1),
        "comment": encode(rgb, "JPEG", comment=b"hello"),
        "icc": encode(rgb, "JPEG", icc_profile=b"\0" * 300),
        "icc_big": encode(rgb, "JPEG", icc_profile=bytes(70000)),  # header > 64 KiB
        "icc_long": encode(rgb, "JPEG", icc_profile=bytes(20000)),  # > MATCH_MAX_BYTES
        "xmp": encode(rgb, "JPEG", xmp=b"<x:xmpmeta/>"),
        "exif": with_orientation(rgb, 6, "JPEG"), "exif1": with_orientation(rgb, 1, "JPEG"),
        "dqt16": _dqt16(plain), "sof1": _dqt16(plain, sof1=True),
        "fill": _join(segs, rest, fill={0: 1, 2: 3, len(segs) - 1: 2}),
        "app3": _edit(plain, insert=((0xE3, b"anything at all"),)),
        "app1_other": _edit(plain, insert=((0xE1, b"not exif"),)),
        "mpf": _edit(plain, insert=((0xE2, b"MPF\0" + bytes(20)),)),
        "icc_short": _edit(plain, insert=((0xE2, b"ICC_PROFILE\0\1"),)),
        "photoshop": _edit(plain, insert=((0xED, b"Photoshop 3.0\0" + bytes(8)),)),
        "adobe_short": _edit(plain, insert=((0xEE, b"Adob"),)),
        "jfif_short": _edit(plain, at=0, insert=((0xE0, b"JFIF"),)),
        "dht_first": _edit(plain, at=0, insert=((0xC4, segs[-1][1]),)),
        "dnl": _edit(plain, insert=((0xDC, b"\0\1"),)),
        "jpg_marker": _edit(plain, insert=((0xC8, b"\0\0"),)),
    }  # fmt: skip


def _pillow_cmyk(arr: np.ndarray) -> np.ndarray:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(arr, "RGBA").convert("CMYK").save(buf, "JPEG")
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


# ---- the contract ----------------------------------------------------------------------------
def _read_info(data: np.ndarray) -> object:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow warns about damaged EXIF blocks
            return _pillow.read_info(data)
    except _pillow.ImageError as e:
        return f"error: {e}"


def _batch_infos(samples: list[np.ndarray]) -> list[object]:
    """Every sample's ImageInfo (or error) the way `read_headers` gets them."""
    infos, todo = _image_infos.plain_infos(samples, None)
    errors = {}
    for i in todo:
        found = _read_info(samples[i])
        if isinstance(found, str):
            errors[i] = found
        else:
            infos.given[i] = found
    return [errors.get(i) or infos[i] for i in range(len(samples))]


def _check(samples: list[np.ndarray]) -> int:
    """The batch walk answers as the per-sample walk wherever it answers, and the whole
    batch as `read_info` sample by sample; returns how many samples the batch walk settled.
    The same with the layouts that walk found kept as the recent ones: for the batch again
    (compared in NumPy, `_compare`; it may settle more) and for each sample alone (in Python,
    `_match`; a batch of one leaves nothing unasked)."""
    _jpeg_batch.forget_layouts()
    hwc = _jpeg_batch.plain_jpeg_headers(samples, _pillow.MAX_PIXELS)
    found = _jpeg_batch._recent
    assert len(found) <= _jpeg_batch._RECENT_MAX
    again = _jpeg_batch.plain_jpeg_headers(samples, _pillow.MAX_PIXELS)
    walked = _walked(samples)
    for answer in (hwc, again):
        settled = np.flatnonzero(answer[:, 2])
        np.testing.assert_array_equal(answer[settled], walked[settled])
    for i, data in enumerate(samples):
        _jpeg_batch._recent = found  # (a sample alone may add its own layout)
        alone = _jpeg_batch.plain_jpeg_headers([data], _pillow.MAX_PIXELS)
        assert alone[0].tolist() == walked[i].tolist(), i
    assert _batch_infos(samples) == [_read_info(v) for v in samples]
    return int(np.count_nonzero(hwc[:, 2]))


def test_app_rules_are_the_app_handler_checks():
    """`_plain_app_head` (rule table) says what the per-marker checks it replaced said."""
    def before(marker, head, size):
        if marker == 0xE0 and head.startswith(b"JFIF"):
            return size >= 7
        if marker == 0xE1:
            return not head.startswith((b"Exif\x00\x00", b"http://ns.adobe.com/xap/1.0/\x00"))
        if marker == 0xE2:
            if head.startswith(b"ICC_PROFILE\x00"):
                return size >= 14
            return not head.startswith(b"MPF\x00")
        if marker == 0xED:
            return not head.startswith(b"Photoshop 3.0\x00")
        if marker == 0xEE and head.startswith(b"Adobe"):
            return size >= 7
        return True

    prefixes = [b"JFIF\0", b"Exif\0\0", b"http://ns.adobe.com/xap/1.0/\0", b"ICC_PROFILE\0",
                b"MPF\0", b"Photoshop 3.0\0", b"Adobe", b"", b"x"]  # fmt: skip
    rs = np.random.default_rng(3)
    for marker in range(0xE0, 0xF0):
        for prefix in prefixes:
            for cut in range(len(prefix) + 1):
                head = prefix[:cut] + rs.integers(0, 256, 4, np.uint8).tobytes()
                for size in (len(head), 6, 7, 13, 14, 100):
                    head_of_size = head[:min(size, _jpeg_header._APP_PREFIX)]
                    want = before(marker, head_of_size, size)
                    got = _jpeg_header._plain_app_head(marker, head_of_size, size)
                    assert got == want, (marker, head_of_size, size)


@pytest.mark.parametrize("name", sorted(_variants()))
def test_batch_walk_agrees_on_each_kind_of_header(name):
    data = _variants()[name]
    others = [encode(_pixels(5 + k, 9 + 2 * k, 3, k), "JPEG", quality=90) for k in range(6)]
    settled = _check([data] * 6 + others + [data])
    walked = _jpeg_header.read_jpeg_header(data, _pillow.MAX_PIXELS)
    # one template for the copies, one for the others (same encoder, same layout)
    assert settled == 13 if walked is not None else settled <= 6, settled


def test_batch_walk_settles_a_batch_of_one_layout_at_once(monkeypatch):
    """Differently sized images of one encoder: one Python walk for the whole batch, and
    none for the next batches of that encoder, large or small (the layout is a recent one)."""
    samples = [encode(_pixels(3 + k, 40 - k, 3, k), "JPEG", quality=85 - k) for k in range(30)]
    assert _check(samples[:20]) == 20
    walks = []
    real = _jpeg_batch.walk_jpeg_header
    monkeypatch.setattr(_jpeg_batch, "walk_jpeg_header", lambda *a: walks.append(1) or real(*a))
    monkeypatch.setattr(_jpeg_batch, "_recent", ())
    first = _jpeg_batch.plain_jpeg_headers(samples[:20], _pillow.MAX_PIXELS)
    assert len(walks) == 1
    assert first[:, 2].all()
    later = _jpeg_batch.plain_jpeg_headers(samples[15:], _pillow.MAX_PIXELS)
    small = _jpeg_batch.plain_jpeg_headers(samples[:3], _pillow.MAX_PIXELS)
    assert len(walks) == 1
    np.testing.assert_array_equal(np.concatenate([first, later[5:]]), _walked(samples))
    np.testing.assert_array_equal(small, first[:3])


def _walked(samples: list[np.ndarray]) -> np.ndarray:
    """`plain_jpeg_headers`'s answer, by the per-sample walk."""
    rows = [_jpeg_header.read_jpeg_header(s, _pillow.MAX_PIXELS) for s in samples]
    return np.array([r[1:] if r is not None else (0, 0, 0) for r in rows],
                    np.int64).reshape(len(samples), 3)  # fmt: skip


def test_recent_layouts_across_batches(monkeypatch):
    """Batches from several encoders in turn, large and small: every answer is the walk's;
    a small batch walks only samples whose layout is not a recent one, and makes a layout of
    the first of those; at most `_RECENT_MAX` layouts are kept, the latest used first."""
    v = _variants()
    kinds = ["plain", "optimized", "progressive", "gray", "cmyk", "fill", "app3", "icc"]
    encoders = {kind: v[kind] for kind in kinds}
    monkeypatch.setattr(_jpeg_batch, "_recent", ())
    rs = np.random.default_rng(5)
    for step in range(40):
        picked = rs.choice(kinds, rs.integers(1, 3))
        count = int(rs.choice([1, 3, _jpeg_batch.MIN_BATCH, 20]))
        samples = [encoders[str(rs.choice(picked))] for _ in range(count)]
        samples += [v["exif"], np.zeros(0, np.uint8)][:step % 3]
        before = _jpeg_batch._recent
        got = _jpeg_batch.plain_jpeg_headers(samples, _pillow.MAX_PIXELS)
        np.testing.assert_array_equal(got, _walked(samples), err_msg=str(step))
        after = _jpeg_batch._recent
        assert len(after) <= _jpeg_batch._RECENT_MAX
        assert len({t.key for t in after}) == len(after)  # no layout twice
        if len(samples) < _jpeg_batch.MIN_BATCH:
            new = [t for t in after if all(t is not b for b in before)]
            assert len(new) <= 1
    small = [encoders["gray"], encoders["plain"]]
    _jpeg_batch.plain_jpeg_headers(small, _pillow.MAX_PIXELS)
    walks = []
    real = _jpeg_batch.walk_jpeg_header
    monkeypatch.setattr(_jpeg_batch, "walk_jpeg_header", lambda *a: walks.append(1) or real(*a))
    _jpeg_batch.plain_jpeg_headers(small[::-1], _pillow.MAX_PIXELS)
    assert not walks
    assert [t.channels for t in _jpeg_batch._recent[:2]] == [3, 1]  # the latest used first


def test_long_headers_are_walked_in_small_batches(monkeypatch):
    """A header longer than `MATCH_MAX_BYTES` (a large ICC profile) is walked in a small
    batch, not matched in Python nor made a recent layout there; a large batch settles it
    with a template as any other."""
    data = _variants()["icc_long"]
    length = _jpeg_header.walk_jpeg_header(data, _pillow.MAX_PIXELS)[1]
    assert length > _jpeg_batch.MATCH_MAX_BYTES
    want = _walked([data])[0].tolist()
    assert want[2] == 3
    monkeypatch.setattr(_jpeg_batch, "_recent", ())
    assert _jpeg_batch.plain_jpeg_headers([data] * 3, _pillow.MAX_PIXELS).tolist() == [want] * 3
    assert _jpeg_batch._recent == ()
    large = _jpeg_batch.plain_jpeg_headers([data] * _jpeg_batch.MIN_BATCH, _pillow.MAX_PIXELS)
    assert large.tolist() == [want] * _jpeg_batch.MIN_BATCH
    assert [t.length for t in _jpeg_batch._recent] == [length]
    matched = []
    real = _jpeg_batch._match
    monkeypatch.setattr(_jpeg_batch, "_match", lambda *a: matched.append(1) or real(*a))
    assert _jpeg_batch.plain_jpeg_headers([data] * 2, _pillow.MAX_PIXELS).tolist() == [want] * 2
    assert not matched


def test_recent_layouts_from_several_threads(monkeypatch):
    """Threads walking batches of different encoders at once all get the walk's answers."""
    import threading

    v = _variants()
    batches = [[v[kind]] * count for kind in ("plain", "gray", "optimized", "cmyk", "fill")
               for count in (2, _jpeg_batch.MIN_BATCH)]  # fmt: skip
    want = [_walked(b) for b in batches]
    monkeypatch.setattr(_jpeg_batch, "_recent", ())
    errors = []

    def work(k: int) -> None:
        for step in range(60):
            j = (k + step) % len(batches)
            got = _jpeg_batch.plain_jpeg_headers(batches[j], _pillow.MAX_PIXELS)
            if not np.array_equal(got, want[j]):
                errors.append((k, step))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_batch_walk_agrees_on_bundled_photos():
    photos = photo_jpegs()  # (the same files as the shared data's images)
    assert len(photos) >= 5
    _check(photos + photos[:1] * max(0, _jpeg_batch.MIN_BATCH - len(photos)))
    for photo in photos:
        _check([photo] * _jpeg_batch.MIN_BATCH)


def test_batch_walk_agrees_on_every_truncation():
    """Files cut anywhere in (and a little past) the header, beside whole copies."""
    for data in (_variants()["plain"], _variants()["fill"], _variants()["progressive"],
                 photo_jpegs()[0]):  # fmt: skip
        walked = _jpeg_header.walk_jpeg_header(data, _pillow.MAX_PIXELS)
        end = walked[1] + 8 if walked is not None else 700
        cuts = [data[:cut] for cut in range(0, min(end, data.size), 3)]
        for start in range(0, len(cuts), 20):
            chunk = cuts[start:start + 20]
            _check([data] * max(6, _jpeg_batch.MIN_BATCH - len(chunk)) + chunk)


def test_batch_walk_agrees_on_random_byte_changes():
    """Fuzz (fixed seed): 1-3 bytes changed per copy, half of them where the walk looks."""
    rs = np.random.default_rng(17)
    names = ("plain", "gray", "cmyk", "progressive", "restart", "icc", "dqt16", "fill", "app3")
    variants = _variants()
    settled = total = 0
    for name in names:
        data = variants[name]
        template = _jpeg_batch.layout(data, _jpeg_header.walk_jpeg_header(data, 1 << 40)[1])
        for _ in range(8):
            batch = [data] * 4
            for _ in range(12):
                copy = data.copy()
                count = rs.integers(1, 4)
                if rs.random() < 0.5:
                    at = rs.choice(np.concatenate([template.steering, template.size]), count)
                else:
                    at = rs.integers(0, template.length + 4, count)
                copy[at] = rs.integers(0, 256, count)
                batch.append(copy)
            settled += _check(batch)
            total += len(batch)
    assert total // 2 < settled < total  # both paths were taken


def test_batch_walk_agrees_when_any_header_byte_changes():
    """Every byte of the header (and two past it) changed in turn, two ways (fill bytes and
    markers are 0xFF: one change makes a byte 0xFF, the other a 0xFF something else)."""
    variants = _variants()
    for name in ("plain", "fill", "app3", "app1_other", "icc", "dqt16", "cmyk", "restart"):
        data = variants[name]
        length = _jpeg_header.walk_jpeg_header(data, _pillow.MAX_PIXELS)[1]
        for change in (lambda b: b ^ 0xFF, lambda b: 0xFF if b != 0xFF else 0xFE):
            mutants = []
            for at in range(length + 2):
                copy = data.copy()
                copy[at] = change(int(copy[at]))
                mutants.append(copy)
            for start in range(0, len(mutants), 60):
                _check([data] * 4 + mutants[start:start + 60] + [data] * 8)


@pytest.mark.parametrize(("marker", "prefix", "least"), [
    (m, p, least) for m, rules in _jpeg_header._APP_RULES.items() for p, least in rules])
def test_batch_walk_reads_the_app_prefixes(marker, prefix, least):
    """An APPn segment of the template's size whose head starts with a prefix Pillow's
    handler looks for is told apart from the template's (any size around the rule's)."""
    plain = _variants()["plain"]
    for size in sorted({len(prefix), least - 1, least, len(prefix) + 20} - {_jpeg_header._NEVER,
                                                                         _jpeg_header._NEVER - 1}):
        if size < len(prefix):
            continue
        neutral = _edit(plain, insert=((marker, b"z" * size),))
        marked = _edit(plain, insert=((marker, prefix + b"z" * (size - len(prefix))),))
        _check([neutral] * 6 + [marked] * 6)
        _check([marked] * 6 + [neutral] * 6)


def test_batch_walk_frame_checks():
    """Frames the walk refuses (precision, component count, empty, bomb) are not settled;
    the per-sample path then says what is wrong, as before."""
    data = _variants()["plain"]
    frame = int(_jpeg_batch.layout(data, _jpeg_header.walk_jpeg_header(data, 1 << 40)[1])
                .size[0]) - 1  # fmt: skip

    def with_frame(**at):
        copy = data.copy()
        for offset, value in at.items():
            copy[frame + int(offset[1:])] = value
        return copy

    odd = [with_frame(o0=12), with_frame(o5=2), with_frame(o1=0, o2=0), with_frame(o3=0, o4=0),
           with_frame(o1=0xFF, o2=0xFF, o3=0xFF, o4=0xFF)]  # fmt: skip
    assert _check([data] * 8 + odd) == 8
    for one in odd:  # (each alone: the batch's quick checks see one kind of problem)
        assert _check([data] * 12 + [one]) == 12


@pytest.mark.parametrize("count", [1, 3, _jpeg_batch.MIN_BATCH])
def test_bomb_limit_is_inclusive(count, monkeypatch):
    """A frame of exactly `max_pixels` pixels is settled, one of a pixel more is not, as the
    walk says: by a new template, by a recent layout, in a batch and alone."""
    data = _variants()["plain"]  # 12 x 20
    for recent in (False, True):
        if not recent:
            monkeypatch.setattr(_jpeg_batch, "_recent", ())
        for limit, want in ((240, [12, 20, 3]), (239, [0, 0, 0])):
            assert _jpeg_header.walk_jpeg_header(data, limit) is not None or want[2] == 0
            got = _jpeg_batch.plain_jpeg_headers([data] * count, limit)
            assert got.tolist() == [want] * count, (recent, limit)


@pytest.mark.parametrize("count", [0, 1, 2, 5, _jpeg_batch.MIN_BATCH - 1, _jpeg_batch.MIN_BATCH])
def test_small_batches(count):
    """Below `MIN_BATCH` samples each sample is compared with the recent layouts or walked in
    Python (all plain ones settled)."""
    v = _variants()
    kinds = ["plain", "exif", "gray", "cmyk", "xmp", "progressive", "icc_big", "fill"]
    samples = [v[kinds[k % len(kinds)]] for k in range(count)]
    settled = _check(samples)
    if count < _jpeg_batch.MIN_BATCH:
        plain = [_jpeg_header.walk_jpeg_header(s, _pillow.MAX_PIXELS) for s in samples]
        assert settled == sum(found is not None for found in plain)


def test_batch_walk_mixed_batches():
    """Several layouts, other formats, empty and corrupt samples in one batch."""
    v = _variants()
    png = encode(_pixels(7, 5, 3, 1), "PNG")
    junk = np.random.default_rng(0).integers(0, 256, 50).astype(np.uint8)
    empty = np.zeros(0, np.uint8)
    samples = [v["exif"], png, v["plain"], empty, v["gray"], v["plain"], junk, v["gray"],
               v["plain"], v["gray"], v["cmyk"], v["plain"], v["gray"], v["progressive"]]
    _check(samples)
    _check(samples[::-1])


# ---- ImageInfos and the decoders -----------------------------------------------------------
def test_image_infos_sequence():
    v = _variants()
    samples = [v["plain"]] * 12 + [v["exif"], v["gray"]]
    infos, todo = _image_infos.plain_infos(samples, None)
    assert todo == [12, 13]  # (too few left for another template)
    infos.given[12] = _pillow.read_info(v["exif"])
    infos.given[13] = _pillow.read_info(v["gray"])
    want = [_pillow.read_info(s) for s in samples]
    assert list(infos) == want and len(infos) == 14
    assert infos[-1] == want[-1] and infos[2:4] == want[2:4]
    with pytest.raises(IndexError):
        infos[14]
    shapes = [w.shape(_pillow.RGB, True) for w in want]
    assert infos.shapes(_pillow.RGB, True).tolist() == [list(s) for s in shapes]
    assert not infos.all_direct_rgb(_pillow.RGB, True)  # grey and a rotation
    small, todo = _image_infos.plain_infos(samples[11:], None)  # (walked one by one)
    assert todo == [1]
    small.given[1] = want[12]
    assert list(small) == want[11:]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_decoders_on_a_batch_walked_at_once(device):
    """decoders.image on a mixed batch of 14 gives each sample's decode alone."""
    v = _variants()
    samples = [v["plain"], v["exif"], v["gray"], v["plain"], v["cmyk"], v["progressive"],
               *[encode(_pixels(6 + k, 11, 3, k), "JPEG") for k in range(8)]]
    got = samples_of(ndd.decoders.image(ndd.as_batch(samples), device=device).evaluate())
    for k, (out, data) in enumerate(zip(got, samples, strict=True)):
        alone = samples_of(ndd.decoders.image(ndd.as_batch([data]), device=device).evaluate())
        np.testing.assert_array_equal(out, alone[0], err_msg=str(k))
    shapes = ndd.peek_image_shape(ndd.as_batch(samples)).evaluate()
    assert [tuple(np.asarray(s)) for s in samples_of(shapes)] == \
        [_pillow.read_info(s).shape(_pillow.RGB, True) for s in samples]  # fmt: skip


def test_decoders_name_the_first_bad_sample_of_a_batch_walked_at_once():
    plain = _variants()["plain"]
    samples = [plain] * 13
    samples[9] = plain[:100]
    samples[11] = np.zeros(0, np.uint8)
    with raises_at_call(RuntimeError, match="decoders.image: sample 9: "):
        ndd.decoders.image(ndd.as_batch(samples))
