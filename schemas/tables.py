"""Declared Arrow schemas of the dataset tables (DESIGN §5).

Every batch written is cast to these schemas; nothing is inferred from data.
Heterogeneous JSON (tool arguments, tool schemas, extras, details) is JSON
text.  ``messages`` follows TRL's conversational format with tool calls;
``trainable`` marks the assistant turns a loss should cover (not copied
context, not ``llm_call_count: 0`` dispatch, see README).
"""

from __future__ import annotations

import pyarrow as pa

#: the JSON-text fields of the message tables a trainer reads as objects (a tool call's
#: ``arguments``, the ``tools`` offered): the dataset card declares them ``Json()``
TRAINER_JSON = frozenset({"arguments", "tools"})

TOOL_CALL = pa.struct(
    [
        pa.field("id", pa.string()),
        pa.field("type", pa.string()),
        pa.field(
            "function",
            pa.struct([pa.field("name", pa.string()), pa.field("arguments", pa.string())]),
        ),
    ]
)

MESSAGE = pa.struct(
    [
        pa.field("role", pa.string()),
        pa.field("content", pa.string()),
        pa.field("tool_calls", pa.list_(TOOL_CALL)),
        pa.field("tool_call_id", pa.string()),
        pa.field("name", pa.string()),
        pa.field("reasoning_content", pa.string()),
        pa.field("trainable", pa.bool_()),
    ]
)

MESSAGES = pa.list_(MESSAGE)

#: the version of the redaction rule set a row went through (``redactors.ruleset_version``):
#: every row of a publish's repository says which rules it passed, so versions never mix
REDACTION_VERSION = pa.field("redaction_version", pa.string())

TRAJECTORIES = pa.schema(
    [
        pa.field("session_id", pa.string(), nullable=False),
        pa.field("leaf_id", pa.string(), nullable=False),
        pa.field("source_format", pa.string()),
        pa.field("is_main", pa.bool_()),
        pa.field("is_preferred", pa.bool_()),
        pa.field("abandoned_at", pa.string()),
        pa.field("preferred_over", pa.list_(pa.string())),
        pa.field("n_steps", pa.int32()),
        pa.field("agent_name", pa.string()),
        pa.field("agent_version", pa.string()),
        pa.field("model_name", pa.string()),
        pa.field("total_prompt_tokens", pa.int64()),
        pa.field("total_completion_tokens", pa.int64()),
        pa.field("total_cached_tokens", pa.int64()),
        pa.field("total_cost_usd", pa.float64()),
        pa.field("outcome_score", pa.float64()),
        pa.field("outcome_pass", pa.bool_()),
        pa.field("outcome_label", pa.string()),
        pa.field("messages", MESSAGES),
        pa.field("tools", pa.string()),
        pa.field("tools_source", pa.string()),
        pa.field("atif_path", pa.string()),
        pa.field("n_user_turns", pa.int32()),
        pa.field("n_tool_calls", pa.int32()),
        pa.field("n_failed_tool_calls", pa.int32()),
        pa.field("recovered", pa.bool_()),
        pa.field("duration_sec", pa.float64()),
        pa.field("content_hash", pa.string()),
        pa.field("split", pa.string()),  # train, or a --split name
        REDACTION_VERSION,
    ]
)

SFT = pa.schema(
    [
        pa.field("session_id", pa.string(), nullable=False),
        pa.field("leaf_id", pa.string(), nullable=False),
        pa.field("window", pa.int32(), nullable=False),
        pa.field("agent_name", pa.string()),
        pa.field("agent_version", pa.string()),
        pa.field("messages", MESSAGES),
        pa.field("tools", pa.string()),
        pa.field("tools_source", pa.string()),
        pa.field("n_messages", pa.int32()),
        pa.field("n_trainable", pa.int32()),
        pa.field("n_user_turns", pa.int32()),
        pa.field("n_tool_calls", pa.int32()),
        pa.field("n_failed_tool_calls", pa.int32()),
        pa.field("recovered", pa.bool_()),
        pa.field("duration_sec", pa.float64()),
        pa.field("split", pa.string()),  # train, or a --split name
        REDACTION_VERSION,
    ]
)

STEPS = pa.schema(
    [
        pa.field("session_id", pa.string(), nullable=False),
        pa.field("leaf_id", pa.string(), nullable=False),
        pa.field("step_id", pa.int32(), nullable=False),
        pa.field("entry_id", pa.string()),
        pa.field("source", pa.string()),
        pa.field("timestamp", pa.string()),
        pa.field("model_name", pa.string()),
        pa.field("message", pa.string()),
        pa.field("reasoning_content", pa.string()),
        pa.field(
            "tool_calls",
            pa.list_(
                pa.struct(
                    [
                        pa.field("tool_call_id", pa.string()),
                        pa.field("function_name", pa.string()),
                        pa.field("arguments", pa.string()),
                    ]
                )
            ),
        ),
        pa.field(
            "observations",
            pa.list_(
                pa.struct(
                    [
                        pa.field("source_call_id", pa.string()),
                        pa.field("content", pa.string()),
                    ]
                )
            ),
        ),
        pa.field("prompt_tokens", pa.int64()),
        pa.field("completion_tokens", pa.int64()),
        pa.field("cached_tokens", pa.int64()),
        pa.field("cost_usd", pa.float64()),
        pa.field("is_copied_context", pa.bool_()),
        pa.field("llm_call_count", pa.int32()),
        pa.field("extra", pa.string()),
        pa.field("split", pa.string()),  # train, or a --split name
        REDACTION_VERSION,
    ]
)

OUTCOMES = pa.schema(
    [
        pa.field("session_id", pa.string(), nullable=False),
        pa.field("entry_id", pa.string(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("target", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("pass", pa.bool_()),
        pa.field("label", pa.string()),
        pa.field("details", pa.string()),
        pa.field("leaf_ids", pa.list_(pa.string())),
        pa.field("split", pa.string()),  # train, or a --split name
        REDACTION_VERSION,
    ]
)

PREFERENCES = pa.schema(
    [
        pa.field("pair_id", pa.string(), nullable=False),
        pa.field("session_id", pa.string(), nullable=False),
        pa.field("fork_entry_id", pa.string()),
        pa.field("granularity", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("prompt", MESSAGES),
        pa.field("chosen", MESSAGES),
        pa.field("rejected", MESSAGES),
        pa.field("chosen_leaf_id", pa.string()),
        pa.field("rejected_leaf_id", pa.string()),
        pa.field("chosen_score", pa.float64()),
        pa.field("rejected_score", pa.float64()),
        pa.field("margin", pa.float64()),
        pa.field("policy", pa.string()),
        pa.field("tools", pa.string()),
        pa.field("split", pa.string()),  # train, or a --split name
        REDACTION_VERSION,
    ]
)

KTO = pa.schema(
    [
        pa.field("kto_id", pa.string(), nullable=False),
        pa.field("session_id", pa.string(), nullable=False),
        pa.field("leaf_id", pa.string()),
        pa.field("source", pa.string()),  # pair | outcome
        pa.field("granularity", pa.string()),  # of the pair; null for an outcome row
        pa.field("prompt", MESSAGES),
        pa.field("completion", MESSAGES),
        pa.field("label", pa.bool_()),
        pa.field("tools", pa.string()),
        pa.field("split", pa.string()),  # train, or a --split name
        REDACTION_VERSION,
    ]
)

#: one row per ``sft`` row, rendered with a tokenizer's chat template (``trajset tokenize``)
TOKENIZED = pa.schema(
    [
        pa.field("session_id", pa.string(), nullable=False),
        pa.field("leaf_id", pa.string(), nullable=False),
        pa.field("window", pa.int32(), nullable=False),
        pa.field("split", pa.string()),
        REDACTION_VERSION,
        pa.field("input_ids", pa.list_(pa.int32())),
        pa.field("assistant_masks", pa.list_(pa.int8())),  # 1 exactly on trainable tokens
        pa.field("n_tokens", pa.int32()),
        pa.field("n_trainable", pa.int32()),
        pa.field("truncated", pa.bool_()),  # cut at the end of a message to fit --max-tokens
    ]
)

#: the token lengths of each ``preferences`` row's parts (to filter over-long pairs)
PAIR_TOKENS = pa.schema(
    [
        pa.field("pair_id", pa.string(), nullable=False),
        pa.field("session_id", pa.string(), nullable=False),
        pa.field("split", pa.string()),
        REDACTION_VERSION,
        pa.field("prompt_tokens", pa.int32()),
        pa.field("chosen_tokens", pa.int32()),
        pa.field("rejected_tokens", pa.int32()),
    ]
)

ERRORS = pa.schema(
    [
        pa.field("source", pa.string()),
        pa.field("session_id", pa.string()),
        pa.field("line", pa.int64()),
        pa.field("kind", pa.string()),
        pa.field("message", pa.string()),
    ]
)
