"""Which paths reading a store opens outside it, found by an audit hook in a process of its own.

    python -m tests.opened_paths STORE...   # prints {"STORE": ["path", ...], ...} as JSON

Run by the reader contract test in a subprocess: an audit hook cannot be removed once
added, so installing it in the test process would watch every later test's file opens.
Each store is discovered, fingerprinted and loaded unit by unit as an export reads it; a
path counts as outside when it is neither below the store nor below this interpreter's
own code (its prefix and ``sys.path``).  The toy reader is registered, as in the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import trajset.pipeline.stores as stores
from trajset.pipeline.errors import UnitFailed
from trajset.pipeline.stores import READERS, discover, fingerprint, load_unit, registry

from .toy_reader import ToyReader

opened: list[str] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    path = args[0] if event in ("open", "sqlite3.connect") and args else None
    if isinstance(path, str | bytes | os.PathLike):
        opened.append(os.fsdecode(path))


def outside(store: Path) -> list[str]:
    """The paths reading ``store`` opened outside it and outside the interpreter's code."""
    root = os.path.realpath(store if store.is_dir() else store.parent)
    code = [os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, *sys.path} if p]
    opened.clear()
    for unit in discover([store]):
        fingerprint(unit)
        with contextlib.suppress(UnitFailed):
            load_unit(unit)
    found = [os.path.realpath(p) for p in opened]
    return [
        p
        for p in found
        if not p.startswith(root + os.sep)
        and p != os.path.realpath(store)
        and not any(p.startswith(c + os.sep) for c in code)
    ]


def main(paths: list[str]) -> None:
    stores.READERS = registry(*READERS.values(), ToyReader())
    sys.addaudithook(_audit)
    print(json.dumps({p: outside(Path(p)) for p in paths}))


if __name__ == "__main__":
    main(sys.argv[1:])
