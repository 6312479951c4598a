"""Personal data: e-mail addresses (default on), IP addresses and phone numbers (opt-in)."""

from __future__ import annotations

import ipaddress
import re

from .anchored import Anchor
from .base import Rule

_AUTHORITY = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:(?://|\\/\\/)[^\s/@\"'<>\\:]*:$")


def _not_userinfo(m: re.Match[str]) -> bool:
    """Not the ``password@host`` of ``scheme://user:password@host`` (``url_credentials``
    finds the password; v1 took the host with it)."""
    return _AUTHORITY.search(m.string, max(0, m.start() - 256), m.start()) is None


#: a "top-level domain" that is a file's extension: ``logo@2x.png`` is a file name
_FILE_EXTENSIONS = frozenset(
    [
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "webp",
        "ico",
        "bmp",
        "tif",
        "tiff",
        "pdf",
        "js",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "jsx",
        "py",
        "pyi",
        "rb",
        "go",
        "rs",
        "java",
        "kt",
        "swift",
        "json",
        "jsonl",
        "yaml",
        "yml",
        "toml",
        "ini",
        "cfg",
        "md",
        "txt",
        "csv",
        "css",
        "scss",
        "less",
        "html",
        "htm",
        "xml",
        "lock",
        "sh",
        "zip",
        "gz",
        "tgz",
        "tar",
        "whl",
        "wasm",
        "map",
        "mp3",
        "mp4",
        "mov",
        "wav",
        "webm",
        "ttf",
        "woff",
        "woff2",
        "otf",
    ]
)
#: service accounts of an SCP-style remote (``git@github.com:org/repo.git``): nobody's address
_REMOTE_USERS = frozenset(["git", "hg", "ssh", "svn"])


def _an_address(m: re.Match[str]) -> bool:
    """An e-mail address: not a URL's ``password@host`` (``url_credentials`` finds the
    password), a file name (``logo@2x.png``) or a remote's service account
    (``git@github.com:org/repo.git``)."""
    local, domain = m.group(0).rsplit("@", 1)
    if domain.rsplit(".", 1)[1].lower() in _FILE_EXTENSIONS:
        return False
    if local.lower() in _REMOTE_USERS and m.string[m.end() : m.end() + 1] == ":":
        return False
    return _not_userinfo(m)


#: ``version 1.2.3.4``, ``v1.2.3.4``: a four-part version, not an address
_VERSION_BEFORE = re.compile(r"(?<![A-Za-z])(?i:version|ver|release|build|v)[\s:=_-]*$")


def _not_a_version(m: re.Match[str]) -> bool:
    return _VERSION_BEFORE.search(m.string, max(0, m.start() - 12), m.start()) is None


def _valid_ipv6(m: re.Match[str]) -> bool:
    try:
        ipaddress.IPv6Address(m.group(0))
    except ValueError:
        return False
    return m.group(0).count(":") >= 2


RULES: list[Rule] = [
    Rule(
        "email_v3",
        re.compile(
            r"(?:(?<=\\[nrtbf])|(?<![A-Za-z0-9._%+\\-]))[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
            r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
        ),
        "@",
        accept=_an_address,
        # the local part (64 characters at most) runs up to the @: a match starts at its
        # first character (no other is free of the look-behind), or after an escape there
        anchor=Anchor("@", r"[A-Za-z0-9._%+-]", before=64, first=2, engine="re"),
    ),
    Rule(
        "ipv4_v2",
        re.compile(
            r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.])"
        ),
        r"\d\.\d",
        accept=_not_a_version,
        opt_in=True,
    ),
    Rule(
        "ipv6_v1",
        re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])"),
        ":",
        accept=_valid_ipv6,
        opt_in=True,
    ),
    Rule(
        "phone_v2",
        # v2: digit groups joined to letters or digits by ``-`` or ``.`` on either side are
        # part of an id, not a phone number (v1 took ``0005-7000-8000`` out of every UUID
        # of the form ``0199a1b2-0005-7000-8000-…``); an area code in parentheses may be
        # followed by two groups (``(555) 123-4567``; v1 wanted three).
        re.compile(
            r"(?<![\w+])(?<!\w[.-])(?:\+\d{1,3}[\s.-]?)?"
            r"(?:\(\d{2,4}\)[\s.-]?\d{3,4}[\s.-]\d{3,4}|\d{2,4}[\s.-]\d{3,4}[\s.-]?\d{3,4})"
            r"(?!\w|[.-]\w)"
        ),
        r"\d{3}",
        opt_in=True,
    ),
]
