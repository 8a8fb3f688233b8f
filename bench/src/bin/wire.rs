//! W1–W3 over the wire: the reference workloads as `ENGRAM.QUERY` (or `GRAPH.QUERY`) against a
//! running `engram serve`, from many connections at once; prints one JSON line per workload (p50,
//! p95, throughput). The same texts as `workloads --workloads QUERY`, so the embedded figures of the
//! same run are the reference.
//!
//!   engram import DIR --entities data/S/entities.csv --claims data/S/claims.csv
//!   engram serve DIR --port 6390 &
//!   target/release/wire --addr 127.0.0.1:6390 --data data/S --connections 50
//!
//! With `--http ADDR` (`engram serve … --http-port`) each workload also runs as `POST
//! /v1/workspaces/{ws}/query` on keep-alive HTTP/1.1 connections, right after its RESP run, and
//! its line gives the p50 ratio to RESP's.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};

#[derive(Parser)]
#[command(about = "W1–W3 over the wire against a running engram serve")]
struct Args {
    /// The server's address.
    #[arg(long, default_value = "127.0.0.1:6379")]
    addr: String,
    /// Folder written by `gen.py` (its queries.json gives the inputs).
    #[arg(long)]
    data: PathBuf,
    /// Connections, one thread each.
    #[arg(long, default_value_t = 50)]
    connections: usize,
    /// Requests per workload.
    #[arg(long, default_value_t = 20_000)]
    requests: usize,
    /// The workspace the data was imported into.
    #[arg(long, default_value = "default")]
    workspace: String,
    /// FalkorDB's command (GRAPH.QUERY with a `CYPHER s="…"` header) instead of ENGRAM.QUERY.
    #[arg(long)]
    graph: bool,
    /// Also run each workload over the HTTP API at this address.
    #[arg(long)]
    http: Option<String>,
    /// A label to put on the pattern's start node (`(a:E {id: $s})`): FalkorDB uses an index only
    /// through a label (`bench/server/falkordb_load.py` loads every node as `E` with an `id` index).
    #[arg(long)]
    label: Option<String>,
    /// Send the ids as integers (`CYPHER s=42`): the FalkorDB load stores them as integers.
    #[arg(long)]
    int_ids: bool,
    /// Only these workloads (comma-separated names, e.g. `W1_one_hop`); default all. `PING` (asked
    /// for by name only) measures the tool's floor on the server: the same connections, no query.
    #[arg(long)]
    only: Option<String>,
}

/// Reads one HTTP/1.1 response whole (Content-Length bodies), returning whether it was not 200.
fn skip_http(r: &mut impl BufRead) -> std::io::Result<bool> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let failed = !line.starts_with("HTTP/1.1 200");
    let mut length = 0usize;
    loop {
        line.clear();
        r.read_line(&mut line)?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length];
    r.read_exact(&mut body)?;
    Ok(failed)
}

fn http_request(addr: &str, workspace: &str, body: &str) -> Vec<u8> {
    format!(
        "POST /v1/workspaces/{workspace}/query HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Runs `frames` from `connections` threads (each request waits for its reply); latencies, errors
/// and the wall time.
fn run(addr: &str, frames: &[Vec<u8>], connections: usize, requests: usize, http: bool) -> Result<(Vec<Duration>, usize, f64), String> {
    let per = requests / connections.max(1);
    let started = Instant::now();
    let results: Vec<Result<(Vec<Duration>, usize), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..connections)
            .map(|c| {
                scope.spawn(move || -> Result<(Vec<Duration>, usize), String> {
                    let mut out = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
                    out.set_nodelay(true).map_err(|e| e.to_string())?;
                    let mut input = BufReader::new(out.try_clone().map_err(|e| e.to_string())?);
                    let mut lat = Vec::with_capacity(per);
                    let mut errors = 0;
                    for i in 0..per {
                        let f = &frames[(c * per + i) % frames.len()];
                        let t = Instant::now();
                        out.write_all(f).map_err(|e| e.to_string())?;
                        let failed = if http { skip_http(&mut input) } else { skip_reply(&mut input) };
                        errors += usize::from(failed.map_err(|e| e.to_string())?);
                        lat.push(t.elapsed());
                    }
                    Ok((lat, errors))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a client thread panicked".to_owned()))).collect()
    });
    let wall = started.elapsed().as_secs_f64();
    let mut lat = Vec::new();
    let mut errors = 0;
    for r in results {
        let (l, e) = r?;
        lat.extend(l);
        errors += e;
    }
    lat.sort_unstable();
    Ok((lat, errors, wall))
}

fn pct(lat: &[Duration], p: f64) -> f64 {
    let us = lat.get(((lat.len() as f64 - 1.0) * p) as usize).map_or(0.0, |d| d.as_secs_f64() * 1e6);
    (us * 10.0).round() / 10.0
}

const WORKLOADS: [(&str, &str, &str); 4] = [
    ("W1_one_hop", "seeds", "MATCH (a {id: $s})-[r]-() RETURN count(r)"),
    ("W2_two_hop", "seeds", "MATCH (a {id: $s})-[*1..2]-(b) WHERE b <> a RETURN count(DISTINCT b)"),
    ("W3_ancestors", "w3_concepts", "MATCH (c {id: $s})-[:SUBCLASS_OF*]->(a) RETURN count(DISTINCT a)"),
    ("W3_descendants", "w3_upper", "MATCH (c {id: $s})<-[:SUBCLASS_OF*]-(d) RETURN count(DISTINCT d)"),
];

/// Reads one reply whole (any RESP2/RESP3 type), returning whether it was an error.
fn skip_reply(r: &mut impl BufRead) -> std::io::Result<bool> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let (kind, rest) = line.trim_end().split_at_checked(1).unwrap_or(("", ""));
    let n: i64 = rest.parse().unwrap_or(0);
    match kind {
        "-" => return Ok(true),
        "$" | "=" if n >= 0 => {
            let mut buf = vec![0u8; usize::try_from(n).unwrap_or(0) + 2];
            r.read_exact(&mut buf)?;
        }
        "*" | "~" | ">" => {
            for _ in 0..n {
                skip_reply(r)?;
            }
        }
        "%" => {
            for _ in 0..2 * n {
                skip_reply(r)?;
            }
        }
        _ => {}
    }
    Ok(false)
}

fn frame(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend(format!("${}\r\n", a.len()).as_bytes());
        out.extend(a.as_bytes());
        out.extend(b"\r\n");
    }
    out
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let text = std::fs::read_to_string(args.data.join("queries.json")).map_err(|e| format!("queries.json: {e}"))?;
    let q: Value = serde_json::from_str(&text).map_err(|e| format!("queries.json: {e}"))?;
    if args.only.as_ref().is_some_and(|only| only.split(',').any(|w| w == "PING")) {
        // The floor of this tool on this server: the same connections and threads, no query.
        let (lat, errors, wall) = run(&args.addr, &[frame(&["PING"])], args.connections, args.requests, false)?;
        let line = json!({
            "peer": "engram-wire", "workload": "PING", "command": "PING",
            "connections": args.connections, "requests": lat.len(), "errors": errors,
            "p50_us": pct(&lat, 0.5), "p95_us": pct(&lat, 0.95),
            "throughput_rps": (lat.len() as f64 / wall).round(),
        });
        println!("{line}");
    }
    for (name, key, query) in WORKLOADS {
        if args.only.as_ref().is_some_and(|only| !only.split(',').any(|w| w == name)) {
            continue;
        }
        let labelled;
        let query = match &args.label {
            Some(l) => {
                labelled = query.replace(" {id: $s}", &format!(":{l} {{id: $s}}"));
                labelled.as_str()
            }
            None => query,
        };
        let inputs: Vec<String> = q[key].as_array().ok_or(format!("queries.json: no `{key}`"))?.iter().map(ToString::to_string).collect();
        // Every request's frame is built before the clock starts.
        let frames: Vec<Vec<u8>> = inputs
            .iter()
            .map(|s| {
                if args.graph {
                    let header = if args.int_ids { format!("CYPHER s={s}") } else { format!("CYPHER s=\"{s}\"") };
                    frame(&["GRAPH.QUERY", &args.workspace, &format!("{header} {query}"), "--compact"])
                } else {
                    frame(&["ENGRAM.QUERY", &args.workspace, query, "PARAMS", &json!({"s": s}).to_string()])
                }
            })
            .collect();
        let (lat, errors, wall) = run(&args.addr, &frames, args.connections, args.requests, false)?;
        let line = json!({
            "peer": "engram-wire", "workload": name, "command": if args.graph { "GRAPH.QUERY" } else { "ENGRAM.QUERY" },
            "connections": args.connections, "requests": lat.len(), "errors": errors,
            "p50_us": pct(&lat, 0.5), "p95_us": pct(&lat, 0.95),
            "throughput_rps": (lat.len() as f64 / wall).round(),
        });
        println!("{line}");
        if let Some(http) = &args.http {
            let bodies: Vec<Vec<u8>> = inputs
                .iter()
                .map(|s| http_request(http, &args.workspace, &json!({"query": query, "params": {"s": s}}).to_string()))
                .collect();
            let (hl, herrors, hwall) = run(http, &bodies, args.connections, args.requests, true)?;
            let ratio = pct(&hl, 0.5) / pct(&lat, 0.5).max(0.1);
            let line = json!({
                "peer": "engram-http", "workload": name, "command": "POST /v1/workspaces/{ws}/query",
                "connections": args.connections, "requests": hl.len(), "errors": herrors,
                "p50_us": pct(&hl, 0.5), "p95_us": pct(&hl, 0.95),
                "throughput_rps": (hl.len() as f64 / hwall).round(), "p50_ratio_to_resp": (ratio * 100.0).round() / 100.0,
            });
            println!("{line}");
        }
    }
    Ok(())
}
