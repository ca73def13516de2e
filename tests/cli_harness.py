"""Running the command line in-process, as the CLI tests need it."""

from __future__ import annotations

from isasim import cli


def error_line(capsys, argv: list[str], *words: str) -> str:
    """Run isasim in-process; it must exit 2 with exactly one 'isasim: error:' line containing ``words``."""
    code = cli.main([str(a) for a in argv])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("isasim: error: "), err
    assert "internal error" not in err and "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]
