"""The FalkorDB integrations of the agent frameworks, unchanged, against `engram serve`: each used
through its own public API, with no LLM (nothing here calls one)."""

import os
import types
import warnings

import pytest

from conftest import Server

warnings.filterwarnings("ignore", category=DeprecationWarning)


@pytest.fixture
def server(tmp_path):
    """`engram serve` (started here); with `FALKORDB_URL=redis://…` set, that server instead, emptied
    first (FLUSHALL): the same tests against FalkorDB itself are how their expectations were checked."""
    url = os.environ.get("FALKORDB_URL")
    if url:
        import redis

        redis.Redis.from_url(url).flushall()
        yield types.SimpleNamespace(url=url)
        return
    s = Server(tmp_path / "served")
    yield s
    s.stop()


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


# -- Graphiti (FalkorDriver), with a stub LLM, embedder and cross-encoder ------------------------


def _graphiti(server, group):
    import hashlib
    import math
    import os
    import typing

    os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
    from graphiti_core import Graphiti
    from graphiti_core.cross_encoder.client import CrossEncoderClient
    from graphiti_core.driver.falkordb_driver import FalkorDriver
    from graphiti_core.embedder.client import EmbedderClient
    from graphiti_core.llm_client.client import LLMClient
    from graphiti_core.llm_client.config import LLMConfig

    def vector(text, dims=64):
        v = [0.0] * dims
        for w in str(text).lower().split():
            v[int(hashlib.sha256(w.strip("?.,").encode()).hexdigest(), 16) % dims] += 1.0
        n = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / n for x in v]

    class Embedder(EmbedderClient):
        async def create(self, input_data):
            return vector(input_data)

        async def create_batch(self, input_data_list):
            return [vector(x) for x in input_data_list]

    class CrossEncoder(CrossEncoderClient):
        async def rank(self, query, passages):
            return [(p, 1.0 / (i + 1)) for i, p in enumerate(passages)]

    class NoLLM(LLMClient):
        """Answers every structured prompt with the empty answer: nothing extracted, nothing
        deduplicated (the test exercises the graph, not a model)."""

        def __init__(self):
            super().__init__(LLMConfig(api_key="unused"), cache=False)

        async def _generate_response(self, messages, response_model=None, max_tokens=0, model_size=None, **kw):
            out = {}
            for name, field in (response_model.model_fields if response_model else {}).items():
                ann = field.annotation
                out[name] = [] if typing.get_origin(ann) is list else "" if ann is str else None
            return out

    host, port = server.url.removeprefix("redis://").rsplit(":", 1)
    driver = FalkorDriver(host=host, port=int(port), database=group)
    return Graphiti(graph_driver=driver, llm_client=NoLLM(), embedder=Embedder(), cross_encoder=CrossEncoder())


def test_graphiti_triplets_search_crud_and_episodes(server):
    import asyncio
    from datetime import datetime, timedelta, timezone

    from graphiti_core.edges import EntityEdge
    from graphiti_core.errors import EdgeNotFoundError, NodeNotFoundError
    from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode

    async def run():
        g = _graphiti(server, "grp")
        await g.build_indices_and_constraints()
        await g.build_indices_and_constraints()  # twice, as Graphiti does on every start
        now = datetime.now(timezone.utc)
        alice = EntityNode(name="Alice", group_id="grp", labels=["Entity", "Person"], summary="Alice is an engineer", created_at=now)
        acme = EntityNode(name="Acme", group_id="grp", labels=["Entity"], created_at=now)
        works = EntityEdge(source_node_uuid=alice.uuid, target_node_uuid=acme.uuid, name="WORKS_AT", fact="Alice works at Acme", group_id="grp", created_at=now, valid_at=now)
        added = await g.add_triplet(alice, works, acme)
        assert sorted(n.name for n in added.nodes) == ["Acme", "Alice"] and [e.fact for e in added.edges] == ["Alice works at Acme"]
        bob = EntityNode(name="Bob", group_id="grp", labels=["Entity"], created_at=now)
        likes = EntityEdge(source_node_uuid=bob.uuid, target_node_uuid=acme.uuid, name="LIKES", fact="Bob likes hiking in the Alps", group_id="grp", created_at=now, valid_at=now)
        await g.add_triplet(bob, likes, acme)
        # Search: hybrid (full-text + vector + graph) over the facts.
        found = await g.search("where does Alice work?", group_ids=["grp"])
        assert found and found[0].fact == "Alice works at Acme"
        assert "Bob likes hiking in the Alps" in [e.fact for e in await g.search("hiking", group_ids=["grp"])]
        # Node CRUD.
        node = await EntityNode.get_by_uuid(g.driver, alice.uuid)
        assert (node.name, node.summary, "Person" in node.labels) == ("Alice", "Alice is an engineer", True)
        # The embedding went in as vecf32 and reads back.
        await node.load_name_embedding(g.driver)
        assert len(node.name_embedding) == 64 and abs(sum(x * x for x in node.name_embedding) - 1.0) < 1e-5
        node.summary = "Alice leads the platform team"
        await node.save(g.driver)
        assert (await EntityNode.get_by_uuid(g.driver, alice.uuid)).summary == "Alice leads the platform team"
        assert {n.name for n in await EntityNode.get_by_group_ids(g.driver, ["grp"])} == {"Alice", "Acme", "Bob"}
        # Edge CRUD.
        edge = await EntityEdge.get_by_uuid(g.driver, works.uuid)
        assert (edge.fact, edge.source_node_uuid, edge.target_node_uuid) == ("Alice works at Acme", alice.uuid, acme.uuid)
        assert {e.uuid for e in await EntityEdge.get_by_node_uuid(g.driver, acme.uuid)} == {works.uuid, likes.uuid}
        await edge.delete(g.driver)
        try:
            await EntityEdge.get_by_uuid(g.driver, works.uuid)
            raise AssertionError("the edge was deleted")
        except EdgeNotFoundError:
            pass
        await (await EntityNode.get_by_uuid(g.driver, bob.uuid)).delete(g.driver)
        try:
            await EntityNode.get_by_uuid(g.driver, bob.uuid)
            raise AssertionError("the node was deleted")
        except NodeNotFoundError:
            pass
        # Episodes: saved, listed by time, read back; add_episode with nothing extracted.
        episode = EpisodicNode(
            name="standup", group_id="grp", source=EpisodeType.text, source_description="chat", content="Alice: shipping the release today", valid_at=now - timedelta(hours=1), created_at=now
        )
        await episode.save(g.driver)
        assert (await EpisodicNode.get_by_uuid(g.driver, episode.uuid)).content == "Alice: shipping the release today"
        result = await g.add_episode(name="retro", episode_body="Bob: the retro went well", source_description="chat", reference_time=now, group_id="grp")
        assert result.episode.name == "retro"
        recent = await g.retrieve_episodes(now + timedelta(minutes=1), last_n=5, group_ids=["grp"])
        assert [e.name for e in recent] == ["standup", "retro"]
        await g.remove_episode(episode.uuid)
        assert [e.name for e in await g.retrieve_episodes(now + timedelta(minutes=1), last_n=5, group_ids=["grp"])] == ["retro"]
        await g.close()

    asyncio.run(run())


def test_llamaindex_falkordb_property_graph_store(server):
    from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation
    from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters, VectorStoreQuery
    from llama_index.graph_stores.falkordb import FalkorDBPropertyGraphStore

    store = FalkorDBPropertyGraphStore(url=server.url, database="llama")
    ann = EntityNode(name="Ann", label="PERSON", properties={"age": 41}, embedding=[1.0, 0.0, 0.0])
    acme = EntityNode(name="Acme", label="ORG", properties={"city": "Oslo"}, embedding=[0.0, 1.0, 0.0])
    bob = EntityNode(name="Bob", label="PERSON", properties={"age": 29}, embedding=[0.0, 0.0, 1.0])
    chunk = ChunkNode(text="Ann works at Acme; Bob knows Ann.", id_="chunk-1")
    store.upsert_nodes([ann, acme, bob, chunk])
    store.upsert_relations(
        [
            Relation(label="WORKS_AT", source_id="Ann", target_id="Acme", properties={"since": 2020}),
            Relation(label="KNOWS", source_id="Bob", target_id="Ann"),
            Relation(label="MENTIONS", source_id="chunk-1", target_id="Ann"),
        ]
    )
    # get: by id, by property; the chunk too.
    assert [n.name for n in store.get(ids=["Ann"])] == ["Ann"]
    assert sorted(n.name for n in store.get(properties={"age": 29})) == ["Bob"]
    assert [n.text for n in store.get(ids=["chunk-1"])] == ["Ann works at Acme; Bob knows Ann."]
    # get_triplets runs a CALL { … UNION ALL … } per entity: both directions.
    triplets = store.get_triplets(entity_names=["Ann"])
    assert sorted((s.name, r.label, t.name) for s, r, t in triplets) == [("Ann", "WORKS_AT", "Acme"), ("Bob", "KNOWS", "Ann")]
    works = [r for _, r, _ in triplets if r.label == "WORKS_AT"][0]
    assert works.properties == {"since": 2020}
    assert sorted((s.name, t.name) for s, _, t in store.get_triplets(relation_names=["KNOWS"])) == [("Bob", "Ann"), ("Bob", "Ann")]
    # The graph around a node, two hops.
    paths = store.get_rel_map([store.get(ids=["Bob"])[0]], depth=2)
    assert ("Bob", "KNOWS", "Ann") in {(s.name, r.label, t.name) for s, r, t in paths}
    # Vector query: through the vector index it declared (db.idx.vector.queryNodes), and with a
    # filter, through vec.cosineDistance.
    nodes, scores = store.vector_query(VectorStoreQuery(query_embedding=[1.0, 0.1, 0.0], similarity_top_k=2))
    assert [n.name for n in nodes] == ["Ann", "Acme"] and scores[0] > scores[1] and abs(scores[0] - 0.995037) < 1e-5
    filters = MetadataFilters(filters=[MetadataFilter(key="age", value=30, operator=FilterOperator.LT)])
    nodes, _ = store.vector_query(VectorStoreQuery(query_embedding=[1.0, 0.1, 0.0], similarity_top_k=2, filters=filters))
    assert [n.name for n in nodes] == ["Bob"]
    # Structured queries and the schema.
    assert store.structured_query("MATCH (n:PERSON) RETURN n.name AS name ORDER BY name") == [{"name": "Ann"}, {"name": "Bob"}]
    schema = store.get_schema_str(refresh=True)
    assert "WORKS_AT" in schema and "PERSON" in schema
    # Delete by name: the entity and its relations go.
    store.delete(entity_names=["Acme"])
    assert store.get(ids=["Acme"]) == []
    assert [r.label for _, r, _ in store.get_triplets(entity_names=["Ann"])] == ["KNOWS"]
