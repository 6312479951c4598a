"""The RE2 trigger pre-check never says "no" where Python's ``re`` finds the trigger."""

from __future__ import annotations

import re

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from trajset.pipeline import ExportOptions
from trajset.redactors import Identity, Pseudonyms, home_paths
from trajset.redactors.base import Rule
from trajset.redactors.passwords import PATTERNS
from trajset.redactors.prefilter import any_of, widen

TRIGGERS = [r.trigger for r in ExportOptions(redact=("all",)).redactor([]).rules if r.trigger]
CODE_POINTS = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]


WIDENED = [r"\s", r"\w", r"\d", r"\S", r"\W", r"\D", "(?i:i)", "(?i:[a-z])", "(?i:k)", "s"]


# a class that ends in ``-`` (``[_-]``) once became a range with the dotted i's appended
@pytest.mark.parametrize("pattern", [*WIDENED, "[_-]", "(?i:[a-z_-])"])
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


ANCHORED = [
    (rule.name, rule.pattern, rule.anchor)
    for rule in ExportOptions(redact=("all",)).redactor([]).rules
    if isinstance(rule, Rule) and rule.anchor is not None
] + [("password_assignment_v3", pattern, anchor) for pattern, anchor in PATTERNS]
_ANCHOR_PIECES = st.sampled_from(
    ["pass", "PASSWORD", "db_", "Pwd", "secret", "_TOKEN", "api-key", "KEY", "K", "ſ", "İ",
     "ı", "--", "-", ".", "_", "=", ":", " ", "\n", "\\n", "\\", '"', "'", "\\\"", "x",
     "abc123XYZ", "s3cr3tV4lue!", "sk-", "proj-", "ant-", "A" * 24, "@", "bob", ".com",
     "example", "9", "(", "[", "%", "+", "é"]
)  # fmt: skip


def test_every_anchored_rule_is_tested() -> None:
    names = {name for name, _, _ in ANCHORED}
    assert names == {
        "credential_assignment_v4", "password_assignment_v3", "email_v3", "url_credentials_v2",
        "authorization_header_v1", "bearer_token_v1", "command_line_password_v1",
    }  # fmt: skip


_NAME_CHARS = "abzABZ09_.-KſİıÉ"
_KEYWORD = st.sampled_from(
    ["pass", "pwd", "secret", "token", "key", "password", "api_key"]
).flatmap(
    lambda k: st.lists(st.booleans(), min_size=len(k), max_size=len(k)).map(
        lambda up: "".join(c.upper() if u else c for c, u in zip(k, up, strict=True))
    )
)
_ASSIGNMENT_TEXT = st.tuples(
    st.sampled_from(["", "--", "\\n", " ", '"']),
    st.text(_NAME_CHARS, max_size=6),
    _KEYWORD,
    st.text(_NAME_CHARS, max_size=4),
    st.sampled_from(["", '"', "'", '\\"']),
    st.sampled_from(["", " ", "\n", "\u00a0", "\t", " \t"]),
    st.sampled_from(["=", ":", " ", "::", "==", ":/", "\t"]),
    st.sampled_from(["", " ", '"']),
    st.text("aZ09!$#/+=-_.%é", min_size=0, max_size=20),
).map("".join)
_EMAIL_TEXT = st.tuples(
    st.sampled_from(["", " ", "\\n", "x\\t", "\\", "\\\\n"]),
    st.text("aZ09._%+-\\", min_size=1, max_size=8), st.just("@"),
    st.text("aZ09-.", min_size=1, max_size=8), st.sampled_from([".com", ".io", ".x", ""]),
).map("".join)  # fmt: skip
_HEADER_TEXT = st.tuples(
    st.sampled_from(["", "x", "-", "\\n", "proxy-", "Proxy-", "xproxy-", "https", "git+ssh"]),
    st.sampled_from(["Authorization", "AUTHORİZATION", "authorization", "Bearer", "bearer",
                     "BEARER", "://", ":\\/\\/", ":/"]),
    st.sampled_from(["", ": ", "=", '":"', " ", "\n"]),
    st.sampled_from(["", "Bearer ", "token ", "basic "]),
    st.text("aZ09._~+/=:-@", min_size=0, max_size=24),
).map("".join)  # fmt: skip
_URL_TEXT = st.tuples(
    st.sampled_from(["", "x", "-", " ", "\\n", "9"]), st.text("aZ09+.-", max_size=6),
    st.sampled_from(["://", ":\\/\\/"]), st.text("aZ09.-", min_size=1, max_size=6),
    st.just(":"), st.text("aZ09!$.-", min_size=1, max_size=8), st.just("@host"),
).map("".join)  # fmt: skip
_COMMAND_TEXT = st.tuples(
    st.sampled_from(["", " ", "x", ".", "\\n", "|", "$ "]),
    st.sampled_from(["mysql", "mysqldump", "mariadb-dump", "sshpass", "docker", "redis-cli",
                     "curl", "mariadbdocker", "mycurl"]),
    st.sampled_from([" -u root -p", " -p", " login -p ", " login --password=", " -a ",
                     " -u dana:", " --user 'dana:", " -f -p", "\n-p", " | -p"]),
    st.sampled_from(["S3cr3t", "'pw 1'", "$PW", "***", "", "-x"]),
).map("".join)  # fmt: skip
_KEY_TEXT = st.tuples(
    st.sampled_from(["", "x", "-", "_"]), st.just("sk-"),
    st.sampled_from(["", "proj-", "ant-"]), st.text("aZ09_-", min_size=15, max_size=30),
).map("".join)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.one_of(
            _ANCHOR_PIECES,
            _ASSIGNMENT_TEXT,
            _EMAIL_TEXT,
            _KEY_TEXT,
            _HEADER_TEXT,
            _URL_TEXT,
            _COMMAND_TEXT,
        ),
        max_size=8,
    ).map("".join)
)
def test_anchored_search_finds_exactly_what_finditer_finds(text: str) -> None:
    for name, pattern, anchor in ANCHORED:
        expected = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in anchor.finditer(pattern, text)] == expected, (name, text)


RULES = [r for r in ExportOptions(redact=("all",)).redactor([]).rules if isinstance(r, Rule)]
# the start of keys and tokens after every kind of character, inside words too
_TOKEN_PIECES = st.sampled_from(
    ["sk-", "task-", "ask-", "proj-", "ant-", "api03-", "hf_", "ghp_", "xoxb-", "AKIA", "eyJ",
     "A" * 24, "a1B2" * 10, ".", "\\n", "\\t", "\\", "=", ":", " ", '"', "-", "_", "+", "/",
     "é", "€", "\U0001f600", "x", "9", "\n", "[", "`", "{", "@"]
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(_TOKEN_PIECES, max_size=10).map("".join))
def test_a_rules_trigger_fires_wherever_its_pattern_matches(text: str) -> None:
    """The pre-check may only skip a string where the rule finds nothing."""
    for rule in RULES:
        if next(iter(rule.spans(text)), None) is not None:
            assert re.search(rule.trigger, text), (rule.name, text)
            assert any_of([rule.trigger])(text), (rule.name, text)


def test_a_key_is_looked_for_where_a_key_can_start_not_inside_a_word() -> None:
    openai = any_of([next(r.trigger for r in RULES if r.name == "openai_key_v2")])
    assert not openai("task-0000__025b413/s1") and not openai("ask-me, a task-")
    # a diff marker, a path or percent-encoding may stand right before a key (v1 missed them)
    for before in ("", " ", '"', "=", "\\n", "é", "(", "-", "+", "/", "_", "%2F"):
        assert openai(before + "sk-proj-" + "a1B2" * 6), before


#: identities that overlap, nest and share words, as a store's do
_PEOPLE = Pseudonyms.of(
    [Identity("user", "Sample_User"), Identity("user", "yoav farhi"), Identity("user", "Straße"),
     Identity("workdir", "/Users/Sample_User/repos/app"), Identity("workdir", "/work/acme-app"),
     Identity("workdir", "/work/acme-app/sub"), Identity("repo", "git@github.com:acme/app.git"),
     Identity("branch", "feat/acme-app")],
    homes=True,
)  # fmt: skip
_PEOPLE_PIECES = st.sampled_from(
    ["Sample_User", "sample user", "SAMPLE-USER", "yoav", "farhi", "Yoav.Farhi", "straße",
     "STRASSE", "/Users/", "/home/", "/work/acme-app", "-work-acme-app", "--work-acme-app--",
     "/sub", "acme/app", "acme/app.git", "git@github.com:", "feat/acme-app", "-", "--", "_",
     ".", "/", " ", "x", "9", "é", "K", "\n", ":", "~"]
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PEOPLE_PIECES, max_size=10).map("".join))
def test_identities_are_looked_for_where_one_can_start_and_found_as_finditer_finds(
    text: str,
) -> None:
    assert _PEOPLE.anchor is not None
    expected = [m.span() for m in _PEOPLE.pattern.finditer(text)]
    assert list(_PEOPLE.spans(text)) == expected, text


@pytest.mark.parametrize("n", [1, 63, 64, 65, 70])
def test_an_email_is_looked_for_up_to_64_characters_before_its_at_and_never_after(n: int) -> None:
    (_, pattern, anchor), = [a for a in ANCHORED if a[0] == "email_v3"]  # fmt: skip
    for text in (f"{'b' * n}@example.com", f"x {'b' * n}@a.io@b@example.com", f"-@{'b' * n}@x.org"):
        expected = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in anchor.finditer(pattern, text)] == expected, text


_HOME_PIECES = st.sampled_from(
    ["/home/", "/Users/", "C:\\Users\\", "c:\\\\Users\\\\", "D:", "\\Users", "Users\\", "\\n",
     "\\", "dana", "Dana Lee", "Shared", "All Users", "/", " ", ".", "-", "~", "é", "x", "9", "\n",
     '"', ":"]
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(_HOME_PIECES, max_size=10).map("".join))
def test_homes_are_looked_for_where_one_can_start_and_replaced_as_subn_replaces(text: str) -> None:
    assert home_paths._STARTS.subn(home_paths._GENERIC, "~", text) == home_paths._GENERIC.subn(
        "~", text
    ), text
