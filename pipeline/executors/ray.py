"""``ray``: batches of units as Ray tasks, on a cluster or on a Ray started for the run.

``--ray-address`` (or ``RAY_ADDRESS``) joins a running cluster; without
one, a local Ray with ``--workers`` CPUs is started and stopped with the
run, whatever other Ray runs on the machine.  That Ray names its node 127.0.0.1, so its processes talk to each other on
the loopback interface; Ray's own servers still bind every interface (Ray has
no setting to bind them to one), so where the network must not reach them, run
the export in a network namespace of its own, as the project's tests do.  A task runs the job over a chunk of batches, so what the job builds
once (the compiled redactor, the session index) is built once per chunk;
each task writes its batches' documents and parts into the output folder, so
every node must see that folder at the same path (a shared filesystem).
Results come back in unit order, with at most ``2 x workers`` chunks in
flight, so the driver holds a bounded number of results.  The job is a pure
function of its batch: the data files equal the local executor's, byte for byte.
"""

from __future__ import annotations

import importlib.util
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from ..errors import UsageError
from .base import Lifetime, run_chunk

T = TypeVar("T")
R = TypeVar("R")

#: where a Ray started for the run listens
LOOPBACK = "127.0.0.1"


class RayExecutor(Lifetime):
    """``workers`` concurrent tasks; ``address`` of a cluster to join (None: ``RAY_ADDRESS``,
    else a local Ray).  A Ray this executor starts is stopped when the ``with`` block ends
    (outside one, when the map ends), so a run's maps share one."""

    def __init__(self, workers: int = 1, address: str | None = None) -> None:
        if importlib.util.find_spec("ray") is None:
            raise UsageError(
                "--executor ray needs Ray; install it with: pip install 'trajset[ray]'"
            )
        self.workers = max(1, workers)
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self._started = False

    def close(self) -> None:
        if self._started:
            import ray

            ray.shutdown()
            self._started = False

    def map(self, job: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        import ray

        if not ray.is_initialized():
            local: dict[str, Any] = (
                {} if self.address else {"num_cpus": self.workers, "_node_ip_address": LOOPBACK}
            )
            ray.init(
                # "local": a Ray of our own even where one runs on this machine already;
                # None would join the one a `ray start` recorded, and fail on num_cpus
                address=self.address or "local",
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                **local,
            )
            self._started = True
        try:
            yield from self._run(ray, job, items)
        finally:
            if not self._open:
                self.close()

    def _run(self, ray: Any, job: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """Chunks of ``items`` as tasks, at most ``2 x workers`` in flight, results in order."""
        task: Any = ray.remote(num_cpus=1)(run_chunk)  # a retried chunk rewrites the same files
        job_ref = ray.put(job)
        size = max(1, len(items) // (self.workers * 16))
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        pending: deque[Any] = deque()
        for chunk in chunks:
            pending.append(task.remote(job_ref, chunk))
            if len(pending) >= 2 * self.workers:
                yield from ray.get(pending.popleft())
        while pending:
            yield from ray.get(pending.popleft())
