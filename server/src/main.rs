//! The `engram` binary. Today: `import` (CSV or JSON lines), `export`, `stats`, `check`,
//! `checkpoint`, `backup`, `config`, `ingest`, `report`, `neighbors`, `recall` and the ontology
//! commands (`import-ontology`, `ancestors`, `descendants`, `resolve`, `profile`, `mapping`) on a
//! database folder (the network server comes later).
//!
//! Exit codes: 0 success; 1 a finding or failure (the message on stderr says which); 2 bad usage.

mod embed;
mod ontology;
mod read;

/// The binary runs on mimalloc: imports allocate and free millions of small rows, and in a
/// profile of the ontology imports glibc's `malloc` and `free` took about 30% of the samples.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand, ValueEnum};
use engram::csv::{parse_claims, parse_entities, EntityIndex};
use engram::{BulkLoad, Database, DeclarePredicate};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// engram: the long-term memory of AI agents.
#[derive(Parser, Debug)]
#[command(name = "engram", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load CSV files into workspace `default` of DIR (created if absent), or a JSON-lines file
    /// (the `export` format) into the workspaces it names.
    Import {
        /// Database folder.
        dir: PathBuf,
        /// Entities file: `id,type,name,aliases` (aliases `|`-separated).
        #[arg(long, requires = "claims", conflicts_with = "jsonl")]
        entities: Option<PathBuf>,
        /// Claims file: `id,subject,predicate,object,confidence,state,valid_from`.
        #[arg(long, requires = "entities")]
        claims: Option<PathBuf>,
        /// JSON-lines file in the `export` format.
        #[arg(long, required_unless_present = "entities")]
        jsonl: Option<PathBuf>,
        /// Little-endian f32 vectors, row i for the i-th entity row (needs --dim).
        #[arg(long, requires = "dim", requires = "entities")]
        vectors: Option<PathBuf>,
        /// Vector dimension.
        #[arg(long)]
        dim: Option<usize>,
    },
    /// Write every workspace of DIR as JSON lines (to stdout, or `--out F`).
    Export {
        /// Database folder.
        dir: PathBuf,
        /// Output file.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print row counts: totals, per state, per workspace.
    Stats {
        /// Database folder.
        dir: PathBuf,
    },
    /// Verify every checksum and invariant without changing anything.
    Check {
        /// Database folder.
        dir: PathBuf,
    },
    /// Write a checkpoint (snapshot) and drop the WAL it covers.
    Checkpoint {
        /// Database folder.
        dir: PathBuf,
    },
    /// Show or change the settings stored in DIR: all of them, one, or set one. With
    /// `--workspace`, that workspace's settings (`accept_confidence`, `resolve_similarity`,
    /// `retention_days`; the value `-` unsets one).
    Config {
        /// Database folder.
        dir: PathBuf,
        /// Setting name.
        key: Option<String>,
        /// New value.
        value: Option<String>,
        /// A workspace's settings instead of the database's.
        #[arg(long)]
        workspace: Option<String>,
    },
    /// Erases a workspace's deleted and expired history older than its `retention_days` setting
    /// (nothing when unset: the default keeps everything); prints the claims erased.
    Retention {
        /// Database folder.
        dir: PathBuf,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Merges entity FROM into INTO (each an external id, a name or an alias): FROM's claims
    /// move to INTO, its names become INTO's aliases, and FROM is retired; `unmerge` undoes it.
    Merge {
        /// Database folder.
        dir: PathBuf,
        /// The entity that goes away.
        from: String,
        /// The entity that stays.
        into: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Undoes the merge that retired ENTITY (its external id): its claims and names go back.
    Unmerge {
        /// Database folder.
        dir: PathBuf,
        /// The merged-away entity's external id.
        entity: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Every distinct entity within N hops of ENTITY (an external id, a name or an alias).
    Neighbors {
        /// Database folder.
        dir: PathBuf,
        /// The start: external id, canonical name or alias.
        entity: String,
        /// Hops.
        #[arg(long, default_value_t = 1)]
        hops: u32,
        /// Which claims to follow.
        #[arg(long, value_enum, default_value_t = Dir::Both)]
        direction: Dir,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// One JSON array, one object per entity reached.
        #[arg(long)]
        json: bool,
    },
    /// The facts relevant to TEXT, packed into a token budget, each citing its evidence.
    Recall {
        /// Database folder.
        dir: PathBuf,
        /// The question.
        text: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Token budget of the context block.
        #[arg(long, default_value_t = 800)]
        budget: usize,
        /// An entity the question is about (repeatable): external id, name or alias.
        #[arg(long)]
        seed: Vec<String>,
        /// Valid time to answer at (RFC 3339 or epoch seconds).
        #[arg(long)]
        as_of: Option<String>,
        /// The question's embedding, as a JSON array (from the client's embedder).
        #[arg(long)]
        vector: Option<String>,
        /// Hops of the graph path.
        #[arg(long, default_value_t = 2)]
        hops: u32,
        /// Include deprecated, deleted and expired claims (an audit of history).
        #[arg(long)]
        history: bool,
        /// Vector scan mode: f32, f16 or i8.
        #[arg(long, default_value = "f32")]
        mode: String,
        /// One JSON object: `facts`, `context`, `tokens_used`, `budget`, `cut`, `paths_run`, `skipped`.
        #[arg(long)]
        json: bool,
        /// The question is embedded when no --vector is given (default embedder: the one the
        /// database records, if any).
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// Ingest extraction output: FILE.json is one document, FILE.jsonl one per line (each its own
    /// transaction). Prints one JSON report per document; a bad document names file, line and
    /// JSON path and changes nothing (the others still go in; exit 1).
    Ingest {
        /// Database folder (created if absent).
        dir: PathBuf,
        /// The document(s).
        file: PathBuf,
        /// Combined confidence at which a claim becomes ACCEPTED (default: the workspace's
        /// stored setting, else 0.9).
        #[arg(long)]
        accept_confidence: Option<f32>,
        /// Name-vector cosine at which a mention resolves to an existing entity of its type
        /// (default: the workspace's stored setting, else 0.92).
        #[arg(long)]
        resolve_similarity: Option<f32>,
        /// Names and claim texts without vectors are embedded (default embedder: the one the
        /// database records, if any).
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// The memory's health as JSON: extraction quality by model version, confidence calibration,
    /// graph density, freshness; with `--trace CLAIM`, that claim's evidence (the attribution
    /// trace: claim → evidence → conversation and message).
    Report {
        /// Database folder.
        dir: PathBuf,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// A claim's external id to trace to its sources.
        #[arg(long)]
        trace: Option<String>,
    },
    /// Import an ontology (OBO, Turtle, N-Triples, RDF/XML, cellxgene JSON, engram term JSON
    /// lines; `.gz` read as is) into a workspace of DIR (created if absent), in one transaction.
    /// Re-importing a newer release updates in place.
    ImportOntology {
        /// Database folder.
        dir: PathBuf,
        /// The ontology file.
        file: PathBuf,
        /// obo, ttl, nt, owl, json, jsonl (default: from the extension, else the content).
        #[arg(long)]
        format: Option<String>,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Ancestors of TERM (a CURIE, label or synonym) with their shortest distance.
    Ancestors(HierarchyArgs),
    /// Descendants of TERM (a CURIE, label or synonym) with their shortest distance.
    Descendants(HierarchyArgs),
    /// Concepts matching TEXT, best first: mappings, CURIE, label, synonyms, then profile search.
    Resolve {
        /// Database folder.
        dir: PathBuf,
        /// The text.
        text: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Most candidates.
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// One JSON array of `{id, label, matched_by, score}`.
        #[arg(long)]
        json: bool,
        /// The search step's profile vectors (default embedder: static when its table is
        /// present, else hash; minilm takes minutes on a large ontology).
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// The flattened profile of TERM (label, definition, synonyms, parents, children, samples of
    /// grandparents and grandchildren, aggregated attributes).
    Profile {
        /// Database folder.
        dir: PathBuf,
        /// CURIE, label or synonym.
        term: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Hierarchy relations, comma-separated.
        #[arg(long, default_value = "is_a")]
        relations: String,
        /// Entity property to aggregate over the descendants (repeatable).
        #[arg(long)]
        aggregate: Vec<String>,
        /// Type of linked entities to aggregate over the descendants (repeatable).
        #[arg(long)]
        aggregate_linked: Vec<String>,
    },
    /// Curated term mappings: `set TEXT --to CURIE...`, `remove TEXT`, `list`.
    Mapping {
        /// Database folder.
        dir: PathBuf,
        /// set, remove or list.
        action: String,
        /// The phrase.
        text: Option<String>,
        /// A concept the phrase stands for (repeatable).
        #[arg(long)]
        to: Vec<String>,
        /// Why the mapping exists.
        #[arg(long)]
        note: Option<String>,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Embed texts with a built-in embedder (no database): one JSON array per text on stdout.
    /// Default embedder: minilm when its files are present, else static, else hash.
    Embed {
        #[command(flatten)]
        embedding: EmbedArgs,
        /// Dimension of the `hash` embedder.
        #[arg(long, default_value_t = 384)]
        dim: usize,
        /// The texts.
        #[arg(required = true)]
        texts: Vec<String>,
    },
    /// Embedder maintenance: `distill` builds the static table from `MiniLM`.
    Embedder {
        /// distill.
        action: String,
        /// Model folder (default: `$ENGRAM_MODEL_DIR`, else `models/all-minilm-l6-v2`).
        #[arg(long)]
        model_dir: Option<PathBuf>,
        /// Dimensions of the static table (PCA).
        #[arg(long, default_value_t = 256)]
        dims: usize,
    },
    /// Write a consistent copy of DIR into DEST (a folder that opens as a database).
    Backup {
        /// Database folder.
        dir: PathBuf,
        /// Destination folder (created; must not hold a database).
        dest: PathBuf,
    },
}

/// Which embedder, and where its model files are.
#[derive(clap::Args, Debug)]
struct EmbedArgs {
    /// minilm, static or hash.
    #[arg(long)]
    embedder: Option<String>,
    /// Model folder (default: `$ENGRAM_MODEL_DIR`, else `models/all-minilm-l6-v2`).
    #[arg(long)]
    model_dir: Option<PathBuf>,
}

/// Arguments of `ancestors` and `descendants`.
#[derive(clap::Args, Debug)]
struct HierarchyArgs {
    /// Database folder.
    dir: PathBuf,
    /// CURIE, label or synonym.
    term: String,
    /// Relations to follow, comma-separated (`is_a`, `part_of`, …).
    #[arg(long, default_value = "is_a")]
    relations: String,
    /// Workspace.
    #[arg(long, default_value = "default")]
    workspace: String,
    /// One JSON array of `{id, name, distance}`.
    #[arg(long)]
    json: bool,
}

/// Traversal direction on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Dir {
    /// Claims whose object is the entity.
    In,
    /// Claims whose subject is the entity.
    Out,
    /// Both.
    Both,
}

pub(crate) fn spinner(msg: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
    bar.enable_steady_tick(Duration::from_millis(100));
    bar.set_message(msg.to_owned());
    bar
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn name_of(path: &Path) -> String {
    path.display().to_string()
}

/// Reads a vector file of little-endian f32 rows, checking it holds `rows` rows of `dim`.
fn read_vectors(path: &Path, dim: usize, rows: usize) -> Result<Vec<f32>, String> {
    let bytes = read(path)?;
    if dim == 0 || bytes.len() % 4 != 0 || bytes.len() / 4 != rows * dim {
        return Err(format!("{}: {} bytes, expected {rows} rows × {dim} dimensions × 4 bytes", path.display(), bytes.len()));
    }
    Ok(bytes.chunks_exact(4).map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
}

/// Parses every input completely before touching the folder, so a bad row leaves it as it was.
fn import(dir: &Path, entities: &Path, claims: &Path, vectors: Option<(&Path, usize)>) -> Result<(), String> {
    let bar = spinner("parsing entities");
    let ents = parse_entities(&read(entities)?, &name_of(entities)).map_err(|e| e.to_string())?;
    let vecs = vectors.map(|(p, dim)| read_vectors(p, dim, ents.ext_id.len()).map(|v| (v, dim))).transpose()?;
    bar.set_message(format!("parsing claims ({} entities)", ents.ext_id.len()));
    let index = EntityIndex::new(&ents, &name_of(entities)).map_err(|e| e.to_string())?;
    let cls = parse_claims(&read(claims)?, &name_of(claims), &index).map_err(|e| e.to_string())?;
    drop(index);
    let load = BulkLoad {
        workspace: "default".into(),
        predicates: vec![DeclarePredicate::new("SUBCLASS_OF").transitive()],
        entities: ents,
        claims: cls,
    };
    bar.set_message(format!("loading {} entities and {} claims", load.entities.ext_id.len(), load.claims.subject.len()));
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    bar.set_message(format!(
        "loading {} entities and {} claims and writing the snapshot",
        load.entities.ext_id.len(),
        load.claims.subject.len()
    ));
    let info = db.bulk_load_checkpointed(load).map_err(|e| e.to_string())?;
    if let Some((values, dim)) = &vecs {
        bar.set_message("writing vectors");
        db.write_entity_vectors(*dim, values).map_err(|e| e.to_string())?;
    }
    db.wait_for_merge();
    bar.finish_and_clear();
    eprintln!("imported {} entities and {} claims into {}", info.entities, info.claims, dir.display());
    Ok(())
}

/// Parses the whole file before writing; a bad line names file, line and column.
fn import_jsonl(dir: &Path, file: &Path) -> Result<(), String> {
    let text =
        String::from_utf8(read(file)?).map_err(|e| format!("{}: not UTF-8 at byte {}", file.display(), e.utf8_error().valid_up_to()))?;
    let bar = spinner("importing JSON lines");
    // Parse first (with a throwaway in-memory database) so a bad line leaves the folder untouched.
    engram::jsonl::import(&Database::in_memory(), &text, &name_of(file)).map_err(|e| e.to_string())?;
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    let lines = engram::jsonl::import(&db, &text, &name_of(file)).map_err(|e| e.to_string())?;
    db.checkpoint().map_err(|e| e.to_string())?;
    db.wait_for_merge();
    bar.finish_and_clear();
    eprintln!("imported {lines} lines into {}", dir.display());
    Ok(())
}

/// Opens an existing folder; read-only when another process has it open for writing.
pub(crate) fn open_for_reading(dir: &Path) -> Result<Database, String> {
    if !dir.exists() {
        return Err(format!("{}: no such database folder", dir.display()));
    }
    match Database::open(dir) {
        Ok(db) => Ok(db),
        Err(e) if matches!(e.as_storage(), Some(engram::StorageError::Locked(_))) => {
            Database::open_read_only(dir).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

fn export(dir: &Path, out: Option<&Path>) -> Result<(), String> {
    use std::io::Write;
    let db = open_for_reading(dir)?;
    let lines = engram::jsonl::export(&db.snapshot());
    let mut sink: Box<dyn Write> = match out {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    for l in lines {
        writeln!(sink, "{l}").map_err(|e| e.to_string())?;
    }
    sink.flush().map_err(|e| e.to_string())
}

fn stats(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return Err(format!("{}: no such database folder", dir.display()));
    }
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    let c = db.snapshot().row_counts();
    println!("entities {}", c.entities);
    println!("claims {}", c.claims);
    for (state, n) in ["PROPOSED", "ACCEPTED", "DEPRECATED"].iter().zip(c.by_state) {
        println!("state {state} {n}");
    }
    for (name, e, cl) in c.workspaces {
        println!("workspace {name} entities {e} claims {cl}");
    }
    Ok(())
}

fn check(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return Err(format!("{}: no such database folder", dir.display()));
    }
    let report = engram::check(&engram::OsVfs, dir).map_err(|e| e.to_string())?;
    if let Some(s) = &report.snapshot {
        println!("snapshot {s}: ok");
    }
    println!("wal: {} records ok", report.records);
    if let Some((path, offset, bytes)) = &report.torn_tail {
        println!("torn tail: {} bytes at offset {offset} of {} (cut at the next open)", bytes, path.display());
    }
    for t in &report.temp_files {
        println!("leftover temporary file: {t} (removed at the next open)");
    }
    println!("entities {} claims {}", report.entities, report.claims);
    Ok(())
}

fn checkpoint(dir: &Path) -> Result<(), String> {
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    let path = db.checkpoint().map_err(|e| e.to_string())?;
    db.wait_for_merge();
    if let Some(p) = path {
        println!("{}", p.display());
    }
    Ok(())
}

fn config(dir: &Path, key: Option<&str>, value: Option<&str>, workspace: Option<&str>) -> Result<(), String> {
    if !dir.exists() {
        return Err(format!("{}: no such database folder", dir.display()));
    }
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    let settings = db.settings();
    match (key, value, workspace) {
        (None, _, None) => {
            for (k, v) in settings.entries() {
                println!("{k} {}", v.as_deref().unwrap_or("-"));
            }
        }
        (None, _, Some(ws)) => {
            for k in engram::settings::WORKSPACE_SETTING_KEYS {
                println!("{k} {}", settings.get_for(ws, k).map_err(|e| e.to_string())?.as_deref().unwrap_or("-"));
            }
        }
        (Some(k), None, None) => println!("{}", settings.get(k).map_err(|e| e.to_string())?.as_deref().unwrap_or("-")),
        (Some(k), None, Some(ws)) => println!("{}", settings.get_for(ws, k).map_err(|e| e.to_string())?.as_deref().unwrap_or("-")),
        (Some(k), Some(v), None) => db.set_setting(k, v).map_err(|e| e.to_string())?,
        (Some(k), Some(v), Some(ws)) => db.set_workspace_setting(ws, k, v).map_err(|e| e.to_string())?,
    }
    Ok(())
}

/// `engram retention`: applies the workspace's retention setting now.
fn retention(dir: &Path, workspace: &str) -> Result<(), String> {
    if !dir.exists() {
        return Err(format!("{}: no such database folder", dir.display()));
    }
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    let erased = db.apply_retention(workspace).map_err(|e| e.to_string())?;
    println!("{erased}");
    Ok(())
}

/// `engram merge` (`pair` given) or `engram unmerge` (`undo` given); prints how many claims moved.
fn merge(dir: &Path, workspace: &str, pair: Option<(&String, &String)>, undo: Option<&String>) -> Result<(), String> {
    if !dir.exists() {
        return Err(format!("{}: no such database folder", dir.display()));
    }
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    let snap = db.snapshot();
    let ws = snap.workspace(workspace).map_err(|e| e.to_string())?;
    let mut batch = engram::WriteBatch::new(workspace);
    let (entity, op) = match (pair, undo) {
        (Some((from, into)), _) => {
            let (from, into) = (read::resolve(&ws, from)?, read::resolve(&ws, into)?);
            (from, engram::Op::MergeEntities { from: from.into(), into: into.into() })
        }
        (None, Some(ext)) => {
            let e = ws.entity_id(ext).ok_or_else(|| format!("no entity with external id `{ext}` in this workspace"))?;
            (e, engram::Op::UnmergeEntity { entity: e.into() })
        }
        (None, None) => return Err("nothing to merge".to_owned()),
    };
    batch.push(op);
    db.write(&batch).map_err(|e| e.to_string())?;
    let snap = db.snapshot();
    let merges = snap.workspace(workspace).map_err(|e| e.to_string())?.merges_of(entity);
    let moved = merges.last().map_or(0, |m| m.claims);
    println!("{moved} claims moved");
    Ok(())
}

/// Backs up a folder another process may be writing: read-only open, then a snapshot copy.
fn backup(dir: &Path, dest: &Path) -> Result<(), String> {
    let db = open_for_reading(dir)?;
    let path = db.backup(dest).map_err(|e| e.to_string())?;
    println!("{}", path.display());
    Ok(())
}

/// `engram report`: the workspace report, or one claim's attribution trace.
fn report(ws: &engram::WorkspaceView<'_>, trace: Option<&str>) -> Result<String, String> {
    let value = match trace {
        None => serde_json::to_value(ws.report()).map_err(|e| e.to_string())?,
        Some(id) => {
            let c = ws.claim_id(id).and_then(|c| ws.claim(c)).ok_or_else(|| format!("no claim `{id}` in this workspace"))?;
            let ext = |e: engram::EntityId| ws.entity(e).map(|x| x.ext_id.to_string());
            let evidence: Vec<serde_json::Value> = ws
                .evidence_of(c.id)
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|v| {
                    serde_json::json!({"id": v.ext_id.as_ref(), "conversation_id": v.conversation_id.as_deref(), "message_id": v.message_id.as_deref(),
                        "model": v.model.as_deref(), "model_version": v.model_version.as_deref(), "raw_confidence": v.raw_confidence,
                        "snippet": v.snippet.as_deref(), "reasoning": v.reasoning.as_deref(), "observed_at": v.observed_at.to_rfc3339(), "recorded_at": v.recorded_at.to_rfc3339()})
                })
                .collect();
            serde_json::json!({"claim": id, "subject": ext(c.subject), "predicate": c.predicate.as_ref(), "object": ext(c.object),
                "state": c.state.as_str(), "confidence": c.confidence, "superseded_by": c.superseded_by.and_then(|s| ws.claim(s)).map(|s| s.ext_id.to_string()),
                "evidence": evidence})
        }
    };
    Ok(format!("{value}\n"))
}

/// `engram ingest`: one document (`.json`) or one per line (`.jsonl`).
fn ingest(
    dir: &Path,
    file: &Path,
    opts: engram::ingest::IngestOptions,
    embedder: Option<&str>,
    model_dir: Option<&Path>,
) -> Result<(), String> {
    use std::io::Write;
    let text =
        String::from_utf8(read(file)?).map_err(|e| format!("{}: not UTF-8 at byte {}", file.display(), e.utf8_error().valid_up_to()))?;
    let lines: Vec<(usize, &str)> = if file.extension().is_some_and(|e| e == "jsonl") {
        text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty()).collect()
    } else {
        vec![(1, text.as_str())]
    };
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    embed::attach(&db, embedder, model_dir)?;
    let mut failed = 0;
    let mut out = std::io::stdout().lock();
    for (line, doc) in lines {
        match db.ingest(doc, &opts) {
            Ok(report) => writeln!(out, "{}", serde_json::to_string(&report).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?,
            Err(e) => {
                failed += 1;
                eprintln!("engram: {}:{line}: {e}", file.display());
            }
        }
    }
    if failed > 0 {
        return Err(format!("{failed} document(s) rejected; the others were ingested"));
    }
    Ok(())
}

/// Opens DIR for reading, runs `f` on one workspace and prints what it returns.
fn with_workspace(dir: &Path, workspace: &str, f: impl FnOnce(&engram::WorkspaceView<'_>) -> Result<String, String>) -> Result<(), String> {
    use std::io::Write;
    let db = open_for_reading(dir)?;
    let snap = db.snapshot();
    let ws = snap.workspace(workspace).map_err(|e| e.to_string())?;
    let out = f(&ws)?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush()).map_err(|e| e.to_string())
}

/// `engram recall`: the question is embedded by the database's embedder unless `--vector` gives
/// one.
fn recall(command: &Command) -> Result<(), String> {
    let Command::Recall {
        dir,
        text,
        workspace,
        budget,
        seed,
        as_of,
        vector,
        hops,
        history,
        mode,
        json,
        embedding: EmbedArgs { embedder, model_dir },
    } = command
    else {
        return Err("not a recall command".into());
    };
    let db = open_for_reading(dir)?;
    // Without a client vector, the question is embedded by the database's embedder.
    let embedded = match vector {
        Some(_) => None,
        None => {
            embed::attach(&db, embedder.as_deref(), model_dir.as_deref())?;
            db.embed_query(text).map_err(|e| e.to_string())?.map(|v| serde_json::to_string(&v).unwrap_or_default())
        }
    };
    let args = read::RecallArgs {
        text,
        budget: *budget,
        seeds: seed,
        as_of: as_of.as_deref(),
        vector: vector.as_deref().or(embedded.as_deref()),
        hops: *hops,
        history: *history,
        mode,
        json: *json,
    };
    let snap = db.snapshot();
    let ws = snap.workspace(workspace).map_err(|e| e.to_string())?;
    print!("{}", read::recall(&ws, &args)?);
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Import { dir, entities: Some(entities), claims: Some(claims), vectors, dim, .. } => {
            import(dir, entities, claims, vectors.as_deref().zip(*dim))
        }
        Command::Import { dir, jsonl: Some(jsonl), .. } => import_jsonl(dir, jsonl),
        Command::Import { .. } => Err("import needs --entities and --claims, or --jsonl".to_owned()),
        Command::Export { dir, out } => export(dir, out.as_deref()),
        Command::Stats { dir } => stats(dir),
        Command::Check { dir } => check(dir),
        Command::Checkpoint { dir } => checkpoint(dir),
        Command::Backup { dir, dest } => backup(dir, dest),
        Command::Config { dir, key, value, workspace } => config(dir, key.as_deref(), value.as_deref(), workspace.as_deref()),
        Command::Retention { dir, workspace } => retention(dir, workspace),
        Command::Merge { dir, from, into, workspace } => merge(dir, workspace, Some((from, into)), None),
        Command::Unmerge { dir, entity, workspace } => merge(dir, workspace, None, Some(entity)),
        Command::Ingest { dir, file, accept_confidence, resolve_similarity, embedding: EmbedArgs { embedder, model_dir } } => {
            let opts = engram::ingest::IngestOptions { accept_confidence: *accept_confidence, resolve_similarity: *resolve_similarity };
            ingest(dir, file, opts, embedder.as_deref(), model_dir.as_deref())
        }
        Command::ImportOntology { dir, file, format, workspace, json } => {
            ontology::import(dir, file, format.as_deref(), workspace, *json).map(|out| print!("{out}"))
        }
        Command::Ancestors(a) => with_workspace(&a.dir, &a.workspace, |ws| ontology::closure(ws, &a.term, &a.relations, true, a.json)),
        Command::Descendants(a) => with_workspace(&a.dir, &a.workspace, |ws| ontology::closure(ws, &a.term, &a.relations, false, a.json)),
        Command::Resolve { dir, text, workspace, k, json, embedding: EmbedArgs { embedder, model_dir } } => {
            with_workspace(dir, workspace, |ws| ontology::resolve(ws, text, *k, *json, embedder.as_deref(), model_dir.as_deref()))
        }
        Command::Profile { dir, term, workspace, relations, aggregate, aggregate_linked } => {
            let config = engram::ontology::ProfileConfig {
                relations: engram::ontology::Relations::parse(relations),
                aggregate_properties: aggregate.clone(),
                aggregate_linked_types: aggregate_linked.clone(),
                ..engram::ontology::ProfileConfig::default()
            };
            with_workspace(dir, workspace, |ws| ontology::profile(ws, term, config))
        }
        Command::Mapping { dir, action, text, to, note, workspace } => {
            ontology::mapping(dir, workspace, action, text.as_deref(), to, note.as_deref()).map(|out| print!("{out}"))
        }
        Command::Embed { embedding: EmbedArgs { embedder, model_dir }, dim, texts } => {
            embed::embed_texts(embedder.as_deref(), model_dir.as_deref(), *dim, texts).map(|out| print!("{out}"))
        }
        Command::Embedder { action, model_dir, dims } => match action.as_str() {
            "distill" => embed::distill(model_dir.as_deref(), *dims).map(|out| print!("{out}")),
            other => Err(format!("unknown embedder action `{other}` (distill)")),
        },
        Command::Report { dir, workspace, trace } => with_workspace(dir, workspace, |ws| report(ws, trace.as_deref())),
        Command::Neighbors { dir, entity, hops, direction, workspace, json } => {
            let direction = match direction {
                Dir::In => engram::Direction::In,
                Dir::Out => engram::Direction::Out,
                Dir::Both => engram::Direction::Both,
            };
            with_workspace(dir, workspace, |ws| read::neighbors(ws, entity, *hops, direction, *json))
        }
        Command::Recall { .. } => recall(&cli.command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("engram: {e}");
            ExitCode::FAILURE
        }
    }
}
