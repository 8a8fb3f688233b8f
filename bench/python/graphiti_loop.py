"""Graphiti's `add_triplet` + `search` loop against a FalkorDB-protocol server (engram serve, or
FalkorDB itself), with no model: a deterministic hashing embedder, a no-op LLM and cross-encoder
(the ones `python/tests/test_falkordb_integrations.py` uses). Reports the time spent inside the
driver's query calls (what the server costs, wire included) and end to end. Run the same command
against each server on the same machine, one after the other:

    target/release/engram serve /tmp/g-engram --port 6400 &
    python bench/python/graphiti_loop.py --url redis://127.0.0.1:6400 --n 200

Prints one JSON line.
"""

import argparse
import asyncio
import json
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python" / "tests"))
os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"

from graphiti_core.driver.falkordb_driver import FalkorDriver  # noqa: E402

import test_falkordb_integrations as stubs  # noqa: E402

FACTS = [
    ("Alice", "WORKS_AT", "Acme", "Alice works at Acme"),
    ("Bob", "KNOWS", "Alice", "Bob knows Alice from university"),
    ("Acme", "LOCATED_IN", "Oslo", "Acme is headquartered in Oslo"),
    ("Carol", "MANAGES", "Bob", "Carol manages Bob's team"),
    ("Dave", "LIKES", "Hiking", "Dave likes hiking in the Alps"),
]


async def main(url, n, group):
    from datetime import datetime, timezone

    from graphiti_core.edges import EntityEdge
    from graphiti_core.nodes import EntityNode

    spent = []
    original = FalkorDriver.execute_query

    async def timed(self, *args, **kwargs):
        t = time.perf_counter()
        try:
            return await original(self, *args, **kwargs)
        finally:
            spent.append(time.perf_counter() - t)

    FalkorDriver.execute_query = timed

    class Server:
        pass

    Server.url = url
    g = stubs._graphiti(Server, group)
    await g.build_indices_and_constraints()
    spent.clear()
    start = time.perf_counter()
    per_round = []
    for i in range(n):
        s, rel, o, fact = FACTS[i % len(FACTS)]
        now = datetime.now(timezone.utc)
        a = EntityNode(name=f"{s} {i}", group_id=group, labels=["Entity"], created_at=now)
        b = EntityNode(name=f"{o} {i}", group_id=group, labels=["Entity"], created_at=now)
        e = EntityEdge(source_node_uuid=a.uuid, target_node_uuid=b.uuid, name=rel, fact=f"{fact} ({i})", group_id=group, created_at=now, valid_at=now)
        t = time.perf_counter()
        await g.add_triplet(a, e, b)
        await g.search(f"who {rel.lower().replace('_', ' ')} {o}?", group_ids=[group])
        per_round.append(time.perf_counter() - t)
    total = time.perf_counter() - start
    await g.close()
    return {
        "bench": "graphiti_add_triplet_search",
        "url": url,
        "n": n,
        "queries": len(spent),
        "driver_query_s": round(sum(spent), 3),
        "driver_query_p50_ms": round(statistics.median(spent) * 1000, 3),
        "end_to_end_s": round(total, 3),
        "round_p50_ms": round(statistics.median(per_round) * 1000, 2),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--group", default="bench")
    a = ap.parse_args()
    print(json.dumps(asyncio.run(main(a.url, a.n, a.group))))
