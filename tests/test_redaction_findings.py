"""Findings that overlap, secrets written in an encoded form, the secret halves of key pairs,
and the names a team lists (``--redact-terms``).

The first tests are the rows of the issue that asked for them, as a new user saw them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.builder import SessionBuilder
from tests.exports import unstamped
from trajset.pipeline.cli import app
from trajset.redactors import build_redactor, selected_rules
from trajset.redactors.base import PLACEHOLDER_RE, Placeholders
from trajset.redactors.spans import Decoded, join

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ANT = "sk-ant-api03-" + "Zq8Lm2Np4Rs6Tv8Xw0Yb1Cd3Ef5Gh7Jk9Mn"
AWS_ID, AWS_SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TERMS = ["Acme", "Bluebird", "Alice Johnson"]


def _redact(*texts: str, terms: list[str] | None = None) -> list[str]:
    """The texts redacted with the default rules, as one tree (placeholders numbered alike)."""
    r, p = build_redactor(selected_rules(), terms=terms or []), Placeholders()
    return [r.text(t, p) for t in texts]


def test_a_token_inside_url_credentials_is_one_placeholder_and_the_host_stays() -> None:
    [out] = _redact(f"git remote: https://x-access-token:{GHP}@github.com/acme/bluebird.git")
    assert out == "git remote: https://[REDACTED:url_credentials:1]@github.com/acme/bluebird.git"


@pytest.mark.parametrize(
    "escaped",
    [
        ANT[:13] + "\\u0041" + ANT[13:],  # written out as a JSON string escape
        ANT[:13] + "\\x41" + ANT[13:],
        ANT[:13] + "%41" + ANT[13:],
        "\\u0073\\u006b-ant-api03-A" + ANT[13:],  # the prefix itself escaped
    ],
)
def test_a_secret_written_with_escapes_is_found_and_the_text_around_it_kept(escaped: str) -> None:
    plain = ANT[:13] + "A" + ANT[13:]
    out, again = _redact(f"my key is {escaped} (do not share)", f"plain {plain}")
    assert out == "my key is [REDACTED:anthropic_key:1] (do not share)"
    assert again == "plain [REDACTED:anthropic_key:1]"  # the same secret: the same number


def test_an_aws_secret_key_beside_its_key_id_is_found() -> None:
    [out] = _redact(f"aws {AWS_ID} and secret {AWS_SECRET}")
    assert out == "aws [REDACTED:aws_access_key_id:1] and secret [REDACTED:aws_secret_access_key:1]"


@pytest.mark.parametrize(
    "text",
    [
        f"aws_secret_access_key = {AWS_SECRET}",
        f"AWS_SECRET_KEY: {AWS_SECRET}",
        json.dumps({"AccessKeyId": "ASIA" + AWS_ID[4:], "SecretAccessKey": AWS_SECRET}),
        f"export AWS_ACCESS_KEY_ID={AWS_ID}\nexport AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
    ],
)
def test_the_secret_half_of_a_pair_is_found_in_each_form(text: str) -> None:
    [out] = _redact(text)
    assert AWS_SECRET not in out and "[REDACTED:aws_secret_access_key:1]" in out


def test_a_hex_digest_beside_a_key_id_is_no_secret() -> None:
    digest = "3f786850e387550fdab836ed7e6dc881de23001b"  # a git commit: 40 characters, one case
    [out] = _redact(f"commit {digest} uses {AWS_ID}")
    assert out == f"commit {digest} uses [REDACTED:aws_access_key_id:1]"


def test_alibaba_and_azure_secret_halves() -> None:
    alibaba_secret, azure = (
        "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy",
        "abc8Q~aBcDeFgHiJkLmNoPqRsTuVwXyZ01234-_",
    )
    out = _redact(f"id LTAI5tQ8mDNxyzAbCdEf12 secret {alibaba_secret}", f"client secret {azure} ok")
    assert out == [
        "id [REDACTED:alibaba_access_key_id:1] secret [REDACTED:alibaba_secret_key:1]",
        "client secret [REDACTED:azure_client_secret:1] ok",
    ]


def test_names_companies_and_codenames_are_terms() -> None:
    [out] = _redact("Contact Alice Johnson at Acme Corp about Project Bluebird", terms=TERMS)
    assert (
        out == "Contact [REDACTED:term:1] at [REDACTED:term:2] Corp about Project [REDACTED:term:3]"
    )


@pytest.mark.parametrize(
    "text,expected",
    [
        ("ACME and acme and AcMe", "[REDACTED:term:1] and [REDACTED:term:1] and [REDACTED:term:1]"),
        ("cd /srv/acme/bluebird_v2/", "cd /srv/[REDACTED:term:1]/[REDACTED:term:2]_v2/"),
        ("host acme-internal:8080", "host [REDACTED:term:1]-internal:8080"),
        ("https://git.acme.dev/x", "https://git.[REDACTED:term:1].dev/x"),
        ("alice.johnson and ALICE   JOHNSON", "[REDACTED:term:1] and [REDACTED:term:1]"),
        ("bluebirds, acmeish and subluebird stay", "bluebirds, acmeish and subluebird stay"),
    ],
)
def test_every_variant_of_a_term_is_found_and_only_those(text: str, expected: str) -> None:
    [out] = _redact(text, terms=["acme", "Bluebird", "Alice Johnson"])
    assert out == expected


def test_a_string_that_is_only_a_short_term_is_found() -> None:
    """A field holding just ``Acme`` (shorter than any detector's finding) is examined too."""
    r, p = build_redactor(["term_v1"], terms=["Acme", "Bob"]), Placeholders()
    assert [r.text(t, p) for t in ("Acme", "bob", "Bo")] == [
        "[REDACTED:term:1]", "[REDACTED:term:2]", "Bo"
    ]  # fmt: skip


def test_a_term_in_an_e_mail_local_part() -> None:
    r, p = build_redactor(["term_v1"], terms=["bluebird"]), Placeholders()
    assert r.text("write to bluebird-team@corp.example", p) == (
        "write to [REDACTED:term:1]-team@corp.example"
    )


def test_overlapping_findings_of_two_rules_are_one_placeholder_over_their_union() -> None:
    r = build_redactor(
        [], custom=[{"name": "left_v1", "pattern": r"foo-\d+"}, {"name": "right_v1", "pattern": r"\d+-bar"}]
    )  # fmt: skip
    assert r.text("x foo-123-bar y", Placeholders()) == "x [REDACTED:left:1] y"
    assert join([(5, 9, 1), (2, 6, 0), (20, 22, 0)]) == [(2, 9, 0), (20, 22, 0)]


def test_no_placeholder_is_ever_inside_another_and_redacting_twice_changes_nothing() -> None:
    texts = [
        f"git remote: https://x-access-token:{GHP}@github.com/acme/bluebird.git",
        f"token: {GHP} and password=Hunter2xyzQ9 and {ANT[:13]}%41{ANT[13:]}",
        f"aws {AWS_ID} {AWS_SECRET} Acme",
        "store-[REDACTED:secrets:1]/planted.jsonl",  # an earlier placeholder, read again
    ]
    once = _redact(*texts, terms=TERMS)
    assert _redact(*once, terms=TERMS) == once
    for out in once:  # every placeholder whole: none cut open by another
        assert "REDACTED" not in PLACEHOLDER_RE.sub("", out), out


def test_decoded_spans_map_back_to_the_escaped_characters() -> None:
    d = Decoded.of("ab\\u0043d%45f")
    assert d is not None and d.text == "abCdEf"
    assert [d.original(a, b) for a, b in [(0, 2), (2, 3), (1, 5), (3, 6)]] == [
        (0, 2), (2, 8), (1, 12), (8, 13),
    ]  # fmt: skip
    assert Decoded.of("no escapes, 100%") is None


def _clean_store(root: Path) -> Path:
    """Sessions with paths, URLs, JSON arguments and prose, and nothing any rule finds (a
    working folder of one segment is no identity)."""
    store = root / "clean"
    store.mkdir()
    for n in range(3):
        b = SessionBuilder(f"clean-{n}", cwd=f"/project-{n}", hashes=False)
        b.config(model="gpt-5", instructions="You are a careful coding agent.")
        b.user(f"Fix the failing test {n} in src/loader.py; see https://docs.example.org/a?b=1%20c")
        b.respond(calls=[("c1", "bash", {"cmd": f"pytest -q tests/test_{n}.py"})], model="gpt-5")
        b.tool_output("c1", "3 passed, 1 failed: assert load('config.toml') == {}\n100% done")
        b.respond(text="The loader reads the path relative to the project; fixed.", model="gpt-5")
        (store / f"clean-{n}.jsonl").write_text(b.text())
    return store


def _data_files(out: Path) -> dict[str, Any]:
    return {
        str(p.relative_to(out)): unstamped(p)
        for p in sorted(out.rglob("*"))
        if p.is_file()
        and p.name not in ("manifest.json", "README.md")
        and ".trajset" not in p.parts
    }


def test_terms_leave_a_clean_store_byte_for_byte_as_no_redact_does(
    tmp_path: Path, runner: CliRunner
) -> None:
    store, terms = _clean_store(tmp_path), tmp_path / "terms.txt"
    terms.write_text("# our names\nAcme\nBluebird\n\nAlice Johnson\n")
    common = [str(store), "-q", "--workers", "1"]
    for name, extra in (("raw", ["--no-redact"]), ("terms", ["--redact-terms", str(terms)])):
        result = runner.invoke(app, ["export", *common, "--out", str(tmp_path / name), *extra])
        assert result.exit_code == 0, result.output
    assert _data_files(tmp_path / "terms") == _data_files(tmp_path / "raw")
    manifest = json.loads((tmp_path / "terms" / "manifest.json").read_text())
    assert manifest["redaction"]["terms"] == 3


def test_terms_from_the_config_file_and_in_scan_and_never_in_any_output_byte(
    tmp_path: Path, runner: CliRunner
) -> None:
    b = SessionBuilder("t-1", cwd="/work/bluebird", hashes=False)
    b.user("Ask Alice Johnson at Acme about bluebird_v2 on acme-internal")
    b.respond(text="I will write to alice.johnson about Project Bluebird.", model="m")
    store = tmp_path / "s"
    store.mkdir()
    (store / "t-1.jsonl").write_text(b.text())
    terms = tmp_path / "terms.txt"
    terms.write_text("Acme\nBluebird\nAlice Johnson\n")
    config = tmp_path / "trajset.toml"
    config.write_text(f'[export]\nredact_terms = "{terms.as_posix()}"\n')
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["export", str(store), "--out", str(out), "-q", "--config", str(config)]
    )
    assert result.exit_code == 0, result.output
    for p in out.rglob("*"):
        data = (p.read_bytes() if p.is_file() else b"").lower() + p.name.lower().encode()
        assert not any(w in data for w in (b"acme", b"bluebird", b"alice", b"johnson")), p
    raw = tmp_path / "raw"
    assert (
        runner.invoke(app, ["export", str(store), "--out", str(raw), "-q", "--no-redact"]).exit_code
        == 0
    )
    found = runner.invoke(app, ["scan", str(raw), "--redact-terms", str(terms)])
    assert found.exit_code == 1 and "term_v1" in found.output
    assert runner.invoke(app, ["scan", str(out), "--redact-terms", str(terms)]).exit_code == 0


def test_a_term_too_short_or_a_missing_file_is_a_usage_error(
    tmp_path: Path, runner: CliRunner
) -> None:
    short = tmp_path / "short.txt"
    short.write_text("ok\n")
    for path, says in ((short, "at least 3 characters"), (tmp_path / "none.txt", "cannot read it")):
        result = runner.invoke(
            app, ["export", "--out", str(tmp_path / "o"), "--redact-terms", str(path)]
        )
        assert result.exit_code == 2 and says in result.output, result.output
    both = runner.invoke(app, ["export", "--no-redact", "--redact-terms", str(short)])
    assert both.exit_code == 2 and "--redact-terms" in both.output
