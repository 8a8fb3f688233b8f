//! MCP `search_memory` over stdio against the embedded recall, in one run: an `engram mcp DIR`
//! child driven by the Rust MCP SDK's client, and the same recalls (text, seed, budget, embedder)
//! through `WorkspaceView::recall` on a read-only open of the same folder. Prints one JSON line
//! per side and their p50 ratio.
//!
//! ```sh
//! engram import DIR --entities data/S/entities.csv --claims data/S/claims.csv
//! target/release/mcp_recall --engram target/release/engram --dir DIR --data data/S --embedder static
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{json, Value};

#[derive(Parser)]
#[command(about = "MCP search_memory over stdio against the embedded recall")]
struct Args {
    /// The engram binary.
    #[arg(long, default_value = "target/release/engram")]
    engram: PathBuf,
    /// The database folder (S data imported).
    #[arg(long)]
    dir: PathBuf,
    /// The generator's folder (its queries.json gives the seeds).
    #[arg(long)]
    data: PathBuf,
    /// The embedder on both sides (static, hash or minilm).
    #[arg(long, default_value = "static")]
    embedder: String,
    /// Recalls per side.
    #[arg(long, default_value_t = 500)]
    requests: usize,
    /// Token budget.
    #[arg(long, default_value_t = 800)]
    budget: usize,
    /// The workspace.
    #[arg(long, default_value = "default")]
    workspace: String,
}

fn summary(side: &str, lat: &mut [Duration]) -> Value {
    lat.sort_unstable();
    let pct = |p: f64| lat.get(((lat.len() as f64 - 1.0) * p) as usize).map_or(0.0, |d| d.as_secs_f64() * 1e6);
    json!({"side": side, "requests": lat.len(), "p50_us": pct(0.5).round(), "p95_us": pct(0.95).round()})
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let text = std::fs::read_to_string(args.data.join("queries.json")).map_err(|e| format!("queries.json: {e}"))?;
    let q: Value = serde_json::from_str(&text).map_err(|e| format!("queries.json: {e}"))?;
    let seeds: Vec<String> = q["seeds"].as_array().ok_or("queries.json: no seeds")?.iter().map(ToString::to_string).collect();
    let seeds: Vec<String> = seeds.into_iter().take(args.requests).collect();

    // Embedded: a read-only open beside the MCP child, the same embedder.
    let db = engram::Database::open_read_only(&args.dir).map_err(|e| e.to_string())?;
    let (embedder, _) = engram::embed::select(Some(&args.embedder), None, 384).map_err(|e| e.to_string())?;
    let embedder: Arc<dyn engram::embed::Embedder> = embedder;
    let view = db.snapshot();
    let ws = view.workspace(&args.workspace).map_err(|e| e.to_string())?;
    let inputs: Vec<(String, engram::EntityId)> =
        seeds.iter().filter_map(|s| ws.entity_id(s).map(|e| (ws.entity(e).map(|x| x.name.to_string()).unwrap_or_default(), e))).collect();
    let recall = |name: &str, seed: engram::EntityId| -> Result<usize, String> {
        let vector = embedder.embed(&[name]).map_err(|e| e.to_string())?.pop();
        let rq = engram::RecallQuery { vector, seeds: vec![seed], budget: args.budget, ..engram::RecallQuery::new(name) };
        Ok(ws.recall(&rq).map_err(|e| e.to_string())?.packed.facts.len())
    };
    recall(&inputs[0].0, inputs[0].1)?;
    let mut local = Vec::with_capacity(inputs.len());
    let mut facts_embedded = 0;
    for (name, seed) in &inputs {
        let t = Instant::now();
        facts_embedded += recall(name, *seed)?;
        local.push(t.elapsed());
    }

    // MCP over stdio.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    let (mut over_mcp, facts_mcp) = runtime.block_on(async {
        let child = TokioChildProcess::new(tokio::process::Command::new(&args.engram).configure(|c| {
            c.args(["mcp", &args.dir.display().to_string(), "--workspace", &args.workspace, "--embedder", &args.embedder]);
            c.env("RUST_LOG", "warn");
        }))
        .map_err(|e| e.to_string())?;
        let client = ().serve(child).await.map_err(|e| e.to_string())?;
        let call = |name: &str, seed: engram::EntityId| {
            let ext = ws.entity_ext_id(seed).unwrap_or_default().to_owned();
            let a = json!({"query": name, "seeds": [ext], "budget": args.budget});
            CallToolRequestParams::new("search_memory").with_arguments(a.as_object().cloned().unwrap_or_default())
        };
        client.call_tool(call(&inputs[0].0, inputs[0].1)).await.map_err(|e| e.to_string())?;
        let mut lat = Vec::with_capacity(inputs.len());
        let mut facts = 0;
        for (name, seed) in &inputs {
            let req = call(name, *seed);
            let t = Instant::now();
            let r = client.call_tool(req).await.map_err(|e| e.to_string())?;
            lat.push(t.elapsed());
            if r.is_error == Some(true) {
                return Err(format!("search_memory failed: {:?}", r.content));
            }
            facts += r.structured_content.as_ref().and_then(|v| v["facts"].as_array().map(Vec::len)).unwrap_or(0);
        }
        client.cancel().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((lat, facts))
    })?;
    let e = summary("embedded", &mut local);
    let m = summary("mcp_stdio", &mut over_mcp);
    let ratio = m["p50_us"].as_f64().unwrap_or(0.0) / e["p50_us"].as_f64().unwrap_or(1.0).max(1.0);
    println!(
        "{}",
        json!({"embedder": args.embedder, "budget": args.budget, "embedded": e, "mcp": m, "p50_ratio": (ratio * 100.0).round() / 100.0, "facts": [facts_embedded, facts_mcp]})
    );
    Ok(())
}
