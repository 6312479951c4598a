"""Secrets on command lines and in connection strings, where no ``name=`` precedes them.

``command_line_password_v1``: the password a client takes glued to ``-p``
(``mysql -pS3cret``, ``mysqldump``, ``mariadb``), ``sshpass -p PW``,
``docker login -p TOKEN`` / ``--password TOKEN``, ``redis-cli -a PW`` and
``curl -u user:PW``.  (``--password x``, ``--account-key x`` and other long
flags are ``password_assignment``'s.)  ``connection_string_v1``: Azure's
``AccountKey=…``, ``SharedAccessKey=…`` and ``SharedAccessSignature=…`` and a SAS
URL's ``sig=…``.  They follow gitleaks' ``azure-storage-key`` idea, detect-secrets'
``AzureStorageKeyDetector`` and betterleaks' command-line password rules; a
value that is clearly none (``$VAR``, ``***``, a placeholder) is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .anchored import NOWHERE, Anchor
from .base import Rule
from .passwords import NOT_SECRET

_ARG = r"(?P<value>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s'\"|;&<>)]{1,256})"
_SAME_COMMAND = r"[^\n|;&]*?\s"  # further arguments of the same command


def _not_placeholder(m: re.Match[str]) -> bool:
    return NOT_SECRET.match(m.group("value").strip("'\"")) is None


def _unquoted(m: re.Match[str]) -> tuple[int, int]:
    a, b = m.span("value")
    return (a + 1, b - 1) if m.group("value")[:1] in "'\"" else (a, b)


class CommandLinePassword(Rule):
    """Spans of the value, inside its quotes."""

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        for m in self.finditer(self.pattern, text):
            if _not_placeholder(m):
                yield _unquoted(m)


COMMAND_LINE = re.compile(
    r"(?<![\w.-])(?:"
    r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb(?:-dump)?)\b"
    + _SAME_COMMAND
    + r"-p(?=[^\s-])"
    + r"|sshpass\s+(?:-[a-zA-Z]\S*\s+)*?-p\s*"
    + r"|docker\s+login\b"
    + _SAME_COMMAND
    + r"(?:-p\s*|--password[=\s]\s*)"
    + r"|redis-cli\b"
    + _SAME_COMMAND
    + r"-a\s+"
    + r"|curl\b"
    + _SAME_COMMAND
    + r"(?:-u\s*|--user[=\s]\s*)['\"]?[^\s:'\"]+:"
    + r")"
    + _ARG
)
CONNECTION_STRING = re.compile(
    r"(?<![A-Za-z])(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<value>[^;\s\"'<>]{8,})"
    r"|[?&]sig=(?P<sig>[A-Za-z0-9%+/=]{16,})"
)


class ConnectionString(Rule):
    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        for m in self.pattern.finditer(text):
            group = "value" if m.group("value") is not None else "sig"
            if NOT_SECRET.match(m.group(group)) is None:
                yield m.span(group)


RULES: list[Rule] = [
    CommandLinePassword(
        "command_line_password_v1",
        COMMAND_LINE,
        r"mysql|mariadb|sshpass|docker|redis-cli|curl",
        description="passwords given to a command: mysql -pPW, sshpass -p PW, docker login -p "
        "TOKEN, redis-cli -a PW, curl -u user:PW",
        anchor=Anchor(r"mysql|mariadb|sshpass|docker|redis-cli|curl", NOWHERE),  # at its name
    ),
    ConnectionString(
        "connection_string_v1",
        CONNECTION_STRING,
        r"AccountKey=|SharedAccess|sig=",
        description="Azure connection strings' AccountKey/SharedAccessKey/SharedAccessSignature "
        "and a SAS URL's sig",
    ),
]
