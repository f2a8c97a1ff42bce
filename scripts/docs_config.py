"""Regenerate docs/configuration.md from affidavit.config.SETTINGS (tests check it stays in sync).

.venv/bin/python scripts/docs_config.py
"""

from __future__ import annotations

from pathlib import Path

from affidavit.config import SETTINGS

HEAD = """# Configuration

Each vault has one `affidavit.toml` at its root. `affidavit init` writes it with every setting below,
commented, at its default. No plan can ever write it; only you can. Unknown sections or keys are errors,
so a typo shows instead of being ignored. A value of the wrong type or outside its range fails with a
message naming the file, the setting and the accepted values.

| setting | default | what it does |
|---|---|---|
"""

TAIL = """
Example:

```toml
[sources]
default_trust = "untrusted"

[trust]
rules = [
  { pattern = "docs.python.org", tier = "trusted" },
  { pattern = "*.wikipedia.org", tier = "semi-trusted" },
  { pattern = "/home/me/papers/", tier = "trusted" },
]

[plans]
expiry_hours = 72

[policy]
auto_apply = "trusted"

[model]
provider = "openai"
name = "llama3.1"
base_url = "http://127.0.0.1:11434/v1"   # Ollama
api_key_env = "OLLAMA_KEY"               # a key for this endpoint only
```

## Trust rules

A source's tier is decided in this order: the `--trust` flag of `affidavit sources add` or `affidavit
ingest`; else the longest `trust.rules` pattern matching its origin (for a URL, the URL that finally
answered, so a redirect can't borrow a trusted site's tier); else `sources.default_trust`. Hosts match
whole labels: `example.org` matches neither `example.org.evil.net` nor `evilexample.org`;
`*.example.org` matches its subdomains and itself; a path prefix ends at a `/`, so `example.org/docs/`
doesn't match `/docs-evil`.

## Keys

API keys are read from the environment variable named by `model.api_key_env` (default
`OPENAI_API_KEY` / `ANTHROPIC_API_KEY`), else from `model.keys_file`, which must have mode 0600. They
are never written to the vault, logged, or sent to a model. The default `OPENAI_API_KEY` is sent only to
`api.openai.com`: for any other `model.base_url`, name the key's variable explicitly with
`model.api_key_env`, so a key can't leak to an endpoint it wasn't configured for.
"""


def main() -> None:
    rows = []
    for s in SETTINGS:
        if isinstance(s.default, bool):
            default = "true" if s.default else "false"
        elif isinstance(s.default, str):
            default = f'"{s.default}"'
        else:
            default = str(s.default)
        doc = s.doc
        if s.choices:
            doc += " One of: " + ", ".join(f"`{c}`" for c in s.choices) + "."
        if s.minimum is not None:
            doc += f" Minimum {s.minimum}."
        rows.append(f"| `{s.name}` | `{default}` | {doc} |")
    out = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
    out.write_text(HEAD + "\n".join(rows) + "\n" + TAIL, encoding="utf-8")


if __name__ == "__main__":
    main()
