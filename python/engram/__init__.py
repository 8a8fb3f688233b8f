"""engram: the long-term memory of AI agents — a typed, temporal, trust-scored knowledge graph.

    import engram
    db = engram.open("./memory")                   # embedded, data in a folder
    db = engram.memory()                           # embedded, in memory only
    db = engram.connect("redis://127.0.0.1:6379")  # a server (`engram serve`)

All three are `engram.Memory`: the same methods, the same results."""

from __future__ import annotations

from os import PathLike

from . import _engram
from ._embedded import Embedded
from ._errors import BugError, CallerError, ConflictError, CorruptionError, EngramError, LimitError, OperatorError
from ._memory import DEFAULT_WORKSPACE, Memory, Transaction
from ._types import Context, Node, Path, Relationship, Result

__all__ = [
    "open",
    "memory",
    "connect",
    "Memory",
    "Transaction",
    "Result",
    "Context",
    "Node",
    "Relationship",
    "Path",
    "EngramError",
    "CallerError",
    "ConflictError",
    "LimitError",
    "OperatorError",
    "CorruptionError",
    "BugError",
    "DEFAULT_WORKSPACE",
]


def open(path: str | PathLike, *, embedder: str | None = None, workspace: str = DEFAULT_WORKSPACE, read_only: bool = False) -> Memory:  # noqa: A001
    """Opens (or creates) the database in the folder `path`. `embedder` (`minilm`, `static`,
    `hash`) embeds claims and questions; without it, the one the database records, if any."""
    db = _engram.open(str(path), read_only)
    db.use_embedder(embedder)
    return Memory(Embedded(db), workspace)


def memory(*, embedder: str | None = None, workspace: str = DEFAULT_WORKSPACE) -> Memory:
    """A database in memory only (gone when closed)."""
    db = _engram.memory()
    if embedder is not None:
        db.use_embedder(embedder)
    return Memory(Embedded(db), workspace)


def connect(
    url: str = "redis://127.0.0.1:6379",
    *,
    workspace: str = DEFAULT_WORKSPACE,
    username: str | None = None,
    password: str | None = None,
    socket_timeout: float | None = None,
) -> Memory:
    """Connects to `engram serve` over RESP3."""
    from ._client import Client

    return Memory(Client(url, username=username, password=password, socket_timeout=socket_timeout), workspace)
