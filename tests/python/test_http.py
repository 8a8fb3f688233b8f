"""The HTTP API of `engram serve --http-port`: every route, auth by password and by bearer token,
JSON errors with the engine's error class, the body limit, deadlines, the OpenAPI document (valid
3.1, and naming exactly the routes served), and /metrics parsed as Prometheus text."""

import base64
import json
import subprocess
import urllib.error
import urllib.request

import pytest
import redis
from openapi_spec_validator import validate
from prometheus_client.parser import text_string_to_metric_families

from conftest import ENGRAM, Server

STORY = [
    {
        "source": {"conversation_id": "c1", "message_id": "m1", "model": "extractor"},
        "entities": [
            {"name": "AuthService", "type": "service", "aliases": ["auth-svc"]},
            {"name": "Kafka", "type": "technology"},
            {"name": "UserDB", "type": "database"},
        ],
        "claims": [
            {"subject": "AuthService", "predicate": "streams_events_with", "object": "Kafka", "confidence": 0.95, "text": "AuthService streams its events with Kafka"},
            {"subject": "AuthService", "predicate": "depends_on", "object": "UserDB", "confidence": 0.9, "text": "AuthService reads users from UserDB"},
        ],
    },
    {
        "source": {"conversation_id": "c2", "message_id": "m1", "model": "extractor"},
        "entities": [{"name": "AuthService", "type": "service"}, {"name": "Kinesis", "type": "technology"}],
        "claims": [
            {
                "subject": "AuthService", "predicate": "streams_events_with", "object": "Kinesis", "confidence": 0.95,
                "text": "AuthService moved its events to Kinesis", "relation": {"contradicts": "c1/m1/0"},
            }
        ],
    },
]


def call(base, method, path, body=None, auth=None, raw=None, headers=None):
    """One request; returns (status, parsed JSON or text, headers)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    if isinstance(auth, tuple):
        req.add_header("Authorization", "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
    elif auth:
        req.add_header("Authorization", "Bearer " + auth)
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            status, text, hdrs = resp.status, resp.read().decode(), resp.headers
    except urllib.error.HTTPError as e:
        status, text, hdrs = e.code, e.read().decode(), e.headers
    ctype = hdrs.get("Content-Type", "")
    return status, (json.loads(text) if ctype.startswith("application/json") else text), hdrs


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("http") / "db", "--http-port", "0")
    status, reports, _ = call(s.http, "POST", "/v1/workspaces/story/ingest", STORY)
    assert status == 200 and [r["duplicate"] for r in reports] == [False, False], reports
    yield s
    s.stop()


def test_service_routes(api):
    assert call(api.http, "GET", "/healthz")[:2] == (200, {"status": "ok"})
    status, body, _ = call(api.http, "GET", "/readyz")
    assert status == 200 and body["status"] == "ready"


def test_query_routes_and_shapes(api):
    b = api.http
    status, res, _ = call(b, "POST", "/v1/workspaces/story/query", {"query": "MATCH (s:service)-[r]->(o) RETURN s.name, type(r), o.name ORDER BY o.name"})
    assert status == 200 and res["columns"] == ["s.name", "type(r)", "o.name"], res
    assert ["AuthService", "streams_events_with", "Kinesis"] in res["rows"] and set(res["stats"]) >= {"nodes_created"}
    status, res, _ = call(b, "POST", "/v1/workspaces/story/query", {"query": "RETURN $a + 1 AS x, $s AS s", "params": {"a": 41, "s": "quote ' and\nnewline"}})
    assert res["rows"] == [[42, "quote ' and\nnewline"]]
    # Read only: a write is refused and nothing is created.
    status, err, _ = call(b, "POST", "/v1/workspaces/story/ro_query", {"query": "CREATE (:X)"})
    assert status == 400 and err["error"]["class"] == "caller" and "read-only" in err["error"]["message"]
    status, res, _ = call(b, "POST", "/v1/workspaces/story/explain", {"query": "MATCH (n) RETURN n"})
    assert status == 200 and res["rows"] == [] and any("Scan" in line for line in res["plan"]), res
    status, res, _ = call(b, "POST", "/v1/workspaces/story/profile", {"query": "MATCH (n) RETURN count(n)"})
    assert status == 200 and res["rows"] == [[4]] and res["plan"]
    # A query error names the class, the position and what went wrong.
    status, err, _ = call(b, "POST", "/v1/workspaces/story/query", {"query": "MATCH (n RETURN n"})
    assert status == 400 and err["error"]["class"] == "caller" and "1:10" in err["error"]["message"]
    # The idempotency key applies a write once.
    for _ in range(2):
        status, res, _ = call(b, "POST", "/v1/workspaces/scratch/query", {"query": "CREATE (:Once)", "idempotency_key": "k1"})
        assert status == 200
    assert call(b, "POST", "/v1/workspaces/scratch/query", {"query": "MATCH (n:Once) RETURN count(n)"})[1]["rows"] == [[1]]


def test_memory_routes(api):
    b = api.http
    status, rec, _ = call(b, "POST", "/v1/workspaces/story/recall", {"text": "what does AuthService stream events with?", "budget": 256})
    assert status == 200 and "Kinesis" in rec["context"] and rec["facts"][0]["evidence"]
    status, found, _ = call(b, "GET", "/v1/workspaces/story/entities?q=auth")
    assert status == 200 and found["items"][0]["name"] == "AuthService" and found["total"] == 1
    status, ent, _ = call(b, "GET", "/v1/workspaces/story/entities/AuthService")
    assert status == 200 and ent["type"] == "service" and "auth-svc" in ent["aliases"]
    states = {(c["object"]["name"], c["state"]) for c in ent["claims"]}
    assert ("Kafka", "DEPRECATED") in states and ("Kinesis", "ACCEPTED") in states, states
    kafka = next(c for c in ent["claims"] if c["object"]["name"] == "Kafka")
    assert kafka["superseded_by"] is not None and kafka["evidence"][0]["conversation_id"] == "c1"
    status, n, _ = call(b, "GET", "/v1/workspaces/story/entities/AuthService/neighbors?direction=out&limit=10")
    assert status == 200 and {i["neighbor"] for i in n["items"]} >= {"technology:kinesis", "database:userdb"}
    # The entity's context, and its neighbourhood ranked by a text, as ENGRAM.CONTEXT.
    status, ctx, _ = call(b, "POST", "/v1/workspaces/story/entities/AuthService/context", {"depth": 1, "budget": 512})
    assert status == 200 and ctx["paths_run"] == ["graph"] and "Kinesis" in ctx["context"], ctx
    objects = lambda reply: [f["object"]["name"] for f in reply["facts"]]
    status, near, _ = call(b, "POST", "/v1/workspaces/story/entities/AuthService/context", {"text": "which database does it use?", "max_facts": 1})
    assert status == 200 and near["paths_run"] == ["graph", "lexical"] and len(near["facts"]) <= 1, near
    status, only, _ = call(b, "POST", "/v1/workspaces/story/entities/AuthService/context", {"types": ["database"]})
    assert status == 200 and set(objects(only)) == {"UserDB"}, only
    status, err, _ = call(b, "POST", "/v1/workspaces/story/entities/AuthService/context", {"depth": "two"})
    assert status == 400 and "depth" in json.dumps(err), err
    status, st, _ = call(b, "GET", "/v1/workspaces/story/stats")
    assert status == 200 and st["entities"] == 4
    status, ws, _ = call(b, "GET", "/v1/workspaces")
    assert status == 200 and "story" in [w["name"] for w in ws]
    # Soft delete and restore of a claim, of an entity.
    assert call(b, "DELETE", "/v1/workspaces/story/claims/c1/m1/1")[0] in (200, 404)
    claim_id = next(c["id"] for c in ent["claims"] if c["object"]["name"] == "UserDB")
    assert call(b, "DELETE", f"/v1/workspaces/story/claims/{claim_id}")[0] == 200
    count = lambda: call(b, "POST", "/v1/workspaces/story/query", {"query": "MATCH (:service)-[r:depends_on]->() RETURN count(r)"})[1]["rows"][0][0]
    assert count() == 0
    assert call(b, "POST", f"/v1/workspaces/story/claims/{claim_id}/restore")[0] == 200
    assert count() == 1
    assert call(b, "DELETE", "/v1/workspaces/story/entities/database:userdb")[0] == 200
    assert count() == 0
    assert call(b, "POST", "/v1/workspaces/story/entities/database:userdb/restore")[0] == 200
    assert count() == 1
    # Erasure: a conversation, an entity.
    call(b, "POST", "/v1/workspaces/gone/ingest", STORY[0])
    assert call(b, "POST", "/v1/workspaces/gone/conversations/c1/forget")[0] == 200
    assert call(b, "POST", "/v1/workspaces/gone/query", {"query": "MATCH ()-[r]->() RETURN count(r)"})[1]["rows"] == [[0]]
    assert call(b, "POST", "/v1/workspaces/gone/entities/technology:kafka/forget")[0] == 200
    assert call(b, "DELETE", "/v1/workspaces/gone")[0] == 200
    assert "gone" not in [w["name"] for w in call(b, "GET", "/v1/workspaces")[1]]


def test_admin_routes(api, tmp_path):
    assert call(api.http, "POST", "/v1/checkpoint")[0] == 200
    status, path, _ = call(api.http, "POST", "/v1/backup", {"path": str(tmp_path / "copy")})
    assert status == 200 and (tmp_path / "copy").is_dir()
    status, who, _ = call(api.http, "GET", "/v1/whoami")
    assert status == 200 and who["user"] == "default" and who["grants"]["*"]["access"] == "admin"


def test_bad_requests_are_json_errors_naming_what(api):
    b = api.http
    status, err, _ = call(b, "POST", "/v1/workspaces/story/query", raw=b'{"query": 12}')
    assert status == 400 and "`query`" in err["error"]["message"] and "line 1 column" in err["error"]["message"]
    status, err, _ = call(b, "POST", "/v1/workspaces/story/query", raw=b'{"query": "RETURN 1", "bogus": 1}')
    assert status == 400 and "bogus" in err["error"]["message"]
    status, err, _ = call(b, "POST", "/v1/workspaces/story/query", raw=b'{"query": "RETURN 1"} trailing')
    assert status == 400 and "trailing" in err["error"]["message"]
    status, err, _ = call(b, "GET", "/v1/nope")
    assert status == 404 and err["error"]["class"] == "caller"
    status, err, _ = call(b, "PUT", "/healthz")
    assert status == 405 and "error" in err
    status, err, _ = call(b, "GET", "/v1/workspaces/story/entities/AuthService/neighbors?limit=x")
    assert status == 400 and "error" in err
    status, err, _ = call(b, "GET", "/v1/workspaces/story/entities/NoSuchThing")
    assert status == 400 and "no entity" in err["error"]["message"]


def test_limits_body_size_and_deadline(api):
    import redis

    r = redis.Redis(host=api.host, port=api.port, socket_timeout=10)
    r.config_set("proto-max-bulk-len", 2048)
    try:
        status, err, _ = call(api.http, "POST", "/v1/workspaces/story/query", {"query": "RETURN '" + "x" * 4096 + "'"})
        assert status == 413 and err["error"]["class"] == "limit" and "proto-max-bulk-len" in err["error"]["message"]
    finally:
        r.config_set("proto-max-bulk-len", 512 * 1024 * 1024)
    slow = "UNWIND range(1, 900) AS a UNWIND range(1, 1000) AS b RETURN count(*)"
    status, err, _ = call(api.http, "POST", "/v1/workspaces/story/query", {"query": slow, "timeout_ms": 1})
    assert status == 422 and err["error"]["class"] == "limit" and "deadline" in err["error"]["message"], err
    status, err, _ = call(api.http, "POST", "/v1/workspaces/story/query", {"query": "RETURN 1", "timeout_ms": 10**9})
    assert status == 422 and "query-timeout-max" in err["error"]["message"]


def test_openapi_is_valid_and_names_every_route(api):
    status, doc, _ = call(api.http, "GET", "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.1")
    validate(doc)
    # Every documented operation is served (not 404 or 405).
    for path, item in doc["paths"].items():
        for method in item:
            concrete = path.replace("{ws}", "story").replace("{id}", "AuthService")
            if method == "delete" and concrete == "/v1/workspaces/story":
                concrete = "/v1/workspaces/never-made"
            status, _, _ = call(api.http, method.upper(), concrete, {} if method == "post" else None)
            assert status not in (404, 405), (method, path, status)


def test_metrics_are_prometheus_text_with_every_family(api):
    # Paths a client makes up are counted under one label, not one each; the health checks give
    # the test its own traffic (it does not rely on the tests before it).
    for i in range(3):
        assert call(api.http, "GET", f"/no-such-page-{i}")[0] == 404
    for _ in range(8):
        assert call(api.http, "GET", "/healthz")[0] == 200
    status, text, hdrs = call(api.http, "GET", "/metrics")
    assert status == 200 and hdrs["Content-Type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name in [
        "engram_requests", "engram_request_errors", "engram_request_duration_seconds", "engram_refusals",
        "engram_wal_fsyncs", "engram_commit_groups", "engram_snapshot_age_seconds", "engram_memory_bytes",
        "engram_workspace_memory_bytes", "engram_clients_connected", "engram_uptime_seconds",
    ]:
        assert name in families, (name, sorted(families))
    http_requests = sum(s.value for s in families["engram_requests"].samples if s.labels.get("interface") == "http" and s.name.endswith("_total"))
    assert http_requests > 10
    commands = {s.labels.get("command") for s in families["engram_requests"].samples if s.labels.get("interface") == "http"}
    assert "unknown" in commands and not any(c and c.startswith("no-such-page") for c in commands), commands
    assert "healthz" in commands, commands
    assert any(s.labels.get("workspace") == "story" for s in families["engram_workspace_memory_bytes"].samples)


def test_the_latency_histogram_counts_every_request(tmp_path):
    """Each RESP command of a pipeline and each HTTP request is one sample: the buckets are
    cumulative, `+Inf` equals the count, and the count grows by exactly what was sent."""
    s = Server(tmp_path / "lat", "--http-port", "0")
    try:
        def histogram(interface):
            fams = {f.name: f for f in text_string_to_metric_families(call(s.http, "GET", "/metrics")[1])}
            samples = [x for x in fams["engram_request_duration_seconds"].samples if x.labels.get("interface") == interface]
            buckets = [x.value for x in samples if x.name.endswith("_bucket")]
            count = next(x.value for x in samples if x.name.endswith("_count"))
            assert buckets == sorted(buckets) and buckets[-1] == count, samples
            return count, next(x.value for x in samples if x.name.endswith("_sum"))

        r = redis.Redis(port=s.port, protocol=3)
        r.ping()
        before, _ = histogram("resp")
        p = r.pipeline(transaction=False)
        for _ in range(100):
            p.execute_command("PING")
        p.execute_command("ENGRAM.QUERY", "lat", "RETURN 1 +")
        p.execute(raise_on_error=False)
        r.close()
        after, total = histogram("resp")
        assert after == before + 101 and total >= 0, (before, after)
        http_before, _ = histogram("http")
        for _ in range(5):
            assert call(s.http, "GET", "/healthz")[0] == 200
        # The scrape itself is counted once it has answered: the one before, and the five.
        assert histogram("http")[0] == http_before + 6
    finally:
        s.stop()


def test_every_family_is_there_before_any_traffic(tmp_path):
    s = Server(tmp_path / "fresh", "--http-port", "0")
    try:
        families = {f.name for f in text_string_to_metric_families(call(s.http, "GET", "/metrics")[1])}
        assert {"engram_requests", "engram_request_duration_seconds", "engram_refusals", "engram_wal_fsyncs", "engram_snapshot_age_seconds"} <= families
    finally:
        s.stop()


def engram(*args, stdin=None):
    res = subprocess.run([ENGRAM, *args], input=stdin, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_auth_basic_and_tokens(tmp_path):
    folder = tmp_path / "db"
    s = Server(folder, "--http-port", "0")
    call(s.http, "POST", "/v1/workspaces/sec/query", {"query": "CREATE (:P {name: 'Ann'})"})
    assert s.stop() == 0
    engram("user", "add", str(folder), "reader", "--password-stdin", stdin="read-pw\n")
    engram("user", "grant", str(folder), "reader", "sec", "read")
    engram("user", "add", str(folder), "admin", "--password-stdin", stdin="adm-pw\n")
    engram("user", "grant", str(folder), "admin", "*", "admin")
    token = engram("user", "token", str(folder), "reader").strip()
    assert token.startswith("engram_") and token not in engram("user", "tokens", str(folder))
    s = Server(folder, "--http-port", "0")
    try:
        b = s.http
        q = {"query": "MATCH (n) RETURN count(n)"}
        # No credentials, wrong ones, a bad scheme: 401 with a JSON error and a challenge.
        status, err, hdrs = call(b, "POST", "/v1/workspaces/sec/query", q)
        assert status == 401 and err["error"]["class"] == "auth" and "Basic" in hdrs["WWW-Authenticate"]
        assert call(b, "POST", "/v1/workspaces/sec/query", q, auth=("reader", "nope"))[0] == 401
        assert call(b, "POST", "/v1/workspaces/sec/query", q, headers={"Authorization": "Digest x"})[0] == 401
        assert call(b, "POST", "/v1/workspaces/sec/query", q, auth="engram_00000000_00")[0] == 401
        # Password and token give the same grants.
        for auth in [("reader", "read-pw"), token]:
            status, res, _ = call(b, "POST", "/v1/workspaces/sec/query", q, auth=auth)
            assert status == 200 and res["rows"] == [[1]]
            status, err, _ = call(b, "POST", "/v1/workspaces/sec/query", {"query": "CREATE (:X)"}, auth=auth)
            assert status == 403 and err["error"]["class"] == "denied"
            assert call(b, "GET", "/v1/workspaces", auth=auth)[1] == [{"name": "sec", "entities": 1, "claims": 0}]
            assert call(b, "GET", "/metrics", auth=auth)[0] == 403
        assert call(b, "POST", "/v1/workspaces/sec/query", q, auth=("admin", "adm-pw"))[1]["rows"] == [[1]]
        assert call(b, "GET", "/metrics", auth=("admin", "adm-pw"))[0] == 200
        # Revoked: refused at once.
        import redis

        r = redis.Redis(host=s.host, port=s.port, username="admin", password="adm-pw", socket_timeout=10, decode_responses=True)
        token_id = token.split("_")[1]
        assert r.execute_command("ENGRAM.USER", "REVOKETOKEN", token_id) == 1
        assert call(b, "POST", "/v1/workspaces/sec/query", q, auth=token)[0] == 401
        fresh = r.execute_command("ENGRAM.USER", "TOKEN", "reader")
        assert call(b, "POST", "/v1/workspaces/sec/query", q, auth=fresh)[0] == 200
        status, metrics, _ = call(b, "GET", "/metrics", auth=("admin", "adm-pw"))
        refused = [ln for ln in metrics.splitlines() if ln.startswith('engram_refusals_total{limit="http-auth"}')]
        assert refused and float(refused[0].split()[-1]) >= 4
    finally:
        s.stop()


def test_a_request_that_never_finishes_is_answered_408(api):
    import redis
    import socket
    import time

    r = redis.Redis(host=api.host, port=api.port, socket_timeout=10)
    before = r.config_get("query-timeout-max")["query-timeout-max"]
    r.config_set("query-timeout-max", 100)
    try:
        host, port = api.http.removeprefix("http://").rsplit(":", 1)
        sk = socket.create_connection((host, int(port)), timeout=20)
        # Headers promise a body that never comes.
        sk.sendall(b"POST /v1/workspaces/story/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"query\"")
        t = time.monotonic()
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = sk.recv(4096)
            if not chunk:
                break
            reply += chunk
        took = time.monotonic() - t
        assert reply.startswith(b"HTTP/1.1 408"), reply
        body = json.loads(reply.split(b"\r\n\r\n", 1)[1])
        assert body["error"]["class"] == "limit" and "query-timeout-max" in body["error"]["message"]
        assert 4.5 < took < 15, took
    finally:
        r.config_set("query-timeout-max", before)
