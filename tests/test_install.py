"""Packaging: no setuptools deprecation warning (SPDX license string), and a CPU-only install
without triton (macOS, Windows: no wheel) imports and runs CPU ops and the PyTorch loader."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

import ndd_triton

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_pyproject_license_and_triton_marker():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)
    assert isinstance(project["project"]["license"], str)  # a table warns since setuptools 77
    assert any(r.startswith("setuptools>=77") for r in project["build-system"]["requires"])
    triton = [d for d in project["project"]["dependencies"] if d.startswith("triton")]
    assert triton == ["triton>=3.6,<4; sys_platform == 'linux'"]
    test_extra = project["project"]["optional-dependencies"]["test"]
    assert any(r.startswith("torchdata>=0.10") for r in test_extra)


def test_cpu_ops_and_loader_work_without_triton():
    script = """
import sys
class NoTriton:
    def find_spec(self, name, path=None, target=None):
        if name == "triton" or name.startswith("triton."):
            raise ImportError("no triton here")
sys.meta_path.insert(0, NoTriton())
import os
import numpy as np
import ndd_triton as ndd
from ndd_triton.pytorch import Loader
photos = os.path.join(os.path.dirname(ndd.__file__), "data", "images")
x = ndd.as_batch(np.arange(24, dtype=np.uint8).reshape(2, 3, 4, 1), layout="HWC")
assert np.array_equal(np.asarray(ndd.flip(x).select(0)), np.arange(12).reshape(3, 4, 1)[:, ::-1])
reader = ndd.readers.File(file_root=photos, files=["chelsea_small_97x65.jpg"], labels=[3])
loader = Loader(reader, lambda j, l: (ndd.resize(ndd.decoders.image(j), size=(4, 4)), l),
                batch_size=1, squeeze=[1])
images, labels = next(iter(loader))
assert images.shape == (1, 4, 4, 3) and labels.tolist() == [3]
assert "triton" not in sys.modules
print("ok")
"""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NDD_TRITON_EMULATE_GPU", "TRITON_INTERPRET")}  # fmt: skip
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(ndd_triton.__file__))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
