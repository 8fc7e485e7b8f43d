"""The type stubs (`.pyi`) of the generated op functions are current and complete."""

from __future__ import annotations

import ast
import inspect
import os
import sys

import ndd_triton as ndd
from ndd_triton.ops.opgen import _PUBLIC

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))


def test_stubs_are_current():
    from gen_stubs import render

    stale = []
    for rel, text in render().items():
        path = os.path.join(ROOT, rel)
        if not os.path.exists(path):
            stale.append(rel)
            continue
        with open(path) as f:
            if f.read() != text:
                stale.append(rel)
    assert not stale, f"stale type stubs {stale}: run `python tools/gen_stubs.py`"


def test_every_op_has_a_stub_with_its_keywords():
    from gen_stubs import render

    files = render()
    defs: dict[str, ast.FunctionDef] = {}
    for rel, text in files.items():
        if not rel.endswith(".pyi"):
            continue
        tree = ast.parse(text)  # valid Python syntax
        space = rel.removeprefix("ndd_triton/").removeprefix("_stubs/").removesuffix(".pyi")
        space = space.removesuffix("/__init__").replace("/", ".")
        space = "" if space == "__init__" else space
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                defs[f"{space}.{node.name}".lstrip(".")] = node
    assert set(_PUBLIC) <= set(defs)
    resize = defs["resize"]
    keywords = [a.arg for a in resize.args.kwonlyargs]
    assert keywords == [p.name for p in inspect.signature(ndd.resize).parameters.values()
                        if p.kind is p.KEYWORD_ONLY]  # fmt: skip
    assert "interp_type" in keywords
    assert "Resizes" in ast.get_docstring(resize)
    root = files["ndd_triton/__init__.pyi"]
    for name in ndd.__all__:  # every public name is declared
        assert f" as {name}\n" in root or f"def {name}(" in root, name
