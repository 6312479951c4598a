"""Where structure is, by position: what redaction treats apart (DESIGN §2).

Only the envelope and the known id, reference and enum positions of each
entry type are structure, and only at the level where they occur: the same
member name deeper down (a decision's ``reason``, ``details.reason``,
``data.source``) is text and is examined by every rule.  Member names at
these levels are never rewritten, so an entry keeps its shape whatever a rule
finds.  Ids and references (``REFERENCES``) are never rewritten either: a
session whose ids hold a secret is refused; ciphertext (``OPAQUE``) is kept.  The other structural values
(enums, tool names, hashes, times, a run's ``ref``) are examined by the secret rules and
the store's identities only (not the opt-in personal-data patterns, which match parts of
UUIDs and times): a valid one holds no secret, and one that does is no longer valid.
"""

from __future__ import annotations

ENVELOPE = frozenset({"type", "id", "parent", "ts"})
#: header members that are structure
HEADER = frozenset(
    {
        "type",
        "format",
        "id",
        "created_at",
        "payload",
        "parent_session",
        "spawned_by",
        "records",
        "media",
    }
)
#: per entry type, the top-level members (beside the envelope) that are ids, references or enums
ENTRY: dict[str, frozenset[str]] = {
    "item": frozenset({"response", "visible"}),
    "response": frozenset({"response_id", "status", "request_hash", "latency_ms"}),
    "config": frozenset({"replace", "tools_removed"}),
    "compaction": frozenset({"first_kept", "tokens_before"}),
    "branch_summary": frozenset({"from"}),
    "run": frozenset({"run_id", "phase", "source", "reason", "ref", "pending"}),
    "dispatch": frozenset({"call_id", "target"}),
    "decision": frozenset({"call_id", "target", "verdict"}),
    "label": frozenset({"target"}),
    "outcome": frozenset({"target", "kind", "score", "pass"}),
    "link": frozenset({"rel", "session", "call_id"}),
    "custom": frozenset({"ns"}),
}
#: members whose value is an Open Responses item (or a list of them)
ITEM_VALUED = frozenset({"item", "summary"})
#: inside an item, at any depth (content parts, annotations): the members that are structure;
#: ``encrypted_content`` (reasoning, compaction) is a provider's ciphertext, which holds no
#: text to redact and breaks when rewritten (and its base64 runs look like secret names)
ITEM = frozenset(
    {"type", "id", "call_id", "status", "role", "phase", "detail", "encrypted_content"}
)
#: inside a tool definition (``tools_added[*]``): the members that name it
TOOL = frozenset({"type", "name", "strict"})
#: members that are ids or references, at any structural level: never rewritten
REFERENCES = frozenset(
    {"id", "parent", "parent_session", "spawned_by", "response", "response_id", "first_kept",
     "from", "run_id", "call_id", "target", "session"}
)  # fmt: skip
#: what is kept as it is without being examined: a provider's ciphertext
OPAQUE = frozenset({"encrypted_content"})
#: every structural member name: a literal secret equal to one is refused
NAMES = ENVELOPE | HEADER | ITEM | TOOL | ITEM_VALUED | frozenset().union(*ENTRY.values())


def entry_structure(entry_type: str) -> frozenset[str]:
    return ENVELOPE | ENTRY.get(entry_type, frozenset())
