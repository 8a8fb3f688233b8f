"""The Python API, on both back ends (embedded and client): queries and their values, errors,
transactions, ingest, recall, neighbours, lifecycle, and identical results across the two."""

import math
import re
import threading
import time

import pytest

import engram
from conftest import make

DOC = {
    "source": {"conversation_id": "conv-1", "message_id": "m-1", "model": "extractor"},
    "entities": [{"name": "AuthService", "type": "service", "aliases": ["auth-svc"]}, {"name": "Kinesis", "type": "technology"}],
    "claims": [
        {"subject": "auth-svc", "predicate": "streams_events_with", "object": "Kinesis", "confidence": 0.9, "text": "AuthService streams its events with Kinesis"}
    ],
}


def test_query_values_are_python_values(mem):
    r = mem.query(
        "CREATE (a:Service {name: $name, tags: ['x', 'y'], weight: 1.5, up: true})-[d:DEPENDS_ON {since: 2020}]->(b:Service {name: 'db'}) RETURN a, d, b",
        {"name": "auth"},
    )
    assert r.columns == ["a", "d", "b"]
    assert r.stats["nodes_created"] == 2 and r.stats["relationships_created"] == 1
    a, d, b = r.rows[0]
    assert isinstance(a, engram.Node) and a.labels == ["Service"]
    assert a.properties == {"name": "auth", "tags": ["x", "y"], "weight": 1.5, "up": True}
    assert isinstance(d, engram.Relationship) and d.type == "DEPENDS_ON" and (d.start, d.end) == (a.id, b.id) and d.properties == {"since": 2020}
    p = mem.query("MATCH p = (:Service {name: 'auth'})-[:DEPENDS_ON]->() RETURN p, length(p) AS n, null AS nothing, {k: [1, 2.5]} AS m").rows[0]
    assert isinstance(p[0], engram.Path) and [n.properties["name"] for n in p[0].nodes] == ["auth", "db"]
    assert p[1:] == (1, None, {"k": [1, 2.5]})
    assert list(mem.query("UNWIND range(1, 3) AS i RETURN i")) == [(1,), (2,), (3,)]
    plan = mem.query("EXPLAIN MATCH (n:Service) RETURN n").plan
    assert plan and any("Service" in line for line in plan)


def test_temporal_values_are_their_iso_text_on_both_back_ends(mem):
    # Python's datetime keeps microseconds and no offset-only time: the text is exact, and the
    # embedded library and the server give the same.
    mem.query("CREATE (:Event {at: datetime($t), took: duration({hours: 1, nanoseconds: 5})})", {"t": "2024-05-06T07:08:09.123456789+02:00"})
    row = mem.query("MATCH (e:Event) RETURN e.at, e.took, e.at.year, e.at + e.took, e").rows[0]
    assert row[:4] == ("2024-05-06T07:08:09.123456789+02:00", "PT1H0.000000005S", 2024, "2024-05-06T08:08:09.123456794+02:00")
    assert row[4].properties == {"at": "2024-05-06T07:08:09.123456789+02:00", "took": "PT1H0.000000005S"}


def test_a_zoneinfo_datetime_keeps_its_zone_on_both_back_ends(mem):
    import datetime as dt
    from zoneinfo import ZoneInfo

    berlin = ZoneInfo("Europe/Berlin")
    # 02:30 on 2021-10-31 happens twice in Berlin; fold=1 is the second, at +01:00.
    second = dt.datetime(2021, 10, 31, 2, 30, fold=1, tzinfo=berlin)
    row = mem.query("RETURN $t, $t.timezone, $t.offset, $t + duration({days: 1}), $t - duration({hours: 1})", {"t": second}).rows[0]
    assert row == (
        "2021-10-31T02:30+01:00[Europe/Berlin]",
        "Europe/Berlin",
        "+01:00",
        "2021-11-01T02:30+01:00[Europe/Berlin]",
        "2021-10-31T02:30+02:00[Europe/Berlin]",
    )
    first = dt.datetime(2021, 10, 31, 2, 30, tzinfo=berlin)
    assert mem.query("RETURN $a < $b, duration.between($a, $b)", {"a": first, "b": second}).rows == [(True, "PT1H")]
    # Stored with its zone, and found by the same instant in it.
    mem.query("CREATE (:Meeting {at: $t})", {"t": second})
    assert mem.query("MATCH (m:Meeting) WHERE m.at = datetime('2021-10-31T02:30+01:00[Europe/Berlin]') RETURN m.at.timezone").rows == [("Europe/Berlin",)]


def test_python_temporal_objects_are_parameters_on_both_back_ends(mem):
    import datetime as dt

    berlin = dt.timezone(dt.timedelta(hours=2))
    params = {
        "at": dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=berlin),
        "local": dt.datetime(2024, 5, 6, 7, 8, 9),
        "day": dt.date(2024, 2, 29),
        "t": dt.time(23, 59, 1, 5, tzinfo=dt.timezone.utc),
        "lt": dt.time(6, 30),
        "took": dt.timedelta(days=-1, seconds=5, microseconds=7),
        "nested": [dt.date(2020, 1, 1), {"d": dt.timedelta(hours=1)}],
        "tagged": {"$date": "2021-03-04"},
    }
    row = mem.query(
        "RETURN $at, $at.offset, $at.epochMillis, $local, $day, $day.dayOfWeek, $t, $lt, "
        "$took, $took.days, $took.seconds, $took.nanosecondsOfSecond, $nested, $tagged.year, $day + $took",
        params,
    ).rows[0]
    assert row == (
        "2024-05-06T07:08:09.123456+02:00",
        "+02:00",
        int(params["at"].timestamp() * 1000),
        "2024-05-06T07:08:09",
        "2024-02-29",
        4,
        "23:59:01.000005Z",
        "06:30",
        "P-1DT5.000007S",
        -1,
        5,
        7000,
        ["2020-01-01", {"d": "PT1H"}],
        2021,
        "2024-02-28",
    )
    # Stored as they are given, and found by them.
    mem.query("CREATE (:Event {at: $at, took: $took})", params)
    assert mem.query("MATCH (e:Event {at: $at}) WHERE e.took = $took RETURN count(e)", params).rows == [(1,)]
    # In a transaction too (its statements travel as JSON on both back ends).
    with mem.transaction() as tx:
        tx.query("CREATE (:Event {at: $at})", {"at": dt.datetime(1999, 12, 31, 23, 59, tzinfo=dt.timezone.utc)})
    assert mem.query("MATCH (e:Event) RETURN min(e.at)").rows == [("1999-12-31T23:59Z",)]
    # A tag whose text is not its kind is refused by name; an object that is no value too.
    with pytest.raises(engram.CallerError, match=r'\{"\$date": "2021-13-01"\}: month 13 is outside 1..12'):
        mem.query("RETURN $x", {"x": {"$date": "2021-13-01"}})
    with pytest.raises(engram.CallerError, match="params: .*set"):
        mem.query("RETURN $x", {"x": {1, 2}})


def test_points_are_the_dicts_point_takes_on_both_back_ends(mem):
    # A point comes back as the map `point()` takes, so it goes in again as `point($p)` or as a
    # `{"$point": …}` parameter; stored, it is found by equality.
    row = mem.query("RETURN point({longitude: 12.5, latitude: 55.6}), point({x: 1, y: 2, z: 3}), point({x: 1, y: 2}).srid").rows[0]
    assert row == ({"crs": "wgs-84", "longitude": 12.5, "latitude": 55.6}, {"crs": "cartesian-3d", "x": 1.0, "y": 2.0, "z": 3.0}, 7203)
    here = row[0]
    assert mem.query("RETURN point($p) = point({longitude: 12.5, latitude: 55.6})", {"p": here}).rows == [(True,)]
    mem.query("CREATE (:Place {name: 'office', at: $p})", {"p": {"$point": here}})
    near = mem.query(
        "MATCH (p:Place) WHERE point.distance(p.at, $q) < 1000 RETURN p.name, p.at, round(point.distance(p.at, $q))",
        {"q": {"$point": {"longitude": 12.51, "latitude": 55.6}}},
    ).rows
    assert near == [("office", here, 629.0)]
    assert mem.query("MATCH (p:Place {at: $p}) RETURN p.name", {"p": {"$point": here}}).rows == [("office",)]
    with pytest.raises(engram.CallerError, match=r"\$point: latitude should be within \[-90, 90\]"):
        mem.query("RETURN $x", {"x": {"$point": {"longitude": 0, "latitude": 91}}})


def test_a_result_is_one_type_with_all_its_counters(mem):
    zero = dict.fromkeys(
        [
            "nodes_created",
            "nodes_deleted",
            "relationships_created",
            "relationships_deleted",
            "properties_set",
            "properties_removed",
            "labels_added",
            "labels_removed",
            "indexes_added",
            "indexes_removed",
            "constraints_added",
            "constraints_removed",
        ],
        0,
    )
    w = mem.query("CREATE (:T {a: 1})-[:R]->(:T)")
    assert isinstance(w, engram.Result) and w.columns == [] and w.rows == [] and len(w) == 0
    assert w.stats == {**zero, "nodes_created": 2, "relationships_created": 1, "properties_set": 1, "labels_added": 2}
    r = mem.query("MATCH (t:T) RETURN t.a AS a ORDER BY a")
    # A read's counters are all there, all zero; the same dict each time it is read.
    assert r.stats == zero and r.stats is r.stats
    assert list(r) == [(1,), (None,)] and len(r) == 2 and r.plan is None
    assert r == mem.query("MATCH (t:T) RETURN t.a AS a ORDER BY a") and r != w and r != "x"
    assert repr(r) == f"Result(columns=['a'], rows=[(1,), (None,)], stats={zero!r}, plan=None)"
    # The column list is made when first read, then kept; each result has its own.
    again = mem.query("MATCH (t:T) RETURN t.a AS a ORDER BY a")
    assert again.columns is again.columns
    again.columns.append("b")
    assert r.columns == ["a"] and again.columns == ["a", "b"] and mem.query("RETURN 1 AS a").columns == ["a"]
    again.columns = ["z"]
    assert again.columns == ["z"]
    made = engram.Result(["a"], [(1,), (None,)], dict(zero))
    assert made == r and made.plan is None
    with pytest.raises(TypeError):
        engram.Result()


def test_the_default_workspace_follows_the_attribute(mem):
    home = mem.workspace
    mem.query("CREATE (:Here)")
    mem.workspace = "elsewhere"
    mem.query("CREATE (:There)")
    assert mem.query("MATCH (n) RETURN labels(n)").rows == [(["There"],)]
    assert mem.query("MATCH (n) RETURN labels(n)", workspace=home).rows == [(["Here"],)]
    assert mem.query("MATCH (n) RETURN labels(n)", None, workspace="").rows == [(["There"],)]
    mem.workspace = home
    assert mem.query("MATCH (n) RETURN labels(n)").rows == [(["Here"],)]
    assert mem.stats(workspace="elsewhere")["entities"] == 1


def test_errors_are_typed_and_name_where(mem):
    with pytest.raises(engram.CallerError) as e:
        mem.query("MATCH (n RETURN n")
    assert (e.value.kind, e.value.line, e.value.column, e.value.klass) == ("SyntaxError", 1, 10, "caller")
    with pytest.raises(engram.CallerError) as e:
        mem.query("RETURN $missing")
    assert e.value.kind == "ParameterMissing"
    with pytest.raises(engram.CallerError):
        mem.query("RETURN 1", params=[1])
    with pytest.raises(engram.CallerError, match="params"):
        mem.query("RETURN $x", params={"x": object()})
    with pytest.raises(engram.CallerError, match="names must be strings"):
        mem.query("RETURN 1", params={1: "x"})
    # Parameters of every JSON kind arrive as the same values either way.
    p = {"i": 7, "f": 2.5, "b": True, "n": None, "s": "é", "l": [1, "two", [3.0]], "m": {"k": {"z": False}}}
    assert mem.query("RETURN $i, $f, $b, $n, $s, $l, $m", p).rows == [(7, 2.5, True, None, "é", [1, "two", [3.0]], {"k": {"z": False}})]
    with pytest.raises(engram.CallerError, match="exactly one of"):
        mem.delete(entity="a", claim="b")
    with pytest.raises(engram.EngramError):
        mem.restore(entity="nobody")


def test_a_transaction_commits_on_exit_and_writes_nothing_on_error(mem):
    with mem.transaction() as tx:
        tx.query("CREATE (:Service {name: $n})", {"n": "auth"})
        tx.query("MATCH (a:Service {name: 'auth'}) CREATE (a)-[:DEPENDS_ON]->(:Service {name: 'db'})")
        tx.query("MATCH (a)-[:DEPENDS_ON]->(b) RETURN a.name, b.name")
    assert [r.stats["nodes_created"] for r in tx.results] == [1, 1, 0] and tx.results[2].rows == [("auth", "db")]
    count = lambda: mem.query("MATCH (s) RETURN count(s)").rows[0][0]
    # An exception in the block: nothing is sent.
    with pytest.raises(RuntimeError):
        with mem.transaction() as tx:
            tx.query("CREATE (:X)")
            raise RuntimeError("changed my mind")
    assert count() == 2
    # A failing statement: the ones before it are undone with it.
    with pytest.raises(engram.ConflictError, match="statement 1"):
        with mem.transaction() as tx:
            tx.query("CREATE (:X)")
            tx.query("MATCH (s {name: 'db'}) DELETE s")
    assert count() == 2


def test_ingest_recall_neighbors_stats(mem):
    report = mem.ingest(DOC)
    assert report["claims"][0]["claim"] == "conv-1/m-1/0" and not report["duplicate"]
    # Idempotent by message id; a list is one group, each document with its report or error.
    again, bad = mem.ingest([DOC, {**DOC, "source": {**DOC["source"], "message_id": "m-2"}, "claims": [{**DOC["claims"][0], "confidence": 7}]}])
    assert again["duplicate"] is True
    assert isinstance(bad, engram.CallerError)
    with pytest.raises(engram.CallerError, match="names workspace `other`"):
        mem.ingest({**DOC, "workspace": "other"})
    # The confidence comes back as the shortest decimal of the stored f32.
    assert mem.query("MATCH ()-[c]->() RETURN c.confidence").rows == [(0.9,)]
    ctx = mem.recall("what does AuthService stream events with?", budget=256)
    assert "Kinesis" in ctx.text and str(ctx) == ctx.text and ctx.tokens_used <= 256 == ctx.budget
    fact = ctx.facts[0]
    assert fact["claim_id"] == "conv-1/m-1/0" and fact["evidence"] == ["conv-1/m-1#0"] and fact["confidence"] == 0.9
    assert mem.recall("Kinesis", seeds=["AuthService"], hops=1).facts[0]["claim_id"] == "conv-1/m-1/0"
    assert mem.recall("Kinesis", as_of="2000-01-01T00:00:00Z").facts == []
    with pytest.raises(engram.CallerError, match="no entity `Nobody`"):
        mem.recall("x", seeds=["Nobody"])
    items = mem.neighbors("AuthService", direction="out")
    assert [(i["predicate"], i["direction"], i["neighbor"]) for i in items] == [("streams_events_with", "out", items[0]["neighbor"])]
    assert mem.neighbors("Kinesis", direction="out") == []
    stats = mem.stats()
    assert (stats["entities"], stats["claims"], stats["predicates"]) == (2, 1, {"streams_events_with": 1})


def test_delete_restore_forget(mem):
    mem.ingest(DOC)
    count = lambda: mem.query("MATCH ()-[c]->() RETURN count(c)").rows[0][0]
    mem.delete(claim="conv-1/m-1/0")
    assert count() == 0
    assert mem.query("ALL VERSIONS MATCH ()-[c]->() RETURN count(c)").rows[0][0] == 1
    mem.restore(claim="conv-1/m-1/0")
    assert count() == 1
    mem.forget(conversation="conv-1")
    assert mem.query("ALL VERSIONS MATCH ()-[c]->() RETURN count(c)").rows[0][0] == 0


def test_workspaces_are_apart(mem):
    mem.query("CREATE (:A)", workspace="one")
    assert mem.query("MATCH (n) RETURN count(n)", workspace="one").rows == [(1,)]
    # As the server's ENGRAM.QUERY, a query on an unknown workspace creates it (empty).
    assert mem.query("MATCH (n) RETURN count(n)", workspace="two").rows == [(0,)]
    assert mem.query("MATCH (n) RETURN count(n)").rows == [(0,)]


def test_closed_means_closed(mem):
    mem.close()
    with pytest.raises(Exception):
        mem.query("RETURN 1")


SCENARIO = [
    ("CREATE (:Person {name: 'Ann', age: 41})-[:KNOWS {since: 2019}]->(:Person {name: 'Bob'})", None),
    ("MATCH (a:Person)-[k:KNOWS]->(b) RETURN a, k, b, a.age / 2.0 AS half ORDER BY a.name", None),
    ("MATCH p = (a)-[*1..2]->(b) RETURN p, [n IN nodes(p) | n.name] AS names", None),
    ("UNWIND $xs AS x RETURN x, x * 2 AS y, toString(x) AS s", {"xs": [1, 2, 3]}),
    ("MATCH (n) RETURN labels(n), keys(n), properties(n) ORDER BY n.name", None),
]


def test_context_of_an_entity(mem):
    """An entity's context, or with `text` its neighbourhood ranked by it, on both back ends."""
    mem.ingest(DOC)
    ctx = mem.context("AuthService")
    assert [f["claim_id"] for f in ctx.facts] == ["conv-1/m-1/0"] and "Kinesis" in ctx.text and ctx.raw["paths_run"] == ["graph"]
    assert ctx.tokens_used <= ctx.budget == 800
    near = mem.context("Kinesis", text="stream events", budget=200)
    assert near.facts[0]["claim_id"] == "conv-1/m-1/0" and near.budget == 200 and near.raw["paths_run"][0] == "graph"
    assert mem.context("auth-svc", depth=1, predicates=["streams_events_with"], max_facts=1).facts[0]["claim_id"] == "conv-1/m-1/0"
    assert mem.context("AuthService", types=["person"]).facts == []
    assert mem.context("AuthService", as_of="2000-01-01T00:00:00Z").facts == []
    with pytest.raises(engram.CallerError, match="no entity `Nobody`"):
        mem.context("Nobody")


def test_recall_embeds_what_the_question_asks(tmp_path):
    """Without a vector, the database's embedder embeds the question and what it asks (without the
    names of entities with facts of their own: the graph path answers for them), averaged: the
    facts and scores given that vector, not the whole question's."""
    m = engram.open(tmp_path / "db", embedder="hash")
    more = [
        {"subject": "Kinesis", "predicate": "owned_by", "object": "AuthService", "confidence": 0.9, "text": "the platform team owns the billing ledger"},
        {"subject": "AuthService", "predicate": "keeps", "object": "Kinesis", "confidence": 0.9, "text": "login streams are kept for a year"},
    ]
    m.ingest({**DOC, "claims": DOC["claims"] + more})
    question = "which stream does AuthService use?"
    scores = lambda ctx: [(f["claim_id"], f["score"]) for f in ctx.facts]
    whole, asked = m.embed([question, "which stream does use"])
    both = [x + y for x, y in zip(whole, asked)]
    norm = math.sqrt(sum(x * x for x in both))
    same = lambda a, b: [c for c, _ in a] == [c for c, _ in b] and all(math.isclose(x, y, rel_tol=1e-5) for (_, x), (_, y) in zip(a, b))
    got = scores(m.recall(question))
    assert len(got) == 3
    assert same(got, scores(m.recall(question, vector=[x / norm for x in both])))
    assert not same(got, scores(m.recall(question, vector=whole)))
    m.close()


def test_embedded_and_client_give_identical_results(tmp_path, request):
    (tmp_path / "e").mkdir()
    (tmp_path / "c").mkdir()
    embedded, client = make("embedded", tmp_path / "e", request), make("client", tmp_path / "c", request)
    for m in (embedded, client):
        m.ingest(DOC)
    for text, params in SCENARIO:
        assert embedded.query(text, params) == client.query(text, params), text
    question = "what does AuthService stream events with?"
    a, b = embedded.recall(question, budget=200), client.recall(question, budget=200)
    # The same block but for the transaction times (two databases, written a moment apart).
    stamp = lambda t: re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "T", t)
    assert (stamp(a.text), [f["claim_id"] for f in a.facts], a.tokens_used) == (stamp(b.text), [f["claim_id"] for f in b.facts], b.tokens_used)
    assert [f["confidence"] for f in a.facts] == [f["confidence"] for f in b.facts] == [0.9, 1.0]
    assert embedded.neighbors("AuthService") == client.neighbors("AuthService")
    assert embedded.stats() == client.stats()
    embedded.close()
    client.close()


def test_engine_calls_release_the_gil(tmp_path):
    """While one thread is inside a long engine call, the main thread runs Python code: it
    records a time strictly between the call's start and end, which it could not do if the
    call held the GIL. Several threads querying at once get a sequential run's results."""
    db = engram.open(tmp_path / "db")
    db.query("UNWIND range(1, 1000) AS i CREATE (:N {i: i})")
    q = "MATCH (a:N), (b:N) WHERE a.i < 300 AND b.i < 300 RETURN count(*)"
    want = db.query(q).rows
    span = {}

    def call():
        span["start"] = time.perf_counter()
        span["rows"] = db.query(q).rows
        span["end"] = time.perf_counter()

    t = threading.Thread(target=call)
    seen = []
    t.start()
    while t.is_alive():
        seen.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    assert span["rows"] == want
    # Python code runs around the engine call (before and after it, within the span); the middle
    # half of the span is the engine's alone.
    d = span["end"] - span["start"]
    inside = [x for x in seen if span["start"] + d / 4 < x < span["end"] - d / 4]
    assert d > 0.05, "the query is long enough to tell"
    assert inside, "the main thread ran while the engine worked"
    got = []
    threads = [threading.Thread(target=lambda: got.append(db.query(q).rows)) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert got == [want] * 3
    db.close()
