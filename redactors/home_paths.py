"""``home_paths_v3``: ``/home/<user>``, ``/Users/<user>``, ``C:\\Users\\<user>`` become ``~``.

User names are personal data and paths leak them everywhere (cwd, file
lists, tool output).  Homes are found by pattern, with a path boundary, so
the same store gives the same bytes on every machine; a home elsewhere
(``/srv/u``) is added only when asked (``--home PATH``) and replaced only as
a whole path segment (``/srv/users`` is not ``/srv/u``).  Escaped
backslashes inside JSON text are handled too.  (v1 also replaced the home of
the user running the export, without a boundary; v2 also took the folders every machine
has and no one owns: ``/Users/Shared``, ``C:\\Users\\Public``, ``Default``, ``All Users``.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .anchored import Anchor
from .base import Placeholders

# A user folder name; one with spaces only when the path goes on right after it; not a
# folder of every machine, which names no one.
_NAME = r"(?!(?:Shared|Public|Default|All Users)(?![A-Za-z0-9._-]))(?:[A-Za-z0-9._-]+(?: [A-Za-z0-9._-]+)+(?={sep})|[A-Za-z0-9._-]+)"
_GENERIC = re.compile(
    r"(?:(?<=\\[nrtbf])|(?<![\w.~\\-]))"  # not inside a longer path; a JSON escape may precede
    r"(?:/home/[A-Za-z0-9._-]+"
    + r"|/Users/"
    + _NAME.format(sep="/")
    + r"|[A-Za-z]:(?:\\\\|\\)Users(?:\\\\|\\)"
    + _NAME.format(sep=r"\\")
    + ")"
)
_END = r"(?=$|[/\\\s\"'`:;,)\]}>])"  # the home ends a path segment
#: where a home can start: at its ``/home/`` or ``/Users/``, or one letter before
#: ``:\\Users`` (``anchored.py``): ``re`` tried ``_GENERIC`` at every place of a tool output
_STARTS = Anchor(r"/home/|/Users/|:(?:\\\\|\\)Users", "[A-Za-z]", before=1, engine="re")


@dataclass(frozen=True)
class HomePaths:
    homes: tuple[str, ...] = ()
    name: str = "home_paths_v3"
    opt_in: bool = False
    _explicit: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def of(cls, homes: tuple[str, ...] = ()) -> HomePaths:
        usable = tuple(
            sorted(
                {h.rstrip("/\\") for h in homes if len(h.rstrip("/\\")) > 1},
                key=lambda h: (-len(h), h),
            )
        )
        patterns = tuple(re.compile(r"(?<![\w.~-])" + re.escape(h) + _END) for h in usable)
        return cls(usable, _explicit=patterns)

    @property
    def trigger(self) -> str:
        return "|".join([r"/home/|/Users/|Users\\", *(re.escape(h) for h in self.homes)])

    def apply(self, text: str, placeholders: Placeholders) -> str:
        n = 0
        for pattern in self._explicit:
            text, k = pattern.subn("~", text)
            n += k
        if "/home/" in text or "/Users/" in text or "Users\\" in text:
            text, k = _STARTS.subn(_GENERIC, "~", text)
            n += k
        if n:  # a count of 0 made ``scan`` report a file with "0 value(s)"
            placeholders.findings[self.name] += n
        return text


def roots_pattern(roots: Sequence[str]) -> re.Pattern[str] | None:
    """The folders ``roots`` as path prefixes (with their separator), longest first, where
    no path character precedes them; None without any."""
    usable = sorted({r.rstrip("/\\") for r in roots if len(r.rstrip("/\\")) > 1},
                    key=lambda r: (-len(r), r))  # fmt: skip
    if not usable:
        return None
    body = "|".join(re.escape(r) for r in usable)
    return re.compile(r"(?<![\w.~/\\-])(?:" + body + r")[/\\]")
