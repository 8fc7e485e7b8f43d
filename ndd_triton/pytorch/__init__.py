"""`ndd_triton.pytorch`: PyTorch integration (DALI 2.4 dynamic mode has `ndd.pytorch.nodes`).

* `Loader`: a resumable loader over a reader and a per-batch function (docs/pytorch.md);
* `LastBatchPolicy`: FILL / DROP / PARTIAL, as in DALI's PyTorch plugin;
* `nodes`: torchdata.nodes integration (`Reader`, `DictMapper`, `ToTorch`, `Map`), imported
  on first use (torchdata is optional);
* `ops`: ndd operators registered as torch custom ops, for `torch.compile(fullgraph=True)`.
"""

from __future__ import annotations

import importlib
from typing import Any

from ndd_triton.pytorch._loader import Loader
from ndd_triton.pytorch._policy import LastBatchPolicy

__all__ = ["LastBatchPolicy", "Loader", "nodes", "ops"]


def __getattr__(name: str) -> Any:
    if name in ("nodes", "ops"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
