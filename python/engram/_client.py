"""The client back end: a server over RESP3 (redis-py underneath). One connection per client
object; writes are never retried (a socket timeout above the server's query deadline, no
retry policy): a write either answers, fails with the server's deadline error, or raises a
connection error whose outcome the caller must check (see docs/server.md)."""

from __future__ import annotations

import json
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from . import _errors, _params
from ._types import Node, Path, Relationship, Result

# Above the server's default query deadline (4 s) with room for the reply.
DEFAULT_SOCKET_TIMEOUT = 30.0


def _value(v: Any) -> Any:
    """A server value as the embedded database gives it: node, relationship and path maps
    (exactly the keys the server writes for them) as `Node`, `Relationship`, `Path`; lists of
    lists as lists; maps with their values converted."""
    if isinstance(v, dict):
        keys = v.keys()
        if keys == {"id", "labels", "properties"}:
            return Node(v["id"], list(v["labels"]), _props(v["properties"]))
        if keys == {"id", "type", "start", "end", "properties"}:
            return Relationship(v["id"], v["type"], v["start"], v["end"], _props(v["properties"]))
        if keys == {"nodes", "relationships"} and all(isinstance(n, dict) for n in v["nodes"]):
            return Path([_value(n) for n in v["nodes"]], [_value(r) for r in v["relationships"]])
        return _props(v)
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


def _props(m: dict) -> dict:
    return {k: _value(x) for k, x in m.items()}


def _result(r: dict):
    rows = [tuple(_value(c) for c in row) for row in r["rows"]]
    return (list(r["columns"]), rows, dict(r["stats"]), r.get("plan"))


class Client:
    def __init__(self, url: str, *, username: str | None = None, password: str | None = None, socket_timeout: float | None = None):
        self.r = redis.Redis.from_url(
            url,
            protocol=3,
            decode_responses=True,
            username=username,
            password=password,
            socket_timeout=socket_timeout or DEFAULT_SOCKET_TIMEOUT,
            retry=Retry(NoBackoff(), 0),
            retry_on_timeout=False,
            single_connection_client=True,
        )

    def _call(self, *args):
        if self.r is None:
            raise _errors.CallerError("the connection is closed")
        try:
            return self.r.execute_command(*args)
        except redis.ResponseError as e:
            raise _errors.from_reply(_reply_text(e)) from None

    def query(self, ws, text, params):
        args = ["ENGRAM.QUERY", ws, text]
        if params is not None:
            if not isinstance(params, dict):
                raise _errors.CallerError("params: expected a dict of parameters")
            # As embedded (JSON would turn a number into a string silently).
            if not all(isinstance(k, str) for k in params):
                raise _errors.CallerError("params: names must be strings")
            try:
                args += ["PARAMS", _params.dumps(params)]
            except (TypeError, ValueError) as e:
                raise _errors.CallerError(f"params: {e}") from None
        return Result(*_result(self._call(*args)))

    def transaction(self, ws, statements):
        payload = [{"query": t, "params": json.loads(p) if p else None} for t, p in statements]
        return [_result(r) for r in self._call("ENGRAM.TRANSACTION", ws, json.dumps(payload))]

    def ingest(self, ws, docs):
        out = []
        for r in self._call("ENGRAM.INGEST", ws, json.dumps(docs)):
            out.append(_errors.from_reply(_reply_text(r)) if isinstance(r, redis.ResponseError) else r)
        return out

    def recall(self, ws, text, budget, seeds, hops, as_of, vector, properties):
        args = ["ENGRAM.RECALL", ws, text]
        if budget is not None:
            args += ["BUDGET", str(budget)]
        for s in seeds:
            args += ["SEED", s]
        if hops is not None:
            args += ["HOPS", str(hops)]
        if as_of is not None:
            args += ["AS_OF", as_of]
        if vector is not None:
            args += ["VECTOR", json.dumps(vector)]
        for k, v in properties:
            args += ["PROPERTY", f"{k}={v}"]
        return self._call(*args)

    def context(self, ws, entity, text, depth, budget, max_facts, predicates, types, as_of):
        args = ["ENGRAM.CONTEXT", ws, entity]
        for name, value in (("TEXT", text), ("DEPTH", depth), ("BUDGET", budget), ("LIMIT", max_facts), ("AS_OF", as_of)):
            if value is not None:
                args += [name, str(value)]
        for p in predicates:
            args += ["PREDICATE", p]
        for t in types:
            args += ["TYPE", t]
        return self._call(*args)

    def neighbors(self, ws, entity, limit, direction):
        args = ["ENGRAM.NEIGHBORS", ws, entity, "DIRECTION", direction]
        if limit is not None:
            args += ["LIMIT", str(limit)]
        return self._call(*args)

    def lifecycle(self, ws, verb, kind, ident):
        self._call(f"ENGRAM.{verb.upper()}", ws, kind.upper(), ident)

    def stats(self, ws):
        return self._call("ENGRAM.STATS", ws)

    def embed(self, texts):
        texts = list(texts)
        return [list(v) for v in self._call("ENGRAM.EMBED", *texts)] if texts else []

    def use_workspace(self, ws):
        """Nothing to do: each command names its workspace."""

    def close(self):
        if self.r is not None:
            self.r.close()
            self.r = None


def _reply_text(e: BaseException) -> str:
    """The server's error text as it sent it (redis-py strips the `ERR ` prefix)."""
    text = str(e)
    return text if text.split(" ", 1)[0].isupper() else f"ERR {text}"
