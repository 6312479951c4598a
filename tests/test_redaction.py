"""Redaction: zero leaks of planted secrets, zero false positives on clean data, idempotent, stable."""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.builder import SessionBuilder
from tests.exports import unstamped
from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.cli import app
from trajset.redactors import GROUPS, RuleError, build_redactor, resolve, selected_rules
from trajset.redactors.base import Placeholders

RNG = random.Random(20261130)


def _rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"


def planted_values() -> dict[str, tuple[str, str]]:
    """kind -> (text that carries the secret, the secret value that must not survive)."""
    pem_body = _rand(B64, 64)
    pem = f"-----BEGIN RSA PRIVATE KEY-----\nMIIE{pem_body}\n-----END RSA PRIVATE KEY-----"
    aws_secret = _rand(B64, 40)
    jwt = "eyJ" + _rand(ALNUM, 20) + ".eyJ" + _rand(ALNUM, 30) + "." + _rand(ALNUM + "-_", 43)
    url_pw = _rand(ALNUM, 14)
    bearer = _rand(ALNUM, 32)
    basic = base64.b64encode(b"ops:" + _rand(ALNUM, 12).encode()).decode()
    password = "Q" + _rand(ALNUM + "#$%", 15)
    secret_yaml = _rand(ALNUM, 24)
    token_env = _rand(ALNUM, 28)
    values = {
        "aws_access_key_id": "AKIA" + _rand(UPPER, 16),
        "github_ghp": "ghp_" + _rand(ALNUM, 36),
        "github_gho": "gho_" + _rand(ALNUM, 36),
        "github_ghu": "ghu_" + _rand(ALNUM, 36),
        "github_ghs": "ghs_" + _rand(ALNUM, 36),
        "github_ghr": "ghr_" + _rand(ALNUM, 36),
        "github_pat": "github_pat_" + _rand(ALNUM, 22) + "_" + _rand(ALNUM, 59),
        "gitlab": "glpat-" + _rand(ALNUM, 20),
        "slack": "xoxb-" + _rand(string.digits, 12) + "-" + _rand(ALNUM, 24),
        "stripe": "sk_live_" + _rand(ALNUM, 24),
        "openai": "sk-" + _rand(ALNUM, 48),
        "openai_proj": "sk-proj-" + _rand(ALNUM + "_-", 56),
        "anthropic": "sk-ant-api03-" + _rand(ALNUM + "_-", 60),
        "huggingface": "hf_" + _rand(string.ascii_letters, 34),
        "npm": "npm_" + _rand(ALNUM, 36),
        "pypi": "pypi-AgE" + _rand(ALNUM + "_-", 60),
        "google": "AIza" + _rand(ALNUM + "_-", 35),
        "jwt": jwt,
        "email": f"{_rand(string.ascii_lowercase, 8)}.{_rand(string.ascii_lowercase, 5)}@corp-mail.example",
    }
    texts = {k: (f"value {v} here", v) for k, v in values.items()}
    texts["private_key"] = (pem, pem_body)
    texts["aws_secret"] = (f"aws_secret_access_key = {aws_secret}", aws_secret)
    texts["url_credentials"] = (
        f"git clone https://deploy:{url_pw}@git.example.com/acme/app.git",
        url_pw,
    )
    texts["bearer"] = (f"curl -H 'Authorization: Bearer {bearer}' https://api.example.com", bearer)
    texts["basic"] = (f"Authorization: Basic {basic}", basic)
    texts["password"] = (f"password={password}", password)
    texts["secret_yaml"] = (f"client_secret: {secret_yaml}", secret_yaml)
    texts["dotenv"] = (f"SERVICE_TOKEN={token_env}", token_env)
    texts["home_linux"] = ("opened /home/alicebob/projects/notes.txt", "/home/alicebob")
    texts["home_mac"] = ("saved /Users/carolyn/Desktop/x.png", "/Users/carolyn")
    texts["home_windows"] = ("C:\\Users\\Dmitri\\AppData\\x.ini", "Users\\Dmitri")
    # Low-entropy credentials, escaped and flag forms (issue: redaction without leaks).
    texts["password_low"] = ("password=changeme1", "changeme1")
    texts["dotenv_low"] = ("DB_PASS=hunter2x", "hunter2x")
    texts["yaml_low"] = ("db_password: qwerty99", "qwerty99")
    texts["cli_flag"] = ("mysql --password letmein7 shop", "letmein7")
    texts["escaped_assignment"] = ('echo DB_PASSWORD=\\"s3cretz9\\"', "s3cretz9")
    texts["escaped_url"] = ('{"url":"https:\\/\\/deploy:pw9X2kqZ@git.example.com"}', "pw9X2kqZ")
    texts["json_member"] = ('{"api_token": "tok3nValue"}', "tok3nValue")
    return texts


LITERAL = "corp-" + _rand(ALNUM, 10)
SHORT = "4242x"  # a short literal secret: the whole value of some strings
ENV_SECRET = "envsecret-" + _rand(ALNUM, 10)


def planted_session(texts: dict[str, tuple[str, str]]) -> SessionBuilder:
    """Every kind placed in every place a secret can hide."""
    all_text = "\n".join(t for t, _ in texts.values()) + f"\nliteral {LITERAL} and {ENV_SECRET}"
    b = SessionBuilder(
        "planted-1", harness={"name": "h", "version": "1"}, cwd="/home/alicebob/projects"
    )
    b.config(
        model="m",
        instructions="sys " + all_text,
        tools_added=[
            {
                "type": "function",
                "name": "bash",
                "description": "d",
                "parameters": {"type": "object"},
            }
        ],
    )
    b.add(
        "env",
        cwd="/home/alicebob/projects",
        files={"read": {"/home/alicebob/.env": "sha256:" + "a" * 64}},
        tools={"note": all_text},
    )
    b.add("acme:note", text=all_text, nested={"deep": [all_text]})
    b.add("item", item={"type": "acme:search_result", "text": all_text, "extra": {"raw": all_text}})
    b.user(SHORT)
    b.respond(calls=[("call_3", "pin", {"pin": SHORT})], model="m")
    b.tool_output("call_3", SHORT)
    fork = b.user("user " + all_text)
    b.respond(
        reasoning="think " + all_text,
        calls=[("call_1", "bash", {"cmd": all_text, "pem": texts["private_key"][0]})],
        model="m",
    )
    b.add(
        "decision",
        call_id="call_1",
        target="i0000003",
        verdict="reject",
        by="ops",
        reason="no: " + all_text,
    )
    b.tool_output("call_1", "out " + all_text)
    b.respond(
        calls=[("call_2", "write", {"content": all_text, "env": {"DB_PASS": "hunter2x"}})],
        model="m",
    )
    b.tool_output("call_2", json.dumps({"ok": True, "stdout": all_text, "password": "changeme1"}))
    r1 = b.respond(text="assistant " + all_text, model="m")
    b.add(
        "outcome", kind="eval", target=r1, score=0.5, details={"log": all_text, "reason": all_text}
    )
    b.add("custom", ns="acme", data={"source": all_text, "status": all_text})
    b.branch(fork)
    b.respond(text="regenerated " + all_text, model="m")
    b.add("label", target=r1, label="kept")
    return b


@pytest.fixture(scope="module")
def planted(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, str, dict[str, tuple[str, str]]]:
    texts = planted_values()
    root = tmp_path_factory.mktemp("planted")
    store = root / f"store-{LITERAL}"  # a secret in the input path must not reach the output either
    store.mkdir()
    (store / "planted.jsonl").write_text(planted_session(texts).text())
    out = root / "out"
    env = {"TRAJSET_TEST_SECRET": ENV_SECRET}
    result = CliRunner().invoke(
        app,
        [
            "export",
            str(store),
            "--out",
            str(out),
            "--workers",
            "1",
            "--secret",
            LITERAL,
            "--secret",
            SHORT,
            "--secret-env",
            "TRAJSET_TEST_SECRET",
        ],
        env=env,
    )
    assert result.exit_code == 0, result.output
    return store, out, result.output, texts


def test_no_planted_value_survives_in_any_byte_or_name(planted) -> None:  # type: ignore[no-untyped-def]
    _, out, printed, texts = planted
    secrets = [v for _, v in texts.values()] + [LITERAL, ENV_SECRET, SHORT]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) > 10
    for p in files:
        data = p.read_bytes()
        rel = str(p.relative_to(out))
        for s in secrets:
            for form in {s, json.dumps(s)[1:-1]}:
                assert form.encode() not in data, (rel, s)
                assert form not in rel
        for s in secrets:
            assert s not in printed


def test_every_kind_was_found_and_audited(planted) -> None:  # type: ignore[no-untyped-def]
    _, out, _, _ = planted
    report = json.loads((out / "manifest.json").read_text())["redaction"]
    for rule in [
        "aws_access_key_id_v2",
        "aws_secret_access_key_v2",
        "github_token_v2",
        "gitlab_token_v2",
        "slack_token_v2",
        "stripe_key_v2",
        "openai_key_v2",
        "anthropic_key_v2",
        "huggingface_token_v2",
        "npm_token_v2",
        "pypi_token_v2",
        "google_api_key_v2",
        "private_key_v1",
        "jwt_v1",
        "password_assignment_v3",
        "url_credentials_v2",
        "authorization_header_v1",
        "credential_assignment_v4",
        "email_v3",
        "secrets_v1",
        "home_paths_v3",
    ]:
        assert report["findings"].get(rule, 0) > 0, rule
    assert report["outputs"]["atif"]["github_token"] > 0
    assert report["outputs"]["trajectories"]["secrets"] > 0
    changed = report["hashed_context_entries_changed"]
    assert changed > 0  # the planted session's responses record request hashes
    card = (out / "README.md").read_text()
    assert "redaction: rules" in card
    assert f"{changed} (their request hashes no longer verify)" in card


@pytest.mark.parametrize("hashes", [True, False])
def test_context_entries_changed_under_a_request_hash_are_counted(hashes: bool) -> None:
    """Only a session whose responses record request hashes has context whose redaction
    breaks a hash; each changed context entry (prompt, config) counts once."""
    b = SessionBuilder("hashed", hashes=hashes)
    b.config(model="m", instructions="deploy with ghp_" + "A1b2" * 9)
    b.user("my token is ghp_" + "C3d4" * 9)
    b.respond(text="noted", model="m")
    b.user("thanks")
    b.respond(text="ok", model="m")
    _, report = build_redactor(selected_rules()).session(b.session())
    assert report.entries_changed == 2
    assert report.hashed_context_entries_changed == (2 if hashes else 0)


def test_placeholders_are_consistent_across_branches(planted) -> None:  # type: ignore[no-untyped-def]
    import polars as pl

    _, out, _, _ = planted
    pairs = pl.read_parquet(out / "data" / "preferences" / "*.parquet").to_dicts()
    assert pairs
    trajs = pl.read_parquet(out / "data" / "trajectories" / "*.parquet").to_dicts()
    user_msgs = {json.dumps([m for m in t["messages"] if m["role"] == "user"]) for t in trajs}
    assert len(user_msgs) == 1  # the shared prefix renders identically in both branches


def _clean_session() -> SessionBuilder:
    rng = random.Random(7)
    image = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(30000))).decode()
    sha = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    digest = "".join(rng.choice("0123456789abcdef") for _ in range(64))
    prose = (
        f"The migration keeps every invoice id stable; see commit {sha} and run "
        "`pytest -k totals` before merging. UUID 3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b names the job."
    )
    code = (
        "def total(lines: list[Line]) -> Decimal:\n    token_count = len(lines)  # not a secret\n"
        "    key = lambda l: l.sku\n    return sum((l.price for l in sorted(lines, key=key)), Decimal(0))\n"
        "\ndef connect(password: str, api_key: str | None = None) -> None:\n"
        "    password = get_password()\n    token = os.environ['TOKEN']\n"
        "    db = open_db(user='svc', password=password)\n"
        "DB_PASSWORD=${DB_PASSWORD}\nsecret: <fill me in>\nprimary_key=True\nPWD=/app\n"
    )
    b = SessionBuilder("clean-1", harness={"name": "h", "version": "1"}, cwd="/app")
    b.config(model="m", instructions="Be helpful.")
    b.message(
        "user",
        [
            {"type": "input_text", "text": prose},
            {"type": "input_image", "image_url": "data:image/png;base64," + image},
        ],
    )
    b.respond(
        calls=[("call_1", "bash", {"cmd": f"git show {sha}", "digest": f"sha256:{digest}"})],
        model="m",
    )
    b.tool_output("call_1", code + "\n" + prose)
    b.respond(text=prose + "\n```python\n" + code + "```", model="m")
    return b


def test_clean_corpus_is_untouched(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "clean.jsonl").write_text(_clean_session().text())
    run_export([store], tmp_path / "red", ExportOptions(redact=True), RunOptions(workers=1))
    run_export([store], tmp_path / "raw", ExportOptions(redact=False), RunOptions(workers=1))
    for folder in ("atif", "data"):
        red = {
            p.relative_to(tmp_path / "red"): unstamped(p)
            for p in (tmp_path / "red" / folder).rglob("*")
            if p.is_file()
        }
        raw = {
            p.relative_to(tmp_path / "raw"): unstamped(p)
            for p in (tmp_path / "raw" / folder).rglob("*")
            if p.is_file()
        }
        assert red == raw  # zero false positives: every value kept (the rule set's name aside)
    report = json.loads((tmp_path / "red" / "manifest.json").read_text())["redaction"]
    assert report["findings"] == {} and report["outputs"] == {}


def test_redaction_is_idempotent_and_stable() -> None:
    texts = planted_values()
    session = planted_session(texts).session()
    redactor = build_redactor(
        selected_rules(["all"]), secrets=[LITERAL, ENV_SECRET], homes=("/home/alicebob",)
    )
    once, report = redactor.session(session)
    assert sum(report.findings.values()) > 20
    twice, again = redactor.session(once)
    assert sum(again.findings.values()) == 0
    assert [e.raw for e in twice.entries] == [e.raw for e in once.entries]
    third, _ = redactor.session(session)
    assert [e.raw for e in third.entries] == [e.raw for e in once.entries]


def test_structure_is_never_touched() -> None:
    b = SessionBuilder("s-ghp_" + "x" * 36)
    b.config(model="m")
    b.user("hi")
    b.respond(text="ok", model="m")
    session = b.session()
    redacted, _ = build_redactor(selected_rules()).session(session)
    assert redacted.id == session.id
    assert [(e.id, e.parent, e.type, e.raw.get("request_hash")) for e in redacted.entries] == [
        (e.id, e.parent, e.type, e.raw.get("request_hash")) for e in session.entries
    ]


def test_a_providers_ciphertext_is_kept_as_it_is() -> None:
    """``encrypted_content`` (Codex's reasoning) is opaque: rewriting it would break it, and a
    run of base64 holding ``token`` looks like a secret's name to the assignment rules."""
    cipher = "gAAAAAB" + "x_token-Ab3" * 40 + "_password=hunter2hunter2"
    item = {"type": "reasoning", "encrypted_content": cipher,
            "summary": [{"type": "summary_text", "text": "token=ghp_" + "A1b2" * 9}]}  # fmt: skip
    raw = {"type": "item", "id": "i1", "parent": None, "ts": "2026-01-01T00:00:00Z", "item": item}
    out = build_redactor(selected_rules(["all"])).entry(raw, Placeholders())
    assert out["item"]["encrypted_content"] == cipher
    assert "ghp_" not in out["item"]["summary"][0]["text"]


def test_same_value_same_placeholder_and_no_plaintext() -> None:
    p = Placeholders()
    r = build_redactor(selected_rules())
    token = "ghp_" + "A1b2" * 9
    out = r.text(f"{token} and {token} and ghp_{'Z9y8' * 9}", p)
    assert (
        out
        == "[REDACTED:github_token:1] and [REDACTED:github_token:1] and [REDACTED:github_token:2]"
    )


def test_unknown_rule_lists_the_valid_ones(runner: CliRunner, tmp_path: Path) -> None:
    with pytest.raises(RuleError, match=r"valid: .*email"):
        resolve("emails")
    assert resolve("email") == ["email_v3"] and "phone_v2" in resolve("pii") and GROUPS["all"]
    result = runner.invoke(app, ["export", "--out", str(tmp_path / "o"), "--redact", "nope"])
    assert result.exit_code == 2 and "unknown redaction rule" in result.output


def test_config_file_adds_custom_rules(tmp_path: Path, runner: CliRunner) -> None:
    store = tmp_path / "store"
    store.mkdir()
    b = SessionBuilder("cfg-1")
    b.config(model="m")
    b.user("see TICKET-12345 and 10.0.0.7")
    b.respond(text="ok", model="m")
    (store / "s.jsonl").write_text(b.text())
    conf = tmp_path / "trajset.toml"
    conf.write_text(
        '[export]\nredact = ["ipv4"]\n\n[[redact.rules]]\nname = "ticket_id_v1"\npattern = "TICKET-[0-9]{5}"\n'
    )
    out = tmp_path / "o"
    result = runner.invoke(
        app, ["export", str(store), "--out", str(out), "--config", str(conf), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    doc = (out / "atif" / "cfg-1.json").read_text()
    assert "TICKET-12345" not in doc and "[REDACTED:ticket_id:1]" in doc
    assert "10.0.0.7" not in doc and "[REDACTED:ipv4:1]" in doc
    bad = tmp_path / "bad.toml"
    bad.write_text("[export]\nbogus = 1\n")
    assert (
        runner.invoke(
            app, ["export", str(store), "--out", str(tmp_path / "o2"), "--config", str(bad)]
        ).exit_code
        == 2
    )


def test_environment_and_no_passthrough(tmp_path: Path) -> None:
    from trajset.pipeline.atif import NoRawItems, items

    store = tmp_path / "store"
    store.mkdir()
    (store / "p.jsonl").write_text(planted_session(planted_values()).text())
    out = tmp_path / "o"
    names = selected_rules(["environment", "no_passthrough"])
    run_export([store], out, ExportOptions(redact_rules=tuple(names)), RunOptions(workers=1))
    doc = json.loads((out / "atif" / "planted-1.json").read_text())
    assert "environment" not in doc["extra"] and "cwd" not in doc["extra"]["agentsession"]
    with pytest.raises(NoRawItems):
        items(doc)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cd /home/dana/proj", "cd ~/proj"),
        ("open /Users/Dana Smith/Desktop/a.txt", "open ~/Desktop/a.txt"),
        ("C:\\Users\\dana\\AppData", "~\\AppData"),
        ("C:/Users/dana/AppData", "C:~/AppData"),
        (
            '{"path":"x\\n/home/dana/.ssh"}',
            '{"path":"x\\n~/.ssh"}',
        ),  # inside JSON text, after an escape
        ("/var/home/dana stays: not a home prefix", "/var/home/dana stays: not a home prefix"),
        ("/Users/dana and /Users/bob/x", "~ and ~/x"),
    ],
)
def test_home_path_forms(text: str, expected: str) -> None:
    from trajset.redactors.home_paths import HomePaths

    assert HomePaths.of(("/nonexistent-home",)).apply(text, Placeholders()) == expected


def test_tool_call_arguments_stay_valid_json_with_the_same_keys(planted) -> None:  # type: ignore[no-untyped-def]
    import polars as pl

    _, out, _, _ = planted
    steps = pl.read_parquet(out / "data" / "steps" / "*.parquet").to_dicts()
    calls = [c for s in steps for c in s["tool_calls"]]
    keys = {"bash": {"cmd", "pem"}, "write": {"content", "env"}, "pin": {"pin"}}
    assert calls
    for c in calls:
        assert set(json.loads(c["arguments"])) == keys[c["function_name"]]


def test_two_machines_with_other_homes_write_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "p.jsonl").write_text(planted_session(planted_values()).text())
    outs = []
    for home in ("/home/alicebob", "/root"):
        monkeypatch.setenv("HOME", home)
        out = tmp_path / f"out-{len(outs)}"
        run_export([store], out, ExportOptions(), RunOptions(workers=1))
        outs.append(
            {
                p.relative_to(out): p.read_bytes()
                for p in out.rglob("*")
                if p.is_file() and ".trajset" not in p.parts and p.name != "manifest.json"
            }
        )
    assert outs[0] == outs[1]


def test_an_explicit_home_is_replaced_only_as_a_whole_segment() -> None:
    from trajset.redactors.home_paths import HomePaths

    rule = HomePaths.of(("/srv/u",))
    text = "/srv/u/notes and /srv/users/x and /rootfs/bin and /srv/u"
    assert rule.apply(text, Placeholders()) == "~/notes and /srv/users/x and /rootfs/bin and ~"


def test_bad_literal_secrets_are_refused_and_a_secret_in_an_id_refuses_the_session(
    runner: CliRunner, tmp_path: Path
) -> None:
    for bad in ("abc", "status", "response_id", " padded "):
        result = runner.invoke(app, ["export", "--out", str(tmp_path / "o"), "--secret", bad])
        assert result.exit_code == 2, bad
    token = "ghp_" + "Ab1" * 12
    b = SessionBuilder(token)
    b.user("hi")
    b.respond(text="ok")
    store = tmp_path / "store"
    store.mkdir()
    (store / "s.jsonl").write_text(b.text())
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    [error] = run.errors
    assert (
        error.kind == "id_holds_secret"
        and token not in error.session_id
        and token not in error.message
    )
    assert not list((tmp_path / "out" / "atif").glob("*.json"))
    assert all(token not in p.name for p in (tmp_path / "out").rglob("*"))


def test_resume_refuses_another_secret_set(runner: CliRunner, tmp_path: Path) -> None:
    out = str(tmp_path / "o")
    assert (
        runner.invoke(app, ["export", "--out", out, "-q", "--secret", "first-secret"]).exit_code
        == 0
    )
    again = runner.invoke(
        app, ["export", "--out", out, "-q", "--mode", "resume", "--secret", "other-secret"]
    )
    assert again.exit_code == 2 and "other --secret" in again.output
    same = runner.invoke(
        app, ["export", "--out", out, "-q", "--mode", "resume", "--secret", "first-secret"]
    )
    assert same.exit_code == 0
    state = [p for p in (tmp_path / "o" / ".trajset").glob("*") if p.is_file()]
    assert state and not any("first-secret" in p.read_text(errors="replace") for p in state)


def test_scan_finds_every_planted_kind_unredacted_and_nothing_redacted(
    planted, tmp_path: Path, runner: CliRunner
) -> None:  # type: ignore[no-untyped-def]
    store, out, _, _ = planted
    raw = tmp_path / "raw"
    assert (
        runner.invoke(app, ["export", str(store), "--out", str(raw), "-q", "--no-redact"]).exit_code
        == 0
    )
    secrets = ["--secret", LITERAL, "--secret", ENV_SECRET, "--secret", SHORT]
    found = runner.invoke(app, ["scan", str(raw), *secrets])
    assert found.exit_code == 1
    rules = {line.split(": ")[1] for line in found.output.splitlines() if line.count(": ") == 2}
    report = json.loads((out / "manifest.json").read_text())["redaction"]["findings"]
    # every rule that fired on the input fires on the raw export (but the store's identities,
    # which the export knows and scan does not)
    assert set(report) - {"identity_v1"} <= rules
    assert not any(s in found.output for s in (LITERAL, ENV_SECRET, SHORT))
    clean = runner.invoke(app, ["scan", str(out), *secrets])
    assert clean.exit_code == 0, clean.output


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("call 555-123-4567 today", True),
        ("call +1 (555) 123-4567.", True),
        ("+44 20 7946 0958", True),
        ("ring 030.1234.5678, please", True),
        ("session 0199a1b2-0005-7000-8000-00000000a005", False),  # a UUID, not a phone (v1 took it)
        ("build 1234-5678-9012-abcd", False),
        ("v2.1234.5678.9", False),
        ("on 2026-10-05 at 11:00", False),
    ],
)
def test_phone_numbers_are_found_and_ids_are_not(text: str, found: bool) -> None:
    out = build_redactor(resolve("phone")).text(text, Placeholders())
    assert ("[REDACTED:phone:1]" in out) is found, out
    assert out == text or found


def test_the_summary_keeps_its_columns_for_long_rule_names(planted) -> None:  # type: ignore[no-untyped-def]
    """Every row of the printed summary ends in the same column, however long a rule's name."""
    printed = planted[2].split("wrote ", 1)[1].splitlines()[1:]
    rows = [line for line in printed if line.startswith("  ")]
    assert max(len(r.split()[-2] if r.startswith("  redacted") else "") for r in rows) > 18
    assert len({len(r) for r in rows}) == 1, "\n".join(rows)


def test_strings_remembered_as_clean_give_the_same_redaction_and_counts() -> None:
    """Short strings that redact to themselves with no finding (no trigger, or a trigger
    that found nothing: "input_tokens" holds the keyword "token") are remembered as clean;
    redacting again, or another session holding them, gives the same text and the same
    findings as a fresh redactor."""
    r = build_redactor(selected_rules())
    secret = f"ghp_{'Z9y8' * 9}"
    texts = ["assistant", "tool_call_id", secret, "mail ada@example.com", "x" * 65, "function"]
    texts += ["input_tokens", "token: [REDACTED:github_token:1]"]
    assert r._triggers.which("input_tokens")  # it fires, and finds nothing
    first, second = Placeholders(), Placeholders()
    once = [r.text(t, first) for t in texts]
    assert {"assistant", "tool_call_id", "function", "input_tokens"} <= r._clean
    assert secret not in r._clean
    assert not any(t in r._clean for t in texts[2:5])  # a trigger fired, or too long
    again = [r.text(t, second) for t in texts]
    fresh = Placeholders()
    assert once == again == [build_redactor(selected_rules()).text(t, fresh) for t in texts]
    assert first.findings == second.findings == fresh.findings and first.findings
