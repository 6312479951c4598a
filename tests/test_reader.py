"""Reading session files exactly as the reference does (spec §3.1)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajset.pipeline import read_session
from trajset.pipeline.errors import SessionReadError
from trajset.pipeline.stores import jsonl, read_session_text, recording_reads
from trajset.pipeline.stores.base import input_lines
from trajset.schemas.session import Issue

from .conftest import session_file

HEADER = '{"type":"session","format":"agentsession/0.2","id":"s1","created_at":"2026-01-01T00:00:00Z","payload":"openresponses/2026-04-24"}'
C1 = '{"type":"config","id":"c1","parent":null,"ts":"2026-01-01T00:00:00Z","model":"m"}'
U1 = '{"type":"item","id":"u1","parent":"c1","ts":"2026-01-01T00:00:01Z","item":{"type":"message","role":"user","content":"hi"}}'


@pytest.mark.parametrize(
    ("name", "rule", "line"),
    [
        ("corrupt-middle", "bad_line", None),
        ("duplicate-id", "duplicate_id", None),
        ("unsupported-format", "unsupported_format", 1),
        ("bad-parent", "unknown_parent", None),
        ("missing-id", "bad_line", None),
    ],
)
def test_negative_fixtures_fail_with_rule_file_and_line(
    agentsession_data: Path, name: str, rule: str, line: int | None
) -> None:
    path = session_file(name)
    with pytest.raises(SessionReadError) as info:
        read_session(path)
    err = info.value
    assert err.rule == rule
    assert err.line is not None and (line is None or err.line == line)
    message = str(err)
    assert "\n" not in message
    assert message.startswith(f"{path}:{err.line}")


def test_truncated_file_keeps_its_complete_prefix(agentsession_data: Path) -> None:
    session = read_session(session_file("truncated"))
    assert [e.id for e in session.entries] == ["c0000001", "i0000001"]
    assert session.truncation is not None
    assert session.truncation.line == 4
    assert "invalid JSON" in session.truncation.reason


def test_bad_first_kept_reads_fine(agentsession_data: Path) -> None:
    session = read_session(session_file("bad-first-kept"))
    assert session.entries


def test_last_line_invalid_body_is_a_truncation() -> None:
    bad = '{"type":"config","parent":"c1","ts":"2026-01-01T00:00:00Z"}'
    session = read_session_text("\n".join([HEADER, C1, bad]) + "\n")
    assert [e.id for e in session.entries] == ["c1"]
    assert session.truncation is not None and "no id" in session.truncation.reason


def test_anything_after_a_bad_last_line_makes_it_an_error() -> None:
    with pytest.raises(SessionReadError) as info:
        read_session_text("\n".join([HEADER, C1, '{"type":"item","id":"x",']) + "\n\n")
    assert info.value.line == 3


def test_whitespace_only_line_is_a_bad_line_not_blank() -> None:
    with pytest.raises(SessionReadError) as info:
        read_session_text("\n".join([HEADER, C1, "   ", U1]) + "\n")
    assert info.value.line == 3 and info.value.rule == "bad_line"


def test_empty_lines_and_crlf_are_skipped_and_counted() -> None:
    session = read_session_text(HEADER + "\r\n\r\n" + C1 + "\r\n" + U1 + "\r\n")
    assert [(e.id, e.line) for e in session.entries] == [("c1", 3), ("u1", 4)]


def test_forward_parent_reference_is_an_error() -> None:
    later = '{"type":"item","id":"u2","parent":"u3","ts":"2026-01-01T00:00:01Z","item":{"type":"message","role":"user","content":"a"}}'
    with pytest.raises(SessionReadError) as info:
        read_session_text("\n".join([HEADER, C1, later, U1]) + "\n")
    assert info.value.rule == "unknown_parent"


def test_any_minor_of_major_zero_is_read() -> None:
    session = read_session_text(HEADER.replace("0.2", "0.9") + "\n" + C1 + "\n")
    assert session.header.format == "agentsession/0.9"


def test_nan_and_undecodable_items_are_bad_lines() -> None:
    nan = '{"type":"outcome","id":"o1","parent":"c1","ts":"2026-01-01T00:00:00Z","kind":"eval","score":NaN}'
    with pytest.raises(SessionReadError):
        read_session_text("\n".join([HEADER, C1, nan, U1]) + "\n")
    bad_item = '{"type":"item","id":"u0","parent":"c1","ts":"2026-01-01T00:00:01Z","item":{"type":"message","role":"user","content":5}}'
    with pytest.raises(SessionReadError):
        read_session_text("\n".join([HEADER, C1, bad_item, U1]) + "\n")


def test_reject_decision_needs_a_reason() -> None:
    dec = '{"type":"decision","id":"d1","parent":"c1","ts":"2026-01-01T00:00:00Z","call_id":"c","target":"c1","verdict":"reject"}'
    with pytest.raises(SessionReadError) as info:
        read_session_text("\n".join([HEADER, C1, dec, U1]) + "\n")
    assert "reason" in str(info.value)


def test_unknown_members_and_extensions_round_trip(agentsession_data: Path, tmp_path: Path) -> None:
    import json

    path = session_file("extensions")
    session = read_session(path)
    out = tmp_path / "copy.jsonl"
    session.write(out)
    original = [json.loads(line) for line in path.read_text().splitlines() if line]
    copied = [json.loads(line) for line in out.read_text().splitlines() if line]
    assert copied == original
    note = next(e for e in session.entries if e.type == "agentturn:note")
    assert list(note.raw) == ["type", "id", "parent", "ts", "text", "nested", "order"]
    assert session.by_id["c0000001"].body.unknown_members() == {
        "acme_note": "kept on a known entry"
    }


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_bytes((HEADER + "\n" + C1 + "\n").encode() + b'{"type":"\xff"}\n')
    with pytest.raises(SessionReadError) as info:
        read_session(p)
    assert info.value.line == 3 and info.value.rule == "encoding"


@pytest.mark.parametrize("count", ["2.5", "1e3", "true", '"7"', str(2**70)])
def test_a_token_count_that_is_no_integer_is_a_bad_line(count: str) -> None:
    """Usage counts are integers (the reference decodes a typed usage): ``2.5`` or ``1e3``
    fails its line (a fractional count reached ATIF validation and lost the trajectory)."""
    usage = f'{{"input_tokens":{count},"output_tokens":1,"total_tokens":3}}'
    r1 = f'{{"type":"response","id":"r1","parent":"u1","ts":"2026-01-01T00:00:02Z","response_id":"x","status":"completed","usage":{usage}}}'
    with pytest.raises(SessionReadError) as info:
        read_session_text("\n".join([HEADER, C1, U1, r1, U1.replace("u1", "u2")]) + "\n")
    assert info.value.line == 4 and info.value.rule == "bad_line"
    assert "input_tokens" in str(info.value) or "64-bit" in str(info.value)


# ------------------------------------------------------------------ a file read a line at a time

#: pieces a generated file is made of: lines that read, lines that do not, blank ones, bytes
#: that are not UTF-8 and a character cut short
PIECES = [HEADER.encode(), C1.encode(), U1.encode(), b'{"type":"item",', b"", b"\r", b"   "]
PIECES += [b"\xff", U1.encode()[:-2] + b"\xe2\x82", "é".encode(), b"[1]", b'"s"']


def _whole_file(path: Path) -> object:
    """The outcome of reading ``path`` as one text (what ``read_session`` did before it
    read a line at a time): the file decoded whole, then ``read_session_text``."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) - exc.start >= 4 or b"\n" in data[exc.start :]:
            line = data.count(b"\n", 0, exc.start) + 1
            return ("error", "encoding", line, f"{path}:{line}: file is not UTF-8")
        text = data.decode("utf-8", errors="replace")
    return _outcome(lambda: read_session_text(text, source=str(path)))


def _outcome(read: object) -> object:
    try:
        s = read()  # type: ignore[operator]
    except SessionReadError as exc:
        return ("error", exc.rule, exc.line, str(exc))
    t = s.truncation
    return ("ok", [(e.id, e.line, e.raw) for e in s.entries], t and (t.line, t.text, t.reason))


def _joined(lines: list[tuple[bytes, bytes]], lf_at_end: bool) -> bytes:
    """The pieces, each with its line end; the last end left off unless ``lf_at_end``."""
    data = b"".join(piece + end for piece, end in lines)
    return data if not lines or lf_at_end else data.removesuffix(lines[-1][1])


#: generated files: up to 8 of the pieces, each ended by LF or CRLF, a final end or not
FILES = st.builds(
    _joined,
    st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from([b"\n", b"\r\n"])), max_size=8),
    st.booleans(),
)


def _written(factory: pytest.TempPathFactory, data: bytes) -> Path:
    path = factory.mktemp("f") / "f.jsonl"
    path.write_bytes(data)
    return path


@given(FILES)
@settings(max_examples=300, deadline=None)
def test_a_file_read_a_line_at_a_time_reads_as_its_whole_text(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = _written(tmp_path_factory, data)
    with recording_reads() as read:
        streamed = _outcome(lambda: read_session(path))
    assert streamed == _whole_file(path)
    if streamed[0] == "ok":  # what was read is noted for the unit's fingerprint
        assert read[str(path)] == ("sha256:" + hashlib.sha256(data).hexdigest(), len(data))


def test_a_later_line_that_is_not_utf8_fails_the_file_before_an_earlier_bad_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([HEADER.encode(), b"{", C1.encode(), b"\xff", U1.encode()]))
    with pytest.raises(SessionReadError) as info:
        read_session(path)
    assert (info.value.rule, info.value.line) == ("encoding", 4)


def _objects_split_whole(data: bytes, name: str) -> tuple[list[Any], list[Any]]:
    """``jsonl.objects`` as it was: every line split out of the file's bytes at once."""
    out, issues = [], []
    lines = data.split(b"\n")
    for i, chunk in enumerate(lines, 1):
        chunk = chunk.removeprefix(jsonl.BOM) if i == 1 else chunk
        if not chunk.strip():
            continue
        try:
            raw = json.loads(chunk.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            last = i == len(lines) or (i == len(lines) - 1 and not lines[-1])
            what = "the final line is cut short" if last else "a line does not decode"
            why = jsonl._why(exc)
            issues.append(
                Issue("truncated" if last else "bad_line", i, f"{name}: {what} ({why}); the other lines were read")
            )  # fmt: skip
            continue
        if isinstance(raw, dict):
            out.append((i, raw))
        else:
            issues.append(Issue("bad_line", i, f"{name}: line {i} holds {jsonl.json_kind(raw)}, "
                                "not an object; the other lines were read"))  # fmt: skip
    return out, issues


@given(FILES)
@settings(max_examples=300, deadline=None)
def test_lenient_lines_read_one_at_a_time_as_split_whole(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = _written(tmp_path_factory, data)
    expected = _objects_split_whole(data, "f.jsonl")
    assert jsonl.objects(data, "f.jsonl") == expected
    assert jsonl.objects(input_lines(path), "f.jsonl") == expected


def test_what_reading_works_out_of_an_entry_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader checks each item by re-encoding it and each ``ts`` by parsing it; the
    entry keeps both, so no later stage does that work again."""
    from trajset.schemas import session as session_module
    from trajset.schemas.openresponses import encode_item
    from trajset.schemas.timestamps import parse_rfc3339

    session = read_session_text("\n".join([HEADER, C1, U1]))
    user = session.by_id["u1"]

    def again(*_: Any) -> Any:
        raise AssertionError("worked out again")

    monkeypatch.setattr(session_module, "encode_item", again)
    monkeypatch.setattr(session_module, "parse_rfc3339", again)
    assert user.encoded_item() == encode_item(json.loads(U1)["item"])
    assert user.seconds() == parse_rfc3339("2026-01-01T00:00:01Z").timestamp()
    assert session.by_id["c1"].seconds() == parse_rfc3339("2026-01-01T00:00:00Z").timestamp()
