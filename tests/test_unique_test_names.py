"""pytest imports test modules by their path (--import-mode=importlib), so two test files may share a
name in different folders; the shared helper modules, though, are imported by bare name from the folders
pyproject.toml puts on the path, so two of them with one name would shadow each other.  Catch that here."""

import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def helper_folders():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return [ROOT / folder for folder in options["pythonpath"]]


def test_every_shared_helper_module_has_its_own_name():
    by_name = defaultdict(list)
    for folder in helper_folders():
        for path in folder.iterdir():
            if path.suffix == ".py" and not path.name.startswith("test_") and path.name != "conftest.py":
                by_name[path.stem].append(str(path.relative_to(ROOT)))
            elif path.is_dir() and (path / "__init__.py").exists():
                by_name[path.name].append(str(path.relative_to(ROOT)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"


def test_no_test_module_imports_another():
    # A test module imported by name from another would run its tests' module code twice under two names.
    for path in (ROOT / "tests").rglob("test_*.py"):
        for line in path.read_text().splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] in ("import", "from") and words[1].split(".")[-1].startswith("test_"):
                raise AssertionError(f"{path.relative_to(ROOT)} imports a test module: {line.strip()}")
