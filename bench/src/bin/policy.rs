//! What row and masking policies cost a read: W1 (one hop) in the query language through a fresh
//! scope per request (as a server opens one), counting the hop's claims and returning their texts,
//! for a principal without policies, for principals under a policy that passes every claim and one
//! that hides about half of them, and under masking policies (PII spans; a confidential tag); and
//! the one-time computation of the hidden and masked rows after a commit. Prints one JSON line per
//! measurement.
//!
//!   engram import DB --entities data/S/entities.csv --claims data/S/claims.csv
//!   cargo run --release -p engram-bench --bin policy -- --db DB --data data/S
//!
//! It stores two row policies and two masking policies in DB (a scratch copy: they change what their roles see).

/// On mimalloc, like the `engram` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use engram::{Access, Database, Params, Principal, QueryValue, StoredMask, StoredPolicy};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

#[derive(Parser, Debug)]
struct Args {
    /// A scratch database holding the workload in `default`.
    #[arg(long)]
    db: std::path::PathBuf,
    /// The folder `gen.py` wrote (its queries.json gives the seeds).
    #[arg(long)]
    data: std::path::PathBuf,
    /// Passes over the seeds per principal.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

const W1: &str = "MATCH (a {id: $s})-[r]-() RETURN count(r)";
/// W1 returning what a mask changes: the hop's texts.
const W1_TEXT: &str = "MATCH (a {id: $s})-[r]-() RETURN r.text";

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let q: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(args.data.join("queries.json")).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let seeds: Vec<String> = q["seeds"].as_array().ok_or("no seeds")?.iter().map(|s| s.to_string().trim_matches('"').to_owned()).collect();
    let db = Database::open(&args.db).map_err(|e| e.to_string())?;
    let policy =
        |roles: &str, predicate: &str| StoredPolicy { target: "claims".into(), roles: vec![roles.into()], predicate: predicate.into() };
    db.put_policy("default", "all", policy("pass", "c.confidence >= 0")).map_err(|e| e.to_string())?;
    db.put_policy("default", "half", policy("half", "c.confidence >= 0.5")).map_err(|e| e.to_string())?;
    let mask = |role: &str, on: &str| StoredMask { on: on.into(), mode: "redact".into(), roles: vec![role.into()] };
    db.put_mask("default", "pii", mask("pii", "pii:*")).map_err(|e| e.to_string())?;
    db.put_mask("default", "confidential", mask("conf", "tag:sensitivity=confidential")).map_err(|e| e.to_string())?;
    let who = |role: Option<&str>| {
        let p = Principal::named("bench").grant("default", Access::Read, true);
        Arc::new(match role {
            Some(r) => p.with_role(r),
            None => p,
        })
    };
    let mut base_p50 = 0.0;
    let mut base_text_p50 = 0.0;
    for (name, principal) in [
        ("no_policy", who(None)),
        ("policy_passing_all", who(Some("pass"))),
        ("policy_hiding_half", who(Some("half"))),
        ("mask_pii", who(Some("pii"))),
        ("mask_confidential_tag", who(Some("conf"))),
    ] {
        // The first request after the policies' commit computes the hidden rows.
        let t = Instant::now();
        let scope = db.scope(principal.clone());
        drop(scope.workspace("default").map_err(|e| e.to_string())?.catalog());
        let first_ms = t.elapsed().as_secs_f64() * 1e3;
        let (mut lat, mut text_lat) = (Vec::new(), Vec::new());
        let (mut rows, mut text_bytes) = (0i64, 0usize);
        for _ in 0..args.rounds {
            for s in &seeds {
                let params: Params = [("s".to_owned(), QueryValue::String(s.clone()))].into();
                let t = Instant::now();
                let r = db.scope(principal.clone()).query_read("default", W1, &params).map_err(|e| e.to_string())?;
                lat.push(t.elapsed().as_secs_f64() * 1e6);
                if let Some(QueryValue::Int(n)) = r.rows.first().and_then(|row| row.first()) {
                    rows += n;
                }
                let t = Instant::now();
                let r = db.scope(principal.clone()).query_read("default", W1_TEXT, &params).map_err(|e| e.to_string())?;
                text_lat.push(t.elapsed().as_secs_f64() * 1e6);
                text_bytes += r.rows.iter().flatten().map(|v| if let QueryValue::String(t) = v { t.len() } else { 0 }).sum::<usize>();
            }
        }
        let p50 = pct(&mut lat, 0.5);
        let text_p50 = pct(&mut text_lat, 0.5);
        if name == "no_policy" {
            (base_p50, base_text_p50) = (p50, text_p50);
        }
        let line = json!({
            "bench": "policy", "principal": name, "queries": lat.len(), "rows": rows,
            "p50_us": (p50 * 10.0).round() / 10.0, "p95_us": (pct(&mut lat, 0.95) * 10.0).round() / 10.0,
            "p50_vs_no_policy": (p50 / base_p50.max(1e-9) * 100.0).round() / 100.0,
            "text_p50_us": (text_p50 * 10.0).round() / 10.0, "text_p50_vs_no_policy": (text_p50 / base_text_p50.max(1e-9) * 100.0).round() / 100.0,
            "text_bytes": text_bytes,
            "first_request_ms": (first_ms * 100.0).round() / 100.0,
        });
        println!("{line}");
    }
    Ok(())
}
