"""Quick reads run on the connection's own thread under `inline-query-budget`; everything else, and
a read that passes the budget, runs on the worker pool. The answers are the same either way."""

import redis


def stats(r):
    s = r.info("stats")
    return s["inline_queries"], s["inline_overruns"]


def reads():
    return [
        "MATCH (a:P {i: 3})-[r]-() RETURN count(r)",
        "MATCH (a:P)-[:NEXT*1..3]->(b) WHERE a.i < 5 RETURN a.i, count(DISTINCT b) ORDER BY a.i",
        "MATCH (a:P) RETURN a.i ORDER BY a.i DESC LIMIT 4",
        "OPTIONAL MATCH (x:Missing) RETURN x",
        "MATCH (a:P {i: 1}) RETURN a",
        "MATCH p = (a:P {i: 1})-[:NEXT]->() RETURN p",
        "RETURN nope(1)",
    ]


def untimed(reply):
    """The reply without the execution times it reports."""
    if isinstance(reply, dict):
        return {k: untimed(v) for k, v in reply.items() if b"time" not in k}
    if isinstance(reply, list):
        return [untimed(v) for v in reply if not (isinstance(v, bytes) and b"execution time" in v)]
    return reply


def answers(r):
    out = []
    for q in reads():
        try:
            out.append(untimed(r.execute_command("ENGRAM.QUERY", "inl", q)))
        except redis.ResponseError as e:
            out.append(("error", str(e)))
        out.append(untimed(r.execute_command("GRAPH.QUERY", "inl", q, "--compact")) if "nope" not in q else None)
    return out


def test_quick_reads_run_inline_and_answer_as_the_pool_does(server):
    r = redis.Redis(host=server.host, port=server.port, protocol=3, socket_timeout=30)
    r.execute_command("ENGRAM.QUERY", "inl", "UNWIND range(0, 49) AS i CREATE (:P {i: i})")
    r.execute_command("ENGRAM.QUERY", "inl", "MATCH (a:P), (b:P) WHERE b.i = a.i + 1 CREATE (a)-[:NEXT]->(b)")
    # A budget no read here passes even in a debug build on a busy machine.
    r.execute_command("CONFIG", "SET", "inline-query-budget", "500000")
    before = stats(r)
    inline = answers(r)
    after = stats(r)
    # Each read but the one that does not compile (its error comes from the same place) inline.
    assert after[0] - before[0] == 2 * (len(reads()) - 1)
    assert after[1] == before[1]
    r.execute_command("CONFIG", "SET", "inline-query-budget", "0")
    assert r.execute_command("CONFIG", "GET", "inline-query-budget") == {b"inline-query-budget": b"0"}
    pooled = answers(r)
    assert stats(r) == after, "with the budget at 0 nothing runs inline"
    assert pooled == inline


def test_writes_and_procedures_never_run_inline(server):
    r = redis.Redis(host=server.host, port=server.port, protocol=3, socket_timeout=30)
    r.execute_command("ENGRAM.QUERY", "w", "CREATE (:A {x: 1})")
    before = stats(r)
    r.execute_command("ENGRAM.QUERY", "w", "CREATE (:A {x: 2})")
    r.execute_command("ENGRAM.QUERY", "w", "MATCH (a:A) SET a.y = 1")
    assert r.execute_command("ENGRAM.QUERY", "w", "CALL db.labels() YIELD label RETURN label")[b"rows"] == [[b"A"]]
    assert stats(r) == before
    # A read of a workspace that does not exist yet creates it (ENGRAM.QUERY may write): the pool.
    assert r.execute_command("ENGRAM.QUERY", "fresh", "MATCH (n) RETURN count(n)")[b"rows"] == [[0]]
    assert stats(r) == before


def test_a_read_past_the_budget_runs_on_the_pool_and_its_text_stays_there(server):
    r = redis.Redis(host=server.host, port=server.port, protocol=3, socket_timeout=60)
    r.execute_command("CONFIG", "SET", "inline-query-budget", "20000")
    r.execute_command("ENGRAM.QUERY", "s", "RETURN 1")
    slow = "UNWIND range(1, 600) AS a UNWIND range(1, 1000) AS b RETURN count(*)"
    before = stats(r)
    # Stopped by the budget on the connection's thread, run again on the pool: the right count.
    assert r.execute_command("ENGRAM.QUERY", "s", slow)[b"rows"] == [[600000]]
    first = stats(r)
    assert first == (before[0], before[1] + 1)
    # It took longer than the budget on the pool too: from now on it goes there directly.
    assert r.execute_command("ENGRAM.QUERY", "s", slow)[b"rows"] == [[600000]]
    assert stats(r) == first
    assert r.info("stats")["query_timeouts"] == 0, "the budget is not the query's deadline"
    # A quick text is still answered inline.
    assert r.execute_command("ENGRAM.QUERY", "s", "RETURN 2")[b"rows"] == [[2]]
    assert stats(r) == (first[0] + 1, first[1])
