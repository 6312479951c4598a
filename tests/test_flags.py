"""The export options are declared once (``flags.FLAGS``): the command line, the ``--config``
keys, what ``resolve`` reads and the manifest's options block are all made from it."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from trajset.pipeline.cli import app
from trajset.pipeline.cli.export import export
from trajset.pipeline.flags import BY_NAME, CONFIG_KEYS, FLAGS
from trajset.pipeline.options import load_config, resolve

#: a value of each TOML type a config key may hold
SAMPLE: dict[type, Any] = {list: [], str: "x", int: 1, float: 0.5, bool: False}


class _Reads(dict[str, Any]):
    """A flags mapping that records every key read."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().get(key)


def test_resolve_reads_exactly_the_declared_options() -> None:
    """An option ``resolve`` reads but no row declares would never reach it from the command
    line; a declared one it never reads would be taken and ignored."""
    flags = _Reads()
    resolve(flags, None, 1)
    assert flags.read == set(BY_NAME), (
        f"read, not declared: {sorted(flags.read - set(BY_NAME))}; "
        f"declared, not read: {sorted(set(BY_NAME) - flags.read)}"
    )


def test_the_command_takes_every_declared_option_under_its_name() -> None:
    params = inspect.signature(export).parameters
    assert set(BY_NAME) <= set(params)
    shown = CliRunner().invoke(app, ["export", "--help"], env={"COLUMNS": "400"}).output
    for f in FLAGS:
        spelled = f.decls[0] if f.decls else "--" + f.name.replace("_", "-")
        assert spelled in shown, spelled


def test_a_config_file_takes_every_declared_key_of_its_type(tmp_path: Path) -> None:
    lines = ["[export]"]
    for key, kind in CONFIG_KEYS.items():
        lines.append(f"{key} = {json.dumps(SAMPLE[kind])}")
    path = tmp_path / "all.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    export_table, _ = load_config(path)
    assert set(export_table) == set(CONFIG_KEYS) and "secret" not in CONFIG_KEYS


def test_the_manifest_shows_what_the_options_declare(sample_export: Path) -> None:
    shown = json.loads((sample_export / "manifest.json").read_text())["options"]
    assert list(shown) == [f.manifest[0] for f in FLAGS if f.manifest]
    assert (
        shown["homes"] == 0 and shown["prefer"] == [] and shown["redact"] is True
    )  # [] each store's own
