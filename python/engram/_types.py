"""The values a query returns and the records recall returns, shared by the embedded database
and the network client (both build exactly these)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


class Result:
    """A query's result: `columns`, `rows` (tuples of values), `stats` (what it wrote,
    counted) and `plan` (the plan's lines, for EXPLAIN and PROFILE; else `None`). A plain slotted
    class, not a dataclass: it is made once per query, on the hot path."""

    __slots__ = ("columns", "rows", "stats", "plan")

    def __init__(self, columns: list[str], rows: list[tuple], stats: dict[str, int], plan: list[str] | None = None):
        self.columns = columns
        self.rows = rows
        self.stats = stats
        self.plan = plan

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return (self.columns, self.rows, self.stats, self.plan) == (other.columns, other.rows, other.stats, other.plan)

    def __repr__(self) -> str:
        return f"Result(columns={self.columns!r}, rows={self.rows!r}, stats={self.stats!r}, plan={self.plan!r})"

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


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
