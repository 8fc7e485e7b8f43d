"""`ndd.profile()`: per-op totals, reader I/O records and the Chrome trace export."""

from __future__ import annotations

import json
import os

import ndd_triton as ndd

PHOTOS = os.path.join(os.path.dirname(ndd.__file__), "data", "images")
FILES = ["chelsea_small_97x65.jpg", "gravel_gray_257x129.jpg", "ihc_333x333.jpg"]


def test_totals_reader_io_and_chrome_trace(tmp_path):
    reader = ndd.readers.File(file_root=PHOTOS, files=FILES, name="photos")
    with ndd.profile() as prof:
        for jpegs, _ in reader.next_epoch(batch_size=2):  # 2 batches (the second wraps)
            for device in ("cpu", "gpu"):
                images = ndd.decoders.image(jpegs)
                images = images.gpu() if device == "gpu" else images
                ndd.flip(ndd.resize(images, size=(5, 4)), horizontal=1).evaluate()
    totals = prof.totals()
    assert totals["flip"]["calls"] == 4
    assert totals["flip"]["samples"] == 8
    assert totals["resize"]["calls"] == 4
    assert totals["decoders.image"]["calls"] == 4
    assert totals["flip"]["gpu_launches"] == 2  # one launch per gpu batch, none on the cpu
    assert totals["readers.photos"]["calls"] >= 2  # the prefetch thread may read ahead
    assert totals["readers.photos"]["run_s"] > 0
    assert all(t["run_s"] >= 0 for t in totals.values())
    assert "readers.photos" in prof.totals_table()

    path = prof.export_chrome_trace(tmp_path / "trace.json")
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    runs = [e for e in events if e["cat"] == "run"]
    assert sorted({e["name"] for e in runs}) == ["decoders.image", "flip", "resize"]
    assert sum(e["name"] == "flip" for e in runs) == 4
    assert any(e["cat"] == "io" and e["tid"].startswith("ndd-reader") for e in events)
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["ts"] > 0 for e in events)
    prepares = [e for e in events if e["cat"] == "prepare"]
    assert len(prepares) == len(runs)
