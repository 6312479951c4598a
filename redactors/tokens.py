"""Provider tokens found by their prefix, wherever they stand and across a line break.

A token such as ``ghp_…`` or ``sk_live_…`` is recognised by its prefix, so
it is found whatever touches it: a path separator (``…/keys/sk_live_…/revoke``),
a diff marker (``-ghp_…``, ``+hf_…``), percent-encoding (``%2Fghp_…``), a
letter or digit glued to it, or a ``-``, ``_`` or ``/`` right after it.  (v1
wanted a character no token holds on both sides and missed all of these.)
A prefix without ``_`` or ``-`` (``AKIA``, ``AIza``, ``eyJ``) could start
inside a base64 run, so such a token still starts where no letter or digit
touches it.  Found bare (glued to a letter or digit), a token's body must mix
letters with digits or both cases, as real ones do: ``xhf_`` + a word is no
token; and one with more than 16 base64url characters right before it is inside an
encoded blob (a provider's ciphertext), not a token.

A token a terminal or an editor wrapped at the end of a line (its head ends
the line, the next line is nothing but the rest of it) is found in both halves.

The prefixes and lengths follow gitleaks' rules (``github-pat``,
``github-fine-grained-pat``, ``gitlab-pat``, ``slack-*-token``,
``stripe-access-token``, ``openai-api-key``, ``anthropic-api-key``,
``huggingface-access-token``, ``npm-access-token``, ``pypi-upload-token``,
``gcp-api-key``, ``aws-access-token``, ``jwt``) and detect-secrets' plugins of
the same providers.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from dataclasses import dataclass

from .base import Rule

#: a JSON escape (``\\n``) or percent-encoded separator (``%2F``) right before a token
_ESCAPED = r"(?<=\\[nrtbf])|(?<=%2[Ff])|(?<=%3[ADad])"
#: where a prefix without ``_`` or ``-`` may start: not inside a letter or digit run
_NOT_IN_RUN = r"(?:" + _ESCAPED + r"|(?<![A-Za-z0-9]))"
#: the rest of a wrapped token: the next line holds only it (then the line, string or text ends)
_LINE_BREAK = r"(?:\r?\n|(?:\\r)?\\n)[ \t]*"
_REST_END = r"(?=$|[\r\n\"'`,;)\]}]|\\[nrt\"])"


@dataclass(frozen=True)
class Form:
    """One way a provider writes a token: a prefix, its body's characters and length."""

    prefix: str
    body: str  # a character class
    least: int
    most: int = 255
    #: the prefix may be glued to a letter or digit (it holds a ``_`` or ``-``)
    bare: bool = True


@dataclass(frozen=True)
class Token(Rule):
    """A token of one of ``forms``."""

    forms: tuple[Form, ...] = ()

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        lines = "\n" in text or "\\n" in text
        for form, whole, wrapped in _compiled(self):
            for m in whole.finditer(text):
                if self._real(form, text, m.start(), m.group("body")):
                    yield m.span()
            for m in wrapped.finditer(text) if lines else ():
                if self._real(form, text, m.start(), m.group("body") + m.group("rest")):
                    yield m.span("head")
                    yield m.span("rest")

    @staticmethod
    def _real(form: Form, text: str, start: int, body: str) -> bool:
        """Where a token may start (checked here, not by a look-behind, so that ``re`` finds
        candidates by their literal prefix): a prefix without ``_`` or ``-`` not glued to a
        letter or digit; one glued to them only with a body that looks random."""
        if _inside_blob(text, start):
            return False
        if not _glued(text, start):
            return True
        return form.bare and _mixed(body)


_URLSAFE_CHARS = frozenset(string.ascii_letters + string.digits + "_-")
#: a token has at most this many base64url characters right before it (``GITHUB_TOKEN_``,
#: ``-``, a word glued to it); more, and it is a run inside an encoded blob (a provider's
#: ``encrypted_content`` holds ``…K7Ghf_3M2Uz…``)
_BLOB_RUN = 16


def _inside_blob(text: str, start: int) -> bool:
    i = start
    while i > 0 and start - i <= _BLOB_RUN and text[i - 1] in _URLSAFE_CHARS:
        i -= 1
    return start - i > _BLOB_RUN


def _glued(text: str, start: int) -> bool:
    """An ASCII letter or digit right before ``start`` that is not the end of a JSON escape
    (``\\n``) or of a percent-encoded separator (``%2F``)."""
    if start == 0 or not ("0" <= text[start - 1] <= "9" or "A" <= text[start - 1].upper() <= "Z"):
        return False
    before = text[max(0, start - 3) : start]
    return not (_ESCAPE_END.search(before) or before.upper() in ("%2F", "%3A", "%3D"))


_ESCAPE_END = re.compile(r"(?<!\\)\\[nrtbf]$")


def _mixed(body: str) -> bool:
    kinds = (any(c.isdigit() for c in body), any(c.isupper() for c in body),
             any(c.islower() for c in body))  # fmt: skip
    return sum(kinds) >= 2


def _n(least: int, most: int) -> str:
    return "{" + f"{least},{most}" + "}"


_CACHE: dict[str, list[tuple[Form, re.Pattern[str], re.Pattern[str]]]] = {}


def _compiled(rule: Token) -> list[tuple[Form, re.Pattern[str], re.Pattern[str]]]:
    """Per form: the whole token, and a token wrapped over a line break (head, rest)."""
    found = _CACHE.get(rule.name)
    if found is None:
        found = []
        for f in rule.forms:
            end = f"(?!{f.body})"
            whole = f"{f.prefix}(?P<body>{f.body}{_n(f.least, f.most)}){end}"
            head = f"(?P<head>{f.prefix}(?P<body>{f.body}{_n(4, f.most)}))"
            rest = f"(?P<rest>{f.body}{_n(4, f.most)}){end}{_REST_END}"
            found.append((f, re.compile(whole), re.compile(head + _LINE_BREAK + rest)))
        _CACHE[rule.name] = found
    return found


def token(name: str, trigger: str, *forms: Form, description: str = "") -> Token:
    """A ``Token`` rule; its ``pattern`` is the union of its forms (what a reader of the
    registry sees), its spans come from ``Token.spans``."""
    union = "|".join(
        ("" if f.bare else _NOT_IN_RUN) + f.prefix + f.body + _n(f.least, f.most) for f in forms
    )
    return Token(name, re.compile(union), trigger, description=description, forms=forms)


_ALNUM = "[A-Za-z0-9]"
_URLSAFE = "[A-Za-z0-9_-]"

RULES: list[Rule] = [
    token(
        "aws_access_key_id_v2",
        "AKIA|ASIA|ABIA|ACCA",
        Form("(?:AKIA|ASIA|ABIA|ACCA)", "[A-Z0-9]", 16, 16, bare=False),
    ),
    token("alibaba_access_key_id_v2", "LTAI", Form("LTAI", _ALNUM, 12, 20, bare=False)),
    token(
        "github_token_v2",
        r"gh[pousr]_|github_pat_",
        Form("gh[pousr]_", _ALNUM, 36),
        Form("github_pat_", "[A-Za-z0-9_]", 22),
    ),
    token(
        "gitlab_token_v2",
        r"gl(?:pat|oas|dt|rt|ptt|ft|imt|agent|soat)-",
        Form("gl(?:pat|oas|dt|rt|ptt|ft|imt|agent|soat)-", _URLSAFE, 20),
    ),
    token("slack_token_v2", "xox", Form("xox[abposr]-", "[A-Za-z0-9-]", 10)),
    token("stripe_key_v2", "_live_|_test_", Form("(?:sk|rk|pk)_(?:live|test)_", _ALNUM, 16)),
    token("anthropic_key_v2", "sk-ant-", Form(r"sk-ant-(?:api|admin)\d{2}-", _URLSAFE, 20)),
    token(
        "openai_key_v2",
        r"sk-(?:proj|svcacct|admin)-|"
        + r"(?:^|[\x00-/:-@\[-`{-"
        + "\U0010ffff"
        + r"]|\\[nrtbf]|%2[Ff])sk-",
        Form("sk-(?:proj|svcacct|admin)-", _URLSAFE, 20),
        Form("sk-(?!ant-)", _URLSAFE, 20, bare=False),
    ),
    token("huggingface_token_v2", "hf_", Form("hf_", _ALNUM, 30)),
    token("npm_token_v2", "npm_", Form("npm_", _ALNUM, 36, 36)),
    token("pypi_token_v2", "pypi-", Form("pypi-AgE", _URLSAFE, 50)),
    token("google_api_key_v2", "AIza", Form("AIza", _URLSAFE, 35, 35, bare=False)),
]
