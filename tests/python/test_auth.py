"""Users and grants on `engram serve`: passwords (argon2, stored in the database), NOAUTH /
WRONGPASS / NOPERM as Redis words them, read-only users whose writes change nothing, and a user
without `see_sensitive` who never receives a sensitive value through any command (a canary)."""

import subprocess

import pytest
import redis
from falkordb import FalkorDB

from conftest import ENGRAM, Server

CANARY = "CANARY-7781-ZQ"


def engram(*args, stdin=None):
    res = subprocess.run([ENGRAM, *args], input=stdin, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    folder = tmp_path_factory.mktemp("auth") / "db"
    # Data first, while no user exists (default has full access on loopback).
    s = Server(folder)
    r = redis.Redis(host=s.host, port=s.port, socket_timeout=10)
    r.execute_command("ENGRAM.QUERY", "sec", f"CREATE (:P {{name: 'Ann', ssn: '{CANARY}'}})-[:KNOWS]->(:P {{name: 'Bob'}})")
    r.execute_command("ENGRAM.QUERY", "other", "CREATE (:Q {v: 1})")
    assert s.stop() == 0
    engram("config", str(folder), "sensitive_properties", "ssn", "--workspace", "sec")
    for name, pw in [("admin", "adm-pw"), ("reader", "read-pw"), ("writer", "write-pw"), ("seer", "seer-pw")]:
        engram("user", "add", str(folder), name, "--password-stdin", stdin=pw + "\n")
    engram("user", "grant", str(folder), "admin", "*", "admin", "--see-sensitive")
    engram("user", "grant", str(folder), "reader", "sec", "read")
    engram("user", "grant", str(folder), "writer", "sec", "write")
    engram("user", "grant", str(folder), "seer", "sec", "read", "--see-sensitive")
    listed = engram("user", "list", str(folder))
    assert "reader password sec=read" in listed and "$argon2" not in listed
    s = Server(folder)
    yield s
    s.stop()


def client(s, user=None, pw=None, **kw):
    return redis.Redis(host=s.host, port=s.port, username=user, password=pw, **{"socket_timeout": 10, **kw})


def test_no_password_and_wrong_password_are_refused(secured):
    with pytest.raises(redis.exceptions.AuthenticationError, match="Authentication required"):
        client(secured, protocol=2).ping()
    with pytest.raises(redis.exceptions.AuthenticationError, match="invalid username-password pair"):
        client(secured, "reader", "nope").ping()
    with pytest.raises(redis.exceptions.AuthenticationError, match="invalid username-password pair"):
        client(secured, "nobody", "x", protocol=2).ping()
    assert client(secured, "reader", "read-pw").ping()
    assert client(secured, "reader", "read-pw", protocol=2).ping()
    # The log names who authenticated, never a password.
    log = (secured.folder.parent / "db.log").read_text()
    assert "user=reader" in log or 'user="reader"' in log
    assert "read-pw" not in log and "adm-pw" not in log


def test_a_read_only_users_write_is_refused_and_writes_nothing(secured):
    r = client(secured, "reader", "read-pw")
    before = r.execute_command("ENGRAM.QUERY", "sec", "MATCH (n) RETURN count(n)")[b"rows"]
    with pytest.raises(redis.exceptions.NoPermissionError):
        r.execute_command("ENGRAM.QUERY", "sec", "CREATE (:X)")
    with pytest.raises(redis.exceptions.NoPermissionError):
        r.execute_command("GRAPH.QUERY", "fresh", "CREATE (:X)")
    assert r.execute_command("ENGRAM.QUERY", "sec", "MATCH (n) RETURN count(n)")[b"rows"] == before
    assert b"fresh" not in client(secured, "admin", "adm-pw").execute_command("GRAPH.LIST")
    # Workspaces it may not read do not exist for it.
    assert r.execute_command("GRAPH.LIST") == [b"sec"]
    # Whether it exists or not, a workspace without a grant answers the same.
    for ws in ["other", "never-made"]:
        with pytest.raises(redis.exceptions.NoPermissionError, match=f"no write access to workspace '{ws}'"):
            r.execute_command("ENGRAM.QUERY", ws, "MATCH (n) RETURN n")
        with pytest.raises(redis.ResponseError, match=f"empty key: no workspace '{ws}'"):
            r.execute_command("GRAPH.RO_QUERY", ws, "MATCH (n) RETURN n")
    with pytest.raises(redis.exceptions.NoPermissionError):
        r.execute_command("ENGRAM.USER", "LIST")
    w = client(secured, "writer", "write-pw")
    assert w.execute_command("ENGRAM.QUERY", "sec", "CREATE (:W)")[b"stats"][b"nodes_created"] == 1
    # Other users' query texts: the slow log of a key is for its admins only.
    for who in [r, w]:
        with pytest.raises(redis.exceptions.NoPermissionError, match="no admin access to workspace 'sec'"):
            who.execute_command("GRAPH.SLOWLOG", "sec")
        with pytest.raises(redis.exceptions.NoPermissionError):
            who.execute_command("GRAPH.SLOWLOG", "sec", "RESET")
        # A graph's size says how much is there, hidden rows included: its admins'.
        with pytest.raises(redis.exceptions.NoPermissionError, match="no admin access to workspace 'sec'"):
            who.execute_command("GRAPH.MEMORY", "USAGE", "sec")
        # A copy holds all of the source (sensitive values too): its admins' to make.
        with pytest.raises(redis.exceptions.NoPermissionError, match="no admin access to workspace 'sec'"):
            who.execute_command("GRAPH.COPY", "sec", "sec-copy")
    assert b"sec-copy" not in client(secured, "admin", "adm-pw").execute_command("GRAPH.LIST")
    # A constraint binds every writer: the workspace's admins declare it.
    with pytest.raises(redis.exceptions.NoPermissionError, match="no admin access to workspace 'sec'"):
        w.execute_command("GRAPH.CONSTRAINT", "CREATE", "sec", "UNIQUE", "NODE", "P", "PROPERTIES", 1, "name")
    with pytest.raises(redis.exceptions.NoPermissionError, match="no admin access"):
        w.execute_command("ENGRAM.QUERY", "sec", "CREATE CONSTRAINT FOR (p:P) REQUIRE p.name IS UNIQUE")
    assert isinstance(client(secured, "admin", "adm-pw").execute_command("GRAPH.SLOWLOG", "sec"), list)
    # GRAPH.INFO lists only queries on graphs the caller administers (texts are other users'):
    # while an admin's query with the canary in its text runs on `sec`, its admins see it and a
    # reader of `sec` never does.
    import threading

    from conftest import wait_until

    adm = client(secured, "admin", "adm-pw", socket_timeout=120)
    long = f"UNWIND range(1, 1000) AS a WITH a WHERE '{CANARY}' <> 'x' RETURN sum(reduce(s = 0, i IN range(1, 20000) | s + i))"
    answers = []
    worker = threading.Thread(target=lambda: answers.append(adm.execute_command("ENGRAM.QUERY", "sec", long, "TIMEOUT", 120000)))
    worker.start()
    try:
        wait_until(lambda: CANARY.encode() in repr(client(secured, "admin", "adm-pw").execute_command("GRAPH.INFO")).encode(), timeout=60)
        for who in [r, w]:
            assert who.execute_command("GRAPH.INFO") == [b"# Running queries", [], b"# Waiting queries", []]
    finally:
        worker.join(120)
    assert answers and answers[0][b"rows"] == [[200010000000]]


def test_a_user_without_see_sensitive_never_receives_the_canary(secured):
    r = client(secured, "reader", "read-pw", protocol=2)
    replies = [
        r.execute_command("ENGRAM.QUERY", "sec", "MATCH (n) RETURN n, n.ssn, properties(n), keys(n)"),
        r.execute_command("ENGRAM.QUERY", "sec", "MATCH (n) WHERE n.ssn STARTS WITH 'CANARY' RETURN count(n)"),
        r.execute_command("ENGRAM.QUERY", "sec", "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey"),
        r.execute_command("GRAPH.QUERY", "sec", "MATCH (n)-[r]->(m) RETURN n, r, m", "--compact"),
        r.execute_command("GRAPH.QUERY", "sec", "MATCH (n) RETURN n"),
        r.execute_command("INFO"),
    ]
    for cmd in [("ENGRAM.RECALL", "sec", "Ann ssn CANARY"), ("ENGRAM.NEIGHBORS", "sec", "Ann"), ("ENGRAM.STATS", "sec"), ("ENGRAM.WORKSPACES",)]:
        try:
            replies.append(r.execute_command(*cmd))
        except redis.ResponseError as e:
            replies.append(str(e))
    assert CANARY.encode() not in repr(replies).encode()
    assert b"ssn" not in repr(replies[2]).encode()
    g = FalkorDB(host=secured.host, port=secured.port, username="reader", password="read-pw").select_graph("sec")
    for (n,) in g.ro_query("MATCH (n:P) RETURN n").result_set:
        assert "ssn" not in n.properties
    # With see_sensitive the value is there.
    seer = client(secured, "seer", "seer-pw")
    got = seer.execute_command("ENGRAM.QUERY", "sec", "MATCH (n:P {name: 'Ann'}) RETURN n.ssn")
    assert got[b"rows"] == [[CANARY.encode()]]


def test_users_are_managed_over_the_wire_and_cli_refuses_while_served(secured):
    a = client(secured, "admin", "adm-pw")
    assert a.execute_command("ENGRAM.USER", "ADD", "temp", "temp-pw") in (b"OK", True)
    assert a.execute_command("ENGRAM.USER", "GRANT", "temp", "other", "read") in (b"OK", True)
    t = client(secured, "temp", "temp-pw")
    assert t.execute_command("GRAPH.LIST") == [b"other"]
    assert a.execute_command("ENGRAM.USER", "DEL", "temp") == 1
    with pytest.raises(redis.exceptions.AuthenticationError):
        client(secured, "temp", "temp-pw").ping()
    res = subprocess.run([ENGRAM, "user", "list", str(secured.folder)], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "locked by a running server; use ENGRAM.USER" in res.stderr


def test_requirepass_protects_default(tmp_path):
    folder = tmp_path / "db"
    proc = subprocess.Popen([ENGRAM, "serve", str(folder), "--port", "0", "--requirepass-stdin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write("s3cret\n")
    proc.stdin.close()
    line = proc.stdout.readline()
    try:
        port = int(line.split(":")[-1])
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=port, socket_timeout=10, protocol=2).ping()
        assert redis.Redis(port=port, password="s3cret", socket_timeout=10).ping()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_concurrent_writes_of_two_users_are_each_checked_and_recorded_as_theirs(tmp_path):
    """The write lane commits the queued writes of every connection together, one group per user:
    writes of two users that wait in the same round each run with their own grants and are
    recorded under their own name; one without a grant is refused and writes nothing."""
    import threading
    import time

    folder = tmp_path / "db"
    engram("init", str(folder))
    for name, pw in [("admin", "adm-pw"), ("w", "w-pw")]:
        engram("user", "add", str(folder), name, "--password-stdin", stdin=pw + "\n")
    engram("user", "grant", str(folder), "admin", "*", "admin")
    engram("user", "grant", str(folder), "w", "mine", "write")
    s = Server(folder)
    try:
        adm = client(s, "admin", "adm-pw", protocol=3, decode_responses=True)
        for ws in ("mine", "theirs"):
            adm.execute_command("ENGRAM.QUERY", ws, "CREATE (:Seed)")
        # A write of about a second (debug build) holds the commit path while the others queue.
        slow = "UNWIND range(1, 3000) AS a UNWIND range(1, 300) AS b WITH a, b WHERE toString(a * b) STARTS WITH '1' WITH count(*) AS n CREATE (:Slow {n: n})"
        blocker = threading.Thread(target=lambda: client(s, "admin", "adm-pw", socket_timeout=60).execute_command("ENGRAM.QUERY", "theirs", slow))
        blocker.start()
        time.sleep(0.2)
        results = {}

        def write(user, pw, ws, i):
            c = client(s, user, pw, protocol=3, socket_timeout=60, decode_responses=True)
            try:
                results[(user, ws, i)] = c.execute_command("ENGRAM.QUERY", ws, f"CREATE (:Lane {{by: '{user}', i: {i}}})")
            except redis.ResponseError as e:
                results[(user, ws, i)] = e

        jobs = [("w", "w-pw", "mine", i) for i in range(6)] + [("admin", "adm-pw", "theirs", i) for i in range(6)]
        jobs += [("w", "w-pw", "theirs", i) for i in range(2)]
        threads = [threading.Thread(target=write, args=j) for j in jobs]
        for t in threads:
            t.start()
        for t in threads + [blocker]:
            t.join(timeout=60)
        assert len(results) == len(jobs)
        for (user, ws, _), r in results.items():
            if (user, ws) == ("w", "theirs"):
                assert isinstance(r, redis.exceptions.NoPermissionError) and "no write access" in str(r), r
            else:
                assert r["stats"]["nodes_created"] == 1, r
        by = lambda ws: adm.execute_command("ENGRAM.QUERY", ws, "MATCH (n:Lane) RETURN n.by AS by, count(*) AS n ORDER BY by")["rows"]
        assert by("mine") == [["w", 6]]
        assert by("theirs") == [["admin", 6]]
        history = [r for r in adm.execute_command("ENGRAM.AUDIT", "LIMIT", "1000") if "CREATE (:Lane" in r["text"]]
        assert len(history) == len(jobs)
        for r in history:
            assert r["user"] == ("w" if "by: 'w'" in r["text"] else "admin"), r
            assert r["workspace"] in ("mine", "theirs")
            assert r["outcome"] == "ok" or (r["user"] == "w" and r["workspace"] == "theirs" and "NOPERM" in r["outcome"]), r
    finally:
        s.stop()


def test_load_csv_reads_the_import_folder_for_admins_of_every_workspace_only(secured):
    """The import folder is every workspace's: a writer of one is refused with NOPERM before
    anything is read, through GRAPH.QUERY, GRAPH.RO_QUERY and ENGRAM.QUERY; the file's text never
    reaches them; an admin of `*` loads it."""
    folder = secured.folder / "import"
    folder.mkdir(exist_ok=True)
    (folder / "people.csv").write_text("name\nCANARY-LOAD-5521\n")
    writer = client(secured, "writer", "write-pw", protocol=3, decode_responses=True)
    for cmd, q in [
        ("GRAPH.QUERY", "LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row CREATE (:Loaded {name: row.name})"),
        ("GRAPH.RO_QUERY", "LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row RETURN row.name"),
        ("ENGRAM.QUERY", "LOAD CSV FROM 'people.csv' AS row RETURN row"),
    ]:
        with pytest.raises(redis.exceptions.NoPermissionError) as refused:
            writer.execute_command(cmd, "sec", q)
        assert "CANARY-LOAD" not in str(refused.value)
    admin = client(secured, "admin", "adm-pw", protocol=3, decode_responses=True)
    assert writer.execute_command("GRAPH.RO_QUERY", "sec", "MATCH (l:Loaded) RETURN count(l)")[1] == [[0]]
    g = FalkorDB(host=secured.host, port=secured.port, username="admin", password="adm-pw").select_graph("sec")
    res = g.query("LOAD CSV WITH HEADERS FROM 'file://people.csv' AS row CREATE (:Loaded {name: row.name}) RETURN row.name")
    assert res.result_set == [["CANARY-LOAD-5521"]] and res.nodes_created == 1
    assert admin.execute_command("GRAPH.RO_QUERY", "sec", "LOAD CSV FROM 'people.csv' AS row RETURN row")[1] == [[["name"]], [["CANARY-LOAD-5521"]]]
