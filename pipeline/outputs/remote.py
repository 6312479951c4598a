"""An export folder at an fsspec URL (``s3://``, ``gs://``, ``file://``): written in a local
stage folder, then copied up with the manifest last; read back by copying it down.

Object storage has no rename, so a dataset there cannot appear all at once: its manifest,
written last, is the mark of a finished export, as it is in a local folder (``validate``,
``publish`` and the card's recipes look for it).  ``upload`` first deletes the manifest an
earlier export left at the URL (so no reader takes the half-replaced folder for finished),
copies the data files, removes what the earlier export had and this one has not, then
writes ``README.md`` and ``manifest.json``.  Each object is written whole (an object
store's put is atomic), so a reader sees the old export, no manifest, or the new export.

The stage is ``--stage DIR`` or a folder named after the URL under the system's temporary
folder, so ``--mode resume`` after an interrupted export or upload finds it; it is removed
after a successful upload unless ``--keep-state``.  Credentials and endpoints come from
where the filesystem's library finds them (for S3: ``AWS_*`` variables, ``~/.aws``;
``AWS_ENDPOINT_URL`` for an S3-compatible server), or ``FSSPEC_<PROTOCOL>_<OPTION>``.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import AbortRun, UsageError

#: written last, in this order: the card (``datasets`` reads its configs), then the manifest
LAST = ("README.md", "manifest.json")
#: the run's own state: never copied up
STATE = ".trajset"


def is_url(text: str) -> bool:
    """Is ``text`` an fsspec URL (``scheme://...``) rather than a local path?"""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.isascii() and scheme.replace("+", "").isalnum()


def default_stage(url: str) -> Path:
    """Where an export to ``url`` is staged when ``--stage`` is not given: the same folder
    for the same URL, so a resumed run finds what the interrupted one wrote."""
    name = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "trajset-stage" / name


def filesystem(url: str) -> tuple[Any, str]:
    """(the fsspec filesystem of ``url``, the path in it); a clear error when the library
    for its scheme is not installed."""
    import fsspec

    try:
        fs, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise UsageError(
            f"--out {url}: {exc}; for s3:// install 'trajset[s3]', for gs:// gcsfs"
        ) from None
    return fs, str(root).rstrip("/")


def existing(url: str, fs: Any = None, root: str = "") -> list[str]:
    """The files at ``url`` (or at ``root`` of ``fs``), as paths relative to it."""
    if fs is None:
        fs, root = filesystem(url)
    if not fs.exists(root):
        return []
    return sorted(str(p)[len(root) + 1 :] for p in fs.find(root))


def upload(
    stage: Path, url: str, progress: Callable[[str], None] = lambda _: None, fs: Any = None
) -> int:
    """Copy the finished export in ``stage`` to ``url``, the manifest last (module doc);
    returns the number of files copied.  A failure is ``AbortRun`` saying how to resume."""
    fs, root = (fs, filesystem(url)[1]) if fs is not None else filesystem(url)
    files = sorted(
        p.relative_to(stage).as_posix()
        for p in stage.rglob("*")
        if p.is_file() and p.relative_to(stage).parts[0] != STATE
    )
    if "manifest.json" not in files:
        raise UsageError(f"{stage} holds no finished export (no manifest.json); nothing was sent")
    progress(f"copying {len(files)} files to {url}")
    try:
        _copy_up(stage, files, fs, root)
    except Exception as exc:  # the storage libraries raise many kinds
        first = (str(exc).splitlines() or [""])[0][:300]
        raise AbortRun(
            f"copying the export to {url} failed ({type(exc).__name__}: {first}); it is kept in "
            f"{stage}: run the same command with --mode resume to copy it again"
        ) from exc
    return len(files)


def _copy_up(stage: Path, files: list[str], fs: Any, root: str) -> None:
    before = existing("", fs, root)
    if "manifest.json" in before:
        fs.rm_file(f"{root}/manifest.json")  # the old export is unfinished from here on
    for folder in sorted({f"{root}/{f}".rsplit("/", 1)[0] for f in files}):
        fs.makedirs(folder, exist_ok=True)  # a local or mounted target needs its folders
    body = [f for f in files if f not in LAST]
    if body:
        fs.put([str(stage / f) for f in body], [f"{root}/{f}" for f in body])
    stale = sorted(set(before) - set(files) - {"manifest.json"})
    if stale:
        fs.rm([f"{root}/{f}" for f in stale])
    for name in LAST:
        if name in files:
            fs.put_file(str(stage / name), f"{root}/{name}")


def download(url: str, dest: Path, fs: Any = None) -> Path:
    """Copy the finished export at ``url`` into the folder ``dest``; refuses one whose
    manifest is not there (unfinished, or being replaced) or changes while it is copied."""
    fs, root = (fs, filesystem(url)[1]) if fs is not None else filesystem(url)
    files = existing(url, fs, root)
    unfinished = UsageError(
        f"{url} holds no finished export (no manifest.json): it is being written, or its "
        "upload did not finish; run the export again with --mode resume"
    )
    if "manifest.json" not in files:
        raise unfinished
    manifest = fs.cat_file(f"{root}/manifest.json")
    dest.mkdir(parents=True, exist_ok=True)
    fs.get([f"{root}/{f}" for f in files], [str(dest / f) for f in files])
    try:
        same = fs.cat_file(f"{root}/manifest.json") == manifest
    except FileNotFoundError:
        same = False
    if not same:
        raise UsageError(f"{url} was replaced while it was copied; copy it again")
    return dest
