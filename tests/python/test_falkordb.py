"""falkordb-py, unchanged, against `engram serve`: a graph key is a workspace; results in the
compact format with label, type and key ids resolved by the client through db.labels() & co."""

import json

import pytest
import redis
from falkordb import FalkorDB


@pytest.fixture
def db(server):
    return FalkorDB(host=server.host, port=server.port)


def test_create_and_read_back_nodes_and_edges(db):
    g = db.select_graph("social")
    res = g.query("CREATE (:Person {name: 'Ann', age: 30})-[:KNOWS {since: 2020}]->(:Person:Admin {name: 'Bob'})")
    assert res.nodes_created == 2 and res.relationships_created == 1 and res.properties_set == 4
    res = g.query("MATCH (a:Person)-[r:KNOWS]->(b) RETURN a, r, b ORDER BY a.name")
    a, r, b = res.result_set[0]
    assert a.labels == ["Person"] and a.properties == {"name": "Ann", "age": 30}
    assert r.relation == "KNOWS" and r.properties == {"since": 2020}
    assert r.src_node == a.id and r.dest_node == b.id
    assert sorted(b.labels) == ["Admin", "Person"] and b.properties == {"name": "Bob"}
    path = g.query("MATCH p = (:Person {name: 'Ann'})-->() RETURN p").result_set[0][0]
    assert [n.properties["name"] for n in path.nodes()] == ["Ann", "Bob"]
    assert path.edges()[0].relation == "KNOWS"


def test_shortest_paths_in_falkordbs_form_and_neo4js(db):
    """FalkorDB's clients write `shortestPath` as a value in WITH/RETURN; Neo4j's in MATCH."""
    g = db.select_graph("paths")
    g.query(
        "CREATE (a:P {name: 'a'})-[:R]->(b:P {name: 'b'})-[:R]->(c:P {name: 'c'}), (a)-[:R]->(d:P {name: 'd'})-[:R]->(c)"
    )
    res = g.query(
        "MATCH (a:P {name: 'a'}), (c:P {name: 'c'}) WITH shortestPath((a)-[:R*1..5]->(c)) AS p RETURN p, length(p)"
    )
    path, length = res.result_set[0]
    assert length == 2 and len(path.edges()) == 2
    assert path.nodes()[0].properties["name"] == "a" and path.nodes()[-1].properties["name"] == "c"
    res = g.query("MATCH p = allShortestPaths((a:P {name: 'a'})-[:R*]->(c:P {name: 'c'})) RETURN [n IN nodes(p) | n.name]")
    assert sorted(r[0] for r in res.result_set) == [["a", "b", "c"], ["a", "d", "c"]]
    res = g.query("MATCH (c:P {name: 'c'}), (a:P {name: 'a'}) RETURN shortestPath((c)-[:R*]->(a))")
    assert res.result_set == [[None]]


def test_quantified_groups_and_type_expressions_over_the_wire(db):
    """Neo4j 5's forms through FalkorDB's client: a group's variables come back as lists of
    nodes and relationships resolved like any other; `[:!T]` leaves one type out."""
    g = db.select_graph("groups")
    g.query("CREATE (:Stop {n: 1, at: 10})-[:NEXT]->(:Stop {n: 2, at: 20})-[:NEXT]->(:Stop {n: 3, at: 15})-[:WALK]->(:Stop {n: 4, at: 30})")
    res = g.query(
        "MATCH (a:Stop {n: $n}) ((x)-[r]->(y) WHERE y.at > x.at){1,3} (b) RETURN x, r, b.n ORDER BY b.n", {"n": 1}
    )
    assert [row[2] for row in res.result_set] == [2]
    x, r, _ = res.result_set[0]
    assert [n.properties["n"] for n in x] == [1] and [e.relation for e in r] == ["NEXT"]
    res = g.query("MATCH (a:Stop {n: 3}) ((x)-[:NEXT|WALK]->(y)){1,2} (b) RETURN [s IN y | s.n]")
    assert res.result_set == [[[4]]]
    res = g.query("MATCH ()-[r:!NEXT]->() RETURN type(r), count(*)")
    assert res.result_set == [["WALK", 1]]
    shape = g.query("CALL db.schema.relTypeProperties() YIELD relType RETURN relType ORDER BY relType")
    assert shape.result_set == [[":`NEXT`"], [":`WALK`"]]


def test_falkordbs_own_functions(db):
    """Queries written for FalkorDB use its function extensions: they answer as it documents."""
    g = db.select_graph("functions")
    g.query("CREATE (:Doc {name: 'a', tags: ['x', 'y', 'x']})-[:CITES {w: 2}]->(:Doc {name: 'b'})")
    res = g.query(
        "MATCH (a:Doc {name: 'a'})-[r]->(b) RETURN typeOf(a), typeOf(r), hasLabels(a, ['Doc']), list.dedup(a.tags), "
        "list.sort(a.tags, false), string.join(a.tags, '+'), outdegree(a), indegree(a), toJSON(r)"
    )
    row = res.result_set[0]
    assert row[:8] == ["Node", "Edge", True, ["x", "y"], ["y", "x", "x"], "x+y+x", 1, 0]
    edge = json.loads(row[8])
    assert edge["type"] == "relationship" and edge["relationship"] == "CITES" and edge["properties"] == {"w": 2}
    assert edge["start"]["properties"]["name"] == "a" and edge["end"]["labels"] == ["Doc"]
    stats = g.query("CALL db.meta.stats()").result_set[0]
    assert stats[:4] == [{"Doc": 2}, {"CITES": 1}, 1, 2]
    ranked = g.query("CALL algo.pageRank('Doc', NULL) YIELD node, score RETURN node.name, score").result_set
    assert [r[0] for r in ranked] == ["b", "a"] and abs(sum(r[1] for r in ranked) - 1.0) < 1e-9
    reached = g.query("MATCH (a:Doc {name: 'a'}) CALL algo.BFS(a, 0, NULL) YIELD nodes, edges RETURN nodes, edges").result_set
    assert [n.properties["name"] for n in reached[0][0]] == ["b"] and reached[0][1][0].relation == "CITES"
    # The weighted path procedures: a path cell and two floats, the lighter of two routes.
    g.query("MATCH (a:Doc {name: 'a'}), (b:Doc {name: 'b'}) CREATE (b)-[:CITES {w: 1}]->(:Doc {name: 'c'})<-[:CITES {w: 9}]-(a)")
    best = g.query(
        "MATCH (a:Doc {name: 'a'}), (c:Doc {name: 'c'}) "
        "CALL algo.SPpaths({sourceNode: a, targetNode: c, relTypes: ['CITES'], weightProp: 'w'}) "
        "YIELD path, pathWeight, pathCost RETURN path, pathWeight, pathCost"
    ).result_set
    path, weight, cost = best[0]
    assert [n.properties["name"] for n in path.nodes()] == ["a", "b", "c"] and (weight, cost) == (3.0, 2.0)
    ranked = g.query(
        "MATCH (a:Doc {name: 'a'}) CALL algo.SSpaths({sourceNode: a, weightProp: 'w', pathCount: 3}) "
        "YIELD path, pathWeight RETURN [n IN nodes(path) | n.name], pathWeight"
    ).result_set
    assert ranked == [[["a", "b"], 2.0], [["a", "b", "c"], 3.0], [["a", "c"], 9.0]]
    central = g.query("CALL algo.betweenness() YIELD node, score RETURN node.name, score ORDER BY node.name").result_set
    assert central == [["a", 0.0], ["b", 0.0], ["c", 0.0]]
    communities = g.query("CALL algo.labelPropagation() YIELD node, communityId RETURN node.name, communityId").result_set
    assert len(communities) == 3 and len({c for _, c in communities}) == 1 and isinstance(communities[0][1], int)


def test_parameters_of_every_kind(db):
    g = db.select_graph("params")
    params = {
        "s": 'quote " and \\ backslash\nnewline\ttab',
        "i": 42,
        "f": 1e-05,
        "t": True,
        "fa": False,
        "n": None,
        "l": [1, "two", 3.5, None],
        "m": {"k": "v", "nested": [1, 2]},
    }
    res = g.query("RETURN $s, $i, $f, $t, $fa, $n, $l, $m", params)
    assert res.result_set[0] == [params["s"], 42, 1e-05, True, False, None, [1, "two", 3.5, None], {"k": "v", "nested": [1, 2]}]


def test_ro_query_refuses_writes_and_creates_nothing(db):
    g = db.select_graph("ro")
    with pytest.raises(redis.ResponseError, match="read-only"):
        g.ro_query("CREATE (:X)")
    assert "ro" not in db.list_graphs()
    g.query("CREATE (:X {v: 1})")
    assert g.ro_query("MATCH (x:X) RETURN x.v").result_set == [[1]]
    with pytest.raises(redis.ResponseError, match="read-only"):
        g.ro_query("MATCH (x:X) SET x.v = 2")
    assert g.ro_query("MATCH (x:X) RETURN x.v").result_set == [[1]]


def test_list_delete_explain_and_errors(db):
    g = db.select_graph("life")
    g.query("CREATE (:A)-[:R]->(:B)")
    assert "life" in db.list_graphs()
    plan = g.explain("MATCH (a:A)-->(b) RETURN b")
    assert "NodeByLabelScan" in str(plan)
    with pytest.raises(redis.ResponseError, match="SyntaxError"):
        g.query("MATCH (a RETURN a")
    g.delete()
    assert "life" not in db.list_graphs()
    with pytest.raises(redis.ResponseError):
        db.select_graph("never").delete()


def test_index_statements_count_and_plans_say_when_they_were_cached(db):
    """`Indices created` / `Indices deleted` count each property declared or dropped, as
    falkordb-py's `create_node_range_index` and `drop_node_range_index` read them; `Cached
    execution` says whether the plan came from the cache (first run of a text: 0, again: 1)."""
    g = db.select_graph("schema")
    g.query("CREATE (:Doc {title: 'a'})")
    res = g.create_node_range_index("Doc", "title", "year")
    assert res.indices_created == 2 and res.indices_deleted == 0
    with pytest.raises(redis.ResponseError, match="already indexed"):
        g.create_node_range_index("Doc", "title")
    res = g.drop_node_range_index("Doc", "year")
    assert res.indices_deleted == 1 and res.indices_created == 0
    assert [r[1] for r in g.ro_query("CALL db.indexes()").result_set] == [["title"]]
    text = "MATCH (d:Doc) WHERE d.title = $t RETURN count(d) /* schema-cached */"
    first = g.query(text, {"t": "a"})
    again = g.query(text, {"t": "b"})
    assert first.result_set == [[1]] and again.result_set == [[0]]
    assert first.cached_execution is False and again.cached_execution is True
    w = "CREATE (:Doc {title: $t}) /* schema-cached write */"
    assert g.query(w, {"t": "c"}).cached_execution is False and g.query(w, {"t": "d"}).cached_execution is True


def test_slowlog_lists_a_graphs_slowest_queries_without_parameter_values(db):
    """`GRAPH.SLOWLOG key` (falkordb-py's `slowlog()`): at most ten entries, slowest first, each
    `[unix seconds, command, query, milliseconds]`, only the key's query commands, the text
    without its `CYPHER` header (no parameter value); `slowlog_reset()` empties it, not SLOWLOG."""
    db.connection.config_set("slowlog-log-slower-than", 0)
    g, other = db.select_graph("slow"), db.select_graph("elsewhere")
    g.query("UNWIND range(1, 20000) AS i CREATE (:N {i: i})")
    for i in range(12):
        g.query("MATCH (n:N) WHERE n.i > $lo RETURN count(n)", {"lo": 7770000 + i})
    other.query("CREATE (:Other)")
    log = g.slowlog()
    assert 1 <= len(log) <= 10
    assert [e[0] for e in log if not e[0].isdigit()] == []
    assert all(e[1] in ("GRAPH.QUERY", "GRAPH.RO_QUERY") for e in log)
    assert all("Other" not in e[2] and "777" not in e[2] and "CYPHER" not in e[2] for e in log)
    times = [float(e[3]) for e in log]
    assert times == sorted(times, reverse=True)
    assert log[0][2] == "UNWIND range(1, 20000) AS i CREATE (:N {i: i})", log[0]
    assert any(e[2] == "MATCH (n:N) WHERE n.i > $lo RETURN count(n)" for e in log)
    g.slowlog_reset()
    assert g.slowlog() == []
    assert any("UNWIND range" in str(e["command"]) for e in db.connection.slowlog_get(200)), "SLOWLOG keeps them"
    assert other.slowlog()[0][2] == "CREATE (:Other)"
    g.query("RETURN 1")
    assert [e[2] for e in g.slowlog()] == ["RETURN 1"]
    with pytest.raises(redis.ResponseError, match="Unknown subcommand"):
        db.connection.execute_command("GRAPH.SLOWLOG", "slow", "NOPE")


def running_queries(conn, *sections):
    """`GRAPH.INFO`'s reply as {section title: [record as a dict]}."""
    reply = conn.execute_command("GRAPH.INFO", *sections)
    return {reply[i]: [dict(zip(r[::2], r[1::2])) for r in reply[i + 1]] for i in range(0, len(reply), 2)}


def test_graph_info_lists_the_queries_running_now(db):
    """`GRAPH.INFO [RunningQueries] [WaitingQueries]` (FalkorDB's; its clients count it read-only):
    a query shows while it runs, as FalkorDB shows it (received in Unix ms, graph, text without its
    `CYPHER` header, milliseconds so far, replicated 0), and is gone once answered."""
    import threading
    import time

    from conftest import wait_until

    g = db.select_graph("busy")
    g.query("UNWIND range(1, 3000) AS i CREATE (:N {i: i})")
    slow = "MATCH (a:N), (b:N) WHERE a.i * b.i = $x RETURN count(*)"
    answers = []
    worker = threading.Thread(target=lambda: answers.append(g.query(slow, {"x": 7770001}, timeout=120000).result_set))
    before = int(time.time() * 1000)
    worker.start()
    try:
        wait_until(lambda: any(r["Query"] == slow for r in running_queries(db.connection)["# Running queries"]), timeout=60)
        info = running_queries(db.connection)
        assert set(info) == {"# Running queries", "# Waiting queries"}
        (mine,) = [r for r in info["# Running queries"] if r["Query"] == slow]
        assert mine["Graph name"] == "busy" and mine["Replicated command"] == 0
        assert before - 1000 <= mine["Received at"] <= int(time.time() * 1000)
        assert float(mine["Execution duration"]) >= 0
        assert "7770001" not in repr(info) and "CYPHER" not in repr(info)
        assert list(running_queries(db.connection, "RunningQueries")) == ["# Running queries"]
        assert list(running_queries(db.connection, "waitingqueries")) == ["# Waiting queries"]
    finally:
        worker.join(120)
    assert answers == [[[0]]]
    assert not any(r["Query"] == slow for r in running_queries(db.connection)["# Running queries"])
    assert db.connection.execute_command("GRAPH.INFO", "Nope") == "no section found"


def memory_usage(conn, key, *more):
    reply = conn.execute_command("GRAPH.MEMORY", "USAGE", key, *more)
    return reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2]))


def test_graph_memory_usage_reports_a_graphs_share(db):
    """`GRAPH.MEMORY USAGE key [SAMPLES n]` (FalkorDB's): the graph's heap in MB by FalkorDB's
    parts, the total their sum; its own strings and properties counted, another graph's not."""
    conn = db.connection
    g, other = db.select_graph("mem"), db.select_graph("mem-other")
    g.query("CREATE (:N)")
    small = memory_usage(conn, "mem")
    parts = ["label_matrices_sz_mb", "relation_matrices_sz_mb", "amortized_node_storage_sz_mb", "amortized_edge_storage_sz_mb", "indices_sz_mb"]
    assert set(small) == {"total_graph_sz_mb", "total_graph_sz_bytes", *parts}
    assert small["total_graph_sz_mb"] == 0 and 0 < small["total_graph_sz_bytes"] < 1 << 20
    g.query("UNWIND range(1, 3000) AS i CREATE (:N {i: i, s: $big})-[:R {t: $big}]->(:M)", {"big": "x" * 1000})
    big = memory_usage(conn, "mem", "SAMPLES", 100)
    assert big["total_graph_sz_bytes"] >= 6_000_000, big
    assert big["amortized_node_storage_sz_mb"] >= 2 and big["amortized_edge_storage_sz_mb"] >= 2, big
    assert big["total_graph_sz_mb"] == sum(big[p] for p in parts)
    other.query("UNWIND range(1, 3000) AS i CREATE (:N {s: $big})", {"big": "y" * 2000})
    after = memory_usage(conn, "mem")
    assert abs(after["total_graph_sz_bytes"] - big["total_graph_sz_bytes"]) < big["total_graph_sz_bytes"] // 10, (big, after)
    assert memory_usage(conn, "mem-other")["amortized_node_storage_sz_mb"] >= 5
    for args, says in [
        (("GRAPH.MEMORY", "USAGE", "nope"), "empty key"),
        (("GRAPH.MEMORY", "USED", "mem"), "unknown subcommand 'USED'"),
        (("GRAPH.MEMORY", "USAGE", "mem", "SAMPLE", 5), "unknown subcommand 'SAMPLE'"),
        (("GRAPH.MEMORY", "USAGE", "mem", "SAMPLES", -1), "non-negative"),
        (("GRAPH.MEMORY", "USAGE"), "wrong number of arguments"),
    ]:
        with pytest.raises(redis.ResponseError, match=says):
            conn.execute_command(*args)


def test_constraints_through_falkordbs_client_hold_on_every_write(db):
    """falkordb-py's constraint calls (`GRAPH.CONSTRAINT`, `db.constraints()`): a unique or
    mandatory constraint is checked against the stored data when declared and on every write
    after it; a write that breaks one is refused whole; dropping it lifts it."""
    g = db.select_graph("people")
    g.query("CREATE (:P {email: 'a@x', name: 'Ann'}), (:P {email: 'b@x', name: 'Bob'})")
    assert g.create_node_unique_constraint("P", "email") == "OK"
    assert g.list_constraints() == [
        {"type": "UNIQUE", "label": "P", "properties": ["email"], "entitytype": "NODE", "status": "OPERATIONAL"}
    ]
    with pytest.raises(redis.ResponseError, match="same values"):
        g.query("CREATE (:P {email: 'c@x'}), (:P {email: 'a@x'})")
    with pytest.raises(redis.ResponseError, match="same values"):
        g.query("MATCH (p:P {name: 'Bob'}) SET p.email = 'a@x'")
    assert g.query("MATCH (p:P) RETURN p.email ORDER BY p.email").result_set == [["a@x"], ["b@x"]], "nothing written"
    # Mandatory: the data must meet it first; then every new P needs a name.
    g.query("CREATE (:P {email: 'd@x'})")
    with pytest.raises(redis.ResponseError, match="has no property `name`"):
        g.create_node_mandatory_constraint("P", "name")
    g.query("MATCH (p:P {email: 'd@x'}) SET p.name = 'Di'")
    g.create_node_mandatory_constraint("P", "name")
    with pytest.raises(redis.ResponseError, match="has no property `name`"):
        g.query("CREATE (:P {email: 'e@x'})")
    with pytest.raises(redis.ResponseError, match="has no property `name`"):
        g.query("MATCH (p:P {name: 'Ann'}) REMOVE p.name")
    g.query("CREATE (p:P {email: 'e@x'}) SET p.name = 'Eve'")
    # Relationships too.
    g.query("MATCH (a:P {name: 'Ann'}), (b:P {name: 'Bob'}) CREATE (a)-[:KNOWS {since: 1}]->(b)")
    g.create_edge_mandatory_constraint("KNOWS", "since")
    with pytest.raises(redis.ResponseError, match="has no property `since`"):
        g.query("MATCH (a:P {name: 'Bob'}), (b:P {name: 'Ann'}) CREATE (a)-[:KNOWS]->(b)")
    assert len(g.list_constraints()) == 3
    g.drop_node_unique_constraint("P", "email")
    g.query("CREATE (:P {email: 'a@x', name: 'Ann again'})")
    with pytest.raises(redis.ResponseError, match="same values"):
        g.create_node_unique_constraint("P", "email")
    with pytest.raises(redis.ResponseError, match="usage: GRAPH.CONSTRAINT"):
        db.connection.execute_command("GRAPH.CONSTRAINT", "CREATE", "people", "UNIQUE", "NODE", "P", "PROPERTIES", 2, "email")
    with pytest.raises(redis.ResponseError, match="no such constraint"):
        g.drop_node_unique_constraint("P", "email")


def test_copy_makes_a_graph_of_its_own(db):
    """falkordb-py's `Graph.copy` (`GRAPH.COPY src dst`): the copy reads as its source, is listed,
    changes apart from it, and a taken name or an unknown source is an error."""
    g = db.select_graph("orig")
    g.query("CREATE (:A {v: 1})-[:R {w: 2}]->(:B {v: [1.5, 2.5]})")
    c = g.copy("clone")
    assert c.name == "clone" and "clone" in db.list_graphs()
    text = "MATCH (a)-[r]->(b) RETURN labels(a), a.v, type(r), r.w, labels(b), b.v"
    assert c.ro_query(text).result_set == g.ro_query(text).result_set == [[["A"], 1, "R", 2, ["B"], [1.5, 2.5]]]
    c.query("MATCH (a:A) SET a.v = 9")
    assert g.ro_query("MATCH (a:A) RETURN a.v").result_set == [[1]]
    with pytest.raises(redis.ResponseError, match="already exists"):
        g.copy("clone")
    with pytest.raises(redis.ResponseError, match="unknown workspace"):
        db.select_graph("never").copy("other")
    assert "other" not in db.list_graphs()


def test_vocabulary_ids_are_dense_and_stable(db):
    g = db.select_graph("vocab")
    g.query("CREATE (:L1 {k1: 1})")
    g.query("CREATE (:L2 {k2: 2})-[:T1]->(:L1)")
    labels = [r[0] for r in g.ro_query("CALL db.labels()").result_set]
    assert labels == ["L1", "L2"]
    res = g.query("MATCH (n:L2)-[r]->(m) RETURN n, r, m")
    n, r, m = res.result_set[0]
    assert n.labels == ["L2"] and n.properties == {"k2": 2} and r.relation == "T1" and m.labels == ["L1"]


def test_float_lists_travel_as_vector_cells(db, server):
    """A list of floats only (vecf32's result) is FalkorDB's vector cell (type 12): one array of
    numbers; a mixed list stays a list of cells. falkordb-py reads both as Python lists."""
    g = db.select_graph("vectors")
    g.query("CREATE (:Doc {k: 'a', embedding: vecf32([1.0, 0.5])})")
    assert g.query("MATCH (d:Doc) RETURN d.embedding, [1, 2.5], []").result_set == [[[1.0, 0.5], [1, 2.5], []]]
    raw = redis.Redis(host=server.host, port=server.port, protocol=3).execute_command(
        "GRAPH.QUERY", "vectors", "MATCH (d:Doc) RETURN d.embedding, [1, 2.5]", "--compact"
    )
    vector, mixed = raw[1][0]
    assert vector == [12, [1.0, 0.5]]
    assert mixed[0] == 6 and [c[0] for c in mixed[1]] == [3, 5]


def test_temporal_values_read_as_pythons(db, server):
    """FalkorDB's temporal cells (13 date-time, 14 date, 15 time, 16 duration) carry epoch
    seconds, which falkordb-py turns into `datetime`, `date`, `time` and `relativedelta`; engram's
    own shape and the verbose form give the ISO 8601 text, offset and fraction kept."""
    from datetime import date, datetime, time, timezone

    from dateutil.relativedelta import relativedelta

    g = db.select_graph("temporal")
    g.query(
        "CREATE (:Event {at: datetime('2024-05-06T07:08:09+02:00'), day: date('1969-07-20'), "
        "t: time('10:30:15-01:00'), took: duration({days: 2, hours: 3})})"
    )
    at, day, t, took = g.query("MATCH (e:Event) RETURN e.at, e.day, e.t, e.took").result_set[0]
    assert at == datetime(2024, 5, 6, 5, 8, 9, tzinfo=timezone.utc)
    assert day == date(1969, 7, 20)
    assert t == time(11, 30, 15)
    assert took == relativedelta(days=2, hours=3)
    assert g.query("MATCH (e:Event) WHERE e.at > datetime('2024-01-01T00:00Z') RETURN count(e)").result_set == [[1]]
    raw = redis.Redis(host=server.host, port=server.port, protocol=3, decode_responses=True)
    verbose = raw.execute_command("GRAPH.QUERY", "temporal", "MATCH (e:Event) RETURN e.at, e.took + duration({minutes: 1})")
    assert verbose[1] == [["2024-05-06T07:08:09+02:00", "P2DT3H1M"]]
    mine = raw.execute_command("ENGRAM.QUERY", "temporal", "MATCH (e:Event) RETURN e.t, e.day.year")
    assert mine["rows"] == [["10:30:15-01:00", 1969]]
    with pytest.raises(redis.ResponseError, match="month 13"):
        raw.execute_command("GRAPH.QUERY", "temporal", "RETURN date({year: 2024, month: 13})")


def test_points_read_as_falkordbs(db, server):
    """FalkorDB's point tests through its client: a geographic point is cell 11, `[latitude,
    longitude]`, read as `{"latitude", "longitude"}` (in lists and properties too); `distance`
    in meters; the verbose form is FalkorDB's text. engram's other points travel as the map
    `point()` takes, and ENGRAM.QUERY gives every point so."""
    g = db.select_graph("points")
    g.query("CREATE (:N {name: 'home', loc: point({latitude: 32.070794860, longitude: 34.820751118})})")
    g.query("CREATE (:N {name: 'univ', loc: point({latitude: 30.621734079, longitude: -96.33775507}), v: [point({latitude: 32, longitude: 34})]})")
    res = g.query("MATCH (n:N) RETURN n.name, n.loc, n ORDER BY n.name").result_set
    assert res[0][0] == "home"
    assert res[0][1] == pytest.approx({"latitude": 32.070794860, "longitude": 34.820751118})
    assert res[1][2].properties["v"] == [{"latitude": 32.0, "longitude": 34.0}]
    # Near the kiosk (200 m): home only; every node beyond 0 m of Austin: both.
    kiosk = "point({latitude: 32.07011414663042, longitude: 34.82235394761603})"
    assert g.query(f"MATCH (n:N) WHERE distance(n.loc, {kiosk}) < 200 RETURN n.name").result_set == [["home"]]
    austin = "point({latitude: 30.274919961709788, longitude: -97.7403239617543})"
    assert g.query(f"MATCH (n:N) WHERE 0 < distance(n.loc, {austin}) RETURN n.name ORDER BY n.name").result_set == [["home"], ["univ"]]
    (lat, lon), = g.query("MATCH (n:N {name: 'home'}) RETURN n.loc.latitude, n.loc.longitude").result_set
    assert (lat, lon) == pytest.approx((32.070794860, 34.820751118))
    with pytest.raises(redis.ResponseError, match="latitude should be within"):
        g.query("RETURN point({latitude: 90.1, longitude: 20})")
    raw = redis.Redis(host=server.host, port=server.port, protocol=3, decode_responses=True)
    compact = raw.execute_command("GRAPH.QUERY", "points", "RETURN point({latitude: 32, longitude: 34}), point({x: 1, y: 2})", "--compact")
    geo, cartesian = compact[1][0]
    assert geo[0] == 11 and [float(c) for c in geo[1]] == [32.0, 34.0]
    assert cartesian[0] == 10 and cartesian[1][0::2] == ["crs", "x", "y"]
    assert g.query("RETURN point({x: 1, y: 2, z: 3})").result_set == [[{"crs": "cartesian-3d", "x": 1.0, "y": 2.0, "z": 3.0}]]
    verbose = raw.execute_command("GRAPH.QUERY", "points", "RETURN point({latitude: 32, longitude: 34}), point({x: 1, y: 2})")
    assert verbose[1] == [["point({latitude:32.000000, longitude:34.000000})", "point({x: 1.0, y: 2.0, crs: 'cartesian'})"]]
    mine = raw.execute_command("ENGRAM.QUERY", "points", "MATCH (n:N {name: 'univ'}) RETURN n.v[0], typeOf(n.v[0])")
    assert mine["rows"] == [[{"crs": "wgs-84", "longitude": 34.0, "latitude": 32.0}, "Point"]]
    two = redis.Redis(host=server.host, port=server.port, protocol=2, decode_responses=True)
    mine = two.execute_command("ENGRAM.QUERY", "points", "RETURN point({x: 1, y: 2})", "PARAMS", json.dumps({}))
    assert mine[3] == [[["crs", "cartesian", "x", "1.0", "y", "2.0"]]]


def test_graphiti_style_reads_use_the_property_index(db):
    """The reads Graphiti sends by uuid, by a list of uuids, by a date range (ISO text) and by
    name, over falkordb-py's parameter header: the same rows as before, found through the
    property index (EXPLAIN names the lookups), and the subquery expressions LLM-written Cypher
    uses."""
    g = db.select_graph("graphiti")
    g.query("CREATE INDEX FOR (n:Entity) ON (n.uuid, n.group_id, n.name, n.created_at)")
    for i in range(6):
        data = {"uuid": f"u{i}", "name": f"Name {i}", "group_id": "g", "valid_at": f"2024-05-0{i + 1}T00:00:00Z"}
        g.query("MERGE (n:Entity {uuid: $entity_data.uuid}) SET n = $entity_data RETURN n.uuid AS uuid", {"entity_data": data})
    g.query(
        "MATCH (a:Entity {uuid: $a}), (b:Entity {uuid: $b}) MERGE (a)-[e:RELATES_TO {uuid: $e}]->(b) SET e.created_at = $at",
        {"a": "u0", "b": "u1", "e": "e0", "at": "2024-05-02T00:00:00Z"},
    )
    g.query(
        "MATCH (a:Entity {uuid: $a}), (b:Entity {uuid: $b}) MERGE (a)-[e:RELATES_TO {uuid: $e}]->(b) SET e.created_at = $at",
        {"a": "u2", "b": "u3", "e": "e1", "at": "2024-05-04T00:00:00Z"},
    )
    by_list = "MATCH (n:Entity) WHERE n.uuid IN $uuids RETURN n.uuid ORDER BY n.uuid"
    assert g.ro_query(by_list, {"uuids": ["u4", "u1", "nope"]}).result_set == [["u1"], ["u4"]]
    since = "MATCH (n:Entity) WHERE n.valid_at >= $since AND n.valid_at < $until RETURN n.uuid ORDER BY n.uuid"
    assert g.ro_query(since, {"since": "2024-05-03", "until": "2024-05-05"}).result_set == [["u2"], ["u3"]]
    edges = "MATCH (n:Entity)-[e:RELATES_TO]->(m:Entity) WHERE e.uuid IN $uuids RETURN n.uuid, e.uuid, m.uuid"
    assert g.ro_query(edges, {"uuids": ["e1"]}).result_set == [["u2", "e1", "u3"]]
    recent = "MATCH (n:Entity)-[e:RELATES_TO]->(m:Entity) WHERE e.created_at > $t RETURN e.uuid"
    assert g.ro_query(recent, {"t": "2024-05-03"}).result_set == [["e1"]]
    assert g.ro_query("MATCH (n:Entity {name: $n}) RETURN n.uuid", {"n": "Name 5"}).result_set == [["u5"]]
    degree = "MATCH (n:Entity) WHERE COUNT { (n)-[:RELATES_TO]-() } > 0 RETURN n.uuid, COLLECT { MATCH (n)-->(m) RETURN m.uuid } ORDER BY n.uuid"
    assert g.ro_query(degree).result_set == [["u0", ["u1"]], ["u1", []], ["u2", ["u3"]], ["u3", []]]
    for query, operator in [
        (by_list, "NodeByPropertyLookup"),
        (since, "NodeByPropertyRange"),
        (edges, "RelationshipByPropertyLookup"),
        (recent, "RelationshipByPropertyLookup"),
        ("MATCH (n:Entity {name: 'x'}) RETURN n", "NodeByPropertyLookup"),
    ]:
        assert operator in str(g.explain(query, {"uuids": [], "since": "", "until": "", "t": ""})), query


def test_load_csv_in_transactions_over_the_wire(db, server):
    """Neo4j's import idiom through falkordb-py: `LOAD CSV … CALL { … } IN TRANSACTIONS OF n ROWS`,
    sent alone (not in a commit group) and run as one transaction per batch; a failing batch keeps
    the ones before it, and the error says so."""
    folder = server.folder / "import"
    folder.mkdir(exist_ok=True)
    (folder / "people.csv").write_text("name,team\n" + "".join(f"p{i},t{i % 3}\n" for i in range(250)))
    g = db.select_graph("imports")
    res = g.query(
        "LOAD CSV WITH HEADERS FROM 'file://people.csv' AS row "
        "CALL { WITH row MERGE (t:Team {name: row.team}) CREATE (:Person {name: row.name})-[:IN]->(t) } IN TRANSACTIONS OF 100 ROWS"
    )
    assert res.nodes_created == 253 and res.relationships_created == 250
    assert g.query("MATCH (:Person)-[:IN]->(t:Team) RETURN t.name, count(*) ORDER BY t.name").result_set == [["t0", 84], ["t1", 83], ["t2", 83]]
    with pytest.raises(redis.ResponseError, match="the 2 batches before this one are committed"):
        g.query("UNWIND range(1, 7) AS i CALL (i) { CREATE (:N {v: 10 / (i - 5)}) } IN TRANSACTIONS OF 2 ROWS")
    assert g.query("MATCH (n:N) RETURN count(n)").result_set == [[4]]
    # Pipelined with other writes, it still runs alone, in order.
    r = redis.Redis(host=server.host, port=server.port, protocol=3, decode_responses=True)
    pipe = r.pipeline(transaction=False)
    pipe.execute_command("GRAPH.QUERY", "imports", "CREATE (:Before)")
    pipe.execute_command("GRAPH.QUERY", "imports", "MATCH (b:Before) UNWIND range(1, 5) AS i CALL (i) { CREATE (:Batched {i: i}) } IN TRANSACTIONS OF 2 ROWS")
    pipe.execute_command("GRAPH.QUERY", "imports", "MATCH (x:Batched) CREATE (:After {seen: x.i})")
    pipe.execute()
    assert g.query("MATCH (a:After) RETURN count(a)").result_set == [[5]]
