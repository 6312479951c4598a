"""A store of hostile session files, each one a defect found by hand (issue: reliability)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.builder import SessionBuilder


def basic(session_id: str, **header: object) -> SessionBuilder:
    b = SessionBuilder(session_id, hashes=False, **header)
    b.user("hi")
    b.respond(text="ok", usage=(5, 3, 0))
    return b


def _deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def write_hostile_store(root: Path) -> dict[str, str]:
    """Write the files under ``root``; returns file name -> what it is."""
    root.mkdir(parents=True, exist_ok=True)
    made: dict[str, str] = {}

    def put(name: str, text: str | bytes, what: str) -> None:
        path = root / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        made[name] = what

    put("ok.jsonl", basic("normal-1").text(), "a normal session")
    put("long.jsonl", basic("L" * 300).text(), "a 300-character session id")
    b = basic("long-leaf")
    b.add("label", id="Q" * 300, target="u0000001", label="x")
    put("longleaf.jsonl", b.text(), "a 300-character leaf id")
    b = basic("deep-line")
    put(
        "deep.jsonl",
        b.text()
        + '{"type":"acme:x","id":"z","parent":null,"ts":"2026-01-01T00:00:00Z","data":'
        + _deep(10_000)
        + "}\n"
        + json.dumps(
            {
                "type": "item",
                "id": "after",
                "parent": None,
                "ts": "2026-01-01T00:00:00Z",
                "item": {"type": "message", "role": "user", "content": "x"},
            }
        )
        + "\n",
        "a line nested 10,000 levels (not last)",
    )
    put(
        "deep600.jsonl",
        basic("deep-600").text().rstrip("\n")
        + "\n"
        + '{"type":"acme:x","id":"z","parent":null,"ts":"2026-01-01T00:00:00Z","data":'
        + _deep(600)
        + "}\n",
        "a legal 600-level extension entry",
    )
    b = basic("big-tokens")
    b.respond(text="x", usage=(2**64, 10**30, 0))
    put("big.jsonl", b.text(), "token counts of 2**64 and 10**30")
    b = basic("old-ts")
    b.entries[-1]["ts"] = "0001-01-01T00:30:00+01:00"
    put("oldts.jsonl", b.text(), "a timestamp without a UTC form")
    for i, sid in enumerate(["a/b", "a:b", "a b", "..", "../x", "CON", "s_L"]):
        put(f"name{i}.jsonl", basic(sid).text(), f"session id {sid!r}")
    b = basic("s")
    b.add("label", id="L", target="u0000001", label="x")
    put("sL.jsonl", b.text(), "session s with leaf L (beside session s_L)")
    put(
        "neginf.jsonl",
        basic("neg-inf").text().replace('"output_tokens":3', '"output_tokens":3,"x":-1e400', 1),
        "-1e400",
    )
    cut = (
        basic("cut-char").text().encode()
        + '{"type":"item","id":"x","parent":null,"ts":"2026-01-01T00:00:00Z","item":{"type":"message","role":"user","content":"é'.encode()[
            :-1
        ]
    )
    put("cut.jsonl", cut, "a last line cut inside a multi-byte character")
    put("dup.jsonl", basic("normal-1").text(), "a second file with the session id of ok.jsonl")
    put("empty.jsonl", b"", "an empty file")
    put("bom.jsonl", b"\xef\xbb\xbf" + basic("bom").text().encode(), "a byte-order mark")
    put("crlf.jsonl", basic("crlf").text().replace("\n", "\r\n"), "CRLF line ends")
    put(
        "types.jsonl",
        '{"type":"session","format":"agentsession/0.2","id":5,"created_at":[],"payload":{}}\n',
        "a header of the wrong types",
    )
    for i, sid in enumerate(["18446744073709551616", '{"a":1}']):  # found by benchmarks/fuzz.py
        header = f'{{"type":"session","format":"agentsession/0.2","id":{sid},"created_at":"x"}}'
        put(f"badid{i}.jsonl", header + "\n", f"a header id of {sid} (no SQLite value)")
    os.symlink("loop.jsonl", root / "loop.jsonl")
    made["loop.jsonl"] = "a symlink loop"
    os.symlink("missing.jsonl", root / "dangling.jsonl")
    made["dangling.jsonl"] = "a dangling link"
    os.mkfifo(root / "fifo.jsonl")
    made["fifo.jsonl"] = "a FIFO"
    (root / "folder.jsonl").mkdir()
    made["folder.jsonl"] = "a folder named like a session file"
    return made
