"""Secret detectors: provider tokens, keys, credentials in URLs, headers and assignments.

Each rule is versioned (``github_token_v1``); a changed pattern is a new
version, so a manifest names exactly the rules that shaped its rows.  Token
rules require a boundary that no base64 or hex run provides, so images,
digests and ids are never mistaken for secrets.  Strings that hold JSON text
are searched as they are: a boundary right after an escape such as ``\\n``
counts, and values stop at a backslash.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from . import tokens
from .anchored import NOWHERE, Anchor
from .base import Rule, base_name, entropy
from .passwords import NAME_ANCHOR, code_like, names_no_secret, snake

_B = r"(?:(?<=\\[nrtbf])|(?<![A-Za-z0-9+/_\\-]))"  # token start: not inside a longer token or base64 run
_E = r"(?![A-Za-z0-9+/_=-])"  # token end
_W = r"(?:(?<=\\[nrtbf])|\b)"  # a word boundary, also right after a JSON escape
#: where ``_B`` lets a token start, as a trigger may say it (RE2 reads no look-behind): the
#: text's start, a character no token holds, or a JSON escape.  ``sk-`` alone fired in every
#: ``task-`` (a Harbor trial's ids), each string then searched for a key in vain
_TOKEN_START = r"(?:^|[\x00-*,.:-@\[\]^`{-" + "\U0010ffff" + r"]|\\[nrtbf])"


def _token(name: str, regex: str, trigger: str) -> Rule:
    return Rule(name, re.compile(_B + regex + _E), trigger)


def _high_entropy(group: int, minimum: float = 3.0) -> Callable[[re.Match[str]], bool]:
    def accept(m: re.Match[str]) -> bool:
        return entropy(m.group(group)) >= minimum

    return accept


def _credential_value(m: re.Match[str]) -> bool:
    """A high-entropy value that is not code or a setting (``passwords.code_like``): not a
    call, subscript, attribute access, operand, variable or identifier made of words, when
    unquoted, nor a run of lower-case letters (``tokeneater=printtoken``; a generated secret
    mixes cases or digits), nor held by a name that says it is none (``token_type``).
    (v3 redacted ``tokenStart = charIndex`` and ``total_tokens: metric.total_tokens``.)"""
    value, name = m.group("value"), m.group("name")
    after = m.string[m.end("value") : m.end("value") + 40]
    quoted = m.string[m.start("value") - 1 : m.start("value")] in ("'", '"')
    if names_no_secret(name) or code_like(value, name, after, quoted=quoted):
        return False
    if not quoted and re.fullmatch(r"[a-z_]+\)*", value):
        return False
    return entropy(value) >= 3.0


def _not_in_url(m: re.Match[str]) -> bool:
    """Not a URL's ``user:password@`` (``url_credentials`` finds that, and the value of an
    assignment read there would run on over the host and path)."""
    before = m.string[max(0, m.start() - 4) : m.start()]
    return not before.endswith(("://", ":\\/\\/")) and _credential_value(m)


#: a JSON member whose value is a credential by its name alone: ``{"token": "…"}``,
#: ``{"apiKey": "…"}``, ``{"access_token": "…"}`` (names read as words, ``passwords.snake``)
_CREDENTIAL_MEMBER = re.compile(
    r"(?:[a-z0-9]+_)*(?:token|api_?key|access_?key|secret_?key|private_?key|client_?secret"
    r"|auth_?key|secret|password|passwd|credentials?)"
)
_TOKEN_SHAPED = re.compile(r"[A-Za-z0-9._~+/=:-]{12,}")


@dataclass(frozen=True)
class CredentialRule(Rule):
    """Assignments in text (``pattern``), and JSON members named as a credential whose value
    is token-shaped: 12 or more characters, no space, high entropy, not code."""

    def names_secret(self, name: str) -> bool:
        return _CREDENTIAL_MEMBER.fullmatch(snake(name)) is not None and not names_no_secret(name)

    def secret_member(self, name: str, value: str) -> bool:
        return (
            _TOKEN_SHAPED.fullmatch(value) is not None
            and not code_like(value, name, quoted=True)
            and entropy(value) >= 3.0
        )


@dataclass(frozen=True)
class PairedSecret(Rule):
    """The secret half of a key pair: a value assigned to the secret's name (``pattern``), or,
    as TruffleHog's detectors pair them, a value of the secret's shape (``secret``, group 1)
    within ``near`` characters of the pair's key id (``key_id``)."""

    key_id: re.Pattern[str] = re.compile(r"(?!)")
    secret: re.Pattern[str] = re.compile(r"(?!)")
    near: int = 256
    #: a JSON member holding the secret (``"SecretAccessKey"`` in the AWS CLI's output)
    member: re.Pattern[str] = re.compile(r"(?!)")

    def names_secret(self, name: str) -> bool:
        return self.member.fullmatch(name) is not None

    def secret_member(self, name: str, value: str) -> bool:
        m = self.secret.fullmatch(value)
        return self.names_secret(name) and m is not None and _mixed(m.group(1))

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        yield from super().spans(text)
        for m in self.key_id.finditer(text):
            lo, hi = max(0, m.start() - self.near), min(len(text), m.end() + self.near)
            for s in self.secret.finditer(text, lo, hi):
                if _mixed(s.group(1)):
                    yield s.span(1)


def _mixed(value: str) -> bool:
    """Base64 of random bytes: upper and lower case letters, not a hex digest, high entropy."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and not re.fullmatch(r"[0-9a-fA-F]+", value)
        and entropy(value) >= 3.5
    )


def _pair(
    name: str, *, names: str, value: str, key_id: str, trigger: str, member: str, description: str
) -> PairedSecret:
    """A ``PairedSecret``: a ``value`` assigned to one of ``names`` (case-insensitive), or
    beside a ``key_id``, or in a JSON ``member``."""
    secret = r"(" + value + r")(?![A-Za-z0-9/+=])"
    return PairedSecret(
        name,
        re.compile(r"(?i:" + names + r")[\"']?\s*[:=]\s*[\"']?" + secret),
        trigger,
        group=1,
        description=description,
        key_id=re.compile(_B + key_id + _E),
        secret=re.compile(r"(?<![A-Za-z0-9/+=])" + secret),
        member=re.compile(r"(?i:" + member + r")"),
    )


_AWS_ID = r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"
_ALIBABA_ID = r"LTAI[A-Za-z0-9]{12,20}"
_PEM = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_ASSIGNED_NAME = (
    r"(?P<name>(?i:[a-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|client[_-]?secret|auth[_-]?key|account[_-]?key)[a-z0-9_.-]*))"
)
_VALUE = r"(?P<value>[^\s\"'\[\]{},;`<>\\][^\s\"'{},;`<>\\]{7,})"
#: what follows the name (it ends at the first character that is no name character)
_ASSIGNED = r"[\"']?\s*[:=]"

_TOKENS = {base_name(r.name): r for r in tokens.RULES}

RULES: list[Rule] = [
    Rule(
        "private_key_v1",
        re.compile(_PEM, re.DOTALL),
        "PRIVATE KEY",
        description="PEM private key blocks, also with escaped newlines",
    ),
    _TOKENS["aws_access_key_id"],
    _pair(
        "aws_secret_access_key_v2",
        names=r"aws_?secret_?(?:access_?)?key|secret_?access_?key",
        value=r"[A-Za-z0-9/+]{40}",
        key_id=_AWS_ID,
        trigger=r"(?i:aws_?secret|secret_?access)|AKIA|ASIA|ABIA|ACCA",
        member=r"(?:aws_?)?secret_?(?:access_?)?key",
        description="an AWS secret access key assigned to its name, or beside its key id",
    ),
    _TOKENS["alibaba_access_key_id"],
    _pair(
        "alibaba_secret_key_v1",
        names=r"alibaba[\w.-]{0,20}secret[\w.-]{0,10}|access_?key_?secret",
        value=r"[A-Za-z0-9]{30}",
        key_id=_ALIBABA_ID,
        trigger=r"(?i:alibaba|access_?key_?secret)|LTAI",
        member=r"access_?key_?secret",
        description="an Alibaba Cloud AccessKey secret assigned to its name, or beside its id",
    ),
    _token("azure_client_secret_v1", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", "Q~"),
    _TOKENS["github_token"],
    _TOKENS["gitlab_token"],
    _TOKENS["slack_token"],
    Rule(
        "slack_webhook_v1",
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
        r"hooks\.slack",
    ),
    _TOKENS["stripe_key"],
    _TOKENS["anthropic_key"],
    _TOKENS["openai_key"],
    _TOKENS["huggingface_token"],
    _TOKENS["npm_token"],
    _TOKENS["pypi_token"],
    _TOKENS["google_api_key"],
    _token("jwt_v1", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "eyJ"),
    Rule(
        "url_credentials_v2",
        re.compile(
            r"[a-zA-Z][a-zA-Z0-9+.-]*:(?://|\\/\\/)([^\s/:@\"'<>\[\]\\]+:[^\s/@\"'<>\[\]\\]+)@"
        ),
        r"://|:\\/\\/",
        group=1,
        description="user:password in scheme://user:password@host, also with JSON-escaped slashes",
        # the scheme runs up to its ``:``; the host after it starts no match
        anchor=Anchor(r"://|:\\/\\/", r"[a-zA-Z0-9+.-]", ahead=False, engine="re"),
    ),
    Rule(
        "authorization_header_v1",
        re.compile(
            _W + r"(?i:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?"
            r"(?i:bearer|basic|token|digest)\s+([A-Za-z0-9._~+/=:-]{8,})"
        ),
        r"(?i:authorization)",
        group=1,
        anchor=Anchor(r"(?i:authorization)", r"(?i:[a-z-])"),  # ``proxy-`` runs up to it
    ),
    Rule(
        "bearer_token_v1",
        re.compile(_W + r"[Bb]earer\s+([A-Za-z0-9._~+/-]{20,}=*)"),
        "earer",
        group=1,
        accept=_high_entropy(1),
        anchor=Anchor("[Bb]earer", NOWHERE, engine="re"),  # a match starts at the word itself
    ),
    CredentialRule(
        "credential_assignment_v4",
        re.compile(_W + _ASSIGNED_NAME + _ASSIGNED + r"\s*[\"']?" + _VALUE),
        r"(?i:pass|pwd|secret|token|key)",
        group="value",
        accept=_not_in_url,
        description="password=/secret:/token= style assignments and .env lines with a high-entropy value",
        anchor=replace(NAME_ANCHOR, follow=_ASSIGNED),
    ),
]
