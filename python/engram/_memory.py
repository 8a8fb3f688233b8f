"""`Memory`: one API over two back ends, the embedded database (`engram.open`,
`engram.memory`) and a server over RESP (`engram.connect`). Code moves from one to the other
by changing the line that makes it; the results are the same."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from . import _params as _json_params
from ._types import Context, Result

DEFAULT_WORKSPACE = "default"


class Memory:
    """engram's memory: query in a subset of Cypher, ingest extraction output, recall a packed
    context, walk neighbours, delete / restore (soft) and forget (erasure).

    Every method takes `workspace=`; without it, the one this object was made with."""

    def __init__(self, backend, workspace: str = DEFAULT_WORKSPACE):
        self._b = backend
        self.workspace = workspace
        bound = getattr(backend, "bound_query", None)
        if bound is not None:
            # The embedded back end's own method takes `query`'s place on this object: the
            # same signature and result, without a Python frame per query.
            self.query = bound

    @property
    def workspace(self) -> str:
        """The workspace methods use when not given `workspace=`."""
        return self._workspace

    @workspace.setter
    def workspace(self, workspace: str) -> None:
        self._workspace = workspace
        self._b.use_workspace(workspace)

    # -- queries --------------------------------------------------------------------------

    def query(self, cypher: str, params: dict | None = None, *, workspace: str | None = None) -> Result:
        """Runs one query; a query that writes is one atomic transaction. `params` values: None,
        bool, int, float, str, lists, dicts, and `datetime`, `date`, `time`, `timedelta` (temporal
        values come back as their ISO 8601 text), and `{"$point": {…}}` for a point (points come
        back as the dict `point()` takes: `{"crs": "wgs-84", "longitude": …, "latitude": …}`)."""
        # The back end checks `params` (a dict or None): no Python call more on the hot path.
        return self._b.query(workspace or self.workspace, cypher, params)

    def transaction(self, *, workspace: str | None = None) -> "Transaction":
        """A write transaction as a context manager: the statements given to `tx.query` run
        when the block ends without an exception, in order, as one atomic commit (each sees the
        writes before it); `tx.results` then holds their results. An exception in the block
        discards them: nothing is written."""
        return Transaction(self, workspace or self.workspace)

    # -- memory ---------------------------------------------------------------------------

    def ingest(self, doc: dict | Sequence[dict], *, workspace: str | None = None):
        """Ingests one extraction document (returns its report; raises on error) or a list of
        them (committed as one group; returns a list holding each document's report, or the
        exception of one that failed, in order)."""
        ws = workspace or self.workspace
        one = isinstance(doc, dict)
        docs = [doc] if one else list(doc)
        for i, d in enumerate(docs):
            if not isinstance(d, dict):
                raise _errors().CallerError(f"document {i} is not a dict")
            named = d.get("workspace")
            if named is None:
                docs[i] = {**d, "workspace": ws}
            elif named != ws:
                raise _errors().CallerError(f"document {i} names workspace `{named}`, not `{ws}`")
        reports = self._b.ingest(ws, docs)
        if one:
            if isinstance(reports[0], BaseException):
                raise reports[0]
            return reports[0]
        return reports

    def recall(
        self,
        text: str,
        *,
        budget: int | None = None,
        seeds: Iterable[str] = (),
        hops: int | None = None,
        as_of: str | None = None,
        vector: Sequence[float] | None = None,
        properties: dict[str, str] | None = None,
        workspace: str | None = None,
    ) -> Context:
        """The facts that answer `text`, packed into `budget` tokens, each citing its evidence.
        `seeds` are entities (external id or name) the question is about; `as_of` reads the
        graph as it was valid then; `properties` narrows to claims holding those values."""
        raw = self._b.recall(
            workspace or self.workspace, text, budget, list(seeds), hops, as_of, None if vector is None else list(vector), sorted((properties or {}).items())
        )
        return Context(text=raw["context"], facts=raw["facts"], tokens_used=raw["tokens_used"], budget=raw["budget"], raw=raw)

    def context(
        self,
        entity: str,
        *,
        text: str | None = None,
        depth: int | None = None,
        budget: int | None = None,
        max_facts: int | None = None,
        predicates: Iterable[str] = (),
        types: Iterable[str] = (),
        as_of: str | None = None,
        workspace: str | None = None,
    ) -> Context:
        """What the memory holds around `entity` (external id or name): its current facts within
        `depth` hops, nearest first, then by confidence and recent activity, packed into `budget`
        tokens; with `text`, those facts ranked by similarity to it. `predicates` and `types`
        narrow the relationships followed and the entities reached."""
        raw = self._b.context(workspace or self.workspace, entity, text, depth, budget, max_facts, list(predicates), list(types), as_of)
        return Context(text=raw["context"], facts=raw["facts"], tokens_used=raw["tokens_used"], budget=raw["budget"], raw=raw)

    def neighbors(self, entity: str, *, limit: int | None = None, direction: str = "both", workspace: str | None = None) -> list[dict]:
        """The claims at `entity` (external id or name): `{claim, direction, predicate,
        neighbor, neighbor_id}` each."""
        return self._b.neighbors(workspace or self.workspace, entity, limit, direction)["items"]

    def delete(self, *, entity: str | None = None, claim: str | int | None = None, workspace: str | None = None) -> None:
        """Soft-deletes an entity or a claim (`ALL VERSIONS` still sees it; `restore` undoes it)."""
        self._lifecycle("delete", workspace, entity=entity, claim=claim)

    def restore(self, *, entity: str | None = None, claim: str | int | None = None, workspace: str | None = None) -> None:
        """Undoes a soft delete."""
        self._lifecycle("restore", workspace, entity=entity, claim=claim)

    def forget(self, *, entity: str | None = None, conversation: str | None = None, workspace: str | None = None) -> None:
        """Erases, irreversibly, an entity with its claims, or a conversation's evidence and the
        claims only it supports."""
        self._lifecycle("forget", workspace, entity=entity, conversation=conversation)

    def stats(self, *, workspace: str | None = None) -> dict:
        """`{entities, claims, types, predicates}` of the workspace."""
        return self._b.stats(workspace or self.workspace)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Each text's vector by the database's embedder (the one recall uses)."""
        return self._b.embed(texts)

    def _lifecycle(self, verb: str, workspace: str | None, **target) -> None:
        given = [(k, v) for k, v in target.items() if v is not None]
        if len(given) != 1:
            raise _errors().CallerError(f"{verb}: give exactly one of {', '.join(f'{k}=' for k in target)}")
        kind, ident = given[0]
        self._b.lifecycle(workspace or self.workspace, verb, kind, str(ident))

    # -- life -----------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the database or the connection; later calls fail."""
        self._b.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Transaction:
    """Statements collected in a `with` block and committed as one when it ends (see
    `Memory.transaction`)."""

    def __init__(self, memory: Memory, workspace: str):
        self._memory = memory
        self.workspace = workspace
        self._statements: list[tuple[str, str | None]] = []
        self.results: list[Result] | None = None

    def query(self, cypher: str, params: dict | None = None) -> None:
        """Adds a statement; it runs when the block ends."""
        if self.results is not None:
            raise _errors().CallerError("the transaction has ended")
        p = _params(params)
        try:
            self._statements.append((cypher, None if p is None else _json_params.dumps(p)))
        except (TypeError, ValueError) as e:
            raise _errors().CallerError(f"params: {e}") from None

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.results = []
            return
        if not self._statements:
            self.results = []
            return
        self.results = [Result(*r) for r in self._memory._b.transaction(self.workspace, self._statements)]


def _params(params: dict | None) -> dict | None:
    if params is None:
        return None
    if not isinstance(params, dict):
        raise _errors().CallerError("params: expected a dict of parameters")
    return params


def _errors():
    from . import _errors as e

    return e
