"""URL fetching against a real loopback HTTP server (never the internet): limits and refusals."""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.errors import ConfigError, FetchError
from affidavit.sources.addresses import GuardedTransport, refusal
from affidavit.sources.fetch import fetch_url
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, open_vault

PAGE = b"<html><body><h1>Dams</h1><p>The dam was built in 1936.</p></body></html>"
NOTES = b"# Notes\n\nThe river floods every spring.\n"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stop = threading.Event()
        self.paths: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self.finished: list[str] = []  # slow answers that ran to their end (a client waited)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up mid-body (as the size limit makes them) are expected."""

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean."""

    def _send(self, status: int, body: bytes = b"", **headers: str) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        if "Content_Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self._send(302, Location=location)

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        self.server.headers_seen.append(dict(self.headers.items()))
        path = self.path
        if path == "/page.html":
            self._send(200, PAGE, Content_Type="text/html; charset=utf-8")
        elif path == "/notes.md":
            self._send(200, NOTES, Content_Type="text/plain")
        elif path.startswith("/hop/"):
            left = int(path.rsplit("/", 1)[1])
            self._redirect(f"/hop/{left - 1}" if left else "/page.html")
        elif path == "/loop":
            self._redirect("/loop")
        elif path == "/to-file":
            self._redirect("file:///etc/passwd")
        elif path == "/to-loopback":
            self._redirect(self.server.url("/page.html"))
        elif path == "/to-metadata":
            self._redirect("http://169.254.169.254/latest/meta-data/")
        elif path == "/to-ftp":
            self._redirect("ftp://127.0.0.1/secret.txt")
        elif path == "/big-declared":
            self._send(200, b"0123456789", Content_Length="10000000", Content_Type="text/plain")
        elif path == "/big-stream":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()  # no Content-Length: the body runs until the connection closes
            for _ in range(100):
                self.wfile.write(b"x" * 65536)
        elif path == "/slow":  # silent for 60 s: only the client's deadline ends it sooner
            if not self.server.stop.wait(60):
                self.server.finished.append(path)
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            for _ in range(600):  # a byte every 0.1 s for 60 s: never idle, never done soon
                if self.server.stop.wait(0.1):
                    break
                self.wfile.write(b"x")
                self.wfile.flush()
            else:
                self.server.finished.append(path)
        else:
            self._send(404, b"not here")


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield srv
    srv.stop.set()
    srv.shutdown()
    srv.server_close()
    thread.join(5)


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False) as http:
        yield http


def allow(vault: Vault, *hosts: str) -> None:
    """Set ``sources.allow_private_hosts`` in the vault's affidavit.toml."""
    text = vault.config_path.read_text()
    assert "allow_private_hosts = []" in text
    vault.config_path.write_text(
        text.replace("allow_private_hosts = []", f"allow_private_hosts = {json.dumps(hosts)}")
    )


def fetch(url: str, client: httpx.Client, **limits: Any) -> Any:
    options = {"max_bytes": 1_000_000, "timeout": 5.0, "max_redirects": 3, **limits}
    return fetch_url(url, client=client, **options)


def test_fetch_ok(server: _Server, client: httpx.Client) -> None:
    fetched = fetch(server.url("/page.html"), client)
    assert fetched.data == PAGE
    assert fetched.url == fetched.final_url == server.url("/page.html")
    assert fetched.content_type == "text/html; charset=utf-8"
    assert server.headers_seen[0]["Accept-Encoding"] == "identity"
    assert server.headers_seen[0]["User-Agent"].startswith("affidavit/")


def test_fetch_with_own_client(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    fetched = fetch_url(
        server.url("/notes.md"),
        max_bytes=1000,
        timeout=5,
        max_redirects=0,
        allowed_hosts=["127.0.0.1"],
    )
    assert fetched.data == NOTES


def test_redirects_within_the_limit_are_followed(server: _Server, client: httpx.Client) -> None:
    fetched = fetch(server.url("/hop/2"), client, max_redirects=3)
    assert fetched.final_url == server.url("/page.html") and fetched.data == PAGE
    assert server.paths == ["/hop/2", "/hop/1", "/hop/0", "/page.html"]


def test_too_many_redirects(server: _Server, client: httpx.Client) -> None:
    with pytest.raises(FetchError, match=r"more than 2 times.*max_redirects"):
        fetch(server.url("/hop/5"), client, max_redirects=2)
    assert len(server.paths) == 3


def test_redirect_loop(server: _Server, client: httpx.Client) -> None:
    with pytest.raises(FetchError, match="loop"):
        fetch(server.url("/loop"), client, max_redirects=10)
    assert server.paths == ["/loop"]


@pytest.mark.parametrize("path", ["/to-file", "/to-ftp"])
def test_redirect_to_other_schemes_is_refused(
    server: _Server, client: httpx.Client, path: str
) -> None:
    with pytest.raises(FetchError, match="only http and https redirects"):
        fetch(server.url(path), client)


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi", "javascript:alert(1)", "x"],
)
def test_non_http_schemes_are_refused_before_any_request(
    server: _Server, client: httpx.Client, url: str
) -> None:
    with pytest.raises(FetchError, match="only http and https"):
        fetch(url, client)
    assert server.paths == []


def test_url_without_host(client: httpx.Client) -> None:
    with pytest.raises(FetchError, match="no host"):
        fetch("http:///path", client)


def test_declared_size_over_the_limit(server: _Server, client: httpx.Client) -> None:
    with pytest.raises(FetchError, match=r"10,000,000 bytes \(Content-Length\).*max_url_bytes"):
        fetch(server.url("/big-declared"), client, max_bytes=1_000_000)


def test_streamed_size_over_the_limit(server: _Server, client: httpx.Client) -> None:
    with pytest.raises(FetchError, match="more than 100,000 bytes"):
        fetch(server.url("/big-stream"), client, max_bytes=100_000)


def test_silent_server_times_out(server: _Server, client: httpx.Client) -> None:
    with pytest.raises(FetchError, match=r"did not finish within 0\.5 s"):
        fetch(server.url("/slow"), client, timeout=0.5)
    assert server.finished == []  # the fetch's deadline ended it, not the server (60 s)


def test_dripping_server_hits_the_total_deadline(server: _Server, client: httpx.Client) -> None:
    with pytest.raises(FetchError, match="did not finish within 1 s"):
        fetch(server.url("/drip"), client, timeout=1.0)
    assert server.finished == []  # the total deadline ended it, not the server's last byte


def test_http_error_status(server: _Server, client: httpx.Client) -> None:
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch(server.url("/missing"), client)


def test_connection_refused(client: httpx.Client) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(FetchError, match="failed"):
        fetch(f"http://127.0.0.1:{port}/x", client)


def test_store_adds_a_url(vault: Vault, server: _Server, client: httpx.Client) -> None:
    store = SourceStore(vault, client=client)
    result = store.add_url(server.url("/hop/1"), trust="untrusted")
    record = result.record
    assert result.added
    assert record.origin == server.url("/page.html") and record.name == "page.html"
    assert record.media_type == "text/html" and record.trust == "untrusted"
    assert (vault.root / record.original_file).read_bytes() == PAGE
    assert store.text(record.id) == "# Dams\n\nThe dam was built in 1936.\n"  # h1 as a heading
    again = store.add_url(server.url("/page.html"))
    assert not again.added and again.record.id == record.id


def test_trust_rules_match_the_url_that_answered(
    vault: Vault, server: _Server, client: httpx.Client
) -> None:
    host = server.url("/").split("//", 1)[1].split("/", 1)[0]  # 127.0.0.1:PORT: no default port
    rules = (
        f'rules = [{{ pattern = "{host}/hop/", tier = "trusted" }}, '
        f'{{ pattern = "{host}/notes.md", tier = "untrusted" }}]'
    )
    vault.config_path.write_text(vault.config_path.read_text().replace("rules = []", rules))
    with open_vault(vault.root) as other:
        store = SourceStore(other, client=client)
        redirected = store.add_url(server.url("/hop/0")).record
        assert redirected.trust == "semi-trusted"  # answered by /page.html, outside the rule
        assert store.add_url(server.url("/notes.md")).record.trust == "untrusted"


def test_store_names_a_markdown_url_by_its_extension(
    vault: Vault, server: _Server, client: httpx.Client
) -> None:
    record = SourceStore(vault, client=client).add_url(server.url("/notes.md")).record
    assert record.media_type == "text/markdown" and record.original_file.endswith(".md")


def test_cli_adds_urls_and_reports_refusals(
    vault: Vault, server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    allow(vault, "127.0.0.1")
    args = ["--vault", str(vault.root), "sources", "add", "--json"]
    result = CliRunner().invoke(main, [*args, server.url("/page.html"), "ftp://127.0.0.1/x"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [r["status"] for r in report["results"]] == ["added", "error"]
    assert "only http and https" in report["results"][1]["error"]
    assert report["results"][0]["source"]["origin"] == server.url("/page.html")


# --- only public addresses, unless the config names the host ------------------------------------


def guarded(url: str, *allowed: str, **limits: Any) -> Any:
    """Fetch as the store does: with the guarded client fetch_url makes itself."""
    options = {"max_bytes": 1_000_000, "timeout": 5.0, "max_redirects": 3, **limits}
    return fetch_url(url, allowed_hosts=allowed, **options)


def test_loopback_is_refused_by_default(server: _Server) -> None:
    with pytest.raises(FetchError, match=r"127\.0\.0\.1, a loopback address.*allow_private_hosts"):
        guarded(server.url("/page.html"))
    assert server.paths == []  # refused before any request reached it


def test_a_host_the_config_allows_is_fetched(server: _Server) -> None:
    assert guarded(server.url("/page.html"), "127.0.0.1").data == PAGE


@pytest.mark.parametrize(
    "spelling",
    ["2130706433", "0x7f.1", "127.1", "[::ffff:127.0.0.1]", "0177.0.0.1", "localhost"],
)
def test_other_spellings_of_loopback_are_refused(server: _Server, spelling: str) -> None:
    port = server.server_address[1]
    with pytest.raises(FetchError, match=r"Refusing|not a valid URL"):
        guarded(f"http://{spelling}:{port}/page.html", "127.0.0.1")  # only that spelling is allowed
    assert server.paths == []


def test_a_redirect_from_an_allowed_host_to_loopback_is_refused(server: _Server) -> None:
    port = server.server_address[1]
    start = f"http://localhost:{port}/to-loopback"  # localhost is allowed, 127.0.0.1 is not
    with pytest.raises(FetchError, match=r"Refusing to fetch from 127\.0\.0\.1"):
        guarded(start, "localhost")
    assert server.paths == ["/to-loopback"]
    with pytest.raises(FetchError, match=r"169\.254\.169\.254.*link-local"):
        guarded(f"http://localhost:{port}/to-metadata", "localhost")


def test_the_connection_goes_to_the_address_that_was_checked(server: _Server) -> None:
    """A rebinding resolver answers 127.0.0.1 first and 127.0.0.2 (nothing listens) after:
    one lookup per connection, and the connection is made to its answer."""
    answers = iter([ipaddress.ip_address("127.0.0.1")] + [ipaddress.ip_address("127.0.0.2")] * 9)
    calls: list[str] = []

    def rebinding(host: str, port: int) -> list[Any]:
        calls.append(host)
        return [next(answers)]

    transport = GuardedTransport(["rebind.test"], resolver=rebinding)
    with httpx.Client(transport=transport, trust_env=False) as client:
        port = server.server_address[1]
        fetched = fetch(f"http://rebind.test:{port}/page.html", client)
    assert fetched.data == PAGE and calls == ["rebind.test"]


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("fd00::1", "private"),
        ("fd12:3456::1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("100.64.0.1", "not a public"),  # carrier-grade NAT
        ("240.0.0.1", "reserved"),
    ],
)
def test_refused_addresses(address: str, why: str) -> None:
    reason = refusal(ipaddress.ip_address(address))
    assert reason is not None and why in reason


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
def test_public_addresses_pass(address: str) -> None:
    assert refusal(ipaddress.ip_address(address)) is None


def test_the_store_refuses_loopback_unless_configured(vault: Vault, server: _Server) -> None:
    with pytest.raises(FetchError, match="loopback"):
        SourceStore(vault).add_url(server.url("/page.html"))
    allow(vault, "127.0.0.1")
    with open_vault(vault.root) as other:
        assert SourceStore(other).add_url(server.url("/page.html")).record.media_type == "text/html"


def test_allow_private_hosts_must_be_a_list_of_names(vault: Vault) -> None:
    text = vault.config_path.read_text()
    vault.config_path.write_text(
        text.replace("allow_private_hosts = []", "allow_private_hosts = 1")
    )
    with pytest.raises(ConfigError, match="allow_private_hosts must be a list of host names"):
        open_vault(vault.root)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "[2001::7f00:1]",  # Teredo
        "[64:ff9b::7f00:1]",  # NAT64 carrying 127.0.0.1: "global" to the old public-only check
        "[2002:7f00:1::]",  # 6to4 carrying 127.0.0.1: "global" to the old public-only check
    ],
)
def test_an_agents_fetch_has_no_private_host_exception(server: _Server, host: str) -> None:
    """``public_only`` (the MCP server's add_source) refuses by the same rules as every fetch,
    and the owner's ``allow_private_hosts`` does not extend to an agent."""
    port = server.server_address[1]
    with pytest.raises(FetchError, match="is not a public address"):
        fetch_url(
            f"http://{host}:{port}/notes.md",
            max_bytes=1000,
            timeout=5,
            max_redirects=0,
            allowed_hosts=["127.0.0.1", host.strip("[]")],
            public_only=True,
        )
    assert server.paths == []
