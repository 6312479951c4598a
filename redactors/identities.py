"""``identity_v1``: who and where a store says its sessions belong to, as stable pseudonyms.

Each reader declares the fields of its store that hold identities
(``Reader.identity_fields``: owners, participants, user names, working
folders, git remotes and branches) and reads them cheaply before the run
(``Reader.identities``).  The run numbers every distinct value per kind in
unit order, so one person is ``user_3`` in every session, table and file name
of an export, whatever the worker count, and analysis by person stays
possible without the person.  With a key (``--pseudonym-key-env``), a value's
pseudonym is a keyed hash of it instead (``user_3f9a0c1d2e``): the same in every
export, however the store grows, which an incremental publish needs.  The values never leave the run: the manifest
counts them per kind.

Every mention of a value, in any string of any session, becomes its
pseudonym:

* ``user``: case-insensitively wherever no letter or digit touches it, the
  spaces of a name also matching ``.``, ``_`` and ``-`` (as ``term_v1``);
* ``workdir``: the folder as a whole path or as the leading folders of one
  (``/workspace/alice/app/src`` -> ``workdir_1/src``), and as the project
  folder agents name after it (``-workspace-alice-app``);
* ``repo``: the remote, with or without ``.git``, and its ``owner/name`` slug;
* ``branch``: the name where no letter, digit, ``/``, ``-`` or ``.`` touches it.

Values that name no one are left alone (``_ANONYMOUS``): shorter than 3
characters, common account and role names (``root``, ``user``), default
branches (``main``) and branches of one plain word (``conversations``, which
would rewrite that word in every text), and working folders of one segment or
inside a home folder (``home_paths`` makes those ``~``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .anchored import Anchor

NAME = "identity_v1"
KINDS = ("user", "workdir", "repo", "branch")
#: the shortest value that can name someone
FLOOR = 3
_ANONYMOUS = {
    "user": frozenset(
        ["root", "admin", "administrator", "user", "users", "default", "guest", "nobody",
         "anonymous", "ubuntu", "runner", "ec2-user", "system", "agent", "assistant", "human",
         "operator", "owner", "developer", "unknown", "null", "none", "dev", "test", "tester",
         "build", "builder", "vagrant", "docker", "node", "www", "www-data", "git", "postgres",
         "mysql", "jenkins", "work", "app", "code", "data", "home", "src", "tmp", "vscode",
         "codespace", "codespaces", "coder", "sandbox", "worker", "service", "local", "shared",
         "public", "all users", "debian", "fedora", "centos", "ec2", "azureuser", "cloud-user"]
    ),
    "branch": frozenset(
        ["main", "master", "develop", "development", "dev", "trunk", "head", "staging",
         "production"]
    ),
}  # fmt: skip
_HOME = re.compile(r"^(?:/home/|/Users/|[A-Za-z]:[\\/]+Users[\\/])|^/root(?:/|$)")
_SEPARATORS = re.compile(r"[\s._-]+")
_PATH_END = r"(?=$|[/\\\s\"'`:;,)\]}>])"


@dataclass(frozen=True)
class Identity:
    """One value of an identity field: its kind (``KINDS``) and the value as the store has it."""

    kind: str
    value: str


def _user_key(text: str) -> str:
    return " ".join(_SEPARATORS.split(text.casefold())).strip()


def _names_someone(i: Identity) -> bool:
    value = i.value
    if len(value) < FLOOR or value.casefold() in _ANONYMOUS.get(i.kind, ()):
        return False
    if i.kind == "branch":  # ``alice/wip``, ``fix-123``; a one-word branch is a word of prose
        return re.search(r"[/_.0-9-]", value) is not None
    if i.kind == "workdir":
        parts = [p for p in re.split(r"[\\/]+", value) if p]
        drive = re.match(r"^[A-Za-z]:[\\/]", value) is not None
        absolute = drive or value[:1] in "/\\"
        return absolute and not _HOME.match(value) and len(parts) >= (3 if drive else 2)
    return True


def _dashed(folder: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", folder).strip("-")


def _slug(url: str) -> str:
    """``owner/name`` of a remote (``https://host/o/n.git``, ``git@host:o/n.git``), or ""."""
    ssh = re.match(r"^[\w.-]+@[\w.-]+:(.+)$", url)
    path = ssh.group(1) if ssh else urlsplit(url).path if "://" in url else ""
    parts = [p for p in path.removesuffix(".git").split("/") if p]
    return "/".join(parts[-2:]) if len(parts) >= 2 else ""


#: where a user name is the folder of a home path, which ``home_paths`` makes ``~`` whole
_IN_HOME = r"(?<!/home/)(?<!/Users/)(?<!Users\\)"


def _alternatives(i: Identity, homes: bool = False) -> Iterator[tuple[str, str]]:
    """(regex, lookup key) of each way ``i`` is written in text; with ``homes``, a user's name
    that is a home folder is left to ``home_paths`` (it was found twice, counted twice)."""
    v = i.value
    if i.kind == "user":
        words = r"[\s._-]+".join(re.escape(w) for w in v.split())
        start = _IN_HOME if homes else ""
        yield rf"{start}(?<![A-Za-z0-9])(?i:{words})(?![A-Za-z0-9])", "u:" + _user_key(v)
    elif i.kind == "workdir":
        folder = v.rstrip("/\\")
        yield rf"(?<![\w.~-]){re.escape(folder)}{_PATH_END}", "x:" + folder
        # the folder's name as agents name their project folders (``-workspace-alice-app``,
        # Pi's ``--workspace-alice-app--``)
        dashed = _dashed(folder)
        yield rf"(?<![\w-])-{{1,2}}{re.escape(dashed)}(?:--)?(?![\w-])", "d:" + dashed
    elif i.kind == "repo":
        bare = v.removesuffix(".git")
        yield rf"(?<![\w.-]){re.escape(bare)}(?:\.git)?(?![\w-])", "x:" + bare
        if slug := _slug(v):
            yield rf"(?<![\w.-]){re.escape(slug)}(?:\.git)?(?![\w/-])", "x:" + slug
    else:
        yield rf"(?<![\w./-]){re.escape(v)}(?![\w/-]|\.\w)", "x:" + v


@dataclass(frozen=True)
class Pseudonyms:
    """The export's identities, each with its pseudonym; finds their mentions in a string."""

    pattern: re.Pattern[str]
    trigger: str
    names: dict[str, str] = field(repr=False)  # lookup key -> pseudonym
    counts: dict[str, int] = field(default_factory=dict)  # distinct values per kind
    name: str = NAME
    opt_in: bool = False
    #: where a mention can start: next to a hit of ``trigger`` (``anchored.py``)
    anchor: Anchor | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, identities: Iterable[Identity], homes: bool = False, key: str = "") -> Pseudonyms:
        """Numbered per kind in the order given (the run's unit order); with a ``key``,
        named by a keyed hash of the value instead (``keyed``), the same in every export."""
        names: dict[str, str] = {}
        counts = dict.fromkeys(KINDS, 0)
        patterns: list[tuple[str, str]] = []
        firsts: set[str] = set()  # the words every way starts with (the trigger)
        for i in named(identities):
            ways = list(_alternatives(i, homes))
            if ways[0][1] in names:
                continue
            counts[i.kind] += 1
            pseudonym = keyed(key, i.kind, ways[0][1]) if key else f"{i.kind}_{counts[i.kind]}"
            for regex, lookup in ways:
                if lookup not in names:
                    names[lookup] = pseudonym
                    patterns.append((regex, lookup))
                    if lookup.startswith("u:"):  # the way starts with the name as written
                        firsts.add(i.value.split()[0])
        # longest first: a folder is found whole before a user name inside it
        ordered = sorted(patterns, key=lambda p: (-len(p[1]), p[1]))
        body = "|".join(f"(?:{r})" for r, _ in ordered) or "(?!)"
        firsts |= {k[2:].split()[0] for _, k in ordered}
        words = "|".join(re.escape(w) for w in sorted(firsts, key=lambda w: (-len(w), w)))
        words = words or "(?!)"
        trigger = f"(?i:{words})"
        # every way starts with its key's first word, a folder's dashed name one or two
        # dashes before it: the search tries those places alone, as ``finditer`` would
        anchor = Anchor(trigger, "-") if ordered else None
        return cls(re.compile(body), trigger, names, counts, anchor=anchor)

    @property
    def active(self) -> bool:
        return bool(self.names)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        found = self.pattern.finditer(text) if self.anchor is None else (
            self.anchor.finditer(self.pattern, text)
        )  # fmt: skip
        for m in found:
            yield m.span()

    def pseudonym(self, found: str) -> str | None:
        """The pseudonym of a mention (None for text that is no single identity's mention)."""
        bare = found.removesuffix(".git")
        return (
            self.names.get("x:" + bare)
            or self.names.get("u:" + _user_key(found))
            or self.names.get("d:" + found.strip("-"))
        )


#: the shortest ``--pseudonym-key-env`` value: a shorter key could be found by trying
PSEUDONYM_KEY_FLOOR = 16


def keyed(key: str, kind: str, lookup: str) -> str:
    """An identity's pseudonym under ``key``: its kind and 10 hex digits of an HMAC-SHA-256
    of its lookup key, so a value keeps its pseudonym whatever else a store holds (a grown
    store's unchanged sessions stay byte-identical), and without the key no one can tell
    which value it stands for."""
    return f"{kind}_{hmac.new(key.encode(), lookup.encode(), hashlib.sha256).hexdigest()[:10]}"


def key_id(key: str) -> str:
    """What names a pseudonym key in a manifest and a rule set's version (never the key)."""
    return "k-" + hashlib.sha256(b"trajset pseudonym key\0" + key.encode()).hexdigest()[:12]


#: a user's home folder in a path, or in a project folder named after one (``-home-bob-app``)
_HOME_USER = re.compile(
    r"(?:^|[\s\"'=:(])(?:/home/|/Users/|[A-Za-z]:[\\/]+Users[\\/]+)([A-Za-z0-9._-]+)"
    r"|(?:^|[/\\])-{1,2}(?:home|Users)-([A-Za-z0-9._]+)-"
)


def home_users(texts: Iterable[str]) -> list[Identity]:
    """The users whose home folders ``texts`` (paths, working folders) name, in order: the
    names a run knows, numbered wherever they stand as words (``ls -l``, prompts)."""
    found: list[Identity] = []
    for text in texts:
        for m in _HOME_USER.finditer(text):
            found.append(Identity("user", m.group(1) or m.group(2)))
    return found


def identities_of(values: Sequence[tuple[str, Any]]) -> list[Identity]:
    """``Identity`` of each (kind, value) whose value is a non-empty string (a reader's helper)."""
    return [Identity(k, v) for k, v in values if isinstance(v, str) and v.strip()]


def named(identities: Iterable[Identity]) -> list[Identity]:
    """The identities that name someone (see the module docstring), their values stripped."""
    stripped = (Identity(i.kind, i.value.strip()) for i in identities)
    return [i for i in stripped if i.kind in KINDS and _names_someone(i)]


def header_identities(header: dict[str, Any]) -> list[Identity]:
    """The identities a session header holds in the members readers write there (``cwd``,
    ``einox:owner``, ``codex:meta``'s git, ``gemini:directories``): what a store of sessions
    another reader converted (``trajset convert``) says of itself."""
    meta = header.get("codex:meta")
    git = meta.get("git") if isinstance(meta, dict) else None
    git = git if isinstance(git, dict) else {}
    dirs = header.get("gemini:directories")
    return identities_of(
        [("workdir", header.get("cwd")), ("user", header.get("einox:owner")),
         ("repo", git.get("repository_url")), ("branch", git.get("branch")),
         *(("workdir", d) for d in (dirs if isinstance(dirs, list) else []))]
    )  # fmt: skip
