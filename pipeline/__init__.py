"""trajset: agent session stores to ATIF trajectories and training datasets.

The public surface is small: ``read_session`` and ``Session`` (the one
in-memory model), ``build_context`` and ``request_hash`` (the reference
context algorithm), and the ``trajset`` command line (``trajset.pipeline.cli``).
"""

from .context import Context, Settings, build_context, canonical_request, request_hash
from .session import Entry, Session, read_session

__version__ = "0.1.0"

__all__ = [
    "Context",
    "Entry",
    "Session",
    "Settings",
    "__version__",
    "build_context",
    "canonical_request",
    "read_session",
    "request_hash",
]
