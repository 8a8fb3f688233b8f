"""The values a query returns and the records recall returns, shared by the embedded database
and the network client (both build exactly these)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import _engram


@dataclass(frozen=True)
class Node:
    """A node (an entity) in a query result."""

    id: int
    labels: list[str]
    properties: dict[str, Any]


@dataclass(frozen=True)
class Relationship:
    """A relationship (a claim) in a query result."""

    id: int
    type: str
    start: int
    end: int
    properties: dict[str, Any]


@dataclass(frozen=True)
class Path:
    """A path in a query result: its nodes and the relationships between them."""

    nodes: list[Node]
    relationships: list[Relationship]


# A query's result (`columns`, `rows`, `stats`, `plan`, iterable over its rows): made by the
# extension, so a query runs no Python code to build it.
Result = _engram.Result


@dataclass(frozen=True)
class Context:
    """What recall hands back: `text`, the packed block to give a model, and `facts`, each a
    dict with its claim's ids, scores by path, confidence, evidence and rendered line."""

    text: str
    facts: list[dict[str, Any]]
    tokens_used: int
    budget: int
    raw: dict[str, Any] = field(repr=False, compare=False)

    def __str__(self) -> str:
        return self.text
