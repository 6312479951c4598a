"""Every class of leak and look-alike an adversarial pass found (issue: privacy that holds
against real text): secrets in every position and encoding are found, code and settings
that only look like credentials are kept, user names are numbered where they stand as
words, and no input path reaches the manifest or anything ``publish`` sends."""

from __future__ import annotations

import base64
import json
import random
import re
import string
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajset.pipeline.cli import app
from trajset.redactors import build_redactor, selected_rules
from trajset.redactors.base import Placeholders
from trajset.redactors.identities import Identity, home_users

RNG = random.Random(64)
ALNUM = string.ascii_letters + string.digits


def _key(prefix: str, n: int, alphabet: str = ALNUM) -> str:
    body = "".join(RNG.choice(alphabet) for _ in range(n))
    return prefix + body[:2] + "7Q" + body[4:]  # a digit and an upper-case letter, always


GHP, HF = _key("ghp_", 36), _key("hf_", 34, string.ascii_letters)
STRIPE, PROJ = _key("sk_live_", 24), _key("sk-proj-", 48)
AZURE = base64.b64encode(RNG.randbytes(64)).decode()
PW = "Vq7" + _key("", 11)


def _redact(text: str, extra: tuple[str, ...] = (), people: list[Identity] | None = None) -> str:
    r = build_redactor(selected_rules(extra), identities=people or [])
    return r.text(text, Placeholders())


# (text holding a secret, the secret)
LEAKS = {
    "azure_account_key": (
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE};EndpointSuffix=x",
        AZURE,
    ),
    "azure_sas": (f"https://acme.blob.core.windows.net/c?sv=2022-11-02&sig={PW}%3D", PW),
    "mysql_p": (f"mysql -u root -p{PW} shop < dump.sql", PW),
    "sshpass": (f"sshpass -p {PW} ssh deploy@host", PW),
    "az_account_key": (f"az storage blob upload --account-key {AZURE} -f x", AZURE),
    "docker_login": (f"docker login -u bot -p{PW} registry.example", PW),
    "curl_user": (f"curl -u admin:{PW} https://api.example", PW),
    "token_flag": (f"gh auth --token {PW} status", PW),
    "json_token": (json.dumps({"token": _key("", 40)}), None),
    "json_api_key": (json.dumps({"apiKey": _key("", 32)}), None),
    "json_access_token": (json.dumps({"data": {"access_token": _key("", 40)}}), None),
    "diff_minus": (f"-GITHUB_TOKEN=x\n-{GHP}\n+{HF}\n", GHP),
    "diff_plus": (f"-{GHP}\n+{HF}\n", HF),
    "rest_path": (f"POST /v1/keys/{STRIPE}/revoke", STRIPE),
    "percent_path": (f"GET /repos%2F{GHP}%2Fx", GHP),
    "glued_letter": (f"tokenX{GHP}", GHP),
    "before_dash": (f"{PROJ}-suffix and {GHP}_x", GHP),
    "backslash": (f"C:\\keys\\{HF}\\x", HF),
    "underscore_before": (f"MY_{STRIPE}", STRIPE),
    "wrapped_key": (f"export GITHUB_TOKEN={GHP[:20]}\n{GHP[20:]}\necho ok", GHP[20:]),
    "wrapped_escaped": (f'"export T={GHP[:24]}\\n{GHP[24:]}"', GHP[24:]),
    "base64_env": (
        "echo "
        + base64.b64encode(f"DB_HOST=db\nDB_PASSWORD={PW}\nAPI={GHP}\n".encode()).decode()
        + " | base64 -d > .env",
        None,
    ),
    "base64_config": (
        base64.b64encode(json.dumps({"auth": {"token": GHP}}).encode()).decode(),
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_a_secret_is_found_in_every_position_and_encoding(name: str) -> None:
    text, secret = LEAKS[name]
    out = _redact(text)
    assert "[REDACTED:" in out, (name, out)
    if secret is not None:
        assert secret not in out, (name, out)
    if name.startswith("base64"):
        assert text.split()[0 if name == "base64_config" else 1] not in out


@pytest.mark.parametrize(
    "member", [{"token": _key("", 40)}, {"apiKey": _key("", 32)}, {"clientSecret": _key("", 30)}]
)
def test_a_json_member_named_as_a_credential_is_found_once_decoded(member: dict[str, str]) -> None:
    """A string holding JSON is decoded and its members judged by name."""
    r, p = build_redactor(selected_rules()), Placeholders()
    out = r.value({"output": json.dumps({"ok": True, **member})}, p)
    assert next(iter(member.values())) not in json.dumps(out)


LOOK_ALIKES = [
    "tokenStart = charIndex",
    "input_tokens=input_tokens",
    "total_input_tokens: metric.attributes.total_input_tokens",
    'missing-typed-dict-key = "error"',
    "token: self.token",
    "secret: config.secret",
    "password: form.password.data",
    "api_key: settings.api_key",
    "api_key = d.tokens",
    "token = args.token",
    "password = ${DB_PASSWORD}",
    'token = os.environ["GITHUB_TOKEN"]',
    "const accessToken = getAccessToken(user);",
    '"oldText":"tokensBefore: estimate.tokensBefore,\\n tokensAfter: summaryTokens"',
    "clone git@github.com:org/repo.git",
    "see logo@2x.png and icon@3x.webp",
    "open /Users/Shared/Relocated Items/x.txt",
    "dir C:\\Users\\Public\\Documents\\x.txt",
    '{"token": "Hello", "logprob": -0.25}',
    "task-abcdefghijabcdefghijabcdefghij",
    "sha256 " + "ab" * 32,
    # a provider's ciphertext (a real Codex store's ``encrypted_content``) holds ``hf_…``
    "gAAAAABatv6lX47AzLcqnbK7Ghf_3M2UzTZjkNw1pYJsCQKP0XxsAuVZs9slGgTjQKO3NFMTkJ0pg_2yBfC-urp7",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_code_settings_and_look_alikes_are_kept(text: str) -> None:
    assert _redact(text) == text


@pytest.mark.parametrize("text", ["version 1.2.3.4", "v10.0.19041.1", "Version: 4.3.2.1"])
def test_a_four_part_version_is_no_address_under_pii(text: str) -> None:
    assert _redact(text, ("pii",)) == text
    assert _redact("ping 10.1.2.3", ("pii",)) != "ping 10.1.2.3"


@pytest.mark.parametrize(
    "text",
    [
        "-rw-------@ 1 calebf  wheel  120 Jan  2 10:00 .env",
        "calebf@laptop:~/src/app$ ls",
        "Author: calebf <1234+calebf@users.noreply.github.com>",
        "Calebf pushed to main",
    ],
)
def test_a_user_name_the_run_knows_is_numbered_where_it_is_no_path(text: str) -> None:
    people = home_users(["/home/calebf/src/app"])
    out = _redact(text, people=people)
    assert "calebf" not in out.lower() and "user_1" in out, out


def test_user_names_come_from_homes_in_paths_and_project_folders() -> None:
    found = home_users(
        ["/home/calebf/src/app", "x/projects/-Users-dana-src-app", "--home-erin-w--", "/root/x"]
    )
    assert [i.value for i in found] == ["calebf", "dana", "erin"]


def _claude_store(root: Path, user: str) -> Path:
    """A Claude Code project folder named after a home, with a slug that holds a token."""
    src = Path(__file__).parent / "data/upstream/claude-code/teich/example_claude_code.jsonl"
    folder = root / "projects" / f"-home-{user}-src-app"
    folder.mkdir(parents=True)
    lines = []
    for line in src.read_text().splitlines():
        d = json.loads(line)
        if "slug" in d:
            d["slug"] = f"mossy-{GHP}-flame"
        lines.append(json.dumps(d))
    (folder / "s.jsonl").write_text("\n".join(lines) + "\n")
    return root / "projects"


def test_a_slug_and_a_project_folder_leak_nothing(tmp_path: Path) -> None:
    store = _claude_store(tmp_path, "calebf")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["export", str(store), "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    for f in out.rglob("*"):
        if f.is_file() and ".trajset" not in f.parts:
            data = f.read_bytes()
            assert GHP.encode() not in data and b"calebf" not in data, f
    sources = [i["source"] for i in json.loads((out / "manifest.json").read_text())["inputs"]]
    assert len(sources) == 1 and re.fullmatch(r"projects/-home-user_\d+-src-app", sources[0])


def test_an_export_under_root_publishes_and_its_manifest_holds_no_input_path(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    store = _claude_store(root, "root")
    out = tmp_path / "out"
    env = {"HOME": str(root), "USER": "root"}
    r = CliRunner().invoke(app, ["export", str(store), "--out", str(out), "-q"], env=env)
    assert r.exit_code == 0, r.output
    manifest = (out / "manifest.json").read_text()
    assert str(root) not in manifest and str(tmp_path) not in manifest
    errors = out / "errors.parquet"
    assert not errors.exists() or str(tmp_path).encode() not in errors.read_bytes()
    published = CliRunner().invoke(app, ["publish", str(out), "acme/x", "--dry-run"], env=env)
    assert published.exit_code == 0, published.output
    assert "dry run: nothing was sent" in published.output


def test_the_owner_of_a_real_store_is_numbered_in_ls_output(tmp_path: Path) -> None:
    """A real Claude Code session (``upstream/claude-code/teich``) whose working folder is
    in ``/Users/calebfahlgren`` lists files with ``ls -l``: the owner column is numbered."""
    src = Path(__file__).parent / "data/upstream/claude-code/teich"
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["export", str(src), "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    texts = [f.read_text() for f in (out / "atif").glob("*.json")]
    assert texts and not any("calebfahlgren" in t for t in texts)
    assert any(re.search(r"-rw-------@ 1 user_\d+ +wheel", t) for t in texts)


def test_a_user_name_that_is_a_home_folder_is_one_finding() -> None:
    """``/home/calebf/…`` became ``/home/user_1/…`` and then ``~/…``: one value, two findings
    in the manifest (2,250 identity findings on a corpus whose bytes they did not change)."""
    r = build_redactor(selected_rules(), identities=home_users(["/home/calebf/src"]))
    p = Placeholders()
    assert r.text("cd /home/calebf/src && ls", p) == "cd ~/src && ls"
    assert dict(p.findings) == {"home_paths_v3": 1}
    alone = build_redactor(["identity_v1"], identities=home_users(["/home/calebf/src"]))
    assert alone.text("cd /home/calebf/src", Placeholders()) == "cd /home/user_1/src"
