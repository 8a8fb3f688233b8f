"""engram's memory commands over the wire: ENGRAM.INGEST (idempotent by message ids), RECALL,
NEIGHBORS, STATS, DELETE/RESTORE (soft), FORGET (erasure) and BACKUP, each one embedded call."""

import json
import math

import pytest
import redis

DOC = {
    "source": {"conversation_id": "conv-23", "message_id": "m-4", "model": "extractor", "model_version": "1.2"},
    "entities": [{"name": "AuthService", "type": "service", "aliases": ["auth-svc"]}, {"name": "Kinesis", "type": "technology"}],
    "claims": [
        {"subject": "auth-svc", "predicate": "streams_events_with", "object": "Kinesis", "confidence": 0.9, "text": "AuthService streams its events with Kinesis"}
    ],
}


@pytest.fixture
def r(server):
    return redis.Redis(host=server.host, port=server.port, socket_timeout=10, decode_responses=True)


def test_ingest_recall_neighbors_stats(r):
    reports = r.execute_command("ENGRAM.INGEST", "mem", json.dumps(DOC))
    assert len(reports) == 1 and reports[0]["claims"][0]["claim"] == "conv-23/m-4/0" and not reports[0]["duplicate"]
    # The same message again writes nothing.
    assert r.execute_command("ENGRAM.INGEST", "mem", json.dumps([DOC]))[0]["duplicate"] is True
    with pytest.raises(redis.ResponseError, match="names workspace `other`"):
        r.execute_command("ENGRAM.INGEST", "mem", json.dumps({**DOC, "workspace": "other"}))
    with pytest.raises(redis.ResponseError, match=r"not JSON at line 1 column"):
        r.execute_command("ENGRAM.INGEST", "mem", "{nope")
    got = r.execute_command("ENGRAM.RECALL", "mem", "what does AuthService stream events with?", "BUDGET", "256")
    assert "Kinesis" in got["context"] and got["facts"][0]["claim_id"] == "conv-23/m-4/0" and got["facts"][0]["evidence"] == ["conv-23/m-4#0"]
    n = r.execute_command("ENGRAM.NEIGHBORS", "mem", "AuthService", "DIRECTION", "out")
    assert [(i["predicate"], i["direction"]) for i in n["items"]] == [("streams_events_with", "out")]
    stats = r.execute_command("ENGRAM.STATS", "mem")
    assert stats["entities"] == 2 and stats["claims"] == 1 and stats["predicates"] == {"streams_events_with": 1}
    with pytest.raises(redis.ResponseError, match="syntax error at argument 3"):
        r.execute_command("ENGRAM.RECALL", "mem", "x", "BOGUS", "1")


def test_context_of_an_entity(r):
    """ENGRAM.CONTEXT: an entity's context, or with TEXT its neighbourhood ranked by the text, as
    ENGRAM.RECALL's map; options by name, bad ones named."""
    more = [
        {"subject": "AuthService", "predicate": "owned_by", "object": "Platform", "confidence": 0.8, "text": "the platform team owns AuthService"},
        {"subject": "Kinesis", "predicate": "hosted_in", "object": "eu-west-1", "confidence": 0.9, "text": "Kinesis runs in eu-west-1"},
    ]
    places = [{"name": "Platform", "type": "team"}, {"name": "eu-west-1", "type": "region"}]
    doc = {**DOC, "entities": DOC["entities"] + places, "claims": DOC["claims"] + more}
    assert len(r.execute_command("ENGRAM.INGEST", "ctx", json.dumps(doc))[0]["claims"]) == 3
    texts = lambda reply: [f["text"] for f in reply["facts"]]
    got = r.execute_command("ENGRAM.CONTEXT", "ctx", "AuthService")
    assert texts(got) == ["AuthService streams its events with Kinesis", "the platform team owns AuthService", "Kinesis runs in eu-west-1"]
    assert got["paths_run"] == ["graph"] and "Kinesis" in got["context"]
    assert texts(r.execute_command("ENGRAM.CONTEXT", "ctx", "auth-svc", "DEPTH", "1")) == texts(got)[:2]
    assert texts(r.execute_command("ENGRAM.CONTEXT", "ctx", "AuthService", "PREDICATE", "owned_by")) == ["the platform team owns AuthService"]
    assert texts(r.execute_command("ENGRAM.CONTEXT", "ctx", "AuthService", "LIMIT", "1")) == texts(got)[:1]
    near = r.execute_command("ENGRAM.CONTEXT", "ctx", "AuthService", "TEXT", "which region does it run in")
    assert texts(near)[0] == "Kinesis runs in eu-west-1" and near["paths_run"] == ["graph", "lexical"]
    assert r.execute_command("ENGRAM.CONTEXT", "ctx", "AuthService", "AS_OF", "2000-01-01T00:00:00Z")["facts"] == []
    for args, what in [
        (("Nobody",), "no entity"),
        (("AuthService", "DEPTH", "two"), "DEPTH"),
        (("AuthService", "DEPTH", "9"), "recall_hops_max"),
        (("AuthService", "BOGUS", "1"), "syntax error at argument 3"),
        (("AuthService", "VECTOR", "[1, oops]"), "VECTOR"),
    ]:
        with pytest.raises(redis.ResponseError, match=what):
            r.execute_command("ENGRAM.CONTEXT", "ctx", *args)


def test_delete_restore_forget(r, tmp_path):
    r.execute_command("ENGRAM.INGEST", "life", json.dumps(DOC))
    count = lambda: r.execute_command("ENGRAM.QUERY", "life", "MATCH ()-[c]->() RETURN count(c)")["rows"][0][0]
    assert count() == 1
    assert r.execute_command("ENGRAM.DELETE", "life", "CLAIM", "conv-23/m-4/0") in ("OK", True)
    assert count() == 0
    # Soft: ALL VERSIONS still sees it, and RESTORE brings it back.
    assert r.execute_command("ENGRAM.QUERY", "life", "ALL VERSIONS MATCH ()-[c]->() RETURN count(c)")["rows"][0][0] == 1
    assert r.execute_command("ENGRAM.RESTORE", "life", "CLAIM", "conv-23/m-4/0") in ("OK", True)
    assert count() == 1
    backup = str(tmp_path / "copy")
    assert r.execute_command("ENGRAM.BACKUP", backup)
    assert r.execute_command("ENGRAM.FORGET", "life", "CONVERSATION", "conv-23") in ("OK", True)
    assert r.execute_command("ENGRAM.QUERY", "life", "ALL VERSIONS MATCH ()-[c]->() RETURN count(c)")["rows"][0][0] == 0
    with pytest.raises(redis.ResponseError, match="expected ENTITY id or CONVERSATION id"):
        r.execute_command("ENGRAM.FORGET", "life", "CLAIM", "x")


def test_recall_embeds_the_question_with_the_servers_embedder(tmp_path):
    from conftest import Server

    s = Server(tmp_path / "db", "--embedder", "hash")
    try:
        r = redis.Redis(host=s.host, port=s.port, socket_timeout=10, decode_responses=True)
        r.execute_command("ENGRAM.INGEST", "emb", json.dumps(DOC))
        got = r.execute_command("ENGRAM.RECALL", "emb", "which stream does AuthService use?")
        assert "semantic" in got["paths_run"] and not got["skipped"], got
        assert got["facts"][0]["ranks"]["semantic"] == 1
        # A client vector of the wrong dimension is refused by name; a malformed one names VECTOR.
        with pytest.raises(redis.ResponseError, match="VECTOR"):
            r.execute_command("ENGRAM.RECALL", "emb", "x", "VECTOR", "[1, oops]")
    finally:
        s.stop()
    # Without an embedder the semantic path is skipped, and the reply says why.
    s = Server(tmp_path / "plain")
    try:
        r = redis.Redis(host=s.host, port=s.port, socket_timeout=10, decode_responses=True)
        r.execute_command("ENGRAM.INGEST", "emb", json.dumps(DOC))
        got = r.execute_command("ENGRAM.RECALL", "emb", "which stream does AuthService use?")
        assert "semantic" not in got["paths_run"] and got["skipped"][0]["path"] == "semantic"
    finally:
        s.stop()


def test_recall_embeds_what_the_question_asks(tmp_path):
    """Without VECTOR the server's embedder embeds the question and what it asks (without the
    names of entities with facts of their own: the graph path answers for them), averaged: the
    reply is the one for that vector, not for the whole question's."""
    import subprocess

    from conftest import ENGRAM, Server

    doc = {
        **DOC,
        "claims": DOC["claims"]
        + [
            {"subject": "Kinesis", "predicate": "owned_by", "object": "AuthService", "confidence": 0.9, "text": "the platform team owns the billing ledger"},
            {"subject": "AuthService", "predicate": "keeps", "object": "Kinesis", "confidence": 0.9, "text": "login streams are kept for a year"},
        ],
    }

    def vector(text):
        out = subprocess.run([ENGRAM, "embed", "--embedder", "hash", text], capture_output=True, text=True, timeout=60, check=True)
        return json.loads(out.stdout)

    def mean(a, b):
        s = [x + y for x, y in zip(a, b)]
        norm = math.sqrt(sum(x * x for x in s))
        return [x / norm for x in s]

    def same(a, b):
        return [c for c, _ in a] == [c for c, _ in b] and all(math.isclose(x, y, rel_tol=1e-5) for (_, x), (_, y) in zip(a, b))

    s = Server(tmp_path / "db", "--embedder", "hash")
    try:
        r = redis.Redis(host=s.host, port=s.port, socket_timeout=10, decode_responses=True)
        assert len(r.execute_command("ENGRAM.INGEST", "emb", json.dumps(doc))[0]["claims"]) == 3
        question = "which stream does AuthService use?"
        scores = lambda *extra: [(f["claim_id"], f["score"]) for f in r.execute_command("ENGRAM.RECALL", "emb", question, *extra)["facts"]]
        whole = vector(question)
        both = json.dumps(mean(whole, vector("which stream does use")))
        got, asked, alone = scores(), scores("VECTOR", both), scores("VECTOR", json.dumps(whole))
        assert len(got) == 3 and same(got, asked), (got, asked)
        assert not same(got, alone), (got, alone)
    finally:
        s.stop()


def test_transaction_is_all_or_nothing(r):
    results = r.execute_command(
        "ENGRAM.TRANSACTION",
        "tx",
        json.dumps(
            [
                {"query": "CREATE (:Service {name: $name})", "params": {"name": "auth"}},
                "MATCH (a:Service {name: 'auth'}) CREATE (a)-[:DEPENDS_ON]->(:Service {name: 'db'})",
                "MATCH (a)-[:DEPENDS_ON]->(b) RETURN a.name, b.name",
            ]
        ),
    )
    assert [x["stats"]["nodes_created"] for x in results] == [1, 1, 0]
    assert results[2]["rows"] == [["auth", "db"]]
    count = lambda: r.execute_command("ENGRAM.QUERY", "tx", "MATCH (s) RETURN count(s)")["rows"][0][0]
    # The third statement fails: the first two are undone with it.
    with pytest.raises(redis.ResponseError, match="statement 2"):
        r.execute_command("ENGRAM.TRANSACTION", "tx", json.dumps(["CREATE (:X)", "CREATE (:X)", "MATCH (s {name: 'db'}) DELETE s"]))
    assert count() == 2
    with pytest.raises(redis.ResponseError, match="statement 1: unknown field `param`"):
        r.execute_command("ENGRAM.TRANSACTION", "tx", json.dumps(["CREATE (:X)", {"query": "CREATE (:X)", "param": {}}]))
    with pytest.raises(redis.ResponseError, match="expected a JSON array"):
        r.execute_command("ENGRAM.TRANSACTION", "tx", "{}")
    assert count() == 2
