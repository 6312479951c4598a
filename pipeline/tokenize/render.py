"""One conversation rendered with a tokenizer's chat template, and its loss mask.

The mask comes from rendering prefixes at message boundaries, the usual way
(as TRL's and axolotl's maskers do): assistant message ``i`` is the text from
the end of ``messages[:i]`` rendered with the generation prompt to the end of
``messages[:i+1]``, without the white space after its end-of-turn token.  The
whole conversation is tokenized once with offsets, and a token is masked in
when it lies inside the span of an assistant message the tree marks
``trainable`` (never a copied or injected one).  A template whose prefixes are
not prefixes of the whole (one that rewrites earlier turns) gives no row:
``Unaligned``, counted, rather than a mask that could be wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

JSON = Any


class Unaligned(ValueError):
    """The template renders a prefix of the conversation otherwise than the whole."""


def hf_messages(messages: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """The ``messages`` column as chat templates read it, and as ``load_dataset`` gives it:
    no null members, no ``trainable``, each tool call's arguments an object (templates write
    ``arguments | tojson``: text would be rendered as a string inside the call)."""
    out = []
    for m in messages:
        msg = {k: v for k, v in m.items() if v is not None and k != "trainable"}
        msg.setdefault("content", "")
        if msg.get("tool_calls"):
            msg["tool_calls"] = [_with_object_arguments(c) for c in msg["tool_calls"]]
        out.append(msg)
    return out


def _with_object_arguments(call: dict[str, JSON]) -> dict[str, JSON]:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        return call
    try:
        parsed = json.loads(arguments)
    except ValueError:  # text that is no JSON is what the model wrote: keep it
        return call
    return {**call, "function": {**function, "arguments": parsed}}


@dataclass(frozen=True)
class Rendered:
    """A conversation's text, the spans of its assistant messages and whether each trains."""

    text: str
    spans: list[tuple[int, int, bool]]  # (start, end, trainable) per assistant message

    @property
    def ends(self) -> list[int]:
        """Where a row may be cut: the end of each assistant message."""
        return [end for _, end, _ in self.spans]


class Renderer:
    """A tokenizer and its chat template; ``render`` then ``encode`` rows in batches."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def text(self, messages: list[dict[str, JSON]], tools: JSON, prompt: bool = False) -> str:
        """The template's text of ``messages`` (chat-template form), with the generation
        prompt when ``prompt``."""
        text = self.tokenizer.apply_chat_template(
            messages, tools=tools, tokenize=False, add_generation_prompt=prompt
        )
        return str(text)

    def render(self, messages: list[dict[str, JSON]], tools: JSON) -> Rendered:
        """The text of ``messages`` (the ``messages`` column) and its assistant spans."""
        chat = hf_messages(messages)
        whole = self.text(chat, tools, False)
        spans = []
        for i, m in enumerate(messages):
            if m.get("role") != "assistant":
                continue
            before = self.text(chat[:i], tools, True)
            upto = self.text(chat[: i + 1], tools, False)
            if not (whole.startswith(upto) and upto.startswith(before)):
                raise Unaligned(f"message {i}: the template renders a prefix otherwise")
            spans.append((len(before), len(upto.rstrip()), bool(m.get("trainable"))))
        return Rendered(whole, spans)

    def encode(self, texts: list[str]) -> list[tuple[list[int], list[tuple[int, int]]]]:
        """(ids, character offsets) of each text, in one call to the fast tokenizer's own
        batch (``tokenizers``: transformers' conversion of every offset costs more than the
        tokenizing)."""
        encodings = self._fast.encode_batch(texts, add_special_tokens=False)
        return [(e.ids, e.offsets) for e in encodings]

    def lengths(self, texts: list[str]) -> list[int]:
        """How many tokens each text has (each distinct text tokenized once)."""
        distinct = list(dict.fromkeys(texts))
        counts = dict(zip(distinct, (len(e.ids) for e in self._fast.encode_batch(
            distinct, add_special_tokens=False)), strict=True))  # fmt: skip
        return [counts[t] for t in texts]

    def cut(self, text: str) -> int:
        """Where ``text`` may be cut without changing its tokens: after its last added token
        (the tokenizer splits those out first, so no token spans one)."""
        return max((text.rfind(t) + len(t) for t in self._added if t in text), default=0)

    @property
    def _fast(self) -> Any:
        return self.tokenizer.backend_tokenizer

    @cached_property
    def _added(self) -> list[str]:
        return [t for t in self.tokenizer.get_added_vocab() if t]


def mask(offsets: list[tuple[int, int]], spans: list[tuple[int, int, bool]]) -> list[int]:
    """1 for each token that lies whole inside a trainable span, else 0 (a token that
    straddles a span's edge is context: nothing untrainable is ever trained on)."""
    trainable = np.array([(a, b) for a, b, t in spans if t] or [(0, 0)], dtype=np.int64)
    if not offsets:
        return []
    tokens = np.asarray(offsets, dtype=np.int64)
    k = np.searchsorted(trainable[:, 0], tokens[:, 0], side="right") - 1
    inside = (k >= 0) & (tokens[:, 1] > tokens[:, 0])
    inside &= tokens[:, 1] <= trainable[np.maximum(k, 0), 1]
    return inside.astype(np.int8).tolist()
