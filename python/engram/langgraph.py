"""`EngramStore`: LangGraph's `BaseStore` on engram, embedded or over RESP.

    import engram
    from engram.langgraph import EngramStore
    store = EngramStore(engram.open("./memory", embedder="static"), index={"fields": ["text"]})

Items are nodes `(:LgItem {ns, key, value, created_at, updated_at})` in one workspace (default
`langgraph`); `ns` is the namespace joined with `.` (a label may not hold one), `value` the item as
JSON text. With `index`, each indexed field's text has a vector on a node `(:LgVec {ns, key, path,
embedding})`, and a search with `query` ranks items by their best field's cosine similarity,
computed in the engine (`vec.cosineDistance`). The vectors come from `index["embed"]` (LangChain
`Embeddings` or a function, as every LangGraph store takes) or, without it, from the database's own
embedder (`Memory.embed`). A put is one transaction (the item and its vectors, all or nothing);
consecutive puts of one batch share it. Filters (`$eq $ne $gt $gte $lt $lte`, or a value to equal)
are applied to the items of the namespace prefix, after the engine has narrowed to it. No TTL."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from typing import Any, Iterable

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)
from langgraph.store.base import validate_op_namespace

from ._memory import Memory

__all__ = ["EngramStore"]

_PREFIX = "(i.ns = $ns OR i.ns STARTS WITH $under)"


class _EngineEmbeddings:
    """The database's embedder as LangChain's `Embeddings` interface."""

    def __init__(self, memory: Memory):
        self.memory = memory

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.memory.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.memory.embed([text])[0]


class EngramStore(BaseStore):
    """LangGraph's long-term memory store on an `engram.Memory` (see the module's text)."""

    supports_ttl = False

    def __init__(self, memory: Memory, *, workspace: str = "langgraph", index: IndexConfig | None = None):
        self.memory = memory
        self.workspace = workspace
        self.index_config = dict(index) if index is not None else None
        self.embeddings = None
        self._fields: list[tuple[str, list[str] | str]] = []
        if self.index_config is not None:
            embed = self.index_config.get("embed")
            self.embeddings = ensure_embeddings(embed) if embed is not None else _EngineEmbeddings(memory)
            fields = self.index_config.get("fields") or self.index_config.get("text_fields") or ["$"]
            self.index_config["fields"] = fields
            self._fields = [(f, tokenize_path(f) if f != "$" else "$") for f in fields]

    # -- BaseStore --------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        pending: list[PutOp] = []
        for i, op in enumerate(ops):
            validate_op_namespace(op)
            if isinstance(op, PutOp):
                pending.append(op)
                continue
            self._flush(pending)
            if isinstance(op, GetOp):
                results[i] = self._get(op)
            elif isinstance(op, SearchOp):
                results[i] = self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
            else:
                raise TypeError(f"unknown operation {type(op).__name__}")
        self._flush(pending)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # Engine calls release the GIL (embedded) or wait on a socket (client): a thread serves.
        return await asyncio.to_thread(self.batch, list(ops))

    # -- operations ------------------------------------------------------------------------

    def _q(self, cypher: str, params: dict | None = None):
        return self.memory.query(cypher, params, workspace=self.workspace)

    def _flush(self, pending: list[PutOp]) -> None:
        if not pending:
            return
        # The last put of a (namespace, key) wins; each put's vectors are made before the commit.
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in pending:
            last[(tuple(op.namespace), op.key)] = op
        pending.clear()
        now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        texts: list[str] = []
        plans = []
        for (namespace, key), op in last.items():
            vectors = []
            if op.value is not None and self.embeddings is not None and op.index is not False:
                for path, text in self._texts(op):
                    vectors.append((path, len(texts)))
                    texts.append(text)
            plans.append((namespace, key, op, vectors))
        embedded = self.embeddings.embed_documents(texts) if texts else []
        with self.memory.transaction(workspace=self.workspace) as tx:
            for namespace, key, op, vectors in plans:
                ns = ".".join(namespace)
                tx.query("MATCH (v:LgVec {ns: $ns, key: $key}) DELETE v", {"ns": ns, "key": key})
                if op.value is None:
                    tx.query("MATCH (i:LgItem {ns: $ns, key: $key}) DELETE i", {"ns": ns, "key": key})
                    continue
                tx.query(
                    "MERGE (i:LgItem {ns: $ns, key: $key}) ON CREATE SET i.created_at = $now SET i.value = $value, i.updated_at = $now",
                    {"ns": ns, "key": key, "now": now, "value": json.dumps(dict(op.value))},
                )
                for path, at in vectors:
                    tx.query(
                        "CREATE (:LgVec {ns: $ns, key: $key, path: $path, embedding: vecf32($v)})",
                        {"ns": ns, "key": key, "path": path, "v": embedded[at]},
                    )

    def _texts(self, op: PutOp) -> list[tuple[str, str]]:
        fields = self._fields if op.index is None else [(f, tokenize_path(f) if f != "$" else "$") for f in op.index]
        out = []
        for path, tokens in fields:
            if tokens == "$":
                out.append((path, json.dumps(dict(op.value))))
                continue
            for text in get_text_at_path(op.value, tokens):
                out.append((path, text))
        return out

    def _get(self, op: GetOp) -> Item | None:
        rows = self._q(
            "MATCH (i:LgItem {ns: $ns, key: $key}) RETURN i.value, i.created_at, i.updated_at",
            {"ns": ".".join(op.namespace), "key": op.key},
        ).rows
        if not rows:
            return None
        value, created, updated = rows[0]
        return Item(value=json.loads(value), key=op.key, namespace=tuple(op.namespace), created_at=_time(created), updated_at=_time(updated))

    def _items(self, prefix: tuple[str, ...]) -> list[tuple]:
        if prefix:
            ns = ".".join(prefix)
            return self._q(
                f"MATCH (i:LgItem) WHERE {_PREFIX} RETURN i.ns, i.key, i.value, i.created_at, i.updated_at ORDER BY i.updated_at DESC, i.ns, i.key",
                {"ns": ns, "under": ns + "."},
            ).rows
        return self._q("MATCH (i:LgItem) RETURN i.ns, i.key, i.value, i.created_at, i.updated_at ORDER BY i.updated_at DESC, i.ns, i.key").rows

    def _search(self, op: SearchOp) -> list[SearchItem]:
        items = []
        for ns, key, value, created, updated in self._items(tuple(op.namespace_prefix)):
            value = json.loads(value)
            if op.filter and not _matches(value, op.filter):
                continue
            items.append((ns, key, value, created, updated))
        scores: dict[tuple[str, str], float] = {}
        if op.query and self.embeddings is not None:
            q = self.embeddings.embed_query(op.query)
            prefix = ".".join(op.namespace_prefix)
            where = "WHERE (v.ns = $ns OR v.ns STARTS WITH $under)" if prefix else ""
            rows = self._q(
                f"MATCH (v:LgVec) {where} RETURN v.ns, v.key, 1.0 - vec.cosineDistance(v.embedding, vecf32($q)) AS score",
                {"ns": prefix, "under": prefix + ".", "q": q},
            ).rows
            for ns, key, score in rows:
                scores[(ns, key)] = max(score, scores.get((ns, key), float("-inf")))
            # Items with a vector first, best first; the rest (not indexed) after, newest first.
            items.sort(key=lambda it: (0, -scores[(it[0], it[1])]) if (it[0], it[1]) in scores else (1, 0))
        page = items[op.offset : op.offset + op.limit]
        return [
            SearchItem(
                namespace=tuple(ns.split(".")),
                key=key,
                value=value,
                created_at=_time(created),
                updated_at=_time(updated),
                score=scores.get((ns, key)) if op.query and self.embeddings is not None else None,
            )
            for ns, key, value, created, updated in page
        ]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = set()
        for (ns,) in self._q("MATCH (i:LgItem) RETURN DISTINCT i.ns").rows:
            namespace = tuple(ns.split("."))
            if not all(_condition(namespace, c) for c in op.match_conditions or ()):
                continue
            found.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        return sorted(found)[op.offset : op.offset + op.limit]


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _condition(namespace: tuple[str, ...], condition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part))


_OPS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
}


def _matches(value: dict[str, Any], filter: dict[str, Any]) -> bool:
    """LangGraph's filter: each key's value equals the given one, or passes each `$` operator."""
    for key, want in filter.items():
        have = value.get(key)
        if isinstance(want, dict) and want and all(k.startswith("$") for k in want):
            for name, arg in want.items():
                test = _OPS.get(name)
                if test is None:
                    raise ValueError(f"unsupported filter operator {name} (expected one of {', '.join(_OPS)})")
                try:
                    if not test(have, arg):
                        return False
                except TypeError:
                    return False
        elif have != want:
            return False
    return True
