"""Drive headless Chromium over the DevTools protocol with a tiny stdlib websocket client.

For browser tests only: start Chromium on a free port, open a page, evaluate JS, click,
take screenshots. No third-party packages; text frames only, as the protocol needs.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
)


def find_chromium() -> str | None:
    """The Chromium binary on PATH (Debian's `chromium`), if any."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


CHROMIUM = find_chromium()
# The marks of a module whose tests drive Chromium: `pytestmark = IN_CHROMIUM`.
IN_CHROMIUM = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="Chromium not installed (apt-get install chromium)"
    ),
]


class WebSocket:
    """A minimal client websocket (RFC 6455): masked text frames out, whole messages in."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        rest = url.removeprefix("ws://")
        hostport, _, path = rest.partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            .encode()
        )  # fmt: skip
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"websocket handshake refused: {head[:200]!r}")

    def send(self, text: str) -> None:
        data = text.encode()
        n = len(data)
        header = bytes([0x81])
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("websocket closed")
            buf += chunk
        return bytes(buf)

    def recv(self) -> str:
        """The next whole text message (pings answered, fragments joined)."""
        parts = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 0x9:  # ping: answer with a masked pong
                mask = os.urandom(4)
                pong = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
                self.sock.sendall(bytes([0x8A, 0x80 | n]) + mask + pong)
                continue
            if opcode == 0x8:
                raise ConnectionError("websocket closed by peer")
            parts += payload
            if b0 & 0x80:
                return parts.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """Headless Chromium with one page driven over CDP; use as a context manager."""

    def __init__(self, binary: str, profile: Path, size: tuple[int, int] = (1400, 1000)) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        port_file = profile / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)  # a stale one from an earlier browser
        flags = [
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={size[0]},{size[1]}",
        ]
        self.proc = subprocess.Popen(
            [binary, *flags, "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, ended whole in close()
        )
        self.ws: WebSocket | None = None
        try:
            self.ws = WebSocket(self._page_url(port_file))
        except BaseException:
            self.close()
            raise
        self._id = 0
        self.events: list[dict] = []

    def _page_url(self, port_file: Path) -> str:
        """Wait for Chromium's DevTools port, then the websocket address of its page."""
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{port}/json/list", timeout=30) as resp:
            pages = [t for t in json.load(resp) if t.get("type") == "page"]
        return pages[0]["webSocketDebuggerUrl"]

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=20)
                break
            except subprocess.TimeoutExpired:
                continue

    def call(self, method: str, **params: Any) -> dict:
        """Send one command and return its result (events seen meanwhile are kept)."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def eval(self, expression: str) -> Any:
        """Evaluate JS in the page (promises awaited) and return the value."""
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                        awaitPromise=True)  # fmt: skip
        if "exceptionDetails" in res:
            raise RuntimeError(f"JS error: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """Poll until the JS expression is truthy; raise if it never is."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if value := self.eval(expression):
                return value
            time.sleep(0.05)
        raise TimeoutError(f"never true: {expression}")

    def open(self, url: str) -> None:
        self.call("Page.enable")
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element matching the selector."""
        box = self.eval(
            "(() => { const e = document.querySelector(" + json.dumps(selector) + ");"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=box[0], y=box[1])
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1],
                      button="left", clickCount=1)  # fmt: skip

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
