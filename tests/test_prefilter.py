"""The RE2 trigger pre-check never says "no" where Python's ``re`` finds the trigger."""

from __future__ import annotations

import re

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from trajset.pipeline import ExportOptions
from trajset.redactors.prefilter import any_of, widen

TRIGGERS = [r.trigger for r in ExportOptions(redact=("all",)).redactor([]).rules if r.trigger]
CODE_POINTS = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]


@pytest.mark.parametrize(
    "pattern", [r"\s", r"\w", r"\d", r"\S", r"\W", r"\D", "(?i:i)", "(?i:[a-z])", "(?i:k)", "s"]
)
def test_widened_escapes_and_case_folds_match_every_code_point_re_matches(pattern: str) -> None:
    python, wide = re.compile(pattern), re2.compile(widen(pattern))
    missed = [c for c in CODE_POINTS if python.fullmatch(c) and not wide.fullmatch(c)]
    assert missed == []


def test_patterns_re2_cannot_read_fall_back_to_re() -> None:
    assert widen(r"(?<![a-z])key") is None and widen(r"[^\s]") is None
    assert any_of([r"(?<![a-z])key"])("a key") and not any_of([r"(?<![a-z])key"])("akey")
    hit = any_of([r"(?<![a-z])key", "token"])
    assert hit("token") and hit("key") and not hit("monkey")


def test_every_built_in_trigger_is_checked_by_re2() -> None:
    assert all(widen(t) is not None and re2.compile(widen(t)) for t in TRIGGERS)


# text made of the triggers' own pieces, odd case and Unicode look-alikes, so hits are common
_PIECES = st.sampled_from(
    ["pass", "PWD", "Secret", "tokEn", "key", "=", ":", '"', "\\", " ", "\u00a0", "\u2003",
     "\n", "İ", "ı", "K", "ſ", "sk-", "ant-", "AKIA", "eyJ", "@", "://", "/home/", "--", "x",
     "authorization", "AUTHORİZATION", "Bearer", "hooks.slack", "gh", "p_", "_live_", "9"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_the_pre_check_fires_wherever_re_finds_a_trigger(text: str) -> None:
    hit = any_of(TRIGGERS)
    for trigger in TRIGGERS:
        if re.search(trigger, text):
            assert hit(text), (trigger, text)
            assert any_of([trigger])(text), (trigger, text)
