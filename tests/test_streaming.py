"""A session of many trajectories streams through a worker: its documents slice by slice,
its rows spilled to parts on the way (removed again if the unit then fails)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings

from tests.builder import SessionBuilder
from trajset.pipeline import ExportOptions, RunOptions, RunSettings, export_session, run_export
from trajset.pipeline.run import stages
from trajset.pipeline.run import write as write_stage
from trajset.pipeline.tables import preferences

from .hostile import basic
from .strategies import sessions


def _builder(turns: int) -> SessionBuilder:
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000aa", hashes=False)
    for i in range(turns):
        prompt = b.user(f"turn {i}")
        b.respond(text=f"first {i}", usage=(5, 3, 0))
        b.branch(prompt).respond(text=f"second {i}", usage=(5, 3, 0))
    return b


def _regenerating(turns: int) -> str:
    """A regenerated answer at every turn: ``turns + 1`` trajectories."""
    return _builder(turns).text()


def _data_files(out: Path) -> dict[Path, bytes]:
    return {
        f.relative_to(out): f.read_bytes()
        for f in sorted(out.rglob("*"))
        if f.is_file() and f.relative_to(out).parts[0] in ("atif", "data")
    }


class _Tracked(dict):  # type: ignore[type-arg]
    """A document that counts how many of its kind are alive."""

    live = peak = 0

    def __init__(self, doc: dict[str, Any]) -> None:
        super().__init__(doc)
        _Tracked.live += 1
        _Tracked.peak = max(_Tracked.peak, _Tracked.live)

    def __del__(self) -> None:
        _Tracked.live -= 1


class _TrackedItems(list):  # type: ignore[type-arg]
    """A context's items that count how many of their kind are alive."""

    live = peak = 0

    def __init__(self, items: list[Any]) -> None:
        super().__init__(items)
        _TrackedItems.live += 1
        _TrackedItems.peak = max(_TrackedItems.peak, _TrackedItems.live)

    def __del__(self) -> None:
        _TrackedItems.live -= 1


@pytest.mark.parametrize("where", [None, "n_steps > 30"])
def test_a_session_of_many_trajectories_holds_a_few_slices_of_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str | None
) -> None:
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "s.jsonl").write_text(_regenerating(30))
    options = ExportOptions(where=where)
    run_export([tmp_path / "store"], tmp_path / "whole", options, RunOptions(workers=1))

    export_one = stages._export_one

    def tracked(*args: Any) -> Any:
        et, omitted = export_one(*args)
        et.document = _Tracked(et.document)
        return et, omitted

    enumerate_leaves = stages.trajectories

    def tracked_contexts(*args: Any, **kwargs: Any) -> Any:
        for t in enumerate_leaves(*args, **kwargs):
            if hasattr(t, "context"):
                t.context.items = _TrackedItems(t.context.items)
            yield t

    monkeypatch.setattr(stages, "_export_one", tracked)
    monkeypatch.setattr(stages, "trajectories", tracked_contexts)
    _Tracked.peak = _Tracked.live
    _TrackedItems.peak = _TrackedItems.live
    sliced = RunOptions(workers=1, settings=RunSettings(slice_trajectories=3))
    run_export([tmp_path / "store"], tmp_path / "sliced", options, sliced)
    assert _Tracked.peak <= 3 * 3  # the slice being built, the one written, the one passed on
    assert _TrackedItems.peak <= 3 * 3 + 1  # and the context enumerated next
    assert _data_files(tmp_path / "sliced") == _data_files(tmp_path / "whole")
    written = len(list((tmp_path / "sliced" / "atif").glob("*.json")))
    assert written == 31 if where is None else 0 < written < 31


class _TrackedPrompt:
    """A fork prompt's messages, counting how many of their kind are alive."""

    live = peak = built = 0

    def __init__(self) -> None:
        _TrackedPrompt.live += 1
        _TrackedPrompt.built += 1
        _TrackedPrompt.peak = max(_TrackedPrompt.peak, _TrackedPrompt.live)

    def __del__(self) -> None:
        _TrackedPrompt.live -= 1


def test_fork_prompts_are_built_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each prompt holds its fork's whole context: held together they grow with the square
    of a session that regenerates at every turn.  Each is built once and let go with the
    pair rows that hold it."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "s.jsonl").write_text(_regenerating(30))
    run_export([tmp_path / "store"], tmp_path / "whole", ExportOptions(), RunOptions(workers=1))
    fork_prompt = stages.fork_prompt

    def tracked(*args: Any, **kwargs: Any) -> Any:
        prompt = fork_prompt(*args, **kwargs)
        if prompt is not None:
            prompt.messages = _TrackedMessages(prompt.messages)
        return prompt

    class _TrackedMessages(list):  # type: ignore[type-arg]
        def __init__(self, items: list[Any]) -> None:
            super().__init__(items)
            self.tracker = _TrackedPrompt()

    monkeypatch.setattr(stages, "fork_prompt", tracked)
    often = RunSettings(spill_session_rows=2)  # pair rows (which hold their prompt) go on
    _TrackedPrompt.peak = _TrackedPrompt.live = _TrackedPrompt.built = 0
    run = RunOptions(workers=1, settings=often)
    run_export([tmp_path / "store"], tmp_path / "lazy", ExportOptions(), run)
    assert _TrackedPrompt.built == 30  # once per fork
    assert _TrackedPrompt.peak <= 3  # not all 30
    assert _data_files(tmp_path / "lazy") == _data_files(tmp_path / "whole")


def test_a_prompts_media_are_written_though_no_kept_document_shows_them(
    tmp_path: Path,
) -> None:
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000ab", hashes=False)
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    prompt = b.user(
        [
            {"type": "input_text", "text": "what is in this picture?"},
            {"type": "input_image", "image_url": "data:image/png;base64," + png},
        ]
    )
    b.respond(text="a dot", usage=(5, 3, 0))
    b.branch(prompt).respond(text="a single pixel, as far as I can tell", usage=(5, 3, 0))
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "s.jsonl").write_text(b.text())
    options = ExportOptions(where="n_steps > 99")  # no document is kept
    run_export([tmp_path / "store"], tmp_path / "out", options, RunOptions(workers=1))
    assert not list((tmp_path / "out" / "atif").glob("*.json"))
    assert len(list((tmp_path / "out" / "atif").rglob("*.png"))) == 1


def _store(root: Path) -> Path:
    root.mkdir()
    (root / "a.jsonl").write_text(basic("0199a1b2-0000-7000-8000-0000000000a1").text())
    (root / "m.jsonl").write_text(_regenerating(20))
    (root / "z.jsonl").write_text(basic("0199a1b2-0000-7000-8000-0000000000a3").text())
    return root


#: slices of 3, rows handed on after every slice and every 3 pairs
SPILLING = RunSettings(slice_trajectories=3, spill_document_bytes=1, spill_session_rows=3)


def test_rows_spilled_on_the_way_give_the_same_files(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    run_export([store], tmp_path / "whole", ExportOptions(), RunOptions(workers=1))
    run = RunOptions(workers=1, keep_state=True, settings=SPILLING)
    run_export([store], tmp_path / "spilled", ExportOptions(), run)
    assert _data_files(tmp_path / "spilled") == _data_files(tmp_path / "whole")
    parts = tmp_path / "spilled" / ".trajset" / "parts"
    assert len(list((parts / "steps").glob("*.arrow"))) > 7  # the long session's slices
    assert len(list((parts / "preferences").glob("*.arrow"))) > 10  # and its 40 pairs


def test_a_unit_failing_after_it_spilled_leaves_no_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "store")  # its pairs are spilled too, before it fails
    finish = write_stage._finish_session

    def failing(scope: Any, ex: Any) -> None:
        if ex.session.id.endswith("aa"):  # the long session, after its slices were spilled
            raise RuntimeError("boom")
        finish(scope, ex)

    monkeypatch.setattr(write_stage, "_finish_session", failing)
    out = tmp_path / "out"
    opts = RunOptions(workers=1, keep_state=True, settings=SPILLING)
    run = run_export([store], out, ExportOptions(), opts)
    assert [(e.kind, Path(e.source).name) for e in run.errors] == [("internal", "m.jsonl")]
    for name in ("trajectories", "steps"):
        rows = pq.read_table(out / "data" / name).to_pylist()
        assert rows and {r["session_id"][-2:] for r in rows} == {"a1", "a3"}
    docs = [p.name for p in (out / "atif").glob("*.json")]
    assert docs and not [d for d in docs if "0000000000aa" in d]
    [marker] = (out / ".trajset" / "units").glob("*.json")
    facts = json.loads(marker.read_text())["parts"]
    named = {f"{t}/{marker.stem}-{seq:04d}.arrow" for seq, f in enumerate(facts) for t in f}
    parts = out / ".trajset" / "parts"
    assert {p.relative_to(parts).as_posix() for p in parts.rglob("*.arrow")} == named
    assert len(facts) == 2  # a part before the failed unit's (its own removed), one after


def _trimmed(export: Any) -> Any:
    """The export with each kept trajectory holding only what its session's pairs take
    (the preferences table's ``retain``), as the write stage keeps it."""
    keep = preferences.retain(export)
    kept = [replace(et, messages=keep(et), prepared={}) for et in export.kept]
    return replace(export, kept=kept)


def _same_pairs(export: Any, trimmed: Any) -> None:
    full_stats: Counter[str] = Counter()
    kept_stats: Counter[str] = Counter()
    full = preferences.rows(export, full_stats)
    assert preferences.rows(trimmed, kept_stats) == full
    assert kept_stats == full_stats


@settings(max_examples=100, deadline=None)
@given(sessions())
def test_the_messages_kept_for_pairs_give_the_same_pairs(b) -> None:  # type: ignore[no-untyped-def]
    export = export_session(b.session(), ExportOptions(redact=False))
    _same_pairs(export, _trimmed(export))


def test_a_regenerated_answer_keeps_only_itself_for_its_pair() -> None:
    export = export_session(_builder(8).session(), ExportOptions(redact=False))
    trimmed = _trimmed(export)
    _same_pairs(export, trimmed)
    held = {et.trajectory.leaf_id: et.messages for et in trimmed.kept}
    main = next(et.trajectory.leaf_id for et in export.kept if et.trajectory.main)
    assert all(len(m) == 1 for leaf, m in held.items() if leaf != main)  # the answer alone
    assert len(held[main]) == 2 * 8 - 1  # all after the first fork (the first prompt)


@pytest.mark.parametrize("where", ["enumerate", "finish"])
def test_an_unplanned_error_in_one_session_loses_that_session_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    from .test_store_harbor import TERMINUS  # one unit: the task's tree and 3 subagent sessions

    victim = "077e93e12a4fd58a71669a910dc3b8af"  # the summarisation's answers subagent
    whole = run_export([TERMINUS], tmp_path / "whole", ExportOptions(), RunOptions(workers=1))
    assert whole.errors == []
    enumerate_, finish = stages.trajectories, write_stage._finish_session

    def boom(session: Any, *args: Any, **kw: Any) -> Any:
        if session.id == victim:
            raise RuntimeError("boom")
        return enumerate_(session, *args, **kw)

    def boom_late(scope: Any, ex: Any) -> None:  # after its rows and documents were made
        if ex.session.id == victim:
            raise RuntimeError("boom")
        finish(scope, ex)

    if where == "enumerate":
        monkeypatch.setattr(stages, "trajectories", boom)
    else:
        monkeypatch.setattr(write_stage, "_finish_session", boom_late)
    run = run_export([TERMINUS], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert [(e.kind, e.session_id) for e in run.errors] == [("internal", victim)]
    assert "RuntimeError: boom" in run.errors[0].message
    rows = lambda out: pq.read_table(out / "data" / "trajectories").to_pylist()  # noqa: E731
    kept = [r for r in rows(tmp_path / "whole") if r["session_id"] != victim]
    assert rows(tmp_path / "out") == kept and len(kept) == 6  # 4 trials, 2 subagents
    docs = {p.name for p in (tmp_path / "out" / "atif").glob("*.json")}
    assert docs == {p.name for p in (tmp_path / "whole" / "atif").glob("*.json")} - {
        f"{victim}.json"
    }


def test_an_error_in_every_session_runs_the_unit_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A unit ran once more per session an unplanned error stopped: a bug that hits every
    session made a unit of n sessions run n times.  After ``MAX_RERUNS`` it fails whole."""
    from trajset.pipeline.run import worker

    from .test_store_harbor import TERMINUS  # one unit of 4 sessions

    runs = Counter[str]()
    run_unit = worker._run

    def counted(scope: Any, unit: Any, parts: Any) -> Any:
        runs["runs"] += 1
        return run_unit(scope, unit, parts)

    def boom(session: Any, *args: Any, **kw: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(worker, "MAX_RERUNS", 2)
    monkeypatch.setattr(worker, "_run", counted)
    monkeypatch.setattr(stages, "trajectories", boom)
    run = run_export([TERMINUS], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert runs["runs"] == 3  # not 5
    assert [e.kind for e in run.errors] == ["internal"] * 3
    assert [e for e in run.errors if "the rest of the unit is not exported" in e.message]
    c = run.counts
    assert c["sessions_read"] == c["sessions_exported"] + c["sessions_failed"]
