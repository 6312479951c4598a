"""Export options and their resolution: a flag given > the ``--config`` file > the default.

``ExportOptions`` holds everything that shapes the data files (it is
recorded in the manifest and checked on ``--mode resume``); ``RunOptions``
holds how the run is carried out (workers, executor, mode), which never
changes a data byte, and its ``RunSettings``: the run's tuning knobs (slice,
spill, part, batch, shard and row-group sizes), one frozen object that
``RunContext`` carries to every worker of every executor and the manifest
records, so tests choose small values by passing them, never by patching.  ``resolve`` is the one place that merges the command
line, the config file and the defaults: a value of ``None`` means "not
given", so a flag wins over the file in both directions.

The config file (``--config FILE.toml``)::

    [export]
    prefer = ["label:kept", "score"]
    where = "outcome_pass"
    license = "mit"
    redact = ["pii"]
    secret_env = ["OPENAI_API_KEY"]
    redact_terms = "private/terms.txt"   # names, companies, codenames: one per line
    workers = 4

    [[redact.rules]]
    name = "ticket_id_v1"
    pattern = "TICKET-[0-9]{5}"
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from trajset.redactors import (
    Identity,
    Redactor,
    RuleError,
    Terms,
    build_redactor,
    custom_rule,
    read_terms,
    ruleset_version,
    selected_rules,
)
from trajset.redactors.identities import PSEUDONYM_KEY_FLOOR, key_id

from . import tokenizing
from .errors import UsageError
from .flags import CONFIG_KEYS, Mode
from .splits import Splits, parse_splits
from .tokenizing import TokenizeOptions
from .tree.policies import Policy, parse_policy, policy_label


@contextmanager
def rule_errors_are_usage_errors() -> Iterator[None]:
    """Redaction rules are user input: a bad one is a usage error (exit 2)."""
    try:
        yield
    except RuleError as exc:
        raise UsageError(str(exc)) from None


#: config key -> expected type (the ``[export]`` table), from the options' declaration
EXPORT_KEYS: dict[str, type] = CONFIG_KEYS


#: ``--dedup`` modes
DEDUP_MODES = ("exact", "near", "off")
#: ``--kto-from`` sources of the ``kto`` rows
KTO_SOURCES = ("pairs", "outcomes")

TYPE_NAMES = {list: "an array", str: "a string", int: "an integer", float: "a number",
              bool: "true or false"}  # fmt: skip


@dataclass(frozen=True)
class ExportOptions:
    """Resolved options of one export run; everything that shapes the data files."""

    prefer: tuple[str, ...] = ()
    store_kind: str = "auto"
    redact: bool = True
    redact_rules: tuple[str, ...] = ()  # versioned names; empty with redact=True: the default set
    custom_rules: tuple[tuple[str, str], ...] = ()  # (versioned name, pattern) from --config
    secret_count: int = 0  # how many literal secrets were given (the values are never stored)
    term_count: int = 0  # how many --redact-terms were given (never the terms)
    where: str | None = None
    license: str = "other"
    reader_options: tuple[tuple[str, str], ...] = ()  # NAME=VALUE for the store reader
    homes: tuple[str, ...] = ()  # home folders beyond /home/*, /Users/*, C:\\Users\\* (--home)
    max_media_bytes: int | None = None  # larger media stay references, not files
    dedup: str = "exact"  # sft rows held twice: exact (duplicates and prefixes) | near | off
    dedup_threshold: float = 0.8  # with near: the estimated Jaccard similarity that holds a row
    kto_from: str = "pairs"  # the kto rows: the pairs' sides | the trajectories' pass verdicts
    split: Splits = ()  # (name, fraction) beside train, by session (``splits``)
    split_by: str | None = None  # a trajectories column the splits are stratified by
    tokenize: TokenizeOptions | None = None  # --tokenizer: the tokenized configs too
    traces: bool = False  # --traces: traces/, one redacted file per session for the Hub's viewer
    pseudonym_key_id: str = ""  # --pseudonym-key-env: ``identities.key_id`` of RunOptions' key

    def policies(self) -> list[Policy]:
        return [parse_policy(p) for p in self.prefer]

    def policy_labels(self) -> list[str]:
        """``--prefer`` as given ([]: each store's own signal, ``Reader.prefer``)."""
        return [policy_label(p) for p in self.policies()]

    def builtin_rules(self) -> list[str]:
        if not self.redact:
            return []
        return list(self.redact_rules or selected_rules())

    def rule_names(self) -> list[str]:
        """The redaction rules in force, as versioned names (written into the manifest)."""
        return self.builtin_rules() + [name for name, _ in self.custom_rules if self.redact]

    def redaction_version(self) -> str:
        """The rule set's version (``ruleset_version``), stamped on every row and trace."""
        custom = list(self.custom_rules) if self.redact else []
        return ruleset_version(self.builtin_rules(), custom, self.pseudonym_key_id)

    def redactor(
        self,
        secrets: list[str],
        terms: Sequence[str] = (),
        identities: Sequence[Identity] = (),
        roots: Sequence[str] = (),
        pseudonym_key: str = "",
    ) -> Redactor:
        """The run's redactor; ``pseudonym_key`` must be the key ``pseudonym_key_id`` names."""
        if (key_id(pseudonym_key) if pseudonym_key else "") != self.pseudonym_key_id:
            raise UsageError("the pseudonym key is not the one ExportOptions.pseudonym_key_id "
                             "names (trajset.redactors.identities.key_id(key))")  # fmt: skip
        custom = [{"name": n, "pattern": p} for n, p in self.custom_rules] if self.redact else []
        with rule_errors_are_usage_errors():
            return build_redactor(
                self.builtin_rules(), secrets=secrets, homes=self.homes, custom=custom,
                terms=terms, identities=identities, roots=roots, pseudonym_key=pseudonym_key,
            )  # fmt: skip


@dataclass(frozen=True)
class RunSettings:
    """Sizes of a run's pieces, each at least 1: how much a worker holds at once and how
    many part and shard files it writes; never the content or order of a row."""

    #: trajectories per slice of a session: what a worker holds the documents of at once
    slice_trajectories: int = 16
    #: a unit hands on (spills) the table rows it holds once it wrote this many document bytes
    spill_document_bytes: int = 32 * 1000 * 1000
    #: and once a session table (preferences) has built this many rows of a session
    spill_session_rows: int = 256
    #: a batch writes its rows to a part once the units behind them read this many input bytes
    part_input_bytes: int = 4 * 1000 * 1000
    #: units per batch on average, for units much smaller than ``batch_input_bytes``
    batch_mean_units: int = 64
    #: input bytes per batch on average, for larger units
    batch_input_bytes: int = 1_000_000
    #: a shard ends before a part would take its rows past this many in-memory bytes
    shard_bytes: int = 500 * 1000 * 1000
    #: row groups of a Parquet file stay near this many in-memory bytes
    row_group_bytes: int = 100 * 1000 * 1000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(
                    f"RunSettings.{f.name} must be an integer of at least 1, not {value!r}"
                )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunOptions:
    """How a run is carried out; never changes a row (``settings`` only cut batches, parts
    and shards differently)."""

    workers: int = 1
    executor: str = "local"
    mode: Mode = Mode.error
    ray_address: str | None = None  # a Ray cluster to join (--executor ray)
    keep_state: bool = False  # keep .trajset/ parts and markers for an incremental resume
    #: the local pool's processes may start by fork where ``tuning.fork_safe`` allows (the
    #: command line sets it: its process runs nothing else); spawned otherwise
    fork: bool = False
    secrets: tuple[str, ...] = field(default=(), repr=False)
    terms: tuple[str, ...] = field(default=(), repr=False)  # --redact-terms, never stored
    pseudonym_key: str = field(default="", repr=False)  # --pseudonym-key-env's value
    settings: RunSettings = field(default_factory=RunSettings)


def load_config(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(``[export]`` options, ``[[redact.rules]]``) from a TOML file; ``UsageError`` when off."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--config {path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"--config {path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--config {path}: not valid TOML ({exc})") from None
    unknown_tables = sorted(set(data) - {"export", "redact"})
    if unknown_tables:
        raise UsageError(
            f"--config {path}: unknown table(s) {', '.join(unknown_tables)}; valid: export, redact"
        )
    export, redact = data.get("export", {}), data.get("redact", {})
    if not isinstance(export, dict) or not isinstance(redact, dict):
        raise UsageError(f"--config {path}: [export] and [redact] must be tables")
    for key, value in export.items():
        if key not in EXPORT_KEYS:
            raise UsageError(
                f"--config {path}: unknown option export.{key}; valid: {', '.join(EXPORT_KEYS)}"
            )
        expected = EXPORT_KEYS[key]
        number = expected is float and isinstance(value, int) and not isinstance(value, bool)
        if not (isinstance(value, expected) or number) or (
            expected is int and isinstance(value, bool)
        ):
            raise UsageError(f"--config {path}: export.{key} must be {TYPE_NAMES[expected]}")
    if sorted(set(redact) - {"rules"}):
        raise UsageError(f"--config {path}: unknown option in [redact]; valid: redact.rules")
    rules = redact.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise UsageError(
            f"--config {path}: redact.rules must be an array of tables [[redact.rules]]"
        )
    return export, rules


def reader_options(values: list[str]) -> tuple[tuple[str, str], ...]:
    """``NAME=VALUE`` strings as sorted pairs; ``UsageError`` for one without ``=``."""
    pairs = []
    for v in values:
        name, eq, value = v.partition("=")
        if not eq or not name:
            raise UsageError(f"--reader-option {v!r}: write NAME=VALUE, e.g. keep_truncated=true")
        pairs.append((name.strip(), value.strip()))
    return tuple(sorted(pairs))


def _pick(flag: Any, conf: dict[str, Any], key: str, default: Any) -> Any:
    """The flag when given (not None), else the config file's value, else the default."""
    if flag is not None:
        return flag
    return conf.get(key, default)


def _secrets(literal: list[str], env_vars: list[str]) -> list[str]:
    values = list(literal)
    for var in env_vars:
        if var not in os.environ:
            raise UsageError(f"--secret-env {var}: the environment variable is not set")
        values.append(os.environ[var])
    return values


def _choice(flags: dict[str, Any], conf: dict[str, Any], key: str, valid: tuple[str, ...]) -> str:
    """One of ``valid`` (the first by default), from the flag or the config file."""
    value = str(_pick(flags.get(key), conf, key, valid[0]))
    if value not in valid:
        raise UsageError(f"--{key.replace('_', '-')} {value!r}: valid: {', '.join(valid)}")
    return value


def _dedup(flags: dict[str, Any], conf: dict[str, Any]) -> tuple[str, float]:
    """``--dedup`` and ``--dedup-threshold``, checked."""
    dedup = _choice(flags, conf, "dedup", DEDUP_MODES)
    threshold = float(_pick(flags.get("dedup_threshold"), conf, "dedup_threshold", 0.8))
    if not 0 < threshold <= 1:
        raise UsageError(f"--dedup-threshold {threshold}: give a similarity above 0, at most 1")
    return dedup, threshold


def _split_by(flags: dict[str, Any], conf: dict[str, Any]) -> str | None:
    """``--split-by``: a scalar column of ``trajectories`` (as ``--where`` takes)."""
    from .tables.where import FILTER_COLUMNS

    column = _pick(flags.get("split_by"), conf, "split_by", None)
    if column is not None and column not in FILTER_COLUMNS:
        raise UsageError(f"--split-by {column!r}: valid: {', '.join(FILTER_COLUMNS)}")
    if column is not None and not (flags.get("split") or conf.get("split")):
        raise UsageError("--split-by needs --split NAME=FRACTION (which splits to stratify)")
    return column


def _terms(flags: dict[str, Any], conf: dict[str, Any]) -> list[str]:
    """The terms of ``--redact-terms FILE`` (or ``export.redact_terms``), checked."""
    path = _pick(flags.get("redact_terms"), conf, "redact_terms", None)
    if path is None:
        return []
    with rule_errors_are_usage_errors():
        terms = read_terms(Path(path))
        Terms.of(terms)  # fail early on a term too short
    return terms


def _redaction(
    flags: dict[str, Any], conf: dict[str, Any], custom: list[dict[str, Any]]
) -> tuple[bool, list[str], list[Any], list[str]]:
    """(redact, built-in rule names, custom rules, literal secrets), checked."""
    cli_redaction = any(flags.get(k) for k in ("redact", "secret", "secret_env", "redact_terms"))
    if flags.get("no_redact") and cli_redaction:
        raise UsageError(
            "--no-redact cannot be combined with --redact, --secret, --secret-env or --redact-terms"
        )
    no_redact = bool(_pick(flags.get("no_redact"), conf, "no_redact", False))
    if flags.get("no_redact") is None and cli_redaction:
        no_redact = False  # a redaction flag on the command line wins over no_redact in the file
    redact = not no_redact
    with rule_errors_are_usage_errors():
        names = (
            selected_rules(_pick(flags.get("redact"), conf, "redact", None) or []) if redact else []
        )
        rules = [custom_rule(spec) for spec in custom] if redact else []
    secrets = (
        _secrets(flags.get("secret") or [], _pick(flags.get("secret_env"), conf, "secret_env", []))
        if redact
        else []
    )
    return redact, names, rules, secrets


def resolve(
    flags: dict[str, Any], config: Path | None, default_workers: int
) -> tuple[ExportOptions, RunOptions]:
    """Merge the command line (``None`` = not given), the config file and the defaults.

    ``flags``: a value (or None) for each option ``flags.FLAGS`` declares, by name.
    """
    conf, custom = load_config(config) if config else ({}, [])
    redact, names, rules, secrets = _redaction(flags, conf, custom)
    key = _pseudonym_key(flags, conf) if redact else ""
    terms = _terms(flags, conf) if redact else []
    workers = _pick(flags.get("workers"), conf, "workers", None)
    workers = default_workers if workers is None else workers
    if workers < 1:
        raise UsageError("--workers must be at least 1")
    dedup, threshold = _dedup(flags, conf)
    max_media_bytes = _pick(flags.get("max_media_bytes"), conf, "max_media_bytes", None)
    if max_media_bytes is not None and max_media_bytes < 0:
        raise UsageError("--max-media-bytes must be 0 or more")
    options = ExportOptions(
        prefer=tuple(_pick(flags.get("prefer"), conf, "prefer", None) or ()),
        store_kind=_pick(flags.get("store_kind"), conf, "store_kind", "auto"),
        redact=redact,
        redact_rules=tuple(names),
        custom_rules=tuple((r.name, r.pattern.pattern) for r in rules),
        secret_count=len(secrets),
        term_count=len(terms),
        where=_pick(flags.get("where"), conf, "where", None),
        license=_pick(flags.get("license"), conf, "license", "other"),
        reader_options=reader_options(_pick(flags.get("reader_option"), conf, "reader_option", [])),
        homes=tuple(_pick(flags.get("home"), conf, "home", None) or ()),
        max_media_bytes=max_media_bytes,
        dedup=dedup,
        dedup_threshold=threshold,
        kto_from=_choice(flags, conf, "kto_from", KTO_SOURCES),
        split=parse_splits(_pick(flags.get("split"), conf, "split", None) or ()),
        split_by=_split_by(flags, conf),
        tokenize=tokenizing.from_flags(flags, conf),
        traces=bool(_pick(flags.get("traces"), conf, "traces", False)),
        pseudonym_key_id=key_id(key) if key else "",
    )
    options.policies()  # fail early on a bad --prefer
    run = RunOptions(
        workers=workers,
        executor=_pick(flags.get("executor"), conf, "executor", "local"),
        mode=Mode(flags.get("mode") or Mode.error),
        ray_address=_pick(flags.get("ray_address"), conf, "ray_address", None),
        keep_state=bool(_pick(flags.get("keep_state"), conf, "keep_state", False)),
        secrets=tuple(secrets),
        terms=tuple(terms),
        pseudonym_key=key,
    )
    return options, run


def _pseudonym_key(flags: dict[str, Any], conf: dict[str, Any]) -> str:
    """``--pseudonym-key-env VAR``'s value, checked ("" without it)."""
    var = _pick(flags.get("pseudonym_key_env"), conf, "pseudonym_key_env", None)
    if not var:
        return ""
    key = os.environ.get(var)
    if key is None:
        raise UsageError(f"--pseudonym-key-env {var}: the environment variable is not set")
    if len(key) < PSEUDONYM_KEY_FLOOR:
        raise UsageError(f"--pseudonym-key-env {var}: the key has {len(key)} characters; give "
                         f"{PSEUDONYM_KEY_FLOOR} or more random ones (`openssl rand -hex 16`), "
                         "or its pseudonyms could be traced back to names by trying")  # fmt: skip
    return key
