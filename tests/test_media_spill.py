"""Media spilled out of a document: its copy, and the documents that share its raw items."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from trajset.pipeline.atif.media import _copied, spill_media

JSON_TREES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
        | st.tuples(inner, inner)
    ),
    max_leaves=40,
)


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list | tuple):
        return [value, *(c for v in value for c in _containers(v))]
    return []


@given(JSON_TREES)
def test_the_copy_is_deepcopy_s_and_shares_no_list_or_dict(tree: Any) -> None:
    copied = _copied(tree)
    assert copied == copy.deepcopy(tree)
    assert repr(copied) == repr(copy.deepcopy(tree))  # key order and container kinds too
    mutable = {id(c) for c in _containers(tree) if not isinstance(c, tuple)}
    assert not mutable & {id(c) for c in _containers(copied) if not isinstance(c, tuple)}


def test_a_document_s_spill_leaves_the_items_it_shares_with_another_untouched() -> None:
    url = "data:image/png;base64,iVBORw0KGgo="
    part = {"type": "image", "source": {"media_type": "image/png", "path": url}}
    step = {"step_id": 1, "source": "user", "message": [part], "extra": {"raw": url}}
    doc, other = {"steps": [step]}, {"steps": [step]}  # a session's documents share raw items
    spilled, files, omitted = spill_media(doc)
    (name,) = files
    assert name.startswith("images/") and omitted == []
    assert spilled["steps"][0]["message"][0]["source"]["path"] == name
    assert spilled["steps"][0]["extra"]["raw"] == name  # every copy of the URL in the document
    assert other["steps"][0]["message"][0]["source"]["path"] == url
    assert other["steps"][0]["extra"]["raw"] == url
