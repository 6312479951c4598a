"""Opening a store's files so that no file type can block a reader.

A named pipe opened for reading waits for a writer forever, and a device or socket has no
bytes of a session; a user's disk may hold any of them where a session file is expected.
Every read a reader makes, while finding units as well as while loading them, goes through
``open_input`` (or ``read_bytes``): the file is opened without blocking and read only when
the opened file is a regular one.  ``special_kind`` names what such a path is, so the run
lists it under ``skipped`` with that reason.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

#: the file types that are no file to read, by what they are called in a message
_SPECIAL = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _what(mode: int) -> str | None:
    return next((name for test, name in _SPECIAL if test(mode)), None)


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it is a named pipe, socket or device (links followed): the
    reason it is skipped; None for a regular file, a folder, or a path that cannot be seen."""
    try:
        return _what(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None


def open_input(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading in binary, never blocking; ``OSError`` (``EINVAL``,
    naming what it is) when it is not a regular file, as for any file that cannot be read."""
    try:
        fd = os.open(path, _FLAGS)
    except ValueError:  # a NUL in the name (an id a store turned into a file name)
        raise OSError(errno.EINVAL, "the file name holds a NUL byte", os.fspath(path)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = _what(mode) or ("a folder" if stat.S_ISDIR(mode) else "no regular file")
            raise OSError(errno.EINVAL, f"not a regular file: {what}", os.fspath(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """Every byte of a regular file (``open_input``): ``Path.read_bytes`` that cannot hang."""
    with open_input(path) as fh:
        return fh.read()


def read_text(path: str | os.PathLike[str]) -> str:
    """A regular file's text as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_bytes(path).decode("utf-8")


class RealPaths:
    """``os.path.realpath`` of files, each folder resolved once, from its parent's real path:
    a folder or file that is no link is its real parent and its name, one ``lstat``, where
    ``realpath`` takes one for every folder of the path (a Harbor job of 24,000 files in
    12,000 folders: 56,000 ``lstat`` calls, a quarter of its discovery)."""

    def __init__(self) -> None:
        self.folders: dict[str, str] = {}

    def __call__(self, file: str) -> str:
        folder, name = os.path.split(file)
        return self._child(self._folder(folder), file, name)

    def _folder(self, folder: str) -> str:
        got = self.folders.get(folder)
        if got is None:
            parent, name = os.path.split(folder)
            if name in ("", ".", ".."):  # the root or the working folder, or a step back
                got = os.path.realpath(folder)
            else:
                got = self._child(self._folder(parent), folder, name)
            self.folders[folder] = got
        return got

    @staticmethod
    def _child(real_parent: str, path: str, name: str) -> str:
        return os.path.realpath(path) if os.path.islink(path) else os.path.join(real_parent, name)


class Boundary:
    """Which files of a folder store a run reads: those inside the store's real folder, each
    real file once.  A file reached through a link out of the store is not read (a link to
    ``/etc/passwd`` was once read as a session), and one reached through a link to a file or
    folder of the store also reached directly (Gemini CLI's ``chats/again -> chats``) is read
    there only; ``why`` names the reason, which the manifest lists under ``skipped``."""

    def __init__(self, store: str, real: RealPaths) -> None:
        self.store, self.real = os.path.abspath(store), real
        self.root = real(self.store) if os.path.isdir(store) else None

    def _direct(self, file: str) -> bool:
        """``file``'s real path is where its path says: no link between the store and it."""
        assert self.root is not None
        rel = os.path.relpath(os.path.abspath(file), self.store)
        return self.real(file) == os.path.normpath(os.path.join(self.root, rel))

    def inside(self, real: str) -> bool:
        return self.root is not None and (real == self.root or real.startswith(self.root + os.sep))

    def why(self, file: str, direct: set[str]) -> str | None:
        """Why ``file`` is not read (None: it is read); ``direct``: the real paths of the
        store's files reached without a link."""
        if self.root is None or self._direct(file):
            return None
        real = self.real(file)
        if not self.inside(real):
            return "a link out of the store; not followed"
        if real in direct:
            rel = os.path.relpath(real, self.root)
            return f"a link to {rel}, which is read there; not read twice"
        return None

    def kept(self, files: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
        """The files read, and (file, reason) of those not read."""
        direct = {self.real(f) for f in files if self.root is not None and self._direct(f)}
        kept, dropped = [], []
        for f in files:
            reason = self.why(f, direct)
            if reason is None:
                kept.append(f)
            else:
                dropped.append((f, reason))
        return kept, dropped
