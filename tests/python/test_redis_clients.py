"""redis-py in every mode and redis-cli against `engram serve`: connection commands answered as
Redis answers them, and ENGRAM.QUERY giving the same logical result in every mode."""

import json
import shutil
import socket
import subprocess
import time

import pytest
import redis

from conftest import ENGRAM, Server


def connect(server, **kw):
    return redis.Redis(host=server.host, port=server.port, **{"socket_timeout": 10, **kw})


def norm(v):
    """A reply with bytes decoded and RESP2's flat maps folded, to compare modes."""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, dict):
        return {norm(k): norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def as_map(v):
    v = norm(v)
    if isinstance(v, list):
        return {v[i]: v[i + 1] for i in range(0, len(v), 2)}
    return v


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("decode", [False, True])
def test_every_mode_gives_the_same_result(server, protocol, decode):
    r = connect(server, protocol=protocol, decode_responses=decode)
    assert r.ping() is True
    assert norm(r.echo("a\r\nb")) == "a\r\nb"
    r.execute_command("ENGRAM.QUERY", "m", "CREATE (:P {name: 'Ann', n: 1, x: 1.5, ok: true})")
    got = as_map(r.execute_command("ENGRAM.QUERY", "m", "MATCH (p:P) RETURN p.name, p.n, p.x, p.ok, null AS z, p"))
    assert got["columns"] == ["p.name", "p.n", "p.x", "p.ok", "z", "p"]
    row = got["rows"][0]
    assert row[:5] == ["Ann", 1, 1.5 if protocol == 3 else "1.5", True if protocol == 3 else 1, None]
    node = as_map(row[5])
    assert node["labels"] == ["P"] and as_map(node["properties"])["name"] == "Ann"
    assert as_map(got["stats"])["nodes_created"] == 0


def test_default_redis_py_speaks_resp3(server):
    r = connect(server)  # redis-py 8: HELLO 3, CLIENT MAINT_NOTIFICATIONS, CLIENT SETINFO ×2
    assert r.ping()
    hello = r.execute_command("HELLO", "3")
    assert hello[b"proto"] == 3 and hello[b"mode"] == b"standalone"
    assert r.client_id() > 0
    r.client_setname("me")
    assert norm(r.client_getname()) == "me"
    assert r.execute_command("SELECT", "0") in (b"OK", True)
    assert r.info("server")["redis_mode"] == "standalone"


def test_client_kill_closes_an_idle_connection_at_once(server):
    victim = socket.create_connection((server.host, server.port), timeout=10)
    victim.sendall(b"CLIENT ID\r\n")
    reply = victim.recv(64)
    assert reply.startswith(b":"), reply
    victim_id = int(reply[1:].strip())
    killer = connect(server, protocol=2)
    assert killer.execute_command("CLIENT", "KILL", "ID", str(victim_id)) == 1
    # The victim sends nothing more: its connection is closed by the server, not at its next command.
    victim.settimeout(5)
    assert victim.recv(64) == b""
    victim.close()
    assert all(c["id"] != str(victim_id) for c in killer.client_list())
    # The filter form counts what it killed, as Redis does.
    assert killer.execute_command("CLIENT", "KILL", "ID", str(victim_id)) == 0


def test_errors_have_redis_texts(server):
    r = connect(server, protocol=2)
    with pytest.raises(redis.ResponseError, match="unknown command 'NOPE', with args beginning with: 'a'"):
        r.execute_command("NOPE", "a")
    with pytest.raises(redis.ResponseError, match="NOPROTO|unsupported protocol"):
        r.execute_command("HELLO", "4")
    with pytest.raises(redis.exceptions.AuthenticationError, match="without any password configured"):
        r.execute_command("AUTH", "foo")
    with pytest.raises(redis.ResponseError, match=r"SyntaxError at 1:10"):
        r.execute_command("ENGRAM.QUERY", "w", "MATCH (a RETURN a")
    # The connection still serves after errors.
    assert r.ping()


def test_multi_exec_runs_at_most_one_write(server):
    r = connect(server, protocol=3)
    p = r.pipeline(transaction=True)
    p.ping().execute_command("ENGRAM.QUERY", "tx", "CREATE (:T {v: 1})").execute_command("ENGRAM.QUERY", "tx", "MATCH (t:T) RETURN count(t)")
    pong, created, counted = p.execute()
    assert pong is True and created[b"stats"][b"nodes_created"] == 1 and counted[b"rows"] == [[1]]
    # Two writes cannot be one engine transaction: refused whole, nothing written.
    p = r.pipeline(transaction=True)
    p.execute_command("ENGRAM.QUERY", "tx", "CREATE (:T {v: 2})").execute_command("ENGRAM.QUERY", "tx", "CREATE (:T {v: 3})")
    with pytest.raises(redis.exceptions.ExecAbortError, match="Transaction discarded: 2 of its commands write"):
        p.execute()
    assert r.execute_command("ENGRAM.QUERY", "tx", "MATCH (t:T) RETURN count(t)")[b"rows"] == [[1]]
    with pytest.raises(redis.ResponseError, match="EXEC without MULTI"):
        r.execute_command("EXEC")
    # A MULTI queues at most multi-queued-max commands.
    r.config_set("multi-queued-max", "3")
    p = r.pipeline(transaction=True)
    for _ in range(4):
        p.ping()
    with pytest.raises(redis.ResponseError, match="multi-queued-max"):
        p.execute()
    r.config_set("multi-queued-max", "10000")


def test_pipeline_replies_in_order_with_errors_in_place(server):
    r = connect(server, protocol=3)
    p = r.pipeline(transaction=False)
    for i in range(2000):
        if i % 100 == 7:
            p.execute_command("ENGRAM.QUERY", "p", "RETURN 1 +")
        else:
            p.execute_command("ENGRAM.QUERY", "p", "RETURN $i AS i", "PARAMS", json.dumps({"i": i}))
    out = p.execute(raise_on_error=False)
    assert len(out) == 2000
    for i, reply in enumerate(out):
        if i % 100 == 7:
            assert isinstance(reply, redis.ResponseError)
        else:
            assert reply[b"rows"] == [[i]]


def test_counts_of_a_pipeline_are_seen_within_it_and_after_it(server):
    """A connection's counts are folded into the shared ones per batch: INFO and CLIENT LIST in
    the same pipeline still see the commands before them, and another client sees them all."""
    r, other = connect(server, protocol=3, decode_responses=True), connect(server, protocol=3, decode_responses=True)
    stats = lambda c: c.info("commandstats")
    rid = r.client_id()
    before = stats(other)
    calls = lambda s, name: s.get(f"cmdstat_{name}", {}).get("calls", 0)
    p = r.pipeline(transaction=False)
    for _ in range(50):
        p.execute_command("PING")
    p.execute_command("NO.SUCH.COMMAND")
    p.execute_command("INFO", "commandstats")
    p.execute_command("CLIENT", "LIST")
    p.execute_command("ECHO", "x")
    out = p.execute(raise_on_error=False)
    seen_inside = out[51]
    assert calls(seen_inside, "ping") == calls(before, "ping") + 50, seen_inside
    mine = [line for line in out[52].splitlines() if f"id={rid} " in line]
    assert len(mine) == 1 and "cmd=client" in mine[0], out[52]
    after = stats(other)
    assert calls(after, "ping") == calls(before, "ping") + 50
    assert calls(after, "echo") == calls(before, "echo") + 1
    assert calls(after, "info") >= calls(before, "info") + 2
    assert "cmd=echo" in [line for line in other.execute_command("CLIENT", "LIST").splitlines() if f"id={rid} " in line][0]


def test_io_threads_sets_the_runtime_and_zero_is_refused(tmp_path):
    s = Server(tmp_path / "one", "--io-threads", "1")
    try:
        r = redis.Redis(port=s.port, protocol=3)
        assert r.info("server")["io_threads"] == 1
        p = r.pipeline(transaction=False)
        for i in range(200):
            p.execute_command("ENGRAM.QUERY", "io", "CREATE (:T {i: $i})", "PARAMS", json.dumps({"i": i}))
        p.execute_command("ENGRAM.QUERY", "io", "MATCH (t:T) RETURN count(t) AS n")
        assert p.execute()[-1][b"rows"] == [[200]]
    finally:
        s.stop()
    out = subprocess.run([ENGRAM, "serve", str(tmp_path / "zero"), "--port", "0", "--io-threads", "0"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--io-threads" in out.stderr, out
    assert not (tmp_path / "zero").exists()


def test_a_timed_out_read_is_a_typed_error_and_a_generous_one_passes(server):
    r = connect(server, protocol=3)
    slow = "UNWIND range(1, 900) AS a UNWIND range(1, 1000) AS b RETURN count(*)"
    with pytest.raises(redis.ResponseError, match="deadline"):
        r.execute_command("ENGRAM.QUERY", "t", slow, "TIMEOUT", "1")
    got = r.execute_command("ENGRAM.QUERY", "t", "UNWIND range(1, 100) AS a RETURN count(*)", "TIMEOUT", "2000")
    assert got[b"rows"] == [[100]]
    assert r.info("stats")["query_timeouts"] == 1


def raw(server, payload, read_until_close=True):
    """Sends bytes on a fresh socket and returns what came back until the server closed (or 3 s)."""
    s = socket.create_connection((server.host, server.port), timeout=3)
    s.sendall(payload)
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            if not read_until_close:
                break
    except socket.timeout:
        pass
    s.close()
    return got


@pytest.mark.parametrize(
    "frame,reply",
    [
        (b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfoo\r\n", b"-ERR Protocol error: expected '$', got 'f'\r\n"),
        (b"*1\r\n$-10\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
        (b"*1\r\n$-1\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
        (b"*1\r\n$2000000000\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
        (b'echo "abc\r\n', b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    ],
)
def test_malformed_frames_close_with_the_redis_text(server, frame, reply):
    assert raw(server, frame) == reply
    # The server keeps serving others.
    assert connect(server).ping()


def test_framing_edge_cases(server):
    # Empty frames are ignored; LF-only inline lines are answered.
    assert raw(server, b"*-1\r\n*0\r\n\r\n \r\nPING\r\n", read_until_close=False) == b"+PONG\r\n"
    assert raw(server, b"ping\nping\r\nQUIT\r\n") == b"+PONG\r\n+PONG\r\n+OK\r\n"
    # One byte per send.
    s = socket.create_connection((server.host, server.port), timeout=5)
    for b in b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n":
        s.sendall(bytes([b]))
    assert s.recv(100) == b"$5\r\nhello\r\n"
    # A hundred commands in one send.
    s.sendall(b"PING\r\n" * 100)
    got = b""
    while got.count(b"+PONG") < 100:
        got += s.recv(65536)
    assert got == b"+PONG\r\n" * 100
    # 65,535 arguments.
    args = [b"ECHO"] + [b"x"] * 65534
    frame = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
    s.sendall(frame)
    got = b""
    while not got.endswith(b"\r\n"):
        got += s.recv(65536)
    assert got == b"-ERR wrong number of arguments for 'echo' command\r\n"
    s.close()


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed (Debian redis-tools)")
def test_redis_cli(server):
    base = ["redis-cli", "-h", server.host, "-p", str(server.port)]
    run = lambda *a, **kw: subprocess.run(base + list(a), capture_output=True, text=True, timeout=60, **kw)
    assert run("PING").stdout.strip() == "PONG"
    out = run("-3", "ENGRAM.QUERY", "cli", "RETURN 1 AS one").stdout
    assert "columns" in out and "one" in out
    out = run("GRAPH.QUERY", "cli", "RETURN 1 AS test").stdout.split("\n")
    assert out[:2] == ["test", "1"]
    # --pipe: a bulk load of 100,000 writes, then redis-cli's own ECHO check; writes that arrive
    # together share a commit group (one fsync), so this is not 100,000 fsyncs.
    run("ENGRAM.QUERY", "bulk", "CREATE (:Seed)")
    n = 100000
    lines = "".join(f'ENGRAM.QUERY bulk "CREATE (:N {{i: {i}}})"\r\n' for i in range(n))
    res = run("--pipe", input=lines)
    assert "errors: 0, replies: %d" % n in res.stdout, res.stdout + res.stderr
    assert run("GRAPH.QUERY", "bulk", "MATCH (n:N) RETURN count(n) AS c").stdout.split("\n")[:2] == ["c", str(n)]
    assert int(run("INFO", "stats").stdout.split("pipelined_write_groups:")[1].split()[0]) > 0


def test_protected_mode_refuses_a_public_address_without_a_password(tmp_path):
    from conftest import ENGRAM

    res = subprocess.run([ENGRAM, "serve", str(tmp_path / "db"), "--bind", "0.0.0.0", "--port", "0"], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "protected mode" in res.stderr
    assert not res.stdout.startswith("listening")


def test_shutdown_stops_the_server_and_keeps_answered_writes(tmp_path):
    from conftest import Server

    s = Server(tmp_path / "db")
    r = redis.Redis(host=s.host, port=s.port, socket_timeout=10)
    r.execute_command("ENGRAM.QUERY", "k", "UNWIND range(1, 50) AS i CREATE (:K {i: i})")
    try:
        r.execute_command("SHUTDOWN")
    except redis.exceptions.ConnectionError:
        pass
    assert s.proc.wait(timeout=20) == 0
    s = Server(tmp_path / "db")
    try:
        r = redis.Redis(host=s.host, port=s.port, socket_timeout=10)
        assert r.execute_command("ENGRAM.QUERY", "k", "MATCH (n:K) RETURN count(n)")[b"rows"] == [[50]]
    finally:
        s.stop()


def test_sigterm_right_after_listening_is_a_clean_shutdown(tmp_path):
    """The signal handlers are installed before the address is announced: a SIGTERM sent the moment
    "listening" is read (as a supervisor may) stops the server cleanly (exit 0), never kills it."""
    from conftest import Server

    for i in range(10):
        s = Server(tmp_path / f"db{i}", "--http-port", "0")
        assert s.stop() == 0, (tmp_path / f"db{i}.log").read_text()


SLOW_WRITE = "UNWIND range(1, 3000) AS a UNWIND range(1, 300) AS b WITH count(*) AS n CREATE (:R {n: n})"


def test_the_retry_hazard_and_idempotency_keys(server):
    from redis.backoff import ConstantBackoff
    from redis.retry import Retry

    # A client that gives up after 0.1 s and retries: the write (about 2 s in a debug build) outlives it.
    impatient = redis.Redis(host=server.host, port=server.port, socket_timeout=0.1, retry=Retry(ConstantBackoff(0.05), 200), protocol=3)
    admin = connect(server, protocol=3)
    calls = lambda: admin.info("commandstats").get("cmdstat_engram.query", {}).get("calls", 0)
    # With an idempotency key, the retries wait for the first call and get its reply: applied once.
    before = calls()
    got = impatient.execute_command("ENGRAM.QUERY", "retry", SLOW_WRITE, "TIMEOUT", "30000", "IDEMPOTENCY", "k-1")
    assert got[b"stats"][b"nodes_created"] == 1
    assert calls() - before >= 2, "the client did retry"
    count = lambda: admin.execute_command("ENGRAM.QUERY", "retry", "MATCH (r:R) RETURN count(r)")[b"rows"][0][0]
    assert count() == 1
    # The same key later gets the same reply and writes nothing.
    assert admin.execute_command("ENGRAM.QUERY", "retry", SLOW_WRITE, "IDEMPOTENCY", "k-1")[b"stats"][b"nodes_created"] == 1
    assert count() == 1


def test_slowlog_records_slow_commands_without_secrets(server):
    r = connect(server, protocol=3)
    r.config_set("slowlog-log-slower-than", "0")
    r.execute_command("AUTH", "default", "secret-word")
    r.execute_command("ENGRAM.QUERY", "s", "RETURN 1")
    entries = r.slowlog_get(10)
    assert any(e["command"].startswith(b"ENGRAM.QUERY s RETURN 1") for e in entries)
    assert not any(b"secret-word" in e["command"] for e in entries)
    assert r.slowlog_len() >= 2
    assert r.slowlog_reset()


@pytest.mark.skipif(shutil.which("redis-benchmark") is None, reason="redis-benchmark not installed (Debian redis-tools)")
def test_redis_benchmark_ping_and_a_custom_read(server):
    base = ["redis-benchmark", "-h", server.host, "-p", str(server.port), "-q"]
    res = subprocess.run(base + ["-t", "ping", "-n", "20000", "-c", "10", "-P", "8"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "PING_INLINE:" in res.stdout and "PING_MBULK:" in res.stdout, res.stdout + res.stderr
    redis.Redis(host=server.host, port=server.port).execute_command("ENGRAM.QUERY", "bench", "UNWIND range(1, 100) AS i CREATE (:B {i: i})")
    res = subprocess.run(base + ["-n", "2000", "-c", "4", "ENGRAM.QUERY", "bench", "MATCH (b:B) WHERE b.i < 10 RETURN count(b)"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "requests per second" in res.stdout, res.stdout + res.stderr
    assert "error" not in (res.stdout + res.stderr).lower()


@pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("redis-cli") is None, reason="tmux or redis-cli not installed")
def test_interactive_redis_cli_under_tmux(server, tmp_path):
    import time

    session = f"engram-{server.port}"
    sock = str(tmp_path / "tmux.sock")
    tmux = lambda *a: subprocess.run(["tmux", "-S", sock, *a], capture_output=True, text=True, timeout=30)
    assert tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50", f"redis-cli -h {server.host} -p {server.port}").returncode == 0
    try:
        # Wait for the prompt: interactive redis-cli starts with COMMAND DOCS (hints), then reads.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and f":{server.port}>" not in tmux("capture-pane", "-p", "-t", session).stdout:
            time.sleep(0.1)
        tmux("send-keys", "-t", session, "ENGRAM.QUERY tmux 'RETURN 40 + 2 AS answer'", "Enter")
        deadline = time.monotonic() + 20
        screen = ""
        while time.monotonic() < deadline:
            screen = tmux("capture-pane", "-p", "-t", session).stdout
            # The reply comes after the typed line (the prompt's port may hold "42" too).
            if "answer" in screen.split("RETURN 40 + 2 AS answer", 1)[-1]:
                break
            time.sleep(0.2)
        reply = screen.split("RETURN 40 + 2 AS answer", 1)[-1]
        assert "answer" in reply and "42" in reply, screen
        assert "ERR" not in screen, screen
    finally:
        tmux("kill-server")


def test_writes_of_many_connections_share_a_commit(server):
    """Single writes of different connections queued while the write lane is busy are committed
    together: one WAL write and one fsync for the lot, each still its own transaction."""
    import threading

    admin = connect(server, protocol=3)
    admin.execute_command("ENGRAM.QUERY", "lane", "CREATE (:Seed)")
    persistence = lambda: admin.info("persistence")
    before = persistence()
    # About a second in a debug build (`SLOW_WRITE` with a string test per row).
    slower = SLOW_WRITE.replace("WITH count(*)", "WITH a, b WHERE toString(a * b) STARTS WITH '1' WITH count(*)")
    slow = threading.Thread(target=lambda: connect(server, socket_timeout=60).execute_command("ENGRAM.QUERY", "lane", slower))
    slow.start()
    time.sleep(0.2)  # the slow write is being applied
    replies = [None] * 8

    def write(i):
        replies[i] = connect(server, protocol=3, socket_timeout=60).execute_command("ENGRAM.QUERY", "lane", f"CREATE (:L {{i: {i}}}) RETURN {i} AS i")

    writers = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in writers:
        t.start()
    for t in writers + [slow]:
        t.join(timeout=120)
    assert [r[b"rows"] for r in replies] == [[[i]] for i in range(8)]
    after = persistence()
    commits = after["wal_commits"] - before["wal_commits"]
    fsyncs = after["wal_fsyncs"] - before["wal_fsyncs"]
    assert commits == 9
    assert fsyncs <= 4, f"{commits} commits took {fsyncs} fsyncs"
    got = admin.execute_command("ENGRAM.QUERY", "lane", "MATCH (l:L) RETURN count(l)")[b"rows"]
    assert got == [[8]]
