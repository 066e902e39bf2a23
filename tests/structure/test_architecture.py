"""The architecture as tests: imports point one way, no cycles (lazy imports counted), no private names
imported across modules, functions stay short (size of a module and complexity of a function: ruff's
limit in pyproject.toml, run by test_lint.py).

Layers, lowest first (a module may import only its own layer or lower ones):
    tools                    pure computation
    knowledge                data files and their loaders
    assistant.engine         understanding, planning, composing, rendering (the conversation engine)
    assistant.runtime        process plumbing: settings, secrets, shared limits, LLM backends
    assistant.service, assistant.threads   api, images, registry, advisor, the conversation stores
    assistant.frontends.*    cli, web, slack: each imports the layers below, never another front end
    entries                  assistant.main (`gpu-advisor`), app.py (the chat app)
"""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = ("assistant.main", "app")
MAX_FUNCTION_LINES = 80
ALLOWED_UPWARD: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in ("tools", "knowledge", "assistant"):
        for p in (ROOT / pkg).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = p
    out["app"] = ROOT / "app.py"
    return out


def _layer(name: str) -> int:
    for prefix, layer in (("tools", 0), ("knowledge", 1), ("assistant.engine", 2), ("assistant.runtime", 2),
                          ("assistant.service", 3), ("assistant.threads", 3), ("assistant.frontends", 4)):
        if name == prefix or name.startswith(prefix + "."):
            return layer
    return 5 if name in ENTRIES else 3


def _front_end(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["assistant", "frontends"] else None


def _imports(path: Path, known: set[str], top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for n in names:
            while n and n not in known:
                n = n.rpartition(".")[0]
            if n:
                found.add(n)
    return found


def test_imports_point_one_way():
    mods = _modules()
    bad = []
    for name, path in mods.items():
        for dep in _imports(path, set(mods), top_level_only=False):
            if _layer(dep) > _layer(name) and (name, dep) not in ALLOWED_UPWARD and dep != name:
                bad.append(f"{name} (layer {_layer(name)}) imports {dep} (layer {_layer(dep)})")
            if _front_end(dep) and _front_end(name) and _front_end(dep) != _front_end(name):
                bad.append(f"front end {name} imports another front end, {dep}")
    assert not bad, "\n".join(sorted(bad))


def test_no_import_cycles():
    """Every import counts, those inside functions included: a lazy import hides a cycle, it does not remove it."""
    mods = _modules()
    graph = defaultdict(set)
    for name, path in mods.items():
        graph[name] = {d for d in _imports(path, set(mods), top_level_only=False)
                       if d != name and not name.startswith(d + ".")}
    state: dict[str, int] = {}
    cycles = []

    def visit(n, stack):
        state[n] = 1
        for d in graph[n]:
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d] if d in stack else [n, d])
            elif not state.get(d):
                visit(d, stack + [d])
        state[n] = 2

    for n in list(graph):
        if not state.get(n):
            visit(n, [n])
    assert not cycles, cycles


def test_no_module_imports_another_modules_private_names():
    mods = _modules()
    bad = []
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in mods and node.module != name:
                bad += [f"{name} imports {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", sorted(_modules()))
def test_functions_stay_short(name):
    path = _modules()[name]
    text = path.read_text(encoding="utf-8")
    long = [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, long
