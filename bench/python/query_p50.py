"""W1 from Python, embedded: `db.query` p50 against the engine's own `Database::query` of the same
text and parameters with a cached plan, timed inside Rust in the same process (issue 32's target:
within 2x; the rest is conversion), and against `Database::query_bound`, the call Python makes
(the parameters bound ahead). Each timing includes releasing the result. Needs a release build of the package and the workloads' data:

    python3 ../shared/workloads/gen.py --scale S --no-vectors --out /tmp/wl-S
    cargo build --release -p engram-cli
    (cd python && maturin develop --release)      # in the venv that runs this script
    python bench/python/query_p50.py --data /tmp/wl-S --db /tmp/wl-S-db

The database folder is made once with `target/release/engram import`. Prints one JSON line.
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import time

import engram

ROOT = pathlib.Path(__file__).resolve().parents[2]
W1 = "MATCH (a {id: $s})-[r]-() RETURN count(r)"


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    data, folder = pathlib.Path(a.data), pathlib.Path(a.db)
    if not folder.exists():
        subprocess.run([str(ROOT / "target/release/engram"), "import", str(folder), "--entities", str(data / "entities.csv"), "--claims", str(data / "claims.csv")], check=True)
    seeds = json.loads((data / "queries.json").read_text())["seeds"]
    db = engram.open(folder, read_only=True)
    params = [{"s": str(s)} for s in seeds]  # external ids are strings
    total = sum(db.query(W1, p).rows[0][0] for p in params)  # warms the plan cache and the pages
    python_us, rust_us, rust_bound_us = [], [], []
    as_json = [json.dumps(p) for p in params]
    for _ in range(a.rounds):
        for p in params:
            t = time.perf_counter_ns()
            db.query(W1, p)
            python_us.append((time.perf_counter_ns() - t) / 1000)
        rust_us += db._b.db._time_query("default", W1, as_json)
        rust_bound_us += db._b.db._time_query("default", W1, as_json, bound=True)
    out = {
        "workload": "W1_one_hop_query_python",
        "n": len(python_us),
        "total": total,
        "python_p50_us": round(statistics.median(python_us), 2),
        "python_p95_us": round(pct(python_us, 0.95), 2),
        "rust_p50_us": round(statistics.median(rust_us), 2),
        "rust_p95_us": round(pct(rust_us, 0.95), 2),
        "rust_bound_p50_us": round(statistics.median(rust_bound_us), 2),
    }
    out["ratio_p50"] = round(out["python_p50_us"] / out["rust_p50_us"], 2)
    # Against the call Python makes (parameters bound ahead): what the conversion alone costs.
    out["ratio_p50_bound"] = round(out["python_p50_us"] / out["rust_bound_p50_us"], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
