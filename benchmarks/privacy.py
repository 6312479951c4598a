"""Privacy measured both ways: planted secrets that leak (recall) and real code rewritten (precision).

    python benchmarks/privacy.py --code-mb 8 --seed 1 [--keep DIR]

*Precision*: sessions whose tool outputs are real source code with no secret in
it (the Python standard library without its tests, then the installed
``huggingface_hub``, ``datasets``, ``pydantic``, ``typer``, ``jsonschema`` and
``fsspec``, which handle tokens and passwords all day), up to ``--code-mb``,
exported with the default rules; every placeholder is a false positive, counted
per rule from the manifest.

*Recall*: sessions holding a distinct planted secret of every class the rules
claim (``CLASSES``: provider tokens glued to paths, diff markers and letters,
wrapped over two lines, base64 of a ``.env``, JSON members, command lines,
connection strings, assignments), in a user prompt, a tool call's arguments, a
tool output and an answer, plus the older hard cases of ``tests/test_redaction``;
a leak is a planted value found in any output byte or file name.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the builder lives in tests/
from tests.builder import SessionBuilder
from tests.test_redaction import planted_values
from trajset.pipeline import ExportOptions, RunOptions, run_export

PACKAGES = ("huggingface_hub", "datasets", "pydantic", "typer", "jsonschema", "fsspec")
ALNUM = string.ascii_letters + string.digits


def code_files(limit: int) -> Iterator[tuple[str, str]]:
    """(name, text) of source files, about ``limit`` bytes: half from the standard library,
    half from PACKAGES (an equal share each, what one lacks going to the next)."""
    roots = []
    for name in PACKAGES:
        spec = find_spec(name)
        if spec is not None and spec.origin:
            roots.append((name, Path(spec.origin).parent))
    budget = [("stdlib", Path(sysconfig.get_paths()["stdlib"]), limit // 2)]
    budget += [(label, root, (limit - limit // 2) // len(roots)) for label, root in roots]
    spare = 0
    for label, root, share in budget:
        share, used = share + spare, 0
        for f in sorted(root.rglob("*.py")):
            rel = f.relative_to(root)
            if {"test", "tests", "site-packages", "idle_test"} & set(rel.parts[:-1]):
                continue
            text = f.read_text(encoding="utf-8", errors="replace")
            if used + len(text.encode()) > share:
                break
            used += len(text.encode())
            yield f"{label}/{rel.as_posix()}", text
        spare = share - used


def code_store(folder: Path, limit: int, per_session: int = 6) -> tuple[int, int]:
    """Sessions that read source files; returns (sessions, bytes of code)."""
    files = list(code_files(limit))
    for n in range(0, len(files), per_session):
        b = SessionBuilder(f"code-{n:06d}", harness={"name": "bench", "version": "1"})
        b.user("Read these files and summarise them.")
        for i, (name, text) in enumerate(files[n : n + per_session]):
            call = f"call_{i}"
            b.respond(calls=[(call, "read", {"path": name})], model="m")
            b.tool_output(call, text)
        b.respond(text="Done.", model="m")
        (folder / f"code-{n:06d}.jsonl").write_text(b.text())
    return -(-len(files) // per_session), sum(len(t.encode()) for _, t in files)


def _key(rng: random.Random, prefix: str, n: int, alphabet: str = ALNUM) -> str:
    body = "".join(rng.choice(alphabet) for _ in range(n))
    return prefix + body[:2] + "7Q" + body[4:]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


#: class -> (text holding the secret, the secret) from a random source; each leaks or not
CLASSES: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "ghp_after_slash": lambda r: (f"GET /x/{(k := _key(r, 'ghp_', 36))}/y", k),
    "hf_after_plus": lambda r: (f"+{(k := _key(r, 'hf_', 34, string.ascii_letters))}", k),
    "ghp_after_minus": lambda r: (f"-{(k := _key(r, 'ghp_', 36))}", k),
    "stripe_in_path": lambda r: (f"/keys/{(k := _key(r, 'sk_live_', 24))}/revoke", k),
    "proj_glued": lambda r: (f"key{(k := _key(r, 'sk-proj-', 48))}_x", k),
    "ghp_percent": lambda r: (f"%2F{(k := _key(r, 'ghp_', 36))}%2F", k),
    "npm_backslash": lambda r: (f"\\{(k := _key(r, 'npm_', 36))}\\", k),
    "wrapped_ghp": lambda r: (f"T={(k := _key(r, 'ghp_', 36))[:22]}\n{k[22:]}\nok", k[22:]),
    "base64_env": lambda r: (
        f"echo {(e := _b64('A=1' + chr(10) + 'DB_PASSWORD=' + _key(r, 'Pw', 12)))}",
        e,
    ),
    "json_token": lambda r: (json.dumps({"token": (k := _key(r, "", 40))}), k),
    "json_api_key": lambda r: (json.dumps({"apiKey": (k := _key(r, "", 32))}), k),
    "mysql_p": lambda r: (f"mysql -u root -p{(k := _key(r, 'Pw', 10))} db", k),
    "sshpass": lambda r: (f"sshpass -p {(k := _key(r, 'Pw', 10))} ssh h", k),
    "docker_login": lambda r: (f"docker login -p{(k := _key(r, 'dckr_', 20))} r", k),
    "az_account_key": lambda r: (f"az x --account-key {(k := _b64(_key(r, '', 48)))}", k),
    "azure_conn": lambda r: (f"AccountName=a;AccountKey={(k := _b64(_key(r, '', 48)))};x", k),
    "password_assign": lambda r: (f"password={(k := _key(r, 'Pw', 10))}", k),
}


def planted_store(folder: Path, sessions: int, seed: int) -> list[tuple[str, str]]:
    """Sessions with every class in four places, and the older hard cases; returns
    (class, secret) of everything planted."""
    rng, planted = random.Random(seed), []
    for n in range(sessions):
        b = SessionBuilder(f"planted-{n:05d}", harness={"name": "bench", "version": "1"})
        texts = []
        for name, make in CLASSES.items():
            text, secret = make(rng)
            texts.append(text)
            planted.append((name, secret))
        blob = "\n".join(texts)
        b.user("look at this\n" + blob)
        b.respond(calls=[("call_1", "bash", {"command": blob})], model="m")
        b.tool_output("call_1", json.dumps({"stdout": blob, "token": _key(rng, "", 40)}))
        b.respond(text="It printed:\n" + blob, model="m")
        (folder / f"planted-{n:05d}.jsonl").write_text(b.text())
    hard = planted_values()
    b = SessionBuilder("hard-cases", harness={"name": "bench", "version": "1"})
    b.user("\n".join(t for t, _ in hard.values()))
    b.respond(text="ok", model="m")
    (folder / "hard-cases.jsonl").write_text(b.text())
    planted += [(f"hard:{k}", v) for k, (_, v) in hard.items() if not k.startswith("home")]
    return planted


def _output_bytes(out: Path) -> bytes:
    files = [f for f in out.rglob("*") if f.is_file() and ".trajset" not in f.parts]
    return b"\n".join([f.read_bytes() for f in files] + [str(f).encode() for f in files])


def _export(store: Path, out: Path) -> tuple[dict[str, int], float]:
    started = time.perf_counter()
    run_export([store], out, ExportOptions(), RunOptions(workers=1))
    manifest = json.loads((out / "manifest.json").read_text())
    return manifest["redaction"]["findings"], time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code-mb", type=float, default=8.0)
    ap.add_argument("--sessions", type=int, default=50, help="planted sessions")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="keep the stores and exports here")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="trajset-privacy-"))
    (work / "code").mkdir(parents=True, exist_ok=True)
    (work / "planted").mkdir(parents=True, exist_ok=True)
    n, size = code_store(work / "code", int(args.code_mb * 1e6))
    found, seconds = _export(work / "code", work / "code-out")
    print(f"precision: {n} sessions, {size / 1e6:.1f} MB of source code, {seconds:.1f} s")
    print(f"  placeholders (false positives): {sum(found.values())}")
    for rule, count in sorted(found.items(), key=lambda x: (-x[1], x[0])):
        print(f"    {rule}: {count}")
    planted = planted_store(work / "planted", args.sessions, args.seed)
    _export(work / "planted", work / "planted-out")
    data = _output_bytes(work / "planted-out")
    leaks = Counter(name for name, secret in planted if secret.encode() in data)
    print(f"recall: {len(planted)} planted values of {len(CLASSES)} classes and the hard cases")
    print(f"  leaked: {sum(leaks.values())}")
    for name, count in sorted(leaks.items()):
        print(f"    {name}: {count}")


if __name__ == "__main__":
    main()
