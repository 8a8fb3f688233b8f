"""Starts `engram serve` (the debug build) on a free loopback port for the tests, on a fresh
database folder, and stops it with SIGTERM afterwards. Every wait is bounded."""

import os
import pathlib
import signal
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENGRAM = os.environ.get("ENGRAM_BIN", str(ROOT / "target" / "debug" / "engram"))


class Server:
    def __init__(self, folder, *extra):
        self.folder = folder
        folder.parent.mkdir(parents=True, exist_ok=True)
        # The server's log goes to a file beside the database (a pipe nobody reads would fill).
        self.log = open(folder.parent / f"{folder.name}.log", "a")
        self.proc = subprocess.Popen(
            [ENGRAM, "serve", str(folder), "--port", "0", *extra],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"engram serve did not start: {line!r}, log: {(folder.parent / f'{folder.name}.log').read_text()}")
        self.host, port = line.split()[-1].rsplit(":", 1)
        self.port = int(port)
        self.http = None
        if "--http-port" in extra:
            line = self.proc.stdout.readline()
            if not line.startswith(("listening on http://", "listening on https://")):
                self.proc.kill()
                raise RuntimeError(f"engram serve did not start HTTP: {line!r}")
            self.http = line.split()[-1]

    def stop(self, timeout=20):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "db")
    yield s
    s.stop()


@pytest.fixture
def http_server(tmp_path):
    s = Server(tmp_path / "db", "--http-port", "0")
    yield s
    s.stop()


def wait_until(predicate, timeout=10.0, step=0.05):
    """Polls `predicate` until it is true or `timeout` seconds pass (then fails)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(step)
    raise AssertionError("condition not met in time")
