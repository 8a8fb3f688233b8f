"""The FalkorDB integrations of the agent frameworks, unchanged, against `engram serve`: each used
through its own public API, with no LLM (nothing here calls one)."""

import warnings

import pytest

warnings.filterwarnings("ignore", category=DeprecationWarning)


def test_langchain_falkordb_graph(server):
    from langchain_community.graphs import FalkorDBGraph
    from langchain_community.graphs.graph_document import GraphDocument, Node, Relationship
    from langchain_core.documents import Document

    host, port = server.url.removeprefix("redis://").rsplit(":", 1)
    graph = FalkorDBGraph("movies", host=host, port=int(port))
    assert graph.query("CREATE (:Movie {title: 'Heat', year: 1995})-[:DIRECTED_BY {role: 'director'}]->(:Person {name: 'Michael Mann'})") == []
    assert graph.query("MATCH (m:Movie)-[:DIRECTED_BY]->(p) RETURN m.title, m.year, p.name") == [["Heat", 1995, "Michael Mann"]]
    assert graph.query("MATCH (m:Movie {title: $t}) RETURN m.year", {"t": "Heat"}) == [[1995]]
    graph.refresh_schema()
    schema = graph.get_structured_schema
    assert schema["node_props"] == {"Movie": ["title", "year"], "Person": ["name"]}
    assert schema["rel_props"] == {"DIRECTED_BY": ["role"]}
    assert [dict(r) for r in schema["relationships"]] == [{"start": "Movie", "type": "DIRECTED_BY", "end": "Person"}]
    assert "DIRECTED_BY" in graph.get_schema
    # Graph documents (an extractor's output) go in through MERGE.
    ann, acme = Node(id="Ann", type="Person"), Node(id="Acme", type="Company", properties={"city": "Oslo"})
    doc = GraphDocument(nodes=[ann, acme], relationships=[Relationship(source=ann, target=acme, type="WORKS_AT")], source=Document(page_content="Ann works at Acme"))
    graph.add_graph_documents([doc], include_source=True)
    graph.add_graph_documents([doc])
    assert graph.query("MATCH (p:Person {id: 'Ann'})-[:WORKS_AT]->(c:Company) RETURN c.id, c.city") == [["Acme", "Oslo"]]
    # Twice: MERGE keeps one of each.
    assert graph.query("MATCH (:Person)-[r:WORKS_AT]->(:Company) RETURN count(r)") == [[1]]
    assert graph.query("MATCH (n:Person) RETURN n.id ORDER BY n.id") == [["Ann"], [None]], "nulls sort last"
    with pytest.raises(ValueError, match="not valid"):
        graph.query("MATCH (n RETURN n")
