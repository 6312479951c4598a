"""What each column of each table means, for ``trajset schema`` and the dataset card.

``COMMON`` holds the columns that mean the same in every table that has them;
``OWN`` the columns whose meaning is the table's own (``source`` of a step is
not ``source`` of an error).  A test checks that every declared column has
exactly one meaning here and that no meaning names a column that is gone.
"""

from __future__ import annotations

COMMON: dict[str, str] = {
    "session_id": "the session's id in its store",
    "leaf_id": "id of the entry the trajectory ends at; with session_id, a trajectory's key",
    "split": "train, or the --split name its session was assigned to (one per tree)",
    "redaction_version": "the redaction rule set the row went through (rs-<12 hex>: its "
    "versioned rules, listed in the manifest; none with --no-redact)",
    "agent_name": "the agent that wrote the session",
    "agent_version": "the agent's version",
    "model_name": "the model that answered (the last one named on the path, for a trajectory)",
    "messages": "the conversation in TRL's conversational format: role, content, tool_calls, "
    "tool_call_id, name, reasoning_content, trainable",
    "tools": "JSON text: the tool definitions the agent offered (OpenAI function format)",
    "tools_source": "recorded (the store holds tool definitions) or inferred (JSON Schemas "
    "built from the calls the store holds)",
    "n_user_turns": "messages a person wrote (not hidden harness context)",
    "n_tool_calls": "tool calls made",
    "n_failed_tool_calls": "tool outputs the store marks failed (is_error, ok: false, a "
    "non-zero exit code)",
    "recovered": "a failed call was later followed by a successful call of the same tool",
    "duration_sec": "wall clock seconds, first to last message or response",
    "window": "index of the context window along the path (a compaction starts the next)",
    "n_trainable": "assistant messages (sft) or tokens (tokenized) a loss should cover",
    "entry_id": "id of the store entry the row comes from",
    "pair_id": "id of the preference pair (stable across runs of the same input and options)",
    "granularity": "turn (the sides' next answers) or trajectory (the sides' whole branches)",
    "prompt": "the shared context before the sides differ (messages)",
}

OWN: dict[str, dict[str, str]] = {
    "trajectories": {
        "source_format": "the store kind the session was read from",
        "is_main": "ends at the session's last entry (its current state)",
        "is_preferred": "follows the preferred child at every fork it passes (--prefer)",
        "abandoned_at": "entry id of the first fork where it left the preferred child (null on "
        "the preferred path)",
        "preferred_over": "leaf ids of the trajectories it was preferred over at its forks",
        "n_steps": "ATIF steps in the trajectory's document",
        "total_prompt_tokens": "prompt tokens of every model call on the path (every context "
        "window, summarising calls included), as the store recorded them",
        "total_completion_tokens": "completion tokens of every model call on the path",
        "total_cached_tokens": "cached prompt tokens of every model call on the path",
        "total_cost_usd": "cost in US dollars of every model call on the path, where the store "
        "records it",
        "outcome_score": "score of the latest outcome located on its own part (below its last "
        "fork); never inherited from a shared prefix",
        "outcome_pass": "pass verdict of that outcome",
        "outcome_label": "label of that outcome",
        "atif_path": "its ATIF document, relative to the export folder",
        "n_tool_calls": "tool calls made",
        "content_hash": "sha256 of the canonical JSON of messages and tools (for deduplication)",
    },
    "sft": {
        "n_messages": "messages in the row",
    },
    "steps": {
        "step_id": "the step's number in its ATIF document, from 1",
        "source": "who wrote the step: user, agent or system",
        "timestamp": "ISO 8601 time the store recorded",
        "message": "the step's text",
        "reasoning_content": "the model's reasoning, where the store keeps it",
        "tool_calls": "calls the step made: tool_call_id, function_name, arguments (JSON text)",
        "observations": "tool outputs: source_call_id (the call answered) and content",
        "prompt_tokens": "prompt tokens of the model call",
        "completion_tokens": "completion tokens of the model call",
        "cached_tokens": "cached prompt tokens of the model call",
        "cost_usd": "cost of the model call in US dollars",
        "is_copied_context": "copied into a compacted context, not said again (not trainable)",
        "llm_call_count": "model calls behind the step; 0 for a deterministic dispatch",
        "extra": "JSON text: the step's other recorded fields",
    },
    "outcomes": {
        "kind": "what judged: feedback, test, task, tool_error, eval or custom",
        "target": "entry id the outcome judges (null: it judges the entry it was recorded at)",
        "score": "the score, as recorded",
        "pass": "the pass verdict, as recorded",
        "label": "names the judge or the scale",
        "details": "JSON text: the outcome's other recorded fields",
        "leaf_ids": "trajectories whose path holds the target (all of the session's for a "
        "session-wide outcome)",
    },
    "preferences": {
        "fork_entry_id": "entry id of the fork the sides leave",
        "kind": "response (both sides answer the same context) or prompt (they differ in user "
        "input)",
        "chosen": "what the preferred branch said after the fork (messages)",
        "rejected": "what the abandoned branch said after the fork (messages)",
        "chosen_leaf_id": "leaf of the trajectory the chosen side comes from",
        "rejected_leaf_id": "leaf of the trajectory the rejected side comes from",
        "chosen_score": "best outcome score located in the preferred branch (null: none)",
        "rejected_score": "best outcome score located in the abandoned branch (null: none)",
        "margin": "chosen_score - rejected_score (null unless both sides are scored)",
        "policy": "the --prefer policy that decided the fork",
    },
    "kto": {
        "kto_id": "id of the row (a side several pairs share is one row)",
        "source": "pair (a side of a preference pair) or outcome (--kto-from outcomes)",
        "completion": "the side or the trajectory's own part (messages)",
        "label": "true for a chosen side or a pass, false for a rejected side or a fail",
    },
    "tokenized": {
        "input_ids": "token ids of the row rendered with the tokenizer's chat template",
        "assistant_masks": "1 exactly on tokens of trainable assistant messages, else 0",
        "n_tokens": "length of input_ids",
        "truncated": "cut at the end of a message to fit --max-tokens",
    },
    "pair_tokens": {
        "prompt_tokens": "tokens of the pair's prompt",
        "chosen_tokens": "tokens of the chosen side after the prompt's",
        "rejected_tokens": "tokens of the rejected side after the prompt's",
    },
    "errors": {
        "source": "the file (or database and session) that could not be read",
        "session_id": "the session, where it could be told",
        "line": "1-based line in the file (null: not a line's fault)",
        "kind": "what went wrong, as a short name (bad_line, truncated, format, io, ...)",
        "message": "what went wrong and how to fix it",
    },
}


def meaning(table: str, column: str) -> str | None:
    """What ``column`` of ``table`` holds (None for a column without a meaning here)."""
    return OWN.get(table, {}).get(column) or COMMON.get(column)
