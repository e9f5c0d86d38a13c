"""Replacing a file atomically: a crash leaves the old file or the new one, never half of one.

Then the folder is synced, so the rename itself
survives a power cut. The new file gets the permissions ``open(path, "w")``
would give it. A failure is a :class:`~microtape.CheckpointError`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

from ..errors import N_, CheckpointError, explain

__all__ = ["write_atomically"]


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to a temporary file next to ``path``, fsync it, and rename it over ``path``.

    The temporary file comes from :func:`tempfile.mkstemp` in the target's
    folder (a rename is atomic only within one file system) and is removed
    if anything fails, so the old file stays as it was. A symbolic link is
    followed, as ``open(path, "w")`` would: the file it points to is
    replaced and the link stays a link.

    The file gets the mode ``open(path, "w")`` would leave: replacing a file
    keeps that file's permissions, and a new file gets ``0o666`` less the
    umask (``mkstemp`` itself creates ``0o600``, readable by its owner only).
    """
    if os.path.islink(path):
        path = os.path.realpath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
        try:
            with open(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())  # the bytes are on disk before the rename makes them visible
            os.chmod(tmp, _mode_for(path))
            os.replace(tmp, path)  # atomic: readers see the old file or the new one
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as err:
        raise CheckpointError(
            explain(
                N_("cannot write checkpoint {0}: {1}.").format(repr(path), err.strerror or err),
                N_("The checkpoint is written next to its final name, then renamed into place; "
                   "the previous file at that path is unchanged."),
                N_("check that the folder exists and is writable, and that the disk has space."),
            ),
            path=path,
        ) from err
    _sync_folder(folder)


def _mode_for(path: str) -> int:
    """The permissions ``open(path, "w")`` would give: the old file's, or 0o666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux's /proc)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    # elsewhere the only way is to set it and put it back; meanwhile files other
    # threads create get the strict 0o077 (owner only), never a looser mode
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:
        return
    try:
        fd = os.open(folder, os.O_RDONLY | flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
