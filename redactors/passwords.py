"""``password_assignment_v2``: values assigned to password-like names, whatever their entropy.

``password=changeme`` and ``DB_PASS=hunter2`` are credentials in a published
dataset even though they look like words.  Names: ``password``, ``passwd``,
``passphrase``, ``secret``, ``pwd``, ``pass`` (alone or as a suffix:
``DB_PASSWORD``, ``client_secret``) and ``*_TOKEN``/``*_KEY``; forms: code and
``.env`` assignments, YAML and JSON members (also with escaped quotes), URL
query parameters and command-line flags (``--password x``,
``--password=x``), but not a URL's ``user:password@`` (``url_credentials``;
v1 read ``token:x@host/path`` as an assignment running over the host).  Values that are clearly not secrets are kept: empty,
masked (``***``), ``<placeholder>``, ``${VAR}``/``$VAR``/``%VAR%``, environment
look-ups, function calls, type names and ``None``/``null``/``true``/``false``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .anchored import Anchor
from .base import Rule

_NAME = (
    r"(?P<name>(?i:(?:[a-z0-9_.-]*[_.-])?(?:password|passwd|passphrase|secret|pwd|pass)"
    r"|[a-z0-9_.-]*[_-](?:token|key)))"
)
_Q = r"\\?[\"']"  # a quote, also escaped (JSON text inside a string)
_VALUE = (
    r"(?:"
    + _Q
    + r"(?P<quoted>[^\"'\\\n]{1,256})"
    + _Q
    + r"|(?P<bare>[^\s\"'\\,;&)\]}<>][^\s\"'\\,;&)\]}<>]{0,255}))"
)
_START = r"(?:(?<=\\[nrt])|(?<![A-Za-z0-9_-]))"
#: ``name = value``, ``name: value``, ``"name": "value"``, ``name=value&`` (URL), ``--name=value``
ASSIGNMENT = re.compile(
    _START + r"(?:--)?" + _NAME + r"(?:" + _Q + r")?\s*(?P<sep>=|:(?![:/]))\s*" + _VALUE
)
#: ``--name value`` (a command-line flag)
FLAG = re.compile(r"(?<![A-Za-z0-9_-])--" + _NAME + r"\s+" + _VALUE)
NOT_SECRET = re.compile(
    r"^(?:\*+|x+|\.+|[/~].*|[A-Za-z]:\\.*|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%"
    r"|(?:os\.environ|os\.getenv|process\.env|ENV)\b.*|.*\(.*"
    r"|None|null|nil|true|false|True|False|undefined|str|string|int|bool|bytes|SecretStr"
    r"|-?\d+(?:\.\d+)?|lambda\b.*"
    r"|Optional\[.*|\[REDACTED:.*)$"
)
_ATTRIBUTE = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+")


def _variable(value: str, name: str) -> bool:
    """Code passing a variable on: ``password=password``, ``pwd=self.pwd``, ``key=cfg.API_KEY``."""
    v, n = value.lower(), name.lower().lstrip("-")
    return v == n or v.endswith("." + n) or bool(_ATTRIBUTE.fullmatch(value))


_URL = ("://", ":\\/\\/")  # what precedes a URL's user name
_BARE_NAMES = ("pass", "pwd")  # alone, only as ``pass=x`` (``2 pass: 10 fail`` is prose)


_MEMBER = re.compile(_NAME + r"$")
#: every finding starts in a run of name characters holding one of these keywords
NAME_ANCHOR = Anchor(r"(?i:pass|pwd|secret|token|key)", r"(?i:[a-z0-9_.-])")


@dataclass(frozen=True)
class PasswordRule(Rule):
    """Findings of both forms; the value, quoted or bare, unless it is clearly not a secret.

    ``secret_member`` also judges a JSON member: ``{"password": "changeme"}`` decoded from JSON
    text has lost the ``password`` context of its value.
    """

    def names_secret(self, name: str) -> bool:
        """Whether a member called ``name`` holds a password-like value."""
        return _MEMBER.fullmatch(name) is not None

    def secret_member(self, name: str, value: str) -> bool:
        if _MEMBER.fullmatch(name) is None or not value or "[REDACTED:" in value:
            return False
        return not (NOT_SECRET.match(value) or _variable(value, name))

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        found = []
        for pattern in (ASSIGNMENT, FLAG):
            for m in self.finditer(pattern, text):
                group = "quoted" if m.group("quoted") is not None else "bare"
                value = m.group(group)
                if NOT_SECRET.match(value) or _variable(value, m.group("name")):
                    continue
                sep = m.groupdict().get("sep")
                if sep == ":" and m.group("name").lower() in _BARE_NAMES:
                    continue
                if sep == ":" and text[max(0, m.start() - 4) : m.start()].endswith(_URL):
                    continue  # a URL's user:password@, which url_credentials finds
                found.append(m.span(group))
        last = -1
        for start, end in sorted(set(found)):
            if start >= last:
                yield start, end
                last = end


RULES: list[Rule] = [
    PasswordRule(
        "password_assignment_v2",
        ASSIGNMENT,
        # a name right before its separator (or a --flag): far rarer than the words alone
        r"(?i:pass|pwd|secret|token|key)[a-zA-Z]*\\?[\"']?\s*[:=]|--(?i:pass|pwd|secret|token|key)",
        description="values assigned to password-like names (password=, DB_PASS=, --password x), "
        "whatever their entropy",
        anchor=NAME_ANCHOR,
    )
]
