"""The plan commands end to end through the CLI, as a user runs them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from affidavit.cli import main

from .conftest import SAMPLES


def run(runner: CliRunner, vault: Path, *args: str, code: int = 0) -> str:
    result = runner.invoke(main, ["--vault", str(vault), *args])
    assert result.exit_code == code, result.output
    return result.output


def test_user_journey(tmp_path: Path) -> None:
    runner = CliRunner()
    vault = tmp_path / "v"
    run(runner, tmp_path, "init", str(vault))
    files = [
        str(SAMPLES / "sotu" / n)
        for n in ("1790-washington.md", "1823-monroe.md", "1941-roosevelt.md")
    ]
    run(runner, vault, "sources", "add", *files, "--trust", "trusted")
    schema = json.loads(run(runner, vault, "schema"))
    assert "operations" in schema["properties"]
    nonce = run(runner, vault, "nonce").strip()
    plan_file = tmp_path / "plan.json"
    plan_file.write_text((SAMPLES / "sotu-plan.json").read_text().replace("__NONCE__", nonce))
    out = json.loads(run(runner, vault, "propose", str(plan_file), "--json"))
    assert out["status"] == "pending"
    plan_id = out["plan_id"]
    listing = run(runner, vault, "inbox")
    assert plan_id[:12] in listing and "pending" in listing
    assert re.search(r" 2[34]h[0-5]\dm ", listing)
    shown = run(runner, vault, "inbox", "show", plan_id[:8])
    assert "[1] create_page" in shown and "verified:" in shown
    assert "»The first is freedom of speech and expression-everywhere in the world.«" in shown
    assert "1941-roosevelt.md" in shown
    shown_json = json.loads(run(runner, vault, "inbox", "show", plan_id, "--json"))
    assert shown_json["admission"]["ops"][0]["claims"][0]["evidence"][0]["verified"] is True
    out = json.loads(run(runner, vault, "approve", plan_id[:8], "--ops", "1,2,3,5", "--json"))
    assert out["applied"] and out["ops"] == [1, 2, 3, 5]
    assert (vault / "wiki" / "four-freedoms.md").exists()
    assert not (vault / "wiki" / "washington-1790.md").exists()
    # the operation left out stays pending and is approved later
    assert [p["id"] for p in json.loads(run(runner, vault, "inbox", "--json"))] == [plan_id]
    rest = run(runner, vault, "approve", plan_id)
    assert "3 operation(s)" in rest and (vault / "wiki" / "washington-1790.md").exists()
    again = run(runner, vault, "approve", plan_id)
    assert "already applied" in again
    assert "clean" in run(runner, vault, "doctor")
    everything = json.loads(run(runner, vault, "inbox", "--all", "--json"))
    assert [p["status"] for p in everything] == ["applied"]


def test_reject_and_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    vault = tmp_path / "v"
    run(runner, tmp_path, "init", str(vault))
    run(runner, vault, "sources", "add", str(SAMPLES / "sotu" / "1941-roosevelt.md"))
    nonce = run(runner, vault, "nonce").strip()
    plan = {
        "nonce": nonce,
        "operations": [
            {
                "op": "create_page",
                "slug": "fdr",
                "title": "Four freedoms",
                "summary": "Four essential human freedoms.",
                "claims": [
                    {
                        "text": "Four freedoms.",
                        "evidence": [
                            {
                                "source": "80fe4d9fab5f87e51dcc9db90a9e41ab0b01a580f6690f092191e40873adc5f2",
                                "quote": "four essential human freedoms",
                            }
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(plan))
    out = run(runner, vault, "propose", str(path))
    assert "is in the inbox" in out
    plan_id = out.split()[1]
    assert "rejected plan" in run(runner, vault, "reject", plan_id, "--reason", "not now")
    err = run(runner, vault, "approve", plan_id, code=1)
    assert "is rejected and can't be applied" in err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**plan, "operations": [{"op": "rm", "path": "/"}]}))
    err = run(runner, vault, "propose", str(bad), code=1)
    assert "plan rejected by the schema" in err
    assert "can't read" in run(runner, vault, "propose", str(tmp_path / "missing.json"), code=1)
    assert "The inbox is empty." in run(runner, vault, "inbox")
