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


def check_outputs(outputs: dict[str, str | Path | None], *, force: bool = False,
                  inputs: tuple[str | Path | None, ...] = ()) -> None:
    """Check every file a command will write, before it does any work: each as check_output_path does,
    no two of them the same file, and none of them a file the command reads (``inputs``), even with
    ``force``.  ``outputs`` maps the option that names each file (``-o``, ``--trace``) to its path, or to
    None where the option was not given.  Paths are compared resolved (``./C.npy`` is ``C.npy``, a link
    is the file it names), so a second output cannot silently replace the first."""
    claimed: dict[Path, str] = {}
    read = {_identity(path): str(path) for path in inputs if path}
    for option, path in outputs.items():
        if not path:
            continue
        check_output_path(path, force=force)
        identity = _identity(path)
        if identity in claimed:
            raise OutputError(f"{claimed[identity]} and {option} name the same file; give each its own",
                              source=str(path))
        if identity in read:
            raise OutputError(f"{option} names {read[identity]}, which this command reads; "
                              f"write to another file", source=str(path))
        claimed[identity] = option


def _identity(path: str | Path) -> Path:
    """A path as the file system names it: absolute, with links and '..' resolved (a file that does not
    exist yet resolves through its folder)."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):  # a link loop: compare the text, the best that can be done
        return Path(path).absolute()


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
