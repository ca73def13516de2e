"""Writing the files a command produces (traces, HTML pages, SVG pictures) without losing the user's files.

Every command that writes goes through here so that they all behave the same way:

* an existing file is never replaced unless the user passed ``--force`` (a mistyped
  ``--html prog.s`` must not destroy ``prog.s``);
* a path whose folder does not exist, a directory, or a file the OS refuses to write
  is one typed line, not a traceback;
* :func:`check_output_path` can be called before a long computation, so the user
  learns that the output cannot be written before waiting for it.
"""

from __future__ import annotations

from pathlib import Path

from .errors import IsasimError

REFUSE_OVERWRITE = "already exists; refusing to overwrite it (pass --force to replace it)"


class OutputError(IsasimError):
    """An output file that cannot or must not be written."""


def check_output_path(path: str | Path, *, force: bool = False) -> Path:
    """Raise OutputError unless ``path`` can be written as a new file (or replaced, with ``force``)."""
    target = Path(path)
    source = str(path)
    if not source:
        raise OutputError("an output file name is empty")
    if target.is_dir():
        raise OutputError("is a directory; give a file name to write", source=source)
    if target.exists() and not force:
        raise OutputError(REFUSE_OVERWRITE, source=source)
    folder = target.parent
    if not folder.exists():
        raise OutputError(f"cannot write: the folder {folder} does not exist", source=source)
    if not folder.is_dir():
        raise OutputError(f"cannot write: {folder} is not a folder", source=source)
    return target


def write_output(path: str | Path, content: str | bytes, *, force: bool = False) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` under the rules above."""
    target = check_output_path(path, force=force)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        # "x" mode closes the gap between the check and the write: a file created meanwhile is not replaced
        with open(target, "wb" if force else "xb") as handle:
            handle.write(data)
    except FileExistsError:
        raise OutputError(REFUSE_OVERWRITE, source=str(path)) from None
    except OSError as error:
        raise OutputError(f"cannot write ({error.strerror or error})", source=str(path)) from None
