"""The shape of the code: the parts table of docs/adding-an-engine.md matches the tree, the import graph has
no circles and no edge from an ISA package to the command line, the core imports no ISA package, and every
hook the core and the command line call on an ISA object is declared on ``isasim.core.isa.Isa``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from isasim.core import isa as isa_module
from isasim.core.isa import KNOWN_ISAS, Isa

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "adding-an-engine.md"
ISA_PACKAGES = {name: ROOT / Path(*module.split(".")) for name, module in KNOWN_ISAS.items()}
ISA_PACKAGES["toy_isa"] = ROOT / "tests" / "toy_isa"


# ---- the parts table -----------------------------------------------------------------------------------


def parts_table() -> tuple[list[str], list[list[str]]]:
    """The guide's parts table as (its package columns, its rows of cells)."""
    lines = [line for line in GUIDE.read_text().splitlines() if line.startswith("| part | name |")]
    assert len(lines) == 1, "the guide has one parts table"
    text = GUIDE.read_text()
    start = text.index(lines[0])
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    header = [cell.strip() for cell in lines[0].strip().strip("|").split("|")]
    return header[2:], rows


def part_exists(package: Path, name: str) -> bool:
    return (package / f"{name}.py").is_file() or (package / name / "__init__.py").is_file()


def test_the_table_names_every_package():
    columns, _ = parts_table()
    assert sorted(columns) == sorted(ISA_PACKAGES)


@pytest.mark.parametrize("package", sorted(ISA_PACKAGES))
def test_each_package_has_the_parts_the_table_gives_it_and_no_others(package):
    columns, rows = parts_table()
    column = columns.index(package)
    for part, name, *cells in rows:
        name = name.strip("`")
        cell = cells[column]
        if cell.startswith("`"):
            assert cell.strip("`") == name, f"{part}: {package} calls it {cell}, every package calls it {name}"
            assert part_exists(ISA_PACKAGES[package], name), f"{package} has no {name} ({part})"
        else:
            assert cell.startswith("—"), f"{part}: {package}'s cell is neither the name nor '— (why not)'"
            assert not part_exists(ISA_PACKAGES[package], name), \
                f"{package} has {name}, which the guide's table says it has not"


# ---- the import graph -----------------------------------------------------------------------------------


def isasim_modules() -> dict[str, Path]:
    modules = {}
    for path in (ROOT / "isasim").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def import_graph() -> dict[str, set[str]]:
    """Module -> the isasim modules it imports, at the top or inside a function (both make a circle at run
    time), each import taken to the module that defines the name where there is one."""
    modules = isasim_modules()

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [known(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [known(f"{base}.{alias.name}") for alias in node.names]
            else:
                continue
            graph[name].update(target for target in targets if target and target != name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_has_no_circles():
    assert circles(import_graph()) == []


def test_no_isa_package_imports_the_command_line_and_the_core_imports_no_isa():
    isa_modules = tuple(f"{module}." for module in KNOWN_ISAS.values())
    for name, targets in import_graph().items():
        for target in targets:
            if (name + ".").startswith(isa_modules):
                assert not (target + ".").startswith("isasim.cli."), f"{name} imports {target}"
            if name.startswith("isasim.core"):
                assert not (target + ".").startswith(isa_modules), f"{name} imports {target}"


# ---- the declared hooks ---------------------------------------------------------------------------------

_ISA_RECEIVERS = re.compile(r"^(isa|ISA|self\.isa|machine\.isa|loaded\.isa|target_isa|the_isa)$")


def test_every_hook_the_core_and_the_cli_call_is_declared():
    called = set()
    for path in [*(ROOT / "isasim" / "core").rglob("*.py"), *(ROOT / "isasim" / "cli").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and _ISA_RECEIVERS.match(ast.unparse(node.value)):
                called.add((node.attr, str(path.relative_to(ROOT))))
    assert called, "no call on an ISA object found: the receivers' names have changed"
    # isasim.core.isa is also imported as the module ``isa`` in places: its own names are not hooks
    undeclared = sorted((attr, where) for attr, where in called
                        if not hasattr(Isa, attr) and not hasattr(isa_module, attr))
    assert not undeclared, f"called on an ISA object but not declared on isasim.core.isa.Isa: {undeclared}"


def test_every_isa_object_is_an_isa():
    from isasim.core.isa import get_isa

    for name in KNOWN_ISAS:
        assert isinstance(get_isa(name), Isa), name
