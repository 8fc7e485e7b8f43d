"""tools/dali_diff.py stays usable: every generator builds cases whose literal calls run on
ndd_triton (DALI itself is not needed here; the tool compares against it out of CI)."""

import importlib.util
import os
import sys

import numpy as np

import ndd_triton as ndd
import ndd_triton.types as types

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools",
                     "dali_diff.py")  # fmt: skip


def _tool():
    spec = importlib.util.spec_from_file_location("dali_diff", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("dali_diff", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _implemented(op):
    obj = ndd
    for part in op.split("."):
        obj = getattr(obj, part, None)
    return obj is not None


def test_generators_render_calls_that_run_on_ndd_triton():
    tool = _tool()
    for name, gen in tool.GENERATORS.items():
        rng = np.random.default_rng([0, sum(map(ord, name))])
        first = gen(np.random.default_rng(0))
        if not first.op.startswith("__") and not _implemented(first.op):
            continue  # generators for ops ndd_triton does not have yet (bbox / coordinate)
        ran = 0
        for k in range(4):
            case = gen(rng)
            arrays = {}
            src = tool._render(case, k, arrays, None)
            assert src.startswith(("ndd.", "(")), src
            z = {key: np.asarray(v) for key, v in arrays.items()}
            try:  # some random configs are invalid on purpose (DALI raises for them too)
                out = eval(src, {"ndd": ndd, "types": types, "z": z})  # our own generated source
                for o in out if isinstance(out, tuple) else (out,):
                    o.evaluate()
                ran += 1
            except (ValueError, RuntimeError, TypeError, IndexError):
                pass
        assert ran, f"{name}: no generated case ran"
