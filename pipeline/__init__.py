"""trajset: agent session stores to ATIF trajectories and training datasets.

The public surface is small:

* ``run_export(stores, out, ExportOptions(...), RunOptions(...))``: the whole export
  (``RunOptions(settings=RunSettings(...))``: the run's tuning knobs);
* ``read_store`` / ``read_session`` and ``Session``: the one in-memory model;
* ``trajectories``, ``to_atif``, ``items``, ``items_from``: the reference mapping;
* ``build_context``, ``canonical_request``, ``request_hash``: the context algorithm;
* the ``trajset`` command line (``trajset.pipeline.cli``).
"""

__version__ = "0.1.0"

from trajset.schemas.context import Context, Settings
from trajset.schemas.records import Trajectory
from trajset.schemas.session import Entry, Session

from .atif import AtifOptions, items, items_from, session_documents, to_atif
from .inspect import read_store
from .options import ExportOptions, Mode, RunOptions, RunSettings
from .run.chain import export_session
from .run.driver import run_export
from .stores import discover, read_session, sample_store
from .tree import build_context, canonical_request, request_hash, trajectories

__all__ = [
    "AtifOptions",
    "Context",
    "Entry",
    "ExportOptions",
    "Mode",
    "RunOptions",
    "RunSettings",
    "Session",
    "Settings",
    "Trajectory",
    "__version__",
    "build_context",
    "canonical_request",
    "discover",
    "export_session",
    "items",
    "items_from",
    "read_session",
    "read_store",
    "request_hash",
    "run_export",
    "sample_store",
    "session_documents",
    "to_atif",
    "trajectories",
]
