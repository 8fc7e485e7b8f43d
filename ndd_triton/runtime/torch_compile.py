"""`torch.compile`: a call into ndd_triton inside a compiled function is a clean graph break.

Dynamo traces Python it has not been told to skip, and tracing the executor, the eval modes and
the sample tables ended in `InternalTorchDynamoError: RecursionError` at the first ndd call of
any compiled function (with or without `fullgraph`). The ordinary API is therefore on Dynamo's
skip list (the compile-native ops are the torch custom ops of `ndd_triton.pytorch.ops`): a
compiled function breaks its graph at an ndd call, the call runs as in eager code (Dynamo does
not compile frames of skipped files either), and tracing resumes after it; with
`fullgraph=True` the break is reported as `torch._dynamo.exc.Unsupported`.

Importing `torch._dynamo` costs seconds, so nothing is imported here: the package joins the skip
list when something else imports Dynamo (`torch.compile` does, before tracing), through a
one-shot import hook, or at once when Dynamo is already loaded. Normal calls pay nothing.
The generated op wrappers (`<ndd op flip>`) are not files Dynamo can skip; they are
marked `_torchdynamo_disable` (`ops/opgen.py`) so Dynamo breaks the graph at them instead of
tracing them.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

_PACKAGE = __name__.split(".")[0]
_DYNAMO = "torch._dynamo"


def dynamo_running() -> bool:
    """Whether a torch.compile'd function is running on this thread (Dynamo's frame callback is
    set): Python called from here may be traced. The package's own frames are skipped, others
    (Triton's launcher) are not, so eager mode keeps GPU runs on the worker thread then."""
    if _DYNAMO not in sys.modules:
        return False
    try:
        from torch._C._dynamo.eval_frame import get_eval_frame_callback
    except ImportError:  # a torch without it: assume it is running
        return True
    return get_eval_frame_callback() is not None


def _skip_package() -> None:
    # A private Dynamo function (torch 2.2+); should it go, importing Dynamo must still work
    # (tests/core/test_torch_compile.py then fails, not the user's torch.compile)
    try:
        from torch._dynamo import trace_rules

        trace_rules.add(_PACKAGE)
    except Exception:
        pass


class _RegisterAfterLoad(importlib.abc.Loader):
    """Runs Dynamo's own loader, then puts the package on its skip list."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader  # the module keeps Dynamo's own loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _skip_package()


class _DynamoImportHook(importlib.abc.MetaPathFinder):
    """Finds `torch._dynamo` once, like the finders after it, and wraps its loader."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _DYNAMO:
            return None
        sys.meta_path.remove(self)  # one shot; the real finders do the finding
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisterAfterLoad(spec.loader)
        return spec


def install() -> None:
    """Skip the package in Dynamo now if it is loaded, else when it gets imported."""
    if _DYNAMO in sys.modules:
        _skip_package()
    elif not any(isinstance(finder, _DynamoImportHook) for finder in sys.meta_path):
        sys.meta_path.insert(0, _DynamoImportHook())


install()
