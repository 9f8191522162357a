# SPDX-License-Identifier: Apache-2.0
"""The stages of the host tool import only their own stage and earlier ones (docs/host.md):

    core < plan < run < store < analysis < report | export < app < cli;   builder < app, cli;   export < api

report and export are siblings: both read analysis results and share nothing else. api.py
(the Python API, `tlsbench.open`) is a stage of its own beside cli; the package root's
`tlsbench.open` hands over to it (lazily), the one import of a later stage it makes. Inside
a stage, modules import each other without a circle. A short walk over every module's syntax
tree (late imports inside functions included); no tool to install, and the rule it checks is
this table. app/ is the application (run, resume, derive, device setup as plain functions):
cli/ parses options, calls it and hands results to views and exporters."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tlsbench"
CORE = "core"  # errors, files, validation, the spec reader: what every stage stands on
ALLOWED = {
    CORE: {CORE},
    "builder": {CORE, "builder"},
    "plan": {CORE, "plan"},
    "run": {CORE, "plan", "run"},
    "store": {CORE, "plan", "run", "store"},
    "analysis": {CORE, "plan", "run", "store", "analysis"},
    "report": {CORE, "plan", "run", "store", "analysis", "report"},
    "export": {CORE, "plan", "run", "store", "analysis", "export"},
    "app": {CORE, "plan", "run", "store", "analysis", "report", "export", "builder", "app"},
    "cli": {CORE, "plan", "run", "store", "analysis", "report", "export", "builder", "app", "cli"},
    "api": {CORE, "plan", "run", "store", "analysis", "export", "api"},
}
ROOT_STAGE = {"tlsbench": CORE, "tlsbench.api": "api"}  # the package root, and the api beside cli
FACADE = ("tlsbench", "api")  # the package root may hand tlsbench.open over to the api stage


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
            if theirs not in ALLOWED[mine] and (module_name(path), theirs) != FACADE:
                problems.append(f"{path.relative_to(PACKAGE)}:{line}: {mine} imports {name} ({theirs})")
    assert not problems, "\n".join(problems)


def test_the_check_sees_a_late_import_of_a_later_stage(tmp_path):
    """The walk finds imports inside functions too (how cycles used to hide)."""
    sample = PACKAGE / "run" / "controller.py"
    assert any(stage(name) == "plan" for _, name in imported(sample))
    code = "def f():\n    from tlsbench.report import html\n"
    tree_imports = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.ImportFrom)]
    assert tree_imports and stage(f"{tree_imports[0].module}.html") == "report" not in ALLOWED["analysis"]
