"""Session stores made from code: the bundled sample store and benchmark corpora.

    python benchmarks/corpus.py sample pipeline/sample_store     # regenerate the sample store
    python benchmarks/corpus.py corpus /tmp/corpus --sessions 2000 --seed 1
    python benchmarks/corpus.py corpus /tmp/big --sessions 200 --tool-output-kb 36  # ~60 MB
    python benchmarks/corpus.py corpus /tmp/ex --format einox --sessions 200 --tool-output-kb 36
    python benchmarks/corpus.py corpus /tmp/cx --format codex --sessions 200 --tool-output-kb 36
    python benchmarks/corpus.py corpus /tmp/gx --format gemini-cli --sessions 200 --tool-output-kb 36
    python benchmarks/corpus.py corpus /tmp/px --format pi --sessions 200 --tool-output-kb 36
    python benchmarks/corpus.py corpus /tmp/ox --format opencode --sessions 200 --tool-output-kb 36
    python benchmarks/corpus.py corpus /tmp/hj --format harbor --sessions 1000 --tool-output-kb 4
    python benchmarks/corpus.py corpus /tmp/sx --format suga --sessions 200 --tool-output-kb 36

The sample store is committed as package data; ``tests/test_sample_store.py``
checks that it still equals what ``build_sample_store`` writes.
"""

from __future__ import annotations

import argparse
import base64
import importlib
import random
import shutil
import sys
import uuid
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the builder lives in tests/
sys.path.insert(0, str(Path(__file__).resolve().parent))  # texts.py, when imported by path
from texts import sentence, tool_output

from tests.builder import SessionBuilder
from trajset.pipeline.stores.agentsession import store_path

HARNESS = {"name": "acme-coder", "version": "2.3.1"}
BASH = {
    "type": "function",
    "name": "bash",
    "description": "Run a shell command in the workspace",
    "parameters": {
        "type": "object",
        "properties": {"cmd": {"type": "string"}},
        "required": ["cmd"],
    },
}
READ = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file from the workspace",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
DELEGATE = {
    "type": "function",
    "name": "delegate",
    "description": "Hand a sub-task to a helper agent",
    "parameters": {
        "type": "object",
        "properties": {"task": {"type": "string"}},
        "required": ["task"],
    },
}


def _png(width: int = 2, height: int = 2) -> bytes:
    """A tiny valid PNG (grey pixels), so the sample image is real media."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
        )

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x00\x00\x00\x00"
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def _write(root: Path, b: SessionBuilder, text: str | None = None) -> Path:
    path = store_path(root, b.header)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else b.text(), encoding="utf-8")
    return path


def fix_failing_test() -> SessionBuilder:
    """Tool calls, an inline screenshot, a regenerated final answer, test outcomes, labels."""
    b = SessionBuilder(
        "0199a1b2-0001-7000-8000-00000000a001",
        "2026-10-01T09:00:00Z",
        harness=HARNESS,
        cwd="/home/dana/projects/invoicer",
    )
    b.config(
        model="gpt-5",
        instructions="You are a careful coding agent. Run tests before answering.",
        reasoning={"effort": "medium", "summary": None},
        tools_added=[BASH, READ],
        extra={"temperature": 0.2},
    )
    b.add(
        "env",
        cwd="/home/dana/projects/invoicer",
        vcs={"system": "git", "revision": "4f1c2e9", "dirty": True},
        tools={"python": "3.12.4", "pytest": "8.3.2"},
    )
    image = "data:image/png;base64," + base64.b64encode(_png()).decode()
    b.message(
        "user",
        [
            {
                "type": "input_text",
                "text": "The totals test fails on CI, see the screenshot. Fix it.",
            },
            {"type": "input_image", "image_url": image},
        ],
    )
    b.respond(
        reasoning="Run the failing test first.",
        calls=[("call_1", "bash", {"cmd": "pytest tests/test_totals.py -x"})],
        model="gpt-5",
        usage=(812, 64, 0),
    )
    b.tool_output("call_1", "FAILED tests/test_totals.py::test_rounding - assert 10.004 == 10.0")
    b.respond(
        calls=[("call_2", "read_file", {"path": "invoicer/totals.py"})],
        model="gpt-5",
        usage=(905, 41, 768),
    )
    after_read = b.tool_output(
        "call_2", "def total(lines):\n    return sum(l.price * l.qty for l in lines)\n"
    )
    first = b.respond(
        text="The total is not rounded. Wrap the sum in round(..., 2) and the test passes.",
        model="gpt-5",
        usage=(1010, 38, 896),
        phase="final_answer",
    )
    b.add(
        "outcome",
        kind="test",
        target=first,
        score=0.0,
        **{"pass": False},
        details={"suite": "tests/test_totals.py", "failed": 1},
    )
    b.branch(after_read)  # the user asked for a regenerated answer
    second = b.respond(
        text="Use Decimal for money and quantize the total to cents; round() on floats is still lossy.",
        model="gpt-5",
        usage=(1010, 52, 896),
        phase="final_answer",
    )
    b.add(
        "outcome",
        kind="test",
        target=second,
        score=1.0,
        **{"pass": True},
        details={"suite": "tests/test_totals.py", "failed": 0},
    )
    b.add("label", target=second, label="kept")
    b.add("info", name="Fix the rounding test")
    return b


def edited_prompt() -> SessionBuilder:
    """An edited first prompt (a fork in user input) with thumbs feedback on both branches."""
    b = SessionBuilder(
        "0199a1b2-0002-7000-8000-00000000a002",
        "2026-10-02T14:30:00Z",
        harness=HARNESS,
        cwd="/home/dana/notes",
    )
    root = b.config(model="gpt-5-mini", instructions="Answer in one short paragraph.")
    b.user("write a regex for emails")
    r1 = b.respond(
        text="Use `[^@\\s]+@[^@\\s]+\\.[^@\\s]+`; it is permissive on purpose.",
        model="gpt-5-mini",
        usage=(60, 22, 0),
    )
    b.add("outcome", kind="feedback", target=r1, score=0.0, label="thumbs_down")
    b.branch(root)
    b.user(
        "Write a Python regex that validates e-mail addresses for a signup form, with an example."
    )
    r2 = b.respond(
        text='`re.fullmatch(r"[^@\\s]+@[^@\\s]+\\.[A-Za-z]{2,}", addr)` accepts a@b.io and rejects a@b.',
        model="gpt-5-mini",
        usage=(75, 31, 0),
    )
    b.add("outcome", kind="feedback", target=r2, score=1.0, label="thumbs_up")
    b.add("info", name="Email regex")
    return b


def long_chat_with_compaction() -> SessionBuilder:
    """Several turns, a config change, then a compaction that keeps the last turn."""
    b = SessionBuilder(
        "0199a1b2-0003-7000-8000-00000000a003",
        "2026-10-03T08:00:00Z",
        harness=HARNESS,
        cwd="/home/dana/projects/invoicer",
    )
    b.config(
        model="gpt-5", instructions="Be concise.", extra={"temperature": 0.3, "acme:region": "eu"}
    )
    b.user("Summarise what the billing module does.")
    b.respond(
        text="It builds invoices from orders and applies tax rules per region.",
        model="gpt-5",
        usage=(120, 20, 0),
    )
    kept = b.user("Which regions are supported?")
    b.respond(
        text="EU and US; the US path has per-state tax tables.", model="gpt-5", usage=(160, 18, 100)
    )
    b.config(model="gpt-5-mini", extra={"temperature": None})
    b.user("And how are refunds handled?")
    b.add(
        "compaction",
        first_kept=kept,
        summary={
            "type": "message",
            "role": "system",
            "content": [
                {
                    "type": "input_text",
                    "text": "Summary: the user asked what billing does; it builds invoices and applies regional tax.",
                }
            ],
        },
        config={
            "model": "gpt-5-mini",
            "instructions": "Be concise.",
            "extra": {"acme:region": "eu"},
        },
        tokens_before=4200,
        usage={"input_tokens": 380, "output_tokens": 40, "total_tokens": 420},
    )
    b.respond(
        text="Refunds create a credit note that references the original invoice.",
        model="gpt-5-mini",
        usage=(210, 16, 0),
    )
    b.add(
        "outcome",
        kind="eval",
        score=0.8,
        **{"pass": True},
        label="judge-v1",
        details={"rubric": "helpfulness"},
    )
    return b


def approval_run() -> tuple[SessionBuilder, SessionBuilder]:
    """Runs with a held, an approved and a rejected call, and a delegated subsession."""
    b = SessionBuilder(
        "0199a1b2-0004-7000-8000-00000000a004",
        "2026-10-04T22:00:00Z",
        harness=HARNESS,
        cwd="/srv/build",
        records=["run", "dispatch", "decision"],
    )
    b.config(
        model="gpt-5", instructions="Keep the build directory tidy.", tools_added=[BASH, DELEGATE]
    )
    b.add("env", cwd="/srv/build", workspace={"kind": "container", "ref": "sha256:" + "ab" * 32})
    b.add("run", run_id="run-1", phase="start", source="input", ref="cron:nightly-clean")
    b.user("Clean the build directory, list what is left, and ask a helper to draft release notes.")
    b.respond(
        calls=[
            ("call_1", "bash", {"cmd": "rm -rf build"}),
            ("call_2", "bash", {"cmd": "ls"}),
            ("call_3", "delegate", {"task": "draft release notes for 1.4"}),
        ],
        model="gpt-5",
        usage=(300, 60, 0),
    )
    target = {
        e["item"]["call_id"]: e["id"]
        for e in b.entries
        if e["type"] == "item" and e["item"].get("type") == "function_call"
    }
    b.add(
        "decision",
        call_id="call_1",
        target=target["call_1"],
        verdict="hold",
        by="policy",
        reason="destructive; needs approval",
    )
    b.add(
        "decision",
        call_id="call_2",
        target=target["call_2"],
        verdict="proceed",
        by="policy",
        args={"cmd": "ls -la"},
    )
    b.add("dispatch", call_id="call_2", target=target["call_2"])
    b.tool_output("call_2", "release.txt\nlogs/")
    child_id = str(uuid.uuid5(uuid.UUID(int=0), f"{b.header['id']}/call_3"))
    b.add("dispatch", call_id="call_3", target=target["call_3"])
    b.add("link", rel="subsession", session=child_id, call_id="call_3")
    b.tool_output("call_3", "Release notes drafted: 3 fixes, 1 feature.")
    b.add("run", run_id="run-1", phase="end", reason="input_required", pending=["call_1"])
    b.add("run", run_id="run-2", phase="start", source="resume", ref="approval:dana")
    b.add("dispatch", call_id="call_1", target=target["call_1"])
    b.tool_output("call_1", "")
    b.respond(
        text="Build cleaned; release.txt and logs/ remain; release notes are drafted.",
        model="gpt-5",
        usage=(420, 25, 300),
    )
    b.add("run", run_id="run-2", phase="end", reason="done", pending=[])
    b.add("outcome", kind="task", score=1.0, **{"pass": True}, label="ops-check")

    c = SessionBuilder(
        child_id,
        "2026-10-04T22:00:30Z",
        harness=HARNESS,
        cwd="/srv/build",
        parent_session=b.header["id"],
        spawned_by="call_3",
    )
    c.config(model="gpt-5-mini", instructions="Draft release notes.")
    c.user("draft release notes for 1.4")
    c.respond(
        text="1.4: fixed rounding, fixed refunds, fixed locale; added CSV export.",
        model="gpt-5-mini",
        usage=(90, 30, 0),
    )
    return b, c


def crashed() -> tuple[SessionBuilder, str]:
    """A session whose writer died mid-line: the final line is cut short."""
    b = SessionBuilder(
        "0199a1b2-0005-7000-8000-00000000a005",
        "2026-10-05T11:00:00Z",
        harness=HARNESS,
        cwd="/home/dana/notes",
    )
    b.config(model="gpt-5-mini")
    b.user("List three uses of a context manager.")
    b.respond(text="Files, locks and temporary directories.", model="gpt-5-mini", usage=(40, 12, 0))
    b.user("Now show one with contextlib.")
    text = b.text()
    return (
        b,
        text
        + '{"type":"item","id":"i9999999","parent":"i0000002","ts":"2026-10-05T11:00:09Z","item":{"type":"mess',
    )


def build_sample_store(dest: Path) -> list[Path]:
    """Write the sample store under ``dest`` (jsonl store layout)."""
    if dest.exists():
        for p in dest.glob("*/*.jsonl"):
            p.unlink()
    parent, child = approval_run()
    crash, crash_text = crashed()
    return [
        _write(dest, fix_failing_test()),
        _write(dest, edited_prompt()),
        _write(dest, long_chat_with_compaction()),
        _write(dest, parent),
        _write(dest, child),
        _write(dest, crash, crash_text),
    ]


# --------------------------------------------------------------------------- benchmark corpus


def synthetic_session(
    rng: random.Random,
    index: int,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    secrets: bool = True,
    tool_output_bytes: int = 0,
    compact_every: int = 0,
    score_branches: bool = False,
) -> SessionBuilder:
    """A coding-agent-like session with tool calls, forks, outcomes and a few secret-looking
    strings; ``tool_output_bytes`` sets the mean size of a tool output (0: a few lines);
    ``compact_every`` N > 0 compacts the main line before every Nth turn, keeping the turn
    before (so the answers regenerated earlier fork before a compaction); ``score_branches``
    scores the regenerated answers too, so their pairs carry a score on both sides."""
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    b = SessionBuilder(
        sid,
        f"2026-{1 + index % 12:02d}-{1 + index % 28:02d}T10:00:00Z",
        harness=HARNESS,
        cwd=f"/home/user{index % 50}/proj{index % 7}",
        hashes=False,
    )
    b.config(model="gpt-5", instructions=sentence(rng, 12), tools_added=[BASH, READ])
    forks: list[str] = []
    last_user = ""
    for t in range(turns):
        if compact_every and t and t % compact_every == 0:
            _compact(b, last_user, t)
        last_user = b.user(sentence(rng, rng.randint(8, 40)))
        call = f"call_{t}"
        b.respond(
            reasoning=sentence(rng, 15),
            calls=[(call, "bash", {"cmd": f"pytest -k t{t} /home/user{index % 50}/proj"})],
            model="gpt-5",
            usage=(500 + 40 * t, 60, 400),
        )
        at = b.tool_output(call, tool_output(rng, index, tool_output_bytes, secrets))
        r = b.respond(
            text=sentence(rng, rng.randint(10, 60)), model="gpt-5", usage=(800 + 40 * t, 90, 600)
        )
        if rng.random() < fork_rate:
            forks.append(at)
        b.add(
            "outcome",
            kind="eval",
            target=r,
            score=round(rng.random(), 3),
            **{"pass": rng.random() > 0.5},
        )
    for at in forks:
        b.branch(at)
        r = b.respond(text=sentence(rng, rng.randint(10, 60)), model="gpt-5", usage=(800, 90, 600))
        if score_branches:
            b.add("outcome", kind="eval", target=r, score=round(rng.random(), 3))
    return b


def _compact(b: SessionBuilder, first_kept: str, t: int) -> None:
    summary = f"Summary of turns 0-{t - 1}: the user ran tests and the agent answered."
    b.add(
        "compaction",
        first_kept=first_kept,
        summary={"type": "message", "role": "system",
                 "content": [{"type": "input_text", "text": summary}]},
        config={"model": "gpt-5"},
        tokens_before=2000 * t,
    )  # fmt: skip


def build_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
    compact_every: int = 0,
    score_branches: bool = False,
) -> int:
    """Write ``sessions`` synthetic session files under ``dest``; return the bytes written.
    The defaults give the corpus every earlier measurement used (same seed, same bytes)."""
    rng = random.Random(seed)
    dest.mkdir(parents=True, exist_ok=True)
    total = 0
    for i in range(sessions):
        b = synthetic_session(
            rng,
            i,
            turns=turns,
            fork_rate=fork_rate,
            tool_output_bytes=tool_output_bytes,
            compact_every=compact_every,
            score_branches=score_branches,
        )
        total += _write(dest, b).stat().st_size
    return total


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("what", choices=["sample", "corpus"])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--turns", type=int, default=8, help="user turns per session")
    ap.add_argument("--fork-rate", type=float, default=0.3, help="share of turns regenerated")
    ap.add_argument(
        "--tool-output-kb", type=float, default=0, help="mean tool output size (0: a few lines)"
    )
    ap.add_argument(
        "--format", choices=["agentsession", *OTHERS], default="agentsession",
        help="store kind of the corpus (einox_, codex_, gemini_, pi_, opencode_, harbor_, claude_, qwen_, copilot_, cursor_, sqlite_ or suga_corpus.py)",
    )  # fmt: skip
    ap.add_argument(
        "--compact-every", type=int, default=0,
        help="compact the main line before every Nth turn (agentsession only; 0: never)",
    )  # fmt: skip
    ap.add_argument(
        "--score-branches", action="store_true",
        help="score the regenerated answers too, so pairs are scored on both sides (agentsession only)",
    )  # fmt: skip
    ap.add_argument("--clean", action="store_true", help="remove DEST first")
    args = ap.parse_args()
    if args.clean and args.dest.exists():
        shutil.rmtree(args.dest)
    if args.what == "sample":
        for p in build_sample_store(args.dest):
            print(p)
    else:
        build = build_corpus if args.format == "agentsession" else _other(args.format)
        extra = {"compact_every": args.compact_every} if args.compact_every else {}
        if args.score_branches:
            extra["score_branches"] = True
        size = build(
            args.dest,
            args.sessions,
            args.seed,
            turns=args.turns,
            fork_rate=args.fork_rate,
            tool_output_bytes=int(args.tool_output_kb * 1024),
            **extra,
        )
        print(f"{size} bytes")


#: store kind -> (module, builder) of the other store kinds' corpora
OTHERS = {
    "einox": ("einox_corpus", "build_einox_corpus"),
    "codex": ("codex_corpus", "build_codex_corpus"),
    "gemini-cli": ("gemini_corpus", "build_gemini_corpus"),
    "pi": ("pi_corpus", "build_pi_corpus"),
    "opencode": ("opencode_corpus", "build_opencode_corpus"),
    "harbor": ("harbor_corpus", "build_harbor_corpus"),
    "claude-code": ("claude_corpus", "build_claude_corpus"),
    "qwen-code": ("qwen_corpus", "build_qwen_corpus"),
    "copilot-cli": ("copilot_corpus", "build_copilot_corpus"),
    "cursor": ("cursor_corpus", "build_cursor_corpus"),
    "agentsession-sqlite": ("sqlite_corpus", "build_sqlite_corpus"),
    "suga": ("suga_corpus", "build_suga_corpus"),
}


def _other(kind: str) -> Any:
    """The builder of another store kind (imported when asked: its module imports
    ``texts.py``, as this one does)."""
    module, name = OTHERS[kind]
    return getattr(importlib.import_module(module), name)


if __name__ == "__main__":
    main()
