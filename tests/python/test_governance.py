"""Governance over the wire: three workspaces, three roles (owner, agent, debugging engineer), canary
words in rows a role may not see (another customer's claims behind a row policy, sensitive claims,
a sensitive property) and values it sees masked (PII in claim text, a confidential message's
claim) — no canary, count or name reaches a role that should not see it through any read command,
over RESP, HTTP and MCP; and the access history records every request once, with its user
and outcome, failed logins and refused writes included, answered writes surviving kill -9."""

import base64
import json
import signal
import subprocess
import urllib.request

import pytest
import redis

from conftest import ENGRAM, Server, wait_until

WORKSPACES = ["acme", "globex", "initech"]
PASSWORDS = {"olga": "owner-pw", "ann": "agent-pw", "eddie": "eng-pw"}


def engram(*args, stdin=None, check=True):
    res = subprocess.run([ENGRAM, *args], input=stdin, capture_output=True, text=True, timeout=60)
    if check:
        assert res.returncode == 0, res.stderr
    return res


def canaries(ws):
    """What only some roles may see in workspace `ws`: bob's claim (row policy), a sensitive
    claim (no see_sensitive), a sensitive property (sensitive_properties), ann's email in a claim
    text (masked for the engineer) and a codename from a confidential message (likewise)."""
    return {"bob": f"zebra{ws}bob", "sensitive": f"secret{ws}vault", "property": f"{ws}-ssn-991",
            "email": f"ann.{ws}@example.com", "codename": f"codename{ws}x"}


# What the engineer sees of the masked canaries instead.
MASKED = ["[redacted:email]", "[redacted:confidential]"]


def seed(folder):
    # Data first, through a server while no user exists (default has full access on loopback).
    s = Server(folder)
    r = redis.Redis(host=s.host, port=s.port, socket_timeout=10)
    for ws in WORKSPACES:
        c = canaries(ws)
        r.execute_command("ENGRAM.QUERY", ws, "CREATE (:Customer {name: 'Ann', tenant: 'ann', ssn: '" + c["property"] + "'})")
        r.execute_command(
            "ENGRAM.QUERY", ws,
            "MATCH (a:Customer {name: 'Ann'}) "
            "CREATE (a)-[:OWNS {text: 'ann owns a router with flaky wifi', user_id: 'ann', state: 'accepted'}]->(r:Product {name: 'Router'}), "
            "(b:Customer {name: 'Bob', tenant: 'bob'})-[:OWNS {text: 'bob owns the " + c["bob"] + " modem', user_id: 'bob', state: 'accepted'}]->(m:Product {name: 'Modem'}), "
            "(b)-[:FUNDS {text: 'bob funds " + c["bob"] + " research', user_id: 'bob', state: 'accepted'}]->(:Project {name: 'Bobproject', tenant: 'bob'}), "
            "(r)-[:PAIRS_WITH {text: 'the router pairs with the modem', state: 'accepted'}]->(m), "
            "(a)-[:WRITES_FROM {text: 'ann writes from " + c["email"] + " about the router', user_id: 'ann', state: 'accepted'}]->(r)",
        )
        confidential = {
            "source": {"conversation_id": f"c-{ws}", "message_id": "m0", "tags": {"sensitivity": "confidential"}},
            "entities": [{"name": "Router", "type": "product"}, {"name": "Roadmap", "type": "document"}],
            "claims": [{"subject": "Router", "predicate": "planned_in", "object": "Roadmap", "confidence": 0.9,
                        "text": f"the router firmware {c['codename']} ships next quarter"}],
        }
        r.execute_command("ENGRAM.INGEST", ws, json.dumps(confidential))
        doc = {
            "source": {"conversation_id": f"c-{ws}", "message_id": "m1"},
            "entities": [{"name": "Router", "type": "product"}, {"name": "Vault", "type": "system"}],
            "claims": [{"subject": "Router", "predicate": "stores_keys_in", "object": "Vault", "confidence": 0.95, "sensitive": True,
                        "text": f"the router stores {c['sensitive']} keys in the vault"}],
        }
        r.execute_command("ENGRAM.INGEST", ws, json.dumps(doc))
    assert s.stop() == 0
    for ws in WORKSPACES:
        engram("config", str(folder), "sensitive_properties", "ssn", "--workspace", ws)
        engram("policy", "set", str(folder), ws, "own-claims", "c.user_id IS NULL OR c.user_id = $user", "--role", "agent")
        engram("policy", "set", str(folder), ws, "own-entities", "e.tenant IS NULL OR e.tenant = $user", "--on", "entities", "--role", "agent")
        engram("policy", "mask", str(folder), ws, "pii", "pii:*", "redact", "--role", "engineer")
        engram("policy", "mask", str(folder), ws, "confidential", "tag:sensitivity=confidential", "redact", "--role", "engineer")
    for user, pw in PASSWORDS.items():
        engram("user", "add", str(folder), user, "--password-stdin", stdin=pw + "\n")
    for role in ["owner", "agent", "engineer"]:
        engram("role", "add", str(folder), role)
    engram("role", "grant", str(folder), "owner", "*", "admin", "--see-sensitive")
    for ws in WORKSPACES:
        engram("role", "grant", str(folder), "agent", ws, "write", "--see-sensitive")
        engram("role", "grant", str(folder), "engineer", ws, "read")
    for user, role in [("olga", "owner"), ("ann", "agent"), ("eddie", "engineer")]:
        engram("role", "assign", str(folder), user, role)


@pytest.fixture(scope="module")
def governed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gov") / "db"
    seed(folder)
    s = Server(folder, "--http-port", "0")
    yield s
    s.stop()


def as_user(s, user):
    return redis.Redis(host=s.host, port=s.port, username=user, password=PASSWORDS[user], socket_timeout=10, protocol=3, decode_responses=True)


READS = [
    ("GRAPH.QUERY", "{ws}", "MATCH (a)-[c]->(b) RETURN a.name, type(c), c.text, b.name, properties(a)"),
    ("GRAPH.RO_QUERY", "{ws}", "MATCH (n) RETURN n, keys(n), properties(n)"),
    ("GRAPH.QUERY", "{ws}", "MATCH p = (a)-[*1..3]-(b) RETURN p", "--compact"),
    ("GRAPH.QUERY", "{ws}", "CALL db.relationshipTypes()"),
    ("GRAPH.QUERY", "{ws}", "CALL db.labels()"),
    ("GRAPH.QUERY", "{ws}", "CALL db.propertyKeys()"),
    ("ENGRAM.QUERY", "{ws}", "MATCH ()-[c]->() RETURN collect(c.text), count(c)"),
    ("ENGRAM.QUERY", "{ws}", "CALL engram.search.text('zebra secret router modem vault', 20) YIELD relationship RETURN relationship"),
    ("ENGRAM.RECALL", "{ws}", "what does bob fund, what is in the vault, what does the router store", "BUDGET", "2048"),
    ("ENGRAM.NEIGHBORS", "{ws}", "Router"),
    ("ENGRAM.NEIGHBORS", "{ws}", "Modem"),
    ("ENGRAM.CONTEXT", "{ws}", "Router", "DEPTH", "3", "BUDGET", "4096"),
    ("ENGRAM.CONTEXT", "{ws}", "Modem", "TEXT", "zebra secret router modem vault", "DEPTH", "3"),
    ("ENGRAM.SEARCH", "{ws}", "o"),
    ("ENGRAM.CLAIMS", "{ws}", "STATE", "all"),
    ("ENGRAM.ENTITY", "{ws}", "Router"),
    ("ENGRAM.STATS", "{ws}"),
]


def everything_seen(client, ws):
    out = []
    for cmd in READS:
        args = [a.format(ws=ws) for a in cmd]
        try:
            out.append(repr(client.execute_command(*args)))
        except redis.exceptions.ResponseError as e:
            out.append(f"error: {e}")
    return "\n".join(out).lower()


def test_each_role_sees_exactly_what_it_may_in_every_workspace(governed):
    for user in PASSWORDS:
        client = as_user(governed, user)
        for ws in WORKSPACES:
            seen = everything_seen(client, ws)
            c = canaries(ws)
            if user == "olga":
                # The owner sees every canary: the checks below are not vacuous.
                assert all(v.lower() in seen for v in c.values()), (ws, seen[:2000])
            elif user == "ann":
                # The agent: her own and shared rows, sensitive ones included, never bob's; PII
                # and confidential texts in clear.
                assert c["bob"] not in seen and "bobproject" not in seen and "funds" not in seen, (ws, seen)
                assert c["sensitive"] in seen and "router" in seen and c["email"] in seen and c["codename"] in seen
            else:
                # The engineer: every customer's ordinary rows, nothing sensitive, PII and the
                # confidential claim masked.
                assert c["sensitive"] not in seen and c["property"].lower() not in seen and "stores_keys_in" not in seen, (ws, seen)
                assert c["email"] not in seen and "example.com" not in seen and c["codename"] not in seen, (ws, seen)
                assert c["bob"] in seen and all(m in seen for m in MASKED), (ws, seen)
    # Counts: each role counts what it sees.
    counts = {u: as_user(governed, u).execute_command("ENGRAM.QUERY", "acme", "MATCH ()-[c]->() RETURN count(c)") for u in PASSWORDS}
    assert [row[0] for row in counts["olga"]["rows"]] == [7]
    assert [row[0] for row in counts["ann"]["rows"]] == [5]
    assert [row[0] for row in counts["eddie"]["rows"]] == [6]
    mine = {w["name"]: w for w in as_user(governed, "ann").execute_command("ENGRAM.WORKSPACES")}
    everyone = {w["name"]: w for w in as_user(governed, "olga").execute_command("ENGRAM.WORKSPACES")}
    # Bob and his project do not exist for ann, nor do bob's two claims.
    assert mine["acme"]["claims"] == 5 and mine["acme"]["entities"] == everyone["acme"]["entities"] - 2


def test_the_http_api_enforces_the_same_policies(governed):
    def post(path, body, user):
        token = base64.b64encode(f"{user}:{PASSWORDS[user]}".encode()).decode()
        req = urllib.request.Request(governed.http + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Basic {token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read().decode().lower()

    for ws in WORKSPACES:
        c = canaries(ws)
        q = {"query": "MATCH (a)-[c]->(b) RETURN a.name, c.text, b.name, properties(a)"}
        owner = post(f"/v1/workspaces/{ws}/query", q, "olga")
        ann = post(f"/v1/workspaces/{ws}/query", q, "ann")
        eddie = post(f"/v1/workspaces/{ws}/query", q, "eddie")
        assert c["bob"] in owner and c["sensitive"] in owner
        assert c["bob"] not in ann and c["sensitive"] in ann
        assert c["sensitive"] not in eddie and c["property"].lower() not in eddie and c["bob"] in eddie
        assert c["email"] in ann and c["codename"] in ann
        assert c["email"] not in eddie and c["codename"] not in eddie and all(m in eddie for m in MASKED), eddie
        recall = {"text": "what does bob fund and what is in the vault", "budget": 2048}
        assert c["bob"] not in post(f"/v1/workspaces/{ws}/recall", recall, "ann")
        eddie_recall = post(f"/v1/workspaces/{ws}/recall", {"text": "how do I reach ann about the router firmware", "budget": 2048}, "eddie")
        assert c["sensitive"] not in eddie_recall and c["email"] not in eddie_recall and c["codename"] not in eddie_recall


def test_mcp_tools_enforce_the_same_policies(governed):
    from test_mcp import everything_visible, over_http, run

    async def go():
        for ws in WORKSPACES:
            c = canaries(ws)
            url = governed.http + f"/mcp?workspace={ws}"
            async with over_http(url, "olga", PASSWORDS["olga"]) as m:
                owner = (await everything_visible(m)).lower()
            async with over_http(url, "ann", PASSWORDS["ann"]) as m:
                ann = (await everything_visible(m)).lower()
            async with over_http(url, "eddie", PASSWORDS["eddie"]) as m:
                eddie = (await everything_visible(m)).lower()
            assert c["bob"] in owner and c["sensitive"] in owner
            assert c["bob"] not in ann and "bobproject" not in ann and c["sensitive"] in ann
            assert c["sensitive"] not in eddie and c["property"].lower() not in eddie and c["bob"] in eddie
            assert c["email"] in owner and c["email"] not in eddie and c["codename"] not in eddie, eddie
            assert "[redacted:email]" in eddie

    run(go())


def test_policies_are_managed_by_admins_and_explained(governed):
    olga, ann = as_user(governed, "olga"), as_user(governed, "ann")
    with pytest.raises(redis.exceptions.ResponseError, match="has no admin access"):
        ann.execute_command("ENGRAM.POLICY", "SET", "acme", "mine", "claims", "agent", "true")
    with pytest.raises(redis.exceptions.ResponseError, match="has no admin access"):
        ann.execute_command("ENGRAM.ROLE", "LIST")
    with pytest.raises(redis.exceptions.ResponseError, match=r"unknown variable `x`.* at 1:1"):
        olga.execute_command("ENGRAM.POLICY", "SET", "acme", "bad", "claims", "agent", "x.y = 1")
    listed = [l.decode() if isinstance(l, bytes) else l for l in olga.execute_command("ENGRAM.POLICY", "LIST", "acme")]
    assert any("own-claims claims roles=agent" in l for l in listed), listed
    explained = [l.decode() if isinstance(l, bytes) else l for l in olga.execute_command("ENGRAM.POLICY", "EXPLAIN", "ann", "acme")]
    assert any("own-entities" in l for l in explained) and any(l.startswith("hidden: 2 claims, 2 entities") for l in explained), explained
    assert any(l == "acme pii mask pii:* redact roles=engineer" for l in listed), listed
    with pytest.raises(redis.exceptions.ResponseError, match="pii:KIND"):
        olga.execute_command("ENGRAM.POLICY", "MASK", "acme", "bad", "pii:ssn", "redact", "engineer")
    with pytest.raises(redis.exceptions.ResponseError, match="has no admin access"):
        ann.execute_command("ENGRAM.POLICY", "UNMASK", "acme", "pii")
    masks = [l for l in olga.execute_command("ENGRAM.POLICY", "EXPLAIN", "eddie", "acme") if " mask " in l]
    assert len(masks) == 2, masks
    # A mask on a property, hashed: equal values give equal tokens, the clear value never shows.
    assert olga.execute_command("ENGRAM.POLICY", "MASK", "globex", "tenants", "property:tenant", "hash", "engineer") == "OK"
    eddie = as_user(governed, "eddie")
    seen = eddie.execute_command("ENGRAM.QUERY", "globex", "MATCH (n:Customer) RETURN n.name, n.tenant ORDER BY n.name")["rows"]
    assert [r[0] for r in seen] == ["Ann", "Bob"] and all(r[1].startswith("[HMAC:") for r in seen) and seen[0][1] != seen[1][1], seen
    assert olga.execute_command("ENGRAM.POLICY", "UNMASK", "globex", "tenants") == 1
    seen = eddie.execute_command("ENGRAM.QUERY", "globex", "MATCH (n:Customer) RETURN n.tenant ORDER BY n.tenant")["rows"]
    assert seen == [["ann"], ["bob"]], seen
    roles = [l.decode() if isinstance(l, bytes) else l for l in olga.execute_command("ENGRAM.ROLE", "LIST")]
    assert any(l.startswith("agent ") and "users=ann" in l for l in roles), roles


def test_the_access_history_records_each_request_once_with_its_user_and_outcome(governed):
    ann, olga = as_user(governed, "ann"), as_user(governed, "olga")
    marker = "MATCH (n) WHERE n.name = 'audit-marker-41' RETURN count(n)"
    ann.execute_command("GRAPH.QUERY", "acme", marker)
    with pytest.raises(redis.exceptions.ResponseError):
        as_user(governed, "eddie").execute_command("GRAPH.QUERY", "acme", "CREATE (:Refused {name: 'audit-marker-42'})")
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host=governed.host, port=governed.port, username="ann", password="wrong", socket_timeout=10).ping()
    # RESP2 clients log in with AUTH, not HELLO: recorded too.
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host=governed.host, port=governed.port, username="olga", password="wrong", protocol=2, socket_timeout=10).ping()
    ann.execute_command("GRAPH.QUERY", "acme", "CYPHER secret='hunter2' MATCH (n) WHERE n.name = $secret RETURN n")

    def records():
        return [json.loads(l) for l in engram("audit", str(governed.folder), "--jsonl").stdout.splitlines()]

    wait_until(lambda: any("audit-marker-42" in r["text"] for r in records()))
    all_records = records()
    read = [r for r in all_records if r["text"] == marker]
    assert len(read) == 1 and read[0]["user"] == "ann" and read[0]["roles"] == ["agent"] and read[0]["outcome"] == "ok"
    assert read[0]["workspace"] == "acme" and read[0]["interface"] == "resp" and read[0]["rows"] == 1
    refused = [r for r in all_records if "audit-marker-42" in r["text"]]
    assert len(refused) == 1 and refused[0]["user"] == "eddie" and refused[0]["outcome"].startswith("error: NOPERM"), refused
    logins = [r for r in all_records if r["op"] in ("AUTH", "HELLO") and r["outcome"] != "ok"]
    assert any(r["user"] == "ann" for r in logins), logins
    assert any(r["user"] == "olga" and r["op"] == "AUTH" for r in logins), logins
    assert not any("hunter2" in json.dumps(r) for r in all_records)
    hashed = [r for r in all_records if "n.name = $secret" in r["text"]]
    assert len(hashed) == 1 and len(hashed[0]["params_sha256"]) == 64
    # The same history through the server, to admins only; the claims a query read are named.
    listed = olga.execute_command("ENGRAM.AUDIT", "USER", "ann", "LIMIT", "500")
    assert any(r["text"] == marker for r in listed)
    with pytest.raises(redis.exceptions.ResponseError, match="has no admin access"):
        ann.execute_command("ENGRAM.AUDIT")
    rows = olga.execute_command("ENGRAM.QUERY", "acme", "CALL engram.audit.history({user: 'ann', op: 'GRAPH.QUERY'}) YIELD text RETURN text")
    assert [marker] in [list(r) for r in rows["rows"]]
    with pytest.raises(redis.exceptions.ResponseError, match="needs admin on"):
        ann.execute_command("ENGRAM.QUERY", "acme", "CALL engram.audit.history() YIELD text RETURN text")
    olga.execute_command("ENGRAM.QUERY", "acme", "MATCH ()-[c:PAIRS_WITH]->() RETURN c")
    pairs = [r for r in records() if r["text"] == "MATCH ()-[c:PAIRS_WITH]->() RETURN c"]
    wait_until(lambda: any(r["text"] == "MATCH ()-[c:PAIRS_WITH]->() RETURN c" for r in records()))
    pairs = [r for r in records() if r["text"] == "MATCH ()-[c:PAIRS_WITH]->() RETURN c"]
    assert len(pairs) == 1 and len(pairs[0]["claims"]) == 1, pairs


def test_every_answered_write_survives_kill_9_in_the_history(tmp_path):
    folder = tmp_path / "db"
    s = Server(folder)
    r = redis.Redis(host=s.host, port=s.port, socket_timeout=10)
    for i in range(20):
        r.execute_command("GRAPH.QUERY", "w", f"CREATE (:N {{name: 'kill-{i}'}})")
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait(timeout=10)
    s.log.close()
    texts = [json.loads(l)["text"] for l in engram("audit", str(folder), "--jsonl").stdout.splitlines()]
    for i in range(20):
        assert texts.count(f"CREATE (:N {{name: 'kill-{i}'}})") == 1, (i, texts)


def test_tags_over_the_wire(governed):
    olga, eddie = as_user(governed, "olga"), as_user(governed, "eddie")
    rows = olga.execute_command("ENGRAM.QUERY", "initech", "MATCH ()-[c:PAIRS_WITH]->() RETURN id(c)")["rows"]
    cid = f"c{rows[0][0]}"
    assert olga.execute_command("ENGRAM.TAG", "initech", "SET", "CLAIM", cid, "team=ops", "sensitivity=internal") == "OK"
    assert olga.execute_command("ENGRAM.TAG", "initech", "GET", "CLAIM", cid) == {"sensitivity": "internal", "team": "ops"}
    assert eddie.execute_command("ENGRAM.TAG", "initech", "GET", "CLAIM", cid)["team"] == "ops"
    with pytest.raises(redis.exceptions.ResponseError, match="may not write"):
        eddie.execute_command("ENGRAM.TAG", "initech", "SET", "CLAIM", cid, "team=x")
    with pytest.raises(redis.exceptions.ResponseError, match="expected one of public"):
        olga.execute_command("ENGRAM.TAG", "initech", "SET", "CLAIM", cid, "sensitivity=top")
    # Tagging it sensitive hides it from the engineer at once; the owner still sees it.
    olga.execute_command("ENGRAM.TAG", "initech", "SET", "CLAIM", cid, "sensitivity=sensitive")
    assert "pairs with" not in everything_seen(eddie, "initech")
    assert "pairs with" in everything_seen(olga, "initech")
    olga.execute_command("ENGRAM.TAG", "initech", "SET", "CLAIM", cid, "sensitivity=public")
    assert "pairs with" in everything_seen(eddie, "initech")
