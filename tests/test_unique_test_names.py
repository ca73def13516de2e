"""pytest imports test modules by their basename (rootdir imports, no packages): two test files with
one name in different folders make the whole run stop at collection.  Catch that here, by name."""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_module_has_its_own_name():
    by_name = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if "__pycache__" not in path.parts and path.name not in ("__init__.py", "conftest.py"):
            by_name[path.name].append(str(path.relative_to(TESTS)))  # helper modules are imported by name too
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"
