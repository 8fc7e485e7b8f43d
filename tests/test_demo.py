"""The seeds' image-classification example end to end, on the cpu and on the emulated gpu."""

import numpy as np
import pytest
from PIL import Image

from ndd_triton import _demo


@pytest.fixture
def tiny_dataset(tmp_path):
    rng = np.random.default_rng(0)
    root = tmp_path / "data"
    for label, count in (("cats", 3), ("dogs", 2)):
        (root / label).mkdir(parents=True)
        for i in range(count):
            h, w = rng.integers(12, 24, size=2)
            pixels = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / label / f"{i}.jpg", quality=90)
    return root


def test_pipeline_cpu_and_emulated_gpu_agree(tiny_dataset, tmp_path):
    results = {}
    for device in ("cpu", "gpu"):
        results[device] = _demo.run(
            device=device,
            epochs=1,
            batch_size=2,
            size=8,
            data_root=str(tiny_dataset),
            out_dir=str(tmp_path / device),
            show_progress=False,
            tile=16,
        )
    cpu, gpu = results["cpu"], results["gpu"]
    assert cpu["images"] == gpu["images"] == 6  # 3 batches of 2 (the last one wraps around)
    assert cpu["shape"] == (2, 3, 8, 8)
    assert cpu["dtype"] == "torch.float32"
    assert cpu["labels"] == gpu["labels"]
    np.testing.assert_allclose(
        gpu["last_batch"].cpu().numpy(), cpu["last_batch"].cpu().numpy(), atol=0.05
    )
    assert (tmp_path / "cpu" / "contact_sheet.png").exists()
    # the augmentation grid from the same ops on either device (same random draws)
    grids = {d: _grid_tiles(results[d]["augmentations"], rows=3, tile=16) for d in results}
    for name in _demo.AUGMENT_COLUMNS:
        diff = np.abs(grids["gpu"][name].astype(int) - grids["cpu"][name].astype(int))
        assert diff.max() <= 8, name
        assert diff.mean() < 1, name
    _check_augmentations(grids["gpu"])


def test_bundled_images_demo_cpu(tmp_path):
    result = _demo.run(
        device="cpu", epochs=1, batch_size=5, size=32, out_dir=str(tmp_path), show_progress=False
    )
    assert result["images"] == 10
    assert result["shape"] == (5, 3, 32, 32)
    with Image.open(result["sheet"]) as sheet:
        assert sheet.size == (4 * (32 + 4), 3 * (32 + 4))  # 10 tiles, 4 per row
    # 3 bundled photos x (original + 4 ops) of 128 px tiles, each with a label strip
    tiles = _grid_tiles(result["augmentations"], rows=3, tile=128)
    assert list(tiles) == ["original", "random_resized_crop", "flip", "color_twist", "rotate"]
    _check_augmentations(tiles)


def _grid_tiles(path, rows, tile):
    """Cut the augmentation grid back into its tiles (and check its size and labels)."""
    gap, label_h = 4, 14
    columns = len(_demo.AUGMENT_COLUMNS)
    with Image.open(path) as image:
        assert image.size == (gap + columns * (tile + gap), gap + rows * (tile + label_h + gap))
        grid = np.asarray(image.convert("RGB"))
    tiles = {}
    for c, name in enumerate(_demo.AUGMENT_COLUMNS):
        x = gap + c * (tile + gap)
        cells = []
        for r in range(rows):
            y = gap + r * (tile + label_h + gap)
            cells.append(grid[y : y + tile, x : x + tile])
            label = grid[y + tile : y + tile + label_h, x : x + tile]
            assert (label < 128).any(), f"no label under {name}"  # text drawn on white
        tiles[name] = np.stack(cells)
    return tiles


def _check_augmentations(tiles):
    original = tiles["original"].astype(int)
    np.testing.assert_array_equal(tiles["flip"], tiles["original"][:, :, ::-1])
    for name in ("random_resized_crop", "color_twist", "rotate"):
        for row in range(original.shape[0]):
            diff = np.abs(tiles[name][row].astype(int) - original[row]).mean()
            assert diff > 2, (name, row, diff)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_demo_compile_mode_matches_eager(tiny_dataset, tmp_path, device):
    kwargs = {"device": device, "epochs": 2, "batch_size": 2, "size": 8,
              "data_root": str(tiny_dataset), "show_progress": False, "tile": 8}  # fmt: skip
    eager = _demo.run(out_dir=str(tmp_path / "eager"), **kwargs)
    compiled = _demo.run(out_dir=str(tmp_path / "compiled"), compile=True, **kwargs)
    assert compiled["images"] == eager["images"] == 12
    assert compiled["labels"] == eager["labels"]
    assert np.array_equal(compiled["last_batch"].cpu().numpy(), eager["last_batch"].cpu().numpy())


def test_demo_command_line_compile_switch(tiny_dataset, tmp_path, monkeypatch, capsys):
    from ndd_triton.__main__ import main

    calls = {}

    def fake_run(**kwargs):
        calls.update(kwargs)
        return {"images": 0, "seconds": 1.0, "images_per_s": 0.0, "shape": (), "dtype": "",
                "sheet": "x.png", "augmentations": "y.png"}  # fmt: skip

    monkeypatch.setattr(_demo, "run", fake_run)
    assert main(["demo", "--compile", "--epochs", "1"]) == 0
    assert calls["compile"] is True
    out = capsys.readouterr().out
    assert "compile mode" in out
    assert "y.png" in out
