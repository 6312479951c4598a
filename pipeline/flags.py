"""The options of ``trajset export``, declared once (``FLAGS``).

Each ``Flag`` is one option: its name (``--name`` on the command line, ``export.name`` in
a ``--config`` file, the key ``options.resolve`` reads), the type the command line
parses, the TOML type of its ``[export]`` key (``None`` where a file cannot set it: a
literal secret, the output mode), its help, and whether the manifest's ``options`` block
shows it.  From this table ``cli/export.py`` makes the command's parameters,
``options.load_config`` checks a file's keys and their types, and ``options.resolve``
takes the flags given.  A new option is one row here and its resolution in ``resolve``.

Types and help that name what other modules register (the store kinds, the executors,
the reader options, the preference spellings) are given as functions, read when the
command is built, so this module imports none of them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import FunctionType
from typing import Annotated, Any, Literal


class Mode(StrEnum):
    """What to do when ``--out`` is not empty."""

    error = "error"
    overwrite = "overwrite"
    resume = "resume"


@dataclass(frozen=True)
class Flag:
    """One option of ``trajset export`` (see the module docstring)."""

    name: str
    #: what the command line parses (or a function giving it: a ``Literal`` of what is
    #: registered)
    type: Any
    #: the ``--help`` text (or a function giving it)
    help: str | Callable[[], str]
    #: the type of its ``[export]`` key in a ``--config`` file; None: a file cannot set it
    toml: type | None = None
    #: how it is spelled when not ``--<name>`` (``--no-redact``, ``--license``)
    decls: tuple[str, ...] = ()
    #: its entry in the manifest's ``options`` block: (key, what of the resolved
    #: ``ExportOptions`` it shows); None: not shown (how a run is carried out, secrets)
    manifest: tuple[str, Callable[[Any], Any]] | None = None

    def parameter(self) -> inspect.Parameter:
        """The option as a keyword parameter of a typer command (None: not given)."""
        import typer

        kind = self.type() if isinstance(self.type, FunctionType) else self.type
        text = self.help if isinstance(self.help, str) else self.help()
        info = typer.Option(*self.decls, help=text)
        return inspect.Parameter(
            self.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[kind | None, info],
        )


def _store_kinds() -> Any:
    from .stores import STORE_KINDS

    return Literal[STORE_KINDS]


def _executors() -> Any:
    from .executors import EXECUTORS

    return Literal[tuple(EXECUTORS)]


def _prefer_help() -> str:
    from .stores import own_preferences
    from .tree.policies import spellings

    return (
        f"{spellings()}; repeat to chain, the first decisive wins. Default: each store's own "
        f"signal: {own_preferences()}."
    )


def _reader_option_help() -> str:
    from .stores import option_help

    return (
        "NAME=VALUE for the store's reader; repeatable. "
        + "; ".join(option_help())
        + ". An option no reader of the run declares is an error."
    )


#: every option of ``trajset export`` that shapes the export or how it runs, in ``--help`` order
FLAGS: tuple[Flag, ...] = (
    Flag("prefer", list[str], _prefer_help, list, manifest=("prefer", lambda o: o.policy_labels())),
    Flag(
        "store_kind",
        _store_kinds,
        "Store kind (default: auto).",
        str,
        manifest=("store_kind", lambda o: o.store_kind),
    ),
    Flag(
        "redact",
        list[str],
        "Add a redaction rule or group (pii, network, all) to the default set.",
        list,
        manifest=("redact", lambda o: o.redact),
    ),
    Flag("no_redact", bool, "Write the sessions unredacted.", bool, ("--no-redact",)),
    Flag("secret", list[str], "A literal secret to redact."),
    Flag("secret_env", list[str], "An environment variable whose value is a secret.", list),
    Flag(
        "pseudonym_key_env",
        str,
        "An environment variable holding a key (16+ random characters, kept secret) that "
        "names identities by a keyed hash (user_3f9a0c1d2e) instead of numbering them per "
        "export: the same pseudonyms in every export, so a publish of a grown store sends "
        "only new and changed sessions.",
        str,
        manifest=("pseudonyms", lambda o: o.pseudonym_key_id or "numbered"),
    ),
    Flag(
        "redact_terms",
        Path,
        "A file of names to redact as [REDACTED:term:N], one per line: people, companies, "
        "codenames, hostnames (matched in any case, also inside paths, URLs and "
        "identifiers). The manifest records how many, never the terms.",
        str,
    ),
    Flag(
        "where",
        str,
        'Keep trajectories matching a SQL filter, e.g. "outcome_score >= 0.5".',
        str,
        manifest=("where", lambda o: o.where),
    ),
    Flag(
        "license",
        str,
        "License id for the card (default: other).",
        str,
        ("--license",),
        manifest=("license", lambda o: o.license),
    ),
    Flag("workers", int, "Worker processes, or concurrent Ray tasks (default: CPUs).", int),
    Flag(
        "executor",
        _executors,
        "local (this machine) or ray (pip install 'trajset[ray]'); default: local.",
        str,
    ),
    Flag(
        "ray_address",
        str,
        "Ray cluster to join with --executor ray (default: RAY_ADDRESS, else a Ray of its own "
        "started for the run, even where another runs on this machine); --out must then be "
        "on a filesystem every node sees.",
        str,
    ),
    Flag(
        "mode",
        Mode,
        "When --out is not empty (default: error): error refuses; overwrite writes the new "
        "export beside the old one and swaps it in at the end; resume keeps the units whose "
        "inputs and options are unchanged.",
    ),
    Flag(
        "keep_state",
        bool,
        "Keep .trajset/ (each batch's parts and marker) after success, so that a later "
        "--mode resume re-exports only the session files that changed.",
        bool,
        ("--keep-state",),
    ),
    Flag(
        "reader_option",
        list[str],
        _reader_option_help,
        list,
        manifest=("reader_options", lambda o: dict(o.reader_options)),
    ),
    Flag(
        "home",
        list[str],
        "A home folder outside /home, /Users, C:\\Users to replace by ~.",
        list,
        manifest=("homes", lambda o: len(o.homes)),  # how many: the paths name their users
    ),
    Flag(
        "max_media_bytes",
        int,
        "Media larger than this many bytes are not written: the document keeps sha256:<hex> "
        "and errors lists them (media_too_large). Default: no limit.",
        int,
        manifest=("max_media_bytes", lambda o: o.max_media_bytes),
    ),
    Flag(
        "dedup",
        str,
        "sft rows and pairs a store holds twice (a copied session, or one copied and "
        "continued): exact leaves out equal rows and rows that are a prefix of another "
        "session's row (listed in the manifest with duplicate_of); near also rows as similar "
        "as --dedup-threshold to an earlier one (MinHash, pip install 'trajset[near]'); off "
        "keeps every row. Default: exact.",
        str,
        manifest=("dedup", lambda o: o.dedup),
    ),
    Flag(
        "dedup_threshold",
        float,
        "With --dedup near: the estimated Jaccard similarity (default 0.8).",
        float,
        manifest=("dedup_threshold", lambda o: o.dedup_threshold if o.dedup == "near" else None),
    ),
    Flag(
        "kto_from",
        str,
        "Where the kto rows come from: pairs (each pair's chosen side labelled true, its "
        "rejected side false) or outcomes (each trajectory's own part, labelled by its own "
        "pass verdict). Default: pairs.",
        str,
        manifest=("kto_from", lambda o: o.kto_from),
    ),
    Flag(
        "traces",
        bool,
        "Also write traces/: one redacted file per session that the Hub's trace viewer "
        "shows (Claude Code, Codex and Pi sessions in their agent's own shape, branches "
        "kept; other stores in the Session Trace Simple Format).",
        bool,
        ("--traces",),
        manifest=("traces", lambda o: o.traces),
    ),
    Flag(
        "split",
        list[str],
        "A split beside train, NAME=FRACTION of the sessions (repeatable, e.g. --split "
        "validation=0.05 --split test=0.05); a session's trees and pairs all fall in one "
        "split, by a stable hash of its id.",
        list,
        manifest=("split", lambda o: dict(o.split)),
    ),
    Flag(
        "split_by",
        str,
        "Stratify --split by a trajectories column (e.g. outcome_pass): each value gets each "
        "split's share of the sessions.",
        str,
        manifest=("split_by", lambda o: o.split_by),
    ),
    Flag(
        "tokenizer",
        str,
        "Also write the tokenized configs, rendered with this tokenizer's chat template: a "
        "folder (save_pretrained) or a Hub id. Needs pip install 'trajset[tokenize]'.",
        str,
    ),
    Flag(
        "chat_template",
        Path,
        "A Jinja chat template file to render with instead of the tokenizer's.",
        str,
    ),
    Flag(
        "max_tokens",
        int,
        "Rows longer than this many tokens are dropped or truncated (--overlong).",
        int,
    ),
    Flag(
        "overlong",
        str,
        "drop (default) or truncate: cut an over-long row at the end of the last assistant "
        "message that fits, never inside a message.",
        str,
    ),
)
#: name -> its flag
BY_NAME: dict[str, Flag] = {f.name: f for f in FLAGS}
#: the ``[export]`` keys of a ``--config`` file and their TOML types
CONFIG_KEYS: dict[str, type] = {f.name: f.toml for f in FLAGS if f.toml is not None}


def annotated(name: str) -> Any:
    """``Annotated[type | None, typer.Option(...)]`` of the flag ``name``, for a command that
    takes it beside ``export`` (``trajset tokenize``)."""
    return BY_NAME[name].parameter().annotation
