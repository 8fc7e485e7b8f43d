"""torch.compile around ndd calls: a clean graph break, never an internal Dynamo error.

Before the fix any compiled function that called an op failed with
`InternalTorchDynamoError: RecursionError` (Dynamo traced the executor and the tables).
The tests use the "eager" backend: what is checked is Dynamo's tracing, not inductor's code.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ndd_triton as ndd


def _pipeline(x: torch.Tensor, device: str) -> torch.Tensor:
    sample = ndd.as_tensor(x, layout="HWC")
    if device == "gpu":
        sample = sample.gpu()
    flipped = ndd.flip(sample, horizontal=1)
    doubled = flipped * 2  # Tensor arithmetic is an op too
    return torch.as_tensor(np.asarray(doubled.cpu())).to(torch.int32) + 1


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_a_compiled_function_calling_ops_runs_and_matches_eager(device):
    x = torch.arange(2 * 5 * 3, dtype=torch.uint8).reshape(2, 5, 3)
    expected = torch.flip(x, dims=[1]).to(torch.int32) * 2 + 1
    compiled = torch.compile(lambda t: _pipeline(t, device) * 3, backend="eager")
    assert torch.equal(compiled(x), expected * 3)
    assert torch.equal(compiled(x + 1), (torch.flip(x + 1, dims=[1]).to(torch.int32) * 2 + 1) * 3)


def test_fullgraph_reports_the_graph_break_cleanly():
    import torch._dynamo

    compiled = torch.compile(lambda t: _pipeline(t, "cpu"), backend="eager", fullgraph=True)
    with pytest.raises(torch._dynamo.exc.Unsupported, match=r"marked as skipped|disable"):
        compiled(torch.zeros((2, 2, 3), dtype=torch.uint8))


def test_dynamo_is_not_imported_and_learns_the_skip_when_it_is():
    script = """
import sys
import ndd_triton
assert "torch._dynamo" not in sys.modules, "importing ndd_triton must not import Dynamo"
import torch._dynamo.trace_rules as rules
import os
assert rules.check_file(os.path.join(os.path.dirname(ndd_triton.__file__), "runtime",
                                     "executor.py")).skipped
assert type(sys.modules["torch._dynamo"].__loader__).__name__ != "_RegisterAfterLoad"
print("ok")
"""
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(ndd.__file__))}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.stdout.strip() == "ok", done.stderr
