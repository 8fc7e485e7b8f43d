"""Docs stay current: the generated op reference matches the schemas; README's commands exist."""

import os
import re
import sys
import types

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "docs"))


def test_op_reference_is_current():
    from gen_ops import render

    with open(os.path.join(ROOT, "docs", "ops.md")) as f:
        committed = f.read()
    assert committed == render(), "docs/ops.md is stale: run `python docs/gen_ops.py`"


def test_readme_commands_are_make_targets():
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    with open(os.path.join(ROOT, "Makefile")) as f:
        makefile = f.read()
    for target in ("demo", "test"):
        assert f"make {target}" in readme
        assert re.search(rf"^{target}:", makefile, re.M)
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        assert "make test" in f.read()


def test_public_ops_have_docstrings():
    import ndd_triton as ndd
    from ndd_triton.ops.opgen import all_schemas

    for schema in all_schemas():
        if schema.public:
            assert schema.doc.strip(), f"{schema.name} has no doc"
    assert ndd.flip.__doc__ and "horizontal" in ndd.flip.__doc__


def test_compile_mode_doc_example_runs(capsys):
    """docs/compile.md's first example runs and its assertion (compiled == eager) holds."""
    with open(os.path.join(ROOT, "docs", "compile.md")) as f:
        text = f.read()
    example = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    exec(compile(example, "docs/compile.md", "exec"), {})
    assert "brightness+contrast+hue+saturation" in capsys.readouterr().out


def _python_blocks(path: str) -> list[tuple[int, str]]:
    """The ```python blocks of a Markdown file (with their line numbers), except those right
    after a `<!-- not run: ... -->` comment (code for other libraries)."""
    with open(path) as f:
        lines = f.read().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            end = lines.index("```", start)
            skipped = i > 0 and lines[i - 1].startswith("<!-- not run")
            if not skipped:
                blocks.append((start + 1, "\n".join(lines[start:end])))
            i = end
        i += 1
    return blocks


# inductor's CPU path imports torch.utils.mkldnn, which warns about its own torch.jit use
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_pytorch_guide_code_runs(monkeypatch, tmp_path):
    """docs/pytorch.md: every runnable block, in order, in one namespace (the DDP example runs
    as a single-rank gloo job)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for key, value in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0",
                       "WORLD_SIZE": "1", "LOCAL_RANK": "0"}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    path = os.path.join(ROOT, "docs", "pytorch.md")
    blocks = _python_blocks(path)
    assert len(blocks) >= 8
    # an importable module: torch 2.11's Dynamo imports the module of a compiled function's
    # globals by name
    module = types.ModuleType("docs_pytorch")
    monkeypatch.setitem(sys.modules, "docs_pytorch", module)
    namespace = module.__dict__
    for line, code in blocks:
        exec(compile(code, f"{path}:{line}", "exec"), namespace)  # noqa: S102
