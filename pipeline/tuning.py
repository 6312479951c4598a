"""How a run's processes are set up: settings that cost nothing to get right once and a
measurable share of a run to leave at their defaults.

``fewer_collections`` and ``small_pages`` hold while a run allocates and are
restored after (an export may run inside a caller's process); ``release_freed`` hands a
large unit's freed memory back;
``pyarrow_without_pandas`` is for processes trajset owns (its command line,
its worker pool); ``fork_safe`` tells whether a worker pool may start by fork.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

#: the youngest generation's threshold while exporting (CPython's default is 700)
YOUNG_THRESHOLD = 10_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The cyclic garbage collector run less while a run allocates millions of short-lived
    containers (entries, steps, rows), few of them in cycles: what lived before is frozen
    (not scanned again) and the youngest generation is collected every ``YOUNG_THRESHOLD``
    allocations.  Restored after, for a caller that runs exports in-process; inside a run
    already tuned (a batch run in-process) it changes nothing.  The collector took about 2%
    of an export's instructions, almost none with this."""
    threshold = gc.get_threshold()
    if threshold[0] >= YOUNG_THRESHOLD:
        yield
        return
    # a caller that froze objects of its own keeps them frozen: ``unfreeze`` would thaw
    # them too, so then nothing is frozen here (the threshold alone does most of the work)
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        if freeze:
            gc.unfreeze()


#: prctl(2) options: whether the kernel may back this process's memory with huge pages
PR_SET_THP_DISABLE, PR_GET_THP_DISABLE = 41, 42


@contextmanager
def small_pages() -> Iterator[None]:
    """Transparent huge pages off while a run allocates (Linux; restored after, and inherited
    by the worker processes started meanwhile).  Where the kernel's setting is ``always``, a
    first touch of fresh memory zeroes 2 MB, and a run allocates and frees hundreds of MB
    of short-lived buffers (row groups, parsed lines, documents): zeroing took 14% of a
    2-worker export's CPU samples (1.4% without), its CPU time fell by 7% (no difference
    measured with one worker)."""
    prctl = _prctl()
    if prctl is None or prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) != 0:
        yield  # not Linux, or already off (a batch inside a run)
        return
    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)
    try:
        yield
    finally:
        prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0)


#: a unit that read at least this much hands the memory it freed back (``release_freed``)
RELEASE_AFTER_BYTES = 64 << 20


def release_freed(read: int) -> None:
    """After a unit that read ``read`` bytes: when that is ``RELEASE_AFTER_BYTES`` or more,
    the C heap's free pages go back to the kernel (glibc's ``malloc_trim``; nothing
    elsewhere).  A large session's parsed entries are freed into the C heap, which keeps
    them while Arrow allocates the shards from a heap of its own: one 505 MB session's
    freed entries held 1.2 GB that the Parquet writer then allocated anew.  A few
    milliseconds, so only after a large unit."""
    if read < RELEASE_AFTER_BYTES:
        return
    trim = _libc("malloc_trim")
    if trim is not None:
        trim(0)
    import pyarrow as pa  # imported by then: the unit's rows went to parts through it

    pa.default_memory_pool().release_unused()  # what Arrow's own heap keeps of them


def _prctl() -> Callable[..., int] | None:
    return _libc("prctl")


def _libc(name: str) -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return cast(Callable[..., int], getattr(ctypes.CDLL(None), name))
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


class _NoPandas:
    """An import finder that reports pandas as not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("hidden from pyarrow's first probe", name=name)


def pyarrow_without_pandas() -> None:
    """pyarrow imports pandas the first time it converts a Python list, only to ask whether
    the list is a pandas object (trajset's rows never are): 0.25-0.35 s and 40 MB in every
    process, a quarter of a small store's export.  Here pyarrow asks once while pandas
    cannot be imported, and remembers.  What asks pyarrow for pandas by name still gets it
    (``to_pandas``, ``from_pandas``: pyarrow imports it then), but until then pyarrow
    converts a pandas object handed to ``pa.array`` as a plain sequence, so this is only for
    processes trajset owns: its command line and its worker pool.  Does nothing where pandas
    is already imported."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        pa.array([], type=pa.null())
    finally:
        sys.meta_path.remove(finder)


def fork_safe() -> bool:
    """Whether a worker pool may start by fork, its processes inheriting this one's imports,
    instead of fresh interpreters that import the pipeline again (``spawn``: the pool's
    first unit started 0.8 s after the driver's on the benchmark corpus; by fork, at once).

    On Linux, while no other Python thread runs (a notebook's, a progress bar's: a lock it
    holds stays held in the child) and polars is not loaded (a forked child can inherit its
    thread pool's locks held; a hang was seen).  Asked only where the caller allows a fork
    (``RunOptions.fork``: the command line, whose process runs nothing else)."""
    return (
        sys.platform.startswith("linux")
        and threading.active_count() == 1
        and "polars" not in sys.modules
    )
