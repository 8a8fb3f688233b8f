"""`engram.langgraph.EngramStore` on both back ends, with the cases of LangGraph's own store tests
(the sqlite store's file, ported): batch order, each op kind, namespaces, filters, pagination,
semantic search with per-field and per-put index paths, scores, updates, `index=False`,
injection-like values, non-ASCII, and the database's own embedder."""

import asyncio
import math
from collections import Counter

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from engram.langgraph import EngramStore


class LetterEmbeddings(Embeddings):
    """Deterministic embeddings: letter-bigram counts hashed into `dims`, normalised (texts that
    share letters are near; no model, no download)."""

    def __init__(self, dims: int = 64):
        self.dims = dims

    def _one(self, text: str) -> list[float]:
        v = [0.0] * self.dims
        t = f" {text.lower()} "
        for gram, n in Counter(t[i : i + 2] for i in range(len(t) - 1)).items():
            v[sum(ord(c) * 31**k for k, c in enumerate(gram)) % self.dims] += n
        norm = math.sqrt(sum(x * x for x in v))
        return [x / norm for x in v] if norm else v

    def embed_documents(self, texts):
        return [self._one(t) for t in texts]

    def embed_query(self, text):
        return self._one(text)


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.fixture
def store(mem):
    return EngramStore(mem)


@pytest.fixture
def vstore(mem):
    return EngramStore(mem, index={"dims": 64, "embed": LetterEmbeddings(), "fields": ["text"]})


def test_batch_keeps_the_order_of_its_operations(store):
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}),
            ListNamespacesOp(limit=10),
            GetOp(("test",), "key3"),
        ]
    )
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"} and results[0].namespace == ("test", "foo")
    assert results[1] is None
    assert [i.key for i in results[2]] == ["key1"]
    assert ("test", "foo") in results[3] and ("test", "bar") in results[3]
    assert results[4] is None
    # A put before a get in one batch is seen by the get.
    results = store.batch([PutOp(("test",), "key3", {"data": "value3"}), GetOp(("test",), "key3"), SearchOp(("test",), limit=5)])
    assert results[1].value == {"data": "value3"} and len(results[2]) == 3


def test_puts_gets_and_delete_by_none(store):
    assert store.batch([PutOp(("t",), "k1", {"d": 1}), PutOp(("t",), "k2", {"d": 2}), PutOp(("t",), "k3", None)]) == [None] * 3
    assert store.get(("t",), "k1").value == {"d": 1} and store.get(("t",), "k2").value == {"d": 2}
    assert store.get(("t",), "k3") is None
    first = store.get(("t",), "k1")
    store.put(("t",), "k1", {"d": "updated", "nested": {"a": [1, 2]}})
    again = store.get(("t",), "k1")
    assert again.value == {"d": "updated", "nested": {"a": [1, 2]}}
    assert again.created_at == first.created_at and again.updated_at >= first.updated_at
    assert store.get(("t", "other"), "k1") is None
    store.delete(("t",), "k1")
    assert store.get(("t",), "k1") is None


def test_search_narrows_by_namespace_filters_and_pages(store):
    data = [
        (("test", "docs"), "doc1", {"title": "First", "author": "Alice", "n": 1}),
        (("test", "docs"), "doc2", {"title": "Second", "author": "Bob", "n": 2}),
        (("test", "images"), "img1", {"title": "Image", "author": "Alice", "n": 3}),
        (("testing",), "other", {"title": "Not under test", "author": "Alice", "n": 4}),
    ]
    for ns, key, value in data:
        store.put(ns, key, value)
    assert len(store.search(("test",))) == 3, "('testing',) is not under ('test',)"
    assert {i.key for i in store.search(("test", "docs"))} == {"doc1", "doc2"}
    assert {i.key for i in store.search(("test",), filter={"author": "Alice"})} == {"doc1", "img1"}
    assert {i.key for i in store.search(("test",), filter={"n": {"$gt": 1}})} == {"doc2", "img1"}
    assert {i.key for i in store.search(("test",), filter={"n": {"$gte": 2, "$lt": 3}})} == {"doc2"}
    assert {i.key for i in store.search(("test",), filter={"author": {"$ne": "Alice"}})} == {"doc2"}
    assert {i.key for i in store.search(("test",), filter={"n": {"$lte": 1}, "author": "Alice"})} == {"doc1"}
    assert len(store.search(("test",), limit=2)) == 2 and len(store.search(("test",), offset=2)) == 1
    # Newest first without a query.
    assert [i.key for i in store.search(("test",))] == ["img1", "doc2", "doc1"]
    assert len(store.search(())) == 4


def test_values_that_look_like_injections_are_only_values(store):
    nasty = ["' OR '1'='1", '"; DROP TABLE items; --', "x') RETURN 1 //", "$ns", "}]->(", "\\u0000"]
    for i, v in enumerate(nasty):
        store.put(("inj",), f"k{i}", {"v": v, "k": v})
    for i, v in enumerate(nasty):
        assert store.get(("inj",), f"k{i}").value == {"v": v, "k": v}
        assert [x.key for x in store.search(("inj",), filter={"v": v})] == [f"k{i}"]
    assert store.search(("inj",), filter={"v": "' OR 1=1"}) == []


def test_non_ascii_namespaces_keys_and_values(store):
    store.put(("用户", "记忆"), "キー", {"text": "Grüße, 世界 🌍"})
    assert store.get(("用户", "记忆"), "キー").value == {"text": "Grüße, 世界 🌍"}
    assert store.list_namespaces(prefix=("用户",)) == [("用户", "记忆")]


def test_namespaces_are_checked(store):
    for bad in [("a.b",), ("",), ("langgraph", "x"), ()]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([GetOp(("a.b",), "k")])


def test_list_namespaces_with_conditions_depth_and_pages(store):
    for ns in [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]:
        store.put(ns, "dummy", {"content": "dummy"})
    assert len(store.list_namespaces()) == 6
    assert len(store.list_namespaces(prefix=("test",))) == 4
    assert {ns[-1] for ns in store.list_namespaces(suffix=("public",))} == {"public"} and len(store.list_namespaces(suffix=("public",))) == 3
    assert store.list_namespaces(prefix=("*", "documents")) == [("prod", "documents", "private"), ("prod", "documents", "public"), ("test", "documents", "private"), ("test", "documents", "public")]
    assert store.list_namespaces(max_depth=2) == [("prod", "documents"), ("test", "documents"), ("test", "images")]
    assert len(store.list_namespaces(limit=3)) == 3 and len(store.list_namespaces(offset=5)) == 1
    results = store.batch([ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("private",)),), limit=10)])
    assert all(ns[-1] == "private" for ns in results[0]) and len(results[0]) == 3


def test_semantic_search_ranks_by_the_indexed_field(vstore):
    docs = {"doc1": "short text", "doc2": "longer text document", "doc3": "longest text document here", "doc4": "zebra"}
    for key, text in docs.items():
        vstore.put(("test",), key, {"text": text})
    vstore.put(("test",), "doc5", {"description": "text in an unindexed field"})
    results = vstore.search(("test",), query="longest text document here")
    assert results[0].key == "doc3" and results[0].score == pytest.approx(1.0, abs=1e-5)
    assert [r.score for r in results if r.score is not None] == sorted([r.score for r in results if r.score is not None], reverse=True)
    assert results[-1].key == "doc5" and results[-1].score is None, "an item with no indexed text comes last"
    # The score is the cosine similarity, computed in the engine.
    e = LetterEmbeddings()
    want = cosine(e.embed_query("zebra crossing"), e.embed_query("zebra"))
    assert {r.key: r.score for r in vstore.search(("test",), query="zebra crossing")}["doc4"] == pytest.approx(want, abs=1e-5)


def test_updating_an_item_replaces_its_vectors_and_index_false_keeps_it_out(vstore):
    vstore.put(("test",), "doc1", {"text": "zany zebra xerxes"})
    vstore.put(("test",), "doc2", {"text": "something about dogs"})
    vstore.put(("test",), "doc3", {"text": "text about birds"})
    first = vstore.search(("test",), query="zany xerxes")
    assert first[0].key == "doc1"
    vstore.put(("test",), "doc1", {"text": "new text about dogs"})
    after = {r.key: r.score for r in vstore.search(("test",), query="zany xerxes")}
    assert after["doc1"] < first[0].score
    assert vstore.search(("test",), query="new text about dogs")[0].key == "doc1"
    vstore.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert "doc4" not in [r.key for r in vstore.search(("test",), query="new text about dogs", limit=3)]
    assert vstore.get(("test",), "doc4").value == {"text": "new text about dogs"}


def test_semantic_search_with_filters_and_pages(vstore):
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        vstore.put(("test",), key, value)
    assert [r.key for r in vstore.search(("test",), query="apple", filter={"color": "red"})] == ["doc1", "doc2"]
    assert vstore.search(("test",), query="car", filter={"color": "red"})[0].key == "doc2"
    hits = vstore.search(("test",), query="blue", filter={"score": {"$gt": 3.2}})
    assert {r.key for r in hits} == {"doc1", "doc3", "doc4"} and hits[0].key == "doc4"
    assert vstore.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})[0].key == "doc3"
    page1 = vstore.search(("test",), query="car", limit=2)
    page2 = vstore.search(("test",), query="car", limit=2, offset=2)
    assert len(page1) == len(page2) == 2 and not {r.key for r in page1} & {r.key for r in page2}
    assert page1[1].score >= page2[0].score


def test_odd_queries_still_answer(vstore):
    vstore.put(("test",), "doc1", {"text": "test document"})
    for q in ["", None, "test " * 100, "test!@#$%^&*()"]:
        assert len(vstore.search(("test",), query=q)) == 1


def test_index_paths_per_store_and_per_put(mem):
    store = EngramStore(mem, index={"dims": 64, "embed": LetterEmbeddings(), "fields": ["key0", "key1", "key3"]})
    store.put(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})
    store.put(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})
    hits = store.search(("test",), query="xxx")
    assert {r.key for r in hits} == {"doc1", "doc2"} and all(r.score > 0.99 for r in hits)
    assert store.search(("test",), query="uuu")[0].key == "doc2"
    assert store.search(("test",), query="zzz")[0].key == "doc1"
    assert all(r.score < 0.99 for r in store.search(("test",), query="www")), "key2 is not indexed"
    # Paths given with the put override the store's; nested paths and list wildcards work.
    store.put(("p",), "doc3", {"a": "aaa", "b": "bbb", "c": {"d": ["ddd", "eee"]}}, index=["a", "c.d[*]"])
    store.put(("p",), "doc4", {"a": "fff", "b": "ggg"}, index=["b"])
    assert store.search(("p",), query="eee")[0].key == "doc3"
    assert store.search(("p",), query="ggg")[0].key == "doc4"
    assert {r.key: r.score for r in store.search(("p",), query="bbb")}["doc3"] < 0.99


def test_the_databases_own_embedder(mem):
    """Without `embed`, the store uses the database's embedder (here `hash`): the same vectors
    `Memory.embed` gives."""
    store = EngramStore(mem, index={"fields": ["text"]})
    store.put(("m",), "a", {"text": "the cat sat on the mat"})
    store.put(("m",), "b", {"text": "quarterly revenue grew"})
    hits = store.search(("m",), query="the cat sat on the mat")
    assert hits[0].key == "a" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert len(mem.embed(["x", "y"])) == 2 and len(mem.embed(["x"])[0]) == len(mem.embed(["y"])[0]) > 0


def test_async_batch(store):
    async def run():
        await store.aput(("a",), "k", {"v": 1})
        return await store.aget(("a",), "k"), await store.asearch(("a",))

    item, found = asyncio.run(run())
    assert item.value == {"v": 1} and [i.key for i in found] == ["k"]


def test_items_live_in_their_own_workspace(mem):
    EngramStore(mem, workspace="lg").put(("x",), "k", {"v": 1})
    assert mem.query("MATCH (i:LgItem) RETURN count(i)", workspace="lg").rows == [(1,)]
    assert mem.query("MATCH (i:LgItem) RETURN count(i)").rows == [(0,)]
    assert EngramStore(mem, workspace="other").get(("x",), "k") is None
