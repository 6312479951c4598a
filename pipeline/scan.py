"""``trajset scan DIR``: every detector over every file of an export; findings by file and rule.

Documents and the card, the manifest, every Parquet table (decoded: each
string value, JSON text included), every trace line and the files' own names are examined with
the same rules an export uses, and with detect-secrets (``second_opinion.py``),
whose findings name their row or member.  Placeholders are not findings; the
text of a finding is never shown.  Meant as the last look before a dataset leaves.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from trajset.redactors import Placeholders, Redactor

from .errors import UsageError
from .second_opinion import Finding, second_opinion

SKIP = (".trajset", ".cache")  # run state and upload progress, never published
MEDIA = ("images", "audio")


def files(directory: Path) -> list[Path]:
    """The files of an export that are published (not run state, upload progress or media)."""
    out = []
    for p in sorted(directory.rglob("*")):
        rel = p.relative_to(directory).parts
        if (
            p.is_file()
            and rel[0] not in SKIP
            and not (rel[0] == "atif" and rel[1:2] and rel[1] in MEDIA)
        ):
            out.append(p)
    return out


def _scan_file(path: Path, redactor: Redactor, found: Placeholders) -> None:
    if path.suffix == ".parquet":
        redactor.value(pq.read_table(path).to_pylist(), found)
    elif path.suffix == ".json":
        try:
            redactor.value(json.loads(path.read_text(encoding="utf-8")), found)
        except ValueError:
            redactor.text(path.read_text(encoding="utf-8", errors="replace"), found)
    elif path.suffix == ".jsonl":  # traces: each line's values, as they were redacted
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                redactor.value(json.loads(line), found)
            except (ValueError, RecursionError):
                redactor.text(line, found)
    else:
        redactor.text(path.read_text(encoding="utf-8", errors="replace"), found)


def scan_folder(directory: Path, redactor: Redactor) -> dict[str, Counter[str]]:
    """Findings per rule for every file (and file name) that holds any."""
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a folder; give an export folder")
    report: dict[str, Counter[str]] = {}
    for path in files(directory):
        found = Placeholders()
        rel = str(path.relative_to(directory))
        redactor.text(rel, found)
        _scan_file(path, redactor, found)
        if found.findings:
            report[rel] = +Counter(found.findings)
    return report


def second_opinion_of(directory: Path, accepted: frozenset[str] = frozenset()) -> list[Finding]:
    """detect-secrets' findings in the export, but those whose id is ``accepted``."""
    return [f for f in second_opinion(directory, files(directory)) if f.id not in accepted]
