"""The embedded back end: the extension module, in this process."""

from __future__ import annotations

import json

from . import _engram
from ._errors import of_class


class Embedded:
    def __init__(self, db: "_engram.Database"):
        self.db = db
        # The extension's methods themselves: no Python frame between the caller and the engine.
        self.query = db.query
        # `Memory.query`, with the workspace `use_workspace` sets.
        self.bound_query = db.run

    def use_workspace(self, ws):
        self.db.set_workspace(ws)

    def transaction(self, ws, statements):
        return self.db.transaction(ws, statements)

    def ingest(self, ws, docs):
        out = []
        for r in json.loads(self.db.ingest(json.dumps(docs))):
            if "error" in r and "class" in r and len(r) == 2:
                out.append(of_class(r["class"], r["error"]))
            else:
                out.append(r)
        return out

    def recall(self, ws, text, budget, seeds, hops, as_of, vector, properties):
        return json.loads(self.db.recall(ws, text, budget, seeds, hops, as_of, vector, properties))

    def context(self, ws, entity, text, depth, budget, max_facts, predicates, types, as_of):
        return json.loads(self.db.context(ws, entity, text, depth, budget, max_facts, predicates, types, as_of))

    def neighbors(self, ws, entity, limit, direction):
        return json.loads(self.db.neighbors(ws, entity, limit, direction))

    def lifecycle(self, ws, verb, kind, ident):
        self.db.lifecycle(ws, verb, kind, ident)

    def stats(self, ws):
        return json.loads(self.db.stats(ws))

    def embed(self, texts):
        return self.db.embed(list(texts))

    def close(self):
        self.db.close()
