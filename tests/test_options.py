"""Option resolution: a flag given > the --config file > the default, in both directions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trajset.pipeline.errors import UsageError
from trajset.pipeline.options import Mode, resolve

NONE: dict[str, Any] = {}


def _conf(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trajset.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_flags_or_file() -> None:
    options, run = resolve(NONE, None, default_workers=3)
    assert options.redact and options.license == "other" and options.store_kind == "auto"
    assert "email_v3" in options.redact_rules and "ipv4_v2" not in options.redact_rules
    assert (run.workers, run.executor, run.mode) == (3, "local", Mode.error)


def test_the_file_fills_in_and_a_flag_overrides_it(tmp_path: Path) -> None:
    conf = _conf(tmp_path, '[export]\nlicense = "mit"\nprefer = ["score"]\nworkers = 2\n')
    options, run = resolve(NONE, conf, 8)
    assert (options.license, options.prefer, run.workers) == ("mit", ("score",), 2)
    options, run = resolve({"license": "other", "prefer": ["latest"], "workers": 1}, conf, 8)
    assert (options.license, options.prefer, run.workers) == ("other", ("latest",), 1)


def test_a_redaction_flag_wins_over_no_redact_in_the_file(tmp_path: Path) -> None:
    conf = _conf(tmp_path, "[export]\nno_redact = true\n")
    assert not resolve(NONE, conf, 1)[0].redact
    options, _ = resolve({"redact": ["pii"]}, conf, 1)
    assert options.redact and "phone_v2" in options.redact_rules


def test_no_redact_flag_wins_over_redaction_in_the_file(tmp_path: Path) -> None:
    conf = _conf(
        tmp_path,
        '[export]\nredact = ["pii"]\n\n[[redact.rules]]\nname = "t_v1"\npattern = "T-[0-9]+"\n',
    )
    options, run = resolve({"no_redact": True}, conf, 1)
    assert not options.redact and options.rule_names() == [] and run.secrets == ()


def test_contradicting_flags_and_bad_values_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot be combined"):
        resolve({"no_redact": True, "secret": ["x"]}, None, 1)
    with pytest.raises(UsageError, match="at least 1"):
        resolve({"workers": 0}, None, 1)
    with pytest.raises(UsageError, match="unknown redaction rule"):
        resolve({"redact": ["nope"]}, None, 1)
    with pytest.raises(UsageError, match="unknown preference"):
        resolve({"prefer": ["best"]}, None, 1)
    with pytest.raises(UsageError, match=r"export\.workers must be an integer"):
        resolve(NONE, _conf(tmp_path, '[export]\nworkers = "2"\n'), 1)
    with pytest.raises(UsageError, match="must be tables"):
        resolve(NONE, _conf(tmp_path, "export = 5\n"), 1)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"[export]\nlicense = '\xe9'\n")
    with pytest.raises(UsageError, match="not UTF-8"):
        resolve(NONE, bad, 1)


def test_secret_env_reads_the_variable_and_never_stores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAJSET_TEST_SECRET", "s3cr3t-value")
    options, run = resolve({"secret_env": ["TRAJSET_TEST_SECRET"]}, None, 1)
    assert run.secrets == ("s3cr3t-value",) and options.secret_count == 1
    assert "s3cr3t-value" not in repr(options) and "s3cr3t-value" not in repr(run)
    with pytest.raises(UsageError, match="not set"):
        resolve({"secret_env": ["TRAJSET_NO_SUCH_VARIABLE"]}, None, 1)
