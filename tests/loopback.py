"""Tests whose servers must reach no network: each runs again in a network namespace that
holds only the loopback interface.

Ray binds its servers to every interface whatever its node address says, so a test that
starts a Ray (or any server) is decorated with ``loopback_only``: outside such a namespace
the test starts ``unshare --net`` (as root; ``--map-root-user`` otherwise), brings ``lo``
up, and runs itself there; inside, it runs its body.  A machine that cannot make the
namespace fails the test with the reason, rather than let a server listen on its network.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: set in the namespace the test runs again in
INSIDE = "TRAJSET_LOOPBACK_ONLY"
ROOT = Path(__file__).resolve().parents[1]


def only_loopback_here() -> bool:
    """This process's network namespace has no interface but ``lo``."""
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def loopback_only(test: F) -> F:
    """Run ``test`` in a fresh network namespace with only the loopback interface."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if os.environ.get(INSIDE) == "1":
            assert only_loopback_here(), socket.if_nameindex()
            return test(*args, **kwargs)
        nodeid = f"{Path(test.__code__.co_filename).relative_to(ROOT)}::{test.__name__}"
        user = [] if os.geteuid() == 0 else ["--map-root-user"]
        command = [
            "unshare", "--net", *user, "sh", "-c", 'ip link set lo up && exec "$@"', "sh",
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header", nodeid,
        ]  # fmt: skip
        done = subprocess.run(
            command, cwd=ROOT, env={**os.environ, INSIDE: "1"},
            capture_output=True, text=True, timeout=280,
        )  # fmt: skip
        assert done.returncode == 0, (
            f"{nodeid} in a loopback-only network namespace: exit {done.returncode}\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
        )
        return None

    return wrapper  # type: ignore[return-value]
