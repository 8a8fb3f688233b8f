"""Fixtures: `mem` is an `engram.Memory` on a fresh database, once embedded and once over RESP
against `target/debug/engram serve` (started here on a free loopback port), so every test runs
on both back ends and must pass identically."""

import os
import pathlib
import signal
import subprocess

import pytest

import engram

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENGRAM = os.environ.get("ENGRAM_BIN", str(ROOT / "target" / "debug" / "engram"))


class Server:
    """`engram serve FOLDER --port 0 --embedder hash`, stopped with SIGTERM; waits are bounded."""

    def __init__(self, folder: pathlib.Path):
        self.log = open(folder.parent / f"{folder.name}.log", "a")
        self.proc = subprocess.Popen([ENGRAM, "serve", str(folder), "--port", "0", "--embedder", "hash"], stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"engram serve did not start: {line!r}")
        self.url = "redis://" + line.split()[-1]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
        self.log.close()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "served")
    yield s
    s.stop()


def make(kind, tmp_path, request):
    if kind == "embedded":
        return engram.open(tmp_path / "db", embedder="hash")
    s = Server(tmp_path / "served")
    request.addfinalizer(s.stop)
    return engram.connect(s.url)


@pytest.fixture(params=["embedded", "client"])
def mem(request, tmp_path):
    m = make(request.param, tmp_path, request)
    yield m
    m.close()
