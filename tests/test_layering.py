"""The package's import graph: layers point one way and no module imports itself in a circle.

Every import counts, also those inside functions (a lazy import is still a dependency); only
`if TYPE_CHECKING:` blocks are left out (annotations, never executed). The layers, lowest first,
and what each may import (besides itself) are in `ALLOWED`; docs/concepts.md ("Package map")
explains them.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import ndd_triton

ROOT = os.path.dirname(ndd_triton.__file__)

# package -> the packages it may import (the public face, "", may import everything)
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "random": set(),
    "decoders": {"core"},  # codec helpers (JPEG headers, Pillow/libjpeg), below the ops
    "ops": {"core", "random", "decoders"},
    "kernels": {"core", "random", "decoders", "ops"},
    "runtime": {"core", "random", "decoders", "ops", "kernels"},
    "readers": {"core", "random", "decoders", "ops", "kernels", "runtime"},
    # PyTorch integration (loader, torchdata nodes, custom ops): above the readers, below root
    "pytorch": {"core", "random", "decoders", "ops", "kernels", "runtime", "readers"},
}


def _modules() -> dict[str, str]:
    found = {}
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                found[rel.removesuffix(".__init__")] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")  # fmt: skip


def _imports(module: str, path: str, modules: dict[str, str]) -> set[str]:
    """Modules of the package that `module` imports."""
    tree = ast.parse(Path(path).read_text())
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in modules:
                    found.add(target)
                elif base in modules:
                    found.add(base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return {m for m in found if m.startswith("ndd_triton")}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(m, p, modules) for m, p in modules.items()}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in ALLOWED) else ""


def test_layers_point_one_way():
    wrong = []
    for module, targets in _graph().items():
        source = _package(module)
        if source == "":
            continue
        for target in targets:
            dest = _package(target)
            if dest != source and dest not in ALLOWED[source]:
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports against the layering (see ALLOWED):\n" + "\n".join(sorted(wrong))


def test_no_import_circles():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    assert not circles, "import circles:\n" + "\n".join(", ".join(c) for c in circles)


def test_root_holds_only_the_public_face():
    public = {"__init__.py", "__main__.py", "types.py", "checkpoint.py", "_demo.py"}
    modules = {f for f in os.listdir(ROOT) if f.endswith(".py")}
    extra = modules - public
    assert not extra, f"modules at the package root beyond the public face: {extra}"


def _top_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_cpu_kernels_and_ops_do_not_import_triton():
    folders = [Path(ROOT, "kernels", "cpu"), Path(ROOT, "ops")]
    offenders = [str(p) for folder in folders for p in folder.glob("*.py")
                 if "triton" in _top_level_imports(p)]
    assert not offenders, f"Triton imported where CPU-only installs must work: {offenders}"


def test_modules_stay_under_400_lines():
    """STYLE.md: a module holds one concept; past 400 lines it holds several (split by concept)."""
    long = {str(p.relative_to(ROOT)): n for p in Path(ROOT).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}  # fmt: skip
    assert not long, f"modules over 400 lines: {long}"
