"""The shape of ``src/diskq``: no import circle, and no module past one sitting without a reason.

The packages are layered (cli > publish, plan > database > submission, fleet > bench > probe >
analyse > units, proc, signals, files > result, errors): what two modules both need lives in the
lower one, or in a small module of its own. An import inside a function counts like one at the
top: deferring an import hides a circle, it does not break it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
#: lines past which a module needs a reason in its docstring ("over 400 lines because ...")
MAX_LINES = 400


def _modules(root: Path = SRC) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Module -> the modules of this tree it imports, anywhere in its body."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                base = (
                    ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".")
                    if node.level
                    else (node.module or "")
                )
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        graph[name].add(f"{base}.{alias.name}")
                    elif base in modules:
                        graph[name].add(base)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted.

    >>> circles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    >>> circles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_a_deferred_import(tmp_path):
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from p import b\n")
    (pkg / "b.py").write_text("def f():\n    from p.a import x\n")
    (pkg / "c.py").write_text("from . import a\n")
    assert circles(import_graph(tmp_path)) == [["p.a", "p.b"]]


def test_no_import_circle_in_src():
    assert circles(import_graph()) == []


def test_no_module_past_one_sitting_without_a_reason():
    long = []
    for name, path in _modules().items():
        lines = len(path.read_text().splitlines())
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if lines > MAX_LINES and f"over {MAX_LINES} lines" not in doc:
            long.append(f"{name}: {lines} lines")
    assert long == [], f"split these, or say in their docstring why they are over {MAX_LINES} lines"
