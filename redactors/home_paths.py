"""Home directories: ``/home/<user>``, ``/Users/<user>``, ``C:\\Users\\<user>`` and the given home become ``~``.

User names are personal data and paths leak them everywhere (cwd, file
lists, tool output).  Escaped backslashes inside JSON text are handled too.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .base import Placeholders

# A user folder name; one with spaces only when the path goes on right after it.
_NAME = r"(?:[A-Za-z0-9._-]+(?: [A-Za-z0-9._-]+)+(?={sep})|[A-Za-z0-9._-]+)"
_GENERIC = re.compile(
    r"(?:(?<=\\[nrtbf])|(?<![\w.~\\-]))"  # not inside a longer path; a JSON escape may precede
    r"(?:/home/[A-Za-z0-9._-]+"
    + r"|/Users/"
    + _NAME.format(sep="/")
    + r"|[A-Za-z]:(?:\\\\|\\)Users(?:\\\\|\\)"
    + _NAME.format(sep=r"\\")
    + ")"
)


@dataclass(frozen=True)
class HomePaths:
    home: str = ""
    name: str = "home_paths_v1"
    opt_in: bool = False
    _homes: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def of(cls, home: str | None = None) -> HomePaths:
        home = os.path.normpath(home if home is not None else os.path.expanduser("~"))
        usable = home not in ("", ".", "/", "\\") and len(home) > 1
        return cls(home if usable else "", _homes=(home,) if usable else ())

    @property
    def trigger(self) -> str:
        return "|".join([r"/home/|/Users/|Users\\", *(re.escape(h) for h in self._homes)])

    def apply(self, text: str, placeholders: Placeholders) -> str:
        for home in self._homes:
            if home in text:
                n = text.count(home)
                text = text.replace(home + "/", "~/").replace(home + "\\", "~\\").replace(home, "~")
                placeholders.findings[self.name] += n
        if "/home/" in text or "/Users/" in text or "Users\\" in text:
            text, n = _GENERIC.subn("~", text)
            placeholders.findings[self.name] += n
        return text
