"""``trajset publish``: an export folder to a Hugging Face Hub dataset repository, safely.

Before anything is sent the folder is checked (``checks.py``): ``validate`` must pass,
the export must be finished (its manifest is written last) and non-empty, and redaction
must have been on with the default rules and ``scan`` must find nothing, unless
``--allow-unredacted``.  The repository is private by default.

A repository that holds an earlier publish grows (``merge.py``): its index
(``index.py``) says which rows and files it holds by content hash, so only what is new
or changed is sent, a session the export holds again replaces its older rows, and one it
no longer holds stays unless ``--prune``; rows of two redaction rule sets are never left
side by side.  The manifest and card are the merged repository's, with a publication
record (``record.py``); ``upload.py`` stages what is sent and sends it.  The token comes
from where ``huggingface_hub`` finds it (``HF_TOKEN``, the login cache) and is never
printed.  ``HubClient`` is the seam: ``huggingface_hub.HfApi`` in use, a double in tests.
"""

from __future__ import annotations

from .checks import PublishRefused, check
from .index import INDEX
from .upload import IGNORE, LARGE_BYTES, LARGE_FILES, HubClient, Plan, hub_client, plan, upload

__all__ = [
    "IGNORE",
    "INDEX",
    "LARGE_BYTES",
    "LARGE_FILES",
    "HubClient",
    "Plan",
    "PublishRefused",
    "check",
    "hub_client",
    "plan",
    "upload",
]
