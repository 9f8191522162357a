# SPDX-License-Identifier: Apache-2.0
"""The stages of the host tool import only their own stage and earlier ones (docs/host.md):

    core < schema < plan < run < store < analysis < report | export < app < cli;   builder < app, cli;   export < api

report and export are siblings: both read analysis results and share nothing else. api.py
(the Python API, `tlsbench.open`) is a stage of its own beside cli; the package root's
`tlsbench.open` hands over to it (lazily), the one import of a later stage it makes. The run
writes through a protocol, store/api.py's Sink, the one module of a later stage it may
import (protocols only: the store implements them, run never opens one). Inside a stage,
modules import each other without a circle. Only store/ speaks SQL: no other module imports
sqlite3 or touches a connection (`.conn`). app/ is the application (run, resume, derive,
device setup as plain functions): cli/ parses options, calls it and hands results to views
and exporters. A short walk over every module's syntax tree (late imports inside functions
included); no tool to install, and the rule it checks is this table."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tlsbench"
CORE = "core"  # errors, files, validation, the spec reader: what every stage stands on
ALLOWED = {
    CORE: {CORE},
    "builder": {CORE, "builder"},
    "schema": {CORE, "schema"},
    "plan": {CORE, "schema", "plan"},
    "run": {CORE, "schema", "plan", "run"},
    "store": {CORE, "schema", "plan", "store"},
    "analysis": {CORE, "schema", "plan", "run", "store", "analysis"},
    "report": {CORE, "schema", "plan", "run", "store", "analysis", "report"},
    "export": {CORE, "schema", "plan", "run", "store", "analysis", "export"},
    "app": {CORE, "schema", "plan", "run", "store", "analysis", "report", "export", "builder", "app"},
    "cli": {CORE, "schema", "plan", "run", "store", "analysis", "report", "export", "builder", "app", "cli"},
    "api": {CORE, "schema", "plan", "run", "store", "analysis", "export", "api"},
}
ROOT_STAGE = {"tlsbench": CORE, "tlsbench.api": "api"}  # the package root, and the api beside cli
FACADE = ("tlsbench", "api")  # the package root may hand tlsbench.open over to the api stage
PROTOCOLS = {"tlsbench.store.api": {"run"}}  # a later stage's protocols, and the stages that may import them
SQL_STAGE = "store"


def stage(module: str) -> str:
    """tlsbench.run.topologies.pair -> run; tlsbench.core.spec -> core; tlsbench.api -> api."""
    parts = module.split(".")
    if ".".join(parts[:2]) in ROOT_STAGE:
        return ROOT_STAGE[".".join(parts[:2])]
    return parts[1] if parts[1] in ALLOWED else CORE


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every tlsbench import of a file, relative ones resolved."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            # `from tlsbench import spec` / `from . import figures` name modules
            out += [(node.lineno, f"{name}.{alias.name}" if not node.module or name == "tlsbench" else name)
                    for alias in node.names]
    return [(line, name) for line, name in out if name.split(".")[0] == "tlsbench"]


def test_every_package_is_a_stage():
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert packages <= set(ALLOWED), f"{packages - set(ALLOWED)}: add them to the table above"


def test_stages_import_only_their_own_and_earlier_stages():
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        mine = stage(module_name(path))
        for line, name in imported(path):
            theirs = stage(name)
            if (theirs not in ALLOWED[mine] and (module_name(path), theirs) != FACADE
                    and mine not in PROTOCOLS.get(name, ())):
                problems.append(f"{path.relative_to(PACKAGE)}:{line}: {mine} imports {name} ({theirs})")
    assert not problems, "\n".join(problems)


def test_the_check_sees_a_late_import_of_a_later_stage(tmp_path):
    """The walk finds imports inside functions too (how cycles used to hide)."""
    sample = PACKAGE / "run" / "controller.py"
    assert any(stage(name) == "plan" for _, name in imported(sample))
    code = "def f():\n    from tlsbench.report import html\n"
    tree_imports = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.ImportFrom)]
    assert tree_imports and stage(f"{tree_imports[0].module}.html") == "report" not in ALLOWED["analysis"]


def test_the_protocols_a_run_writes_through_are_protocols_only():
    """store/api.py is what run/ may import of the store: it must not pull an implementation
    (or run/) in at import time."""
    api = PACKAGE / "store" / "api.py"
    top = [n for n in ast.parse(api.read_text()).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [a.name if isinstance(n, ast.Import) else n.module or "" for n in top for a in n.names]
    assert all(stage(n) in {CORE, "schema"} for n in names if n.startswith("tlsbench")), names


def test_only_the_store_speaks_sql():
    """No sqlite3 import and no `.conn` (a store's connection) outside store/."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if stage(module_name(path)) == SQL_STAGE:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "sqlite3" for a in node.names) or \
                    isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlite3":
                problems.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: imports sqlite3")
            elif isinstance(node, ast.Attribute) and node.attr == "conn":
                problems.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: .conn")
    assert not problems, "\n".join(problems)


def _module_of(name: str, modules: set[str]) -> str | None:
    """The module an imported name is in (`tlsbench.run.exchange.Sink` -> tlsbench.run.exchange)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def test_no_import_circle():
    """Modules import each other without a circle, late imports included: a circle inside a
    stage is how two modules end up knowing each other's insides (Tarjan's strongly
    connected components over the import graph)."""
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {m: {t for _, name in imported(p) if (t := _module_of(name, set(paths))) not in (None, m, "tlsbench")}
             for m, p in paths.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                circles.append(sorted(component + [v]))

    for v in graph:
        if v not in index:
            visit(v)
    assert not circles, "\n".join(" <-> ".join(c) for c in circles)


def test_modules_loaded_by_name_are_their_own_packages():
    """importlib.import_module only loads a module of the caller's own package (the CLI's
    commands, the plan package's lazy names): a name built at run time must not hide an
    import across stages from the walk above."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module") and node.args:
                target = ast.unparse(node.args[0])
                own = (f"f'{package}." in target or target.startswith("f'{__name__}.")) and path.name == "__init__.py"
                if not own:
                    problems.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: import_module({target})")
    assert not problems, "\n".join(problems)
