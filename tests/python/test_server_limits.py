"""The server under stress and at its limits: kill -9 under 16 writing clients loses no answered
write and tears no transaction; maxclients, idle timeout, a client that never reads, a full queue."""

import os
import signal
import socket
import threading
import time

import pytest
import redis

from conftest import Server, wait_until


def test_kill_9_under_load_loses_no_answered_write(tmp_path):
    folder = tmp_path / "db"
    s = Server(folder)
    acked = {c: [] for c in range(16)}
    stop = threading.Event()

    def writer(c):
        r = redis.Redis(host=s.host, port=s.port, socket_timeout=5, protocol=3)
        i = 0
        while not stop.is_set():
            try:
                # Two nodes and a relationship: one transaction, never half there.
                r.execute_command("ENGRAM.QUERY", "load", "CREATE (:K {c: $c, i: $i})-[:P]->(:V {c: $c, i: $i})", "PARAMS", f'{{"c": {c}, "i": {i}}}')
            except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError):
                return
            acked[c].append(i)
            if c % 4 == 0:
                try:
                    r.execute_command("ENGRAM.QUERY", "load", "MATCH (k:K) RETURN count(k)")
                except (redis.ConnectionError, redis.TimeoutError):
                    return
            i += 1

    redis.Redis(host=s.host, port=s.port, socket_timeout=5).execute_command("ENGRAM.QUERY", "load", "CREATE (:Start)")
    threads = [threading.Thread(target=writer, args=(c,)) for c in range(16)]
    for t in threads:
        t.start()
    wait_until(lambda: sum(len(v) for v in acked.values()) >= 300, timeout=60)
    os.kill(s.proc.pid, signal.SIGKILL)
    s.proc.wait(timeout=20)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    s.log.close()
    s = Server(folder)
    try:
        r = redis.Redis(host=s.host, port=s.port, socket_timeout=30, protocol=3)
        rows = r.execute_command("ENGRAM.QUERY", "load", "MATCH (k:K)-[:P]->(v:V) WHERE k.c = v.c AND k.i = v.i RETURN k.c, k.i")[b"rows"]
        found = {(c, i) for c, i in rows}
        missing = [(c, i) for c, v in acked.items() for i in v if (c, i) not in found]
        assert not missing, f"answered writes lost: {missing[:10]}"
        torn = r.execute_command("ENGRAM.QUERY", "load", "MATCH (k:K) WHERE NOT (k)-[:P]->(:V) RETURN count(k)")[b"rows"]
        assert torn == [[0]]
        assert r.execute_command("ENGRAM.QUERY", "load", "MATCH (v:V) RETURN count(v)")[b"rows"] == [[len(found)]]
    finally:
        s.stop()


def test_a_deeply_nested_value_is_refused_and_the_server_lives(server):
    """`reduce` could nest a value a level per element, and reading it overflowed the stack of the
    thread running the query: one GRAPH.QUERY aborted the whole server. It is refused by name."""
    r = redis.Redis(host=server.host, port=server.port, socket_timeout=5)
    with pytest.raises(redis.ResponseError, match="query.max_value_depth"):
        r.execute_command("GRAPH.QUERY", "nest", "WITH reduce(acc = [], x IN range(1, 100000) | [acc]) AS v RETURN v = v")
    assert r.ping()
    reply = r.execute_command("GRAPH.QUERY", "nest", "RETURN size(reduce(acc = [], x IN range(1, 200) | [acc]))")
    assert reply[1] == [[1]]


def test_maxclients_refuses_the_extra_connections(server):
    admin = redis.Redis(host=server.host, port=server.port, socket_timeout=5)
    admin.config_set("maxclients", "5")
    try:
        socks = []
        refused = 0
        for _ in range(10):
            sk = socket.create_connection((server.host, server.port), timeout=5)
            sk.sendall(b"PING\r\n")
            reply = sk.recv(100)
            if reply.startswith(b"-ERR max number of clients reached"):
                refused += 1
            socks.append(sk)
        # The admin connection is one of the 5.
        assert refused == 6
        assert admin.info("stats")["rejected_connections"] == 6
        for sk in socks:
            sk.close()
    finally:
        wait_until(lambda: admin.config_set("maxclients", "10000"), timeout=10)


def test_idle_timeout_closes_idle_clients(server):
    admin = redis.Redis(host=server.host, port=server.port, socket_timeout=5)
    # A connection made before the change takes it from its next command on.
    early = socket.create_connection((server.host, server.port), timeout=5)
    before = admin.info("stats")["idle_timeouts"]
    admin.config_set("timeout", "1")
    try:
        early.sendall(b"PING\r\n")
        assert early.recv(100) == b"+PONG\r\n"
        sk = socket.create_connection((server.host, server.port), timeout=5)
        time.sleep(1.5)
        # A read on a closed connection returns b"" (or the send fails).
        for closed in (sk, early):
            try:
                closed.sendall(b"PING\r\n")
                assert closed.recv(100) == b""
            except (BrokenPipeError, ConnectionResetError):
                pass
        assert admin.info("stats")["idle_timeouts"] >= before + 2
    finally:
        admin.config_set("timeout", "0")


def test_a_client_that_never_reads_is_dropped_and_others_are_served(server):
    admin = redis.Redis(host=server.host, port=server.port, socket_timeout=30)
    admin.config_set("client-stall-timeout", "1")
    before = admin.info("stats")["client_buffer_overflows"]
    sk = socket.create_connection((server.host, server.port), timeout=5)
    sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    big = b"x" * 60000
    frame = b"*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n" % (len(big), big)
    try:
        try:
            for _ in range(100):
                sk.sendall(frame * 10)
        # The server stops reading (its replies wait) and then drops us: a timeout, a reset or a
        # broken pipe, depending on where the send was.
        except OSError:
            pass
        wait_until(lambda: admin.info("stats")["client_buffer_overflows"] > before, timeout=30)
        assert admin.ping()
    finally:
        sk.close()
        admin.config_set("client-stall-timeout", "30")
