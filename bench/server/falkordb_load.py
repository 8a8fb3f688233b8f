"""Loads the generator's S/M data into a FalkorDB graph for the side-by-side W1-W3 run (bench only,
never a test). Nodes get the label E and an index on `id` (FalkorDB needs a label to use an index;
the wire tool's `--label E` puts it in the query texts). Only the claims engram shows by default are
loaded (not DEPRECATED), so both sides count the same edges.

    python3 bench/server/falkordb_load.py --port 6399 --data data/S --graph S
"""

import argparse
import csv
import time

import redis


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=6399)
    ap.add_argument("--data", required=True)
    ap.add_argument("--graph", default="S")
    ap.add_argument("--batch", type=int, default=20000)
    a = ap.parse_args()
    r = redis.Redis(port=a.port, socket_timeout=600)
    r.execute_command("GRAPH.DELETE", a.graph) if a.graph.encode() in r.execute_command("GRAPH.LIST") else None
    t = time.time()
    r.execute_command("GRAPH.QUERY", a.graph, "CREATE INDEX FOR (n:E) ON (n.id)")
    with open(f"{a.data}/entities.csv") as f:
        rows = [[int(x["id"]), x["type"], x["name"]] for x in csv.DictReader(f)]
    for i in range(0, len(rows), a.batch):
        r.execute_command("GRAPH.QUERY", a.graph, "UNWIND $rows AS r CREATE (:E {id: r[0], type: r[1], name: r[2]})".replace("$rows", repr(rows[i : i + a.batch]).replace("'", '"')))
    by_pred = {}
    with open(f"{a.data}/claims.csv") as f:
        for x in csv.DictReader(f):
            if x["state"] != "DEPRECATED":
                by_pred.setdefault(x["predicate"], []).append([int(x["subject"]), int(x["object"])])
    edges = 0
    for pred, pairs in by_pred.items():
        for i in range(0, len(pairs), a.batch):
            chunk = pairs[i : i + a.batch]
            q = f"UNWIND {chunk} AS p MATCH (a:E {{id: p[0]}}), (b:E {{id: p[1]}}) CREATE (a)-[:{pred}]->(b)"
            r.execute_command("GRAPH.QUERY", a.graph, q)
            edges += len(chunk)
    print(f"loaded {len(rows)} nodes and {edges} edges into {a.graph} in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
