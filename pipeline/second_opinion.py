"""A second opinion that is not ours: detect-secrets' detectors over every string of an export.

``scan`` and ``publish`` run Yelp's detect-secrets beside the redaction rules, so
a gap in our rules is not a gap in the check.  Its provider detectors (AWS,
Azure storage, GitHub, GitLab, Slack, Stripe, OpenAI, npm, PyPI, JWT, private
keys, basic auth and more) and its ``KeywordDetector`` (``password = "…"``) run
with its own false-positive filters.  Its two entropy detectors are left out:
they flag every digest, id and base64 image an export holds (5,811 and 1,637
findings on the sample store, none a secret).  A finding inside a placeholder
is none.

Each finding names its file, where in it (a table's row and column, a JSON
document's member path, a text file's line) and the detector, and has an id (a
hash of the detector and the value keyed with the export's own salt, never the
value) that ``--accept`` takes for a value someone looked at and found harmless,
wherever it stands.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from trajset.redactors import PLACEHOLDER_RE
from trajset.redactors.prefilter import TriggerSet

#: detect-secrets' plugins that run (its class names); the entropy ones do not (see above)
PLUGINS = (
    "ArtifactoryDetector", "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector",
    "CloudantDetector", "DiscordBotTokenDetector", "GitHubTokenDetector", "GitLabTokenDetector",
    "IbmCloudIamDetector", "IbmCosHmacDetector", "JwtTokenDetector", "KeywordDetector",
    "MailchimpDetector", "NpmDetector", "OpenAIDetector", "PrivateKeyDetector",
    "PypiTokenDetector", "SendGridDetector", "SlackDetector", "SoftlayerDetector",
    "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector", "TwilioKeyDetector",
)  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One detect-secrets finding: ``file`` (relative), ``where`` in it, the detector's type."""

    file: str
    where: str
    rule: str
    id: str

    def line(self) -> str:
        return f"{self.file}: {self.where}: detect-secrets: {self.rule} (id {self.id})"


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string of a JSON value with its member path (``/steps/3/message``)."""
    if isinstance(value, str):
        yield where or "/", value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}/{i}")


def _places(path: Path) -> Iterator[tuple[str, str]]:
    """(where, text) of every string a file holds."""
    if path.suffix == ".parquet":
        for i, row in enumerate(pq.read_table(path).to_pylist()):
            for column, value in row.items():
                for where, text in _strings(value, ""):
                    yield f"row {i} {column}{'' if where == '/' else where}", text
        return
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        try:
            yield from _strings(json.loads(text), "")
            return
        except ValueError:
            pass
    for n, line in enumerate(text.splitlines(), 1):
        if path.suffix == ".jsonl":  # a trace: each line's strings, as in a document
            try:
                yield from _strings(json.loads(line), f"line {n} ")
                continue
            except (ValueError, RecursionError):
                pass
        yield f"line {n}", line


def _in_placeholder(line: str, value: str | None) -> bool:
    if not value:
        return False
    return any(value in m.group(0) for m in PLACEHOLDER_RE.finditer(line))


def finding_id(rule: str, value: str, salt: bytes) -> str:
    """One id per detector and value, wherever it stands (accepting ``apiKey: 'ollama'``
    once accepts it in every table), keyed with the export's own salt so that an id printed
    in a log says nothing of a weak value."""
    digest = hashlib.blake2b(f"{rule}\0{value}".encode(), digest_size=5, key=salt)
    return digest.hexdigest()


#: where an export keeps the salt of its finding ids (run state: never published)
SALT = Path(".trajset") / "finding-salt"


def export_salt(directory: Path) -> bytes:
    """The export's salt for finding ids, made on first use; a folder that cannot be
    written gets one derived from its manifest, stable as long as the export is."""
    path = directory / SALT
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(os.urandom(16))
        return path.read_bytes()[:64]
    except OSError:
        manifest = directory / "manifest.json"
        data = manifest.read_bytes() if manifest.exists() else b""
        return hashlib.blake2b(data, digest_size=16).digest()


def second_opinion(directory: Path, files: list[Path]) -> list[Finding]:
    """detect-secrets' findings in ``files`` (below ``directory``), in file and place order."""
    salt = export_salt(directory)
    # imported here: it takes about 0.1 s, which every other command would pay at its start
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings, transient_settings

    found: list[Finding] = []
    plugins = [{"name": name} for name in PLUGINS]
    #: what each distinct line holds: an export repeats its text in every table (a Codex
    #: export's 228,790 lines held 14,536 distinct ones)
    seen: dict[str | bytes, list[tuple[str, str]]] = {}
    could = TriggerSet(_patterns())
    with default_settings(), transient_settings({"plugins_used": plugins}):
        for path in files:
            rel = str(path.relative_to(directory))
            for where, text in _places(path):
                for line in text.splitlines():
                    key = line if len(line) < 256 else hashlib.blake2b(line.encode()).digest()
                    hits = seen.get(key)
                    if hits is None:
                        hits = seen[key] = _hits(line, scan_line, could)
                    found += [Finding(rel, where, rule, finding_id(rule, value, salt))
                              for rule, value in hits]  # fmt: skip
    return sorted(set(found), key=lambda f: (f.file, f.where, f.rule, f.id))


def _patterns() -> list[str]:
    """What any finding of the plugins needs in its line, from detect-secrets' own patterns:
    each regex detector's ``denylist`` (it finds nothing where none matches) and the
    keywords ``KeywordDetector`` looks for.  A line none of them matches is not scanned."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.keyword import DENYLIST

    mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
    classes = {c.__name__: c for c in mapping.values()}
    out = ["(?i:" + "|".join(DENYLIST) + ")"]
    for name in PLUGINS:
        for p in getattr(classes[name], "denylist", None) or ():
            flags = ("i" if p.flags & re.IGNORECASE else "") + ("x" if p.flags & re.VERBOSE else "")
            out.append(f"(?{flags}:{p.pattern})" if flags else p.pattern)
    return out


def _hits(line: str, scan_line: Any, could: TriggerSet) -> list[tuple[str, str]]:
    """(detector, value) of each finding in ``line`` that is not inside a placeholder."""
    if not could.which(line):
        return []
    out = []
    for f in scan_line(line):
        value = f.secret_value or ""
        if not _in_placeholder(line, value):
            out.append((f.type, value))
    return out
