"""Claude Code subagents: their ``.meta.json``, links by ``toolUseId``, and agents no trunk links."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from trajset.pipeline import ExportOptions, RunOptions, run_export

from .conftest import UPSTREAM

PROJECT = UPSTREAM / "claude-code" / "-experiments-worktrees"
TRUNK = "ef958aa1-0e93-49f0-bb71-150f63befcd1"


def _export(store: Path, out: Path) -> Path:
    run_export([store], out, ExportOptions(redact=False), RunOptions(workers=1))
    return out


def _document(out: Path, session: str) -> dict[str, Any]:
    return dict(json.loads((out / "atif" / f"{session}.json").read_text()))


def _facts(out: Path, session: str) -> dict[str, Any]:
    return dict(_document(out, session)["extra"]["agentsession"])


def _copy(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    return project


def test_each_agents_meta_json_is_kept_on_its_session(tmp_path: Path) -> None:
    out = _export(PROJECT, tmp_path / "out")
    metas = sorted(PROJECT.rglob("agent-*.meta.json"))
    assert len(metas) == 6
    for meta in metas:
        agent = meta.name.removesuffix(".meta.json")
        recorded = json.loads(meta.read_text())
        assert _document(out, agent)["agent"]["extra"] == {"claude": recorded}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["paths_skipped"] == 0  # the meta files are read, not skipped
    [unit] = manifest["inputs"]  # and fingerprinted for --mode resume
    files = [PROJECT / f"{TRUNK}.jsonl", *PROJECT.rglob("agent-*")]
    assert unit["bytes"] == sum(f.stat().st_size for f in files)


def test_an_agent_is_linked_by_the_tool_use_id_of_its_meta_json(tmp_path: Path) -> None:
    """Without ``toolUseResult.agentId`` in the trunk, the ``.meta.json`` names the call."""
    before = _export(PROJECT, tmp_path / "before")
    spawned = {p.stem: _facts(before, p.stem)["spawned_by"] for p in PROJECT.rglob("agent-*.jsonl")}
    project = _copy(tmp_path)
    trunk = project / f"{TRUNK}.jsonl"
    lines = []
    for line in trunk.read_text().splitlines():
        d = json.loads(line) if line.strip() else None
        if isinstance(d, dict) and isinstance(d.get("toolUseResult"), dict):
            d["toolUseResult"].pop("agentId", None)
            line = json.dumps(d)
        lines.append(line)
    trunk.write_text("\n".join(lines) + "\n")
    for agent, call in spawned.items():
        meta = next(project.rglob(f"{agent}.meta.json"))
        meta.write_text(json.dumps({**json.loads(meta.read_text()), "toolUseId": call}))
    out = _export(project, tmp_path / "after")
    for agent, call in spawned.items():
        assert _facts(out, agent)["spawned_by"] == call
        assert _facts(out, agent)["parent_session"] == TRUNK


def test_an_agent_no_trunk_links_is_still_exported(tmp_path: Path) -> None:
    """A trunk cut before its spawning calls loses no agent file: each is its own session,
    below the trunk id its records carry."""
    project = _copy(tmp_path)
    trunk = project / f"{TRUNK}.jsonl"
    trunk.write_text("\n".join(trunk.read_text().splitlines()[:5]) + "\n")
    out = _export(project, tmp_path / "out")
    agents = sorted(p.stem for p in project.rglob("agent-*.jsonl"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["sessions_exported"] == 1 + len(agents)
    for agent in agents:
        facts = _facts(out, agent)
        assert facts["parent_session"] == TRUNK and "spawned_by" not in facts


def test_a_meta_json_that_does_not_read_is_an_error_row_and_its_agent_is_kept(
    tmp_path: Path,
) -> None:
    import polars as pl

    project = _copy(tmp_path)
    meta = next(project.rglob("agent-*.meta.json"))
    meta.write_text('{"agentType": "general-pur')
    out = _export(project, tmp_path / "out")
    errors = pl.read_parquet(out / "errors.parquet").to_dicts()
    [row] = [e for e in errors if e["kind"] == "bad_meta"]
    assert row["source"].endswith(meta.name) and "metadata" in row["message"]
    agent = meta.name.removesuffix(".meta.json")
    assert "extra" not in _document(out, agent)["agent"]
