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
from dataclasses import dataclass, replace

from .anchored import NOWHERE, Anchor
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
    + r"|(?P<bare>[^\s\"'\\,;&)\]}<>(\[{][^\s\"'\\,;&)\]}<>]{0,255}))"
)
_START = r"(?:(?<=\\[nrt])|(?<![A-Za-z0-9_-]))"
#: ``name = value``, ``name: value``, ``"name": "value"``, ``name=value&`` (URL), ``--name=value``;
#: on one line (v2 read ``if key:`` and the next line's first word as one), never ``==``
ASSIGNMENT = re.compile(
    _START + r"(?:--)?" + _NAME + r"(?:" + _Q + r")?[ \t]*(?P<sep>=(?!=)|:(?![:/]))[ \t]*" + _VALUE
)
#: ``--name value`` (a command-line flag; ``--token`` and ``--api-key`` alone too)
FLAG = re.compile(
    r"(?<![A-Za-z0-9_-])--"
    + _NAME.replace("(?P<name>(?i:", "(?P<name>(?i:token|api-?key|", 1)
    + r"\s+"
    + _VALUE
)
NOT_SECRET = re.compile(
    r"^(?:\*+|x+|\.+|[/~].*|[A-Za-z]:\\.*|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%"
    r"|(?:os\.environ|os\.getenv|process\.env|ENV)\b.*|.*\(.*"
    r"|None|null|nil|true|false|True|False|undefined|str|string|int|bool|bytes|SecretStr"
    r"|-?\d+(?:\.\d+)?|lambda\b.*"
    r"|Optional\[.*|\[REDACTED:.*|%[sdr]|%\(\w+\)[sdr]|\{\w*\})$"
)
#: values that name a setting, not a secret (``missing-typed-dict-key = "error"``)
SETTINGS = frozenset(
    ["error", "errors", "warn", "warning", "warnings", "info", "debug", "ignore", "ignored",
     "off", "on", "yes", "no", "auto", "default", "required", "optional", "strict", "none",
     "enabled", "disabled", "enable", "disable", "allow", "deny", "hidden", "visible", "public",
     "private", "text", "json", "number", "object", "boolean", "any", "unknown", "never",
     "always", "secret", "password", "token", "bearer", "basic", "oauth", "env", "file",
     "prompt", "stdin", "inherit", "changed", "unchanged", "redacted", "masked", "empty"]
)  # fmt: skip
_ATTRIBUTE = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+")


#: an identifier made of words: ``charIndex``, ``TokenStart``, ``input_tokens``, ``MAX_KEY``
_WORDS = re.compile(
    r"[a-z]{2,}(?:[A-Z][a-z]{2,})+|(?:[A-Z][a-z]{2,}){2,}|[a-z]{2,}(?:_[a-z0-9]{2,})+"
    r"|[A-Z]{2,}(?:_[A-Z0-9]{2,})+"
)


def _variable(value: str, name: str) -> bool:
    """Code passing a variable on: ``password=password``, ``pwd=self.pwd``, ``key=cfg.API_KEY``."""
    v, n = value.lower(), name.lower().lstrip("-")
    last = re.split(r"[._-]+", n.strip("._-"))[-1]  # ``self._key = key``
    return v in (n, last) or v.endswith("." + n) or bool(_ATTRIBUTE.fullmatch(value))


#: an expression: a name then attribute access, a subscript or a call (``token.address``,
#: ``line[pos:end]``, ``self._authkey)``)
_EXPRESSION = re.compile(r"[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\[[^\]]*\]?|\(.*)+[)\],:]*")
#: what follows a value that is an operand: an operator, or a keyword of an expression (a
#: command line's next flag, ``-f``, is none)
_OPERATOR_AFTER = re.compile(
    r",|\s+(?:(?:[-+*/%^?=]|\|\|?|&&?)(?=\s)|(?:if|else|and|or|for|in|as)\b)"
)
#: the last word of a name that holds no secret (``token_type``, ``api_key_env``)
_NOT_A_SECRET_NAME = re.compile(
    r"(?i:.*[_.-]?(?:type|types|kind|count|len|length|size|id|ids|index|idx|start|end|pos"
    r"|position|name|names|path|file|filename|url|uri|endpoint|limit|limits|budget|usage"
    r"|prefix|suffix|field|fields|header|env|var|policy|format|mode|regex|pattern|class|label"
    r"|help|description|required|min|max|expiry|expires|ttl|timeout|izer|ize|er|ed|ing|s))"
)


def names_no_secret(name: str) -> bool:
    """``token_type``, ``tokenizer``, ``max_tokens``, ``api_key_env``: a name whose last word
    says what it holds, and it is not a secret (read as words: ``tokenStart``)."""
    words = snake(name.lstrip("-")).replace("-", "_").replace(".", "_").split("_")
    last = words[-1] if words else ""
    keyword = re.fullmatch(r"(?:pass|passwd|password|passphrase|pwd|secret|token|key|auth"
                           r"|apikey|credential|credentials)", last)  # fmt: skip
    return keyword is None and _NOT_A_SECRET_NAME.fullmatch(last) is not None


def code_like(value: str, name: str, after: str = "", *, quoted: bool = False) -> bool:
    """Whether ``value``, assigned to ``name``, is code or a setting rather than a secret:
    clearly no secret (``NOT_SECRET``), a setting's name (``"error"``), or, unquoted, a
    variable, attribute access, call or subscript (``after`` is the rest of the text), an
    operand (``Whitespace + group(...)``) or an identifier made of words
    (``tokenStart = charIndex``).  A quoted value is data: only the first two apply.  (An
    unquoted lower-case word stays a secret for ``password_assignment``: ``password=changeme``.)"""
    if NOT_SECRET.match(value) or value.lower() in SETTINGS:
        return True
    if quoted:
        return False
    if after[:1] in ("(", "[", ".") or _OPERATOR_AFTER.match(after) is not None:
        return True
    bare = value.rstrip("),:")
    return _variable(bare, name) or _identifier(bare) or _EXPRESSION.fullmatch(value) is not None


#: a name for a key or a token, not a password (``*_KEY``, ``*_TOKEN``)
_KEYISH = re.compile(r"(?i)(?:token|key)$")


def _token_like(value: str) -> bool:
    """Eight characters or more and not a word or identifier of words: mixed case, digits or
    symbols, as a generated key has."""
    words = re.fullmatch(r"[a-z_]+|[A-Z_]+|[a-z]+(?:[-_][a-z]+)*", value) or _identifier(value)
    return len(value) >= 8 and not words


def _identifier(value: str) -> bool:
    return _WORDS.fullmatch(value.strip("_")) is not None


_URL = ("://", ":\\/\\/")  # what precedes a URL's user name
_BARE_NAMES = ("pass", "pwd")  # alone, only as ``pass=x`` (``2 pass: 10 fail`` is prose)


_MEMBER = re.compile(_NAME + r"$")
#: every finding starts in a run of name characters holding one of these keywords
NAME_ANCHOR = Anchor(r"(?i:pass|pwd|secret|token|key)", r"(?i:[a-z0-9_.-])")
#: where the two forms start: an assignment's name ends where its run does, right before
#: its separator (most runs holding ``token`` in a tool's output are prose or code and are
#: skipped whole); a flag at its ``--``
PATTERNS = (
    (ASSIGNMENT, replace(NAME_ANCHOR, follow=r"(?:\\?[\"'])?[ \t]*(?:=(?!=)|:(?![:/]))")),
    (FLAG, Anchor("--", NOWHERE, engine="re")),
)


@dataclass(frozen=True)
class PasswordRule(Rule):
    """Findings of both forms; the value, quoted or bare, unless it is clearly not a secret.

    ``secret_member`` also judges a JSON member: ``{"password": "changeme"}`` decoded from JSON
    text has lost the ``password`` context of its value.
    """

    def names_secret(self, name: str) -> bool:
        """Whether a member called ``name`` (``dbPassword`` read as ``db_password``) holds a
        password-like value."""
        return _MEMBER.fullmatch(snake(name)) is not None

    def secret_member(self, name: str, value: str) -> bool:
        if not self.names_secret(name) or not value or "[REDACTED:" in value:
            return False
        return not (code_like(value, name, quoted=True) or _variable(value, name))

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        found = []
        for pattern, anchor in PATTERNS:
            for m in anchor.finditer(pattern, text):
                group = "quoted" if m.group("quoted") is not None else "bare"
                value, after = m.group(group), text[m.end(group) : m.end(group) + 40]
                if code_like(value, m.group("name"), after, quoted=group == "quoted"):
                    continue
                if _KEYISH.search(m.group("name")) and not _token_like(value):
                    continue  # ``sys_key = 'posix_home'``: a key or token is never a word
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


def snake(name: str) -> str:
    """``apiKey`` -> ``api_key``, ``DBPassword`` -> ``db_password``: a member name as words."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


RULES: list[Rule] = [
    PasswordRule(
        "password_assignment_v3",
        ASSIGNMENT,
        # a name right before its separator (or a --flag): far rarer than the words alone
        r"(?i:pass|pwd|secret|token|key)[a-zA-Z]*\\?[\"']?\s*[:=]"
        r"|--[A-Za-z0-9_-]*(?i:pass|pwd|secret|token|key)",
        description="values assigned to password-like names (password=, DB_PASS=, --password x), "
        "whatever their entropy",
    )
]
