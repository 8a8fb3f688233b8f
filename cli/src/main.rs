//! The `engram` binary: commands on a database folder, one file per command group (`data`:
//! import and export; `admin`: stats, check, checkpoint, config, retention, backup; `write`:
//! ingest and merges; `read`: neighbors, recall, report; `ontology`; `embed`). Every command
//! prints through `out` and fails with a `fail::Failure`, whose exit code comes from the engine's
//! error class (`fail::EXIT_CODES`).

mod admin;
mod args;
mod audit;
mod data;
mod docs;
mod embed;
mod fail;
mod ontology;
mod out;
mod query;
mod read;
mod replay;
mod serve;
mod write;

/// The binary runs on mimalloc: imports allocate and free millions of small rows, and in a
/// profile of the ontology imports glibc's `malloc` and `free` took about 30% of the samples.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use args::{Cli, Command, Dir, EmbedArgs};
use clap::Parser;
use engram::ErrorClass;
use fail::Failure;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout (exit 0); usage errors to stderr (exit 2).
            let code = if e.use_stderr() { ErrorClass::Caller.exit_code() } else { 0 };
            if let Err(io) = e.print() {
                return ExitCode::from(out::stdout_error(&io).code);
            }
            return ExitCode::from(code);
        }
    };
    let (at, started) = (engram::Clock::now(&engram::SystemClock), std::time::Instant::now());
    let mut result = run(&cli);
    let op = std::env::args().nth(1).unwrap_or_default();
    if let Err(e) = audit::finish(&op, at, started, result.as_ref().copied().map_err(|f| f.message.as_str())) {
        // An answered write is in the access history, or the command fails.
        result = result.and(Err(fail::fail(e)));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("engram: {}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

/// Runs one command.
fn run(cli: &Cli) -> Result<(), Failure> {
    match &cli.command {
        Command::Import { dir, entities: Some(entities), claims: Some(claims), vectors, dim, .. } => {
            data::import(dir, entities, claims, vectors.as_deref().zip(*dim))
        }
        Command::Import { dir, jsonl: Some(jsonl), .. } => data::import_jsonl(dir, jsonl),
        Command::Import { .. } => Err("import needs --entities and --claims, or --jsonl".into()),
        Command::Init { dir } => admin::init(dir),
        Command::Export { dir, out, time } => data::export(dir, out.as_deref(), time),
        Command::Stats { dir } => admin::stats(dir),
        Command::Check { dir } => admin::check(dir),
        Command::Checkpoint { dir } => admin::checkpoint(dir),
        Command::Backup { dir, dest } => admin::backup(dir, dest),
        Command::Config { dir, key, value, workspace } => admin::config(dir, key.as_deref(), value.as_deref(), workspace.as_deref()),
        Command::Retention { dir, workspace } => admin::retention(dir, workspace),
        Command::Merge { dir, from, into, workspace } => write::merge(dir, workspace, Some((from, into)), None),
        Command::Delete(t) | Command::Restore(t) => {
            let verb = if matches!(cli.command, Command::Delete(_)) { "delete" } else { "restore" };
            let (op, what) = write::lifecycle_op(verb, t.entity.as_deref(), t.claim.as_deref(), None)?;
            write::lifecycle(&t.dir, &t.workspace, op, &what)
        }
        Command::Forget { dir, entity, conversation, workspace } => {
            let (op, what) = write::lifecycle_op("forget", entity.as_deref(), None, conversation.as_deref())?;
            write::lifecycle(dir, workspace, op, &what)
        }
        Command::Unmerge { dir, entity, workspace } => write::merge(dir, workspace, None, Some(entity)),
        Command::Ingest { dir, file, accept_confidence: accept, resolve_similarity: resolve, conversation, embedding: e } => {
            let opts = engram::ingest::IngestOptions { accept_confidence: *accept, resolve_similarity: *resolve };
            write::ingest(dir, file, *conversation, opts, (e.embedder.as_deref(), e.model_dir.as_deref()))
        }
        Command::ImportOntology { dir, file, format, workspace, json } => {
            ontology::import(dir, file, format.as_deref(), workspace, *json).and_then(|text| out::print(&text))
        }
        Command::Ancestors(a) => {
            read::with_workspace(&a.dir, &a.workspace, |ws| ontology::closure(ws, &a.term, &a.relations, true, a.json))
        }
        Command::Descendants(a) => {
            read::with_workspace(&a.dir, &a.workspace, |ws| ontology::closure(ws, &a.term, &a.relations, false, a.json))
        }
        Command::Resolve { dir, text, workspace, k, json, embedding: EmbedArgs { embedder, model_dir } } => {
            read::with_workspace(dir, workspace, |ws| ontology::resolve(ws, text, *k, *json, embedder.as_deref(), model_dir.as_deref()))
        }
        Command::Profile { dir, term, workspace, relations, aggregate, aggregate_linked } => {
            let config = engram::ontology::ProfileConfig {
                relations: engram::ontology::Relations::parse(relations),
                aggregate_properties: aggregate.clone(),
                aggregate_linked_types: aggregate_linked.clone(),
                ..engram::ontology::ProfileConfig::default()
            };
            read::with_workspace(dir, workspace, |ws| ontology::profile(ws, term, config))
        }
        Command::Mapping { dir, action, text, to, note, workspace } => {
            ontology::mapping(dir, workspace, action, text.as_deref(), to, note.as_deref()).and_then(|text| out::print(&text))
        }
        Command::Embed { embedding: EmbedArgs { embedder, model_dir }, dim, texts } => {
            embed::embed_texts(embedder.as_deref(), model_dir.as_deref(), *dim, texts).and_then(|text| out::print(&text))
        }
        Command::Embedder { action, model_dir, dims } => match action.as_str() {
            "distill" => embed::distill(model_dir.as_deref(), *dims).and_then(|text| out::print(&text)),
            other => Err(format!("unknown embedder action `{other}` (distill)").into()),
        },
        Command::Report { dir, workspace, trace } => read::with_workspace(dir, workspace, |ws| read::report(ws, trace.as_deref())),
        Command::Neighbors { dir, entity, hops, direction, workspace, time, json } => {
            let direction = match direction {
                Dir::In => engram::Direction::In,
                Dir::Out => engram::Direction::Out,
                Dir::Both => engram::Direction::Both,
            };
            let visibility = time.visibility(false)?;
            read::with_workspace(dir, workspace, |ws| read::neighbors(ws, entity, *hops, direction, visibility, *json))
        }
        Command::Recall { .. } => read::recall_command(&cli.command),
        Command::Context { .. } => read::context_command(&cli.command),
        Command::Query { dir, query, workspace, params, json } => query::run(dir, workspace, query, params, *json),
        Command::Shell { dir, workspace } => query::shell(dir, workspace),
        Command::Serve(args) => serve::run(args),
        Command::Mcp { dir, workspace, user, connect, embedding: EmbedArgs { embedder, model_dir } } => match connect {
            Some(url) => serve::mcp_connect(url, workspace),
            None => serve::mcp(dir, workspace, user.as_deref(), embedder.as_deref(), model_dir.as_deref()),
        },
        Command::User(u) => serve::user(u),
        Command::Role(r) => serve::role(r),
        Command::Tag { dir, workspace, words } => serve::tag(dir, workspace, words),
        Command::Audit { dir, jsonl, since, user, op, limit } => {
            admin::audit(dir, *jsonl, since.as_deref(), user.clone(), op.clone(), *limit)
        }
        Command::Policy(p) => serve::policy(p),
        Command::Replay { file, budgets, k, json, keep, weights, misses, embedding: EmbedArgs { embedder, model_dir } } => {
            replay::run(&replay::ReplayArgs {
                file,
                embedder: embedder.as_deref(),
                model_dir: model_dir.as_deref(),
                budgets,
                ks: k,
                json: *json,
                keep: keep.as_deref(),
                weights: weights.as_deref(),
                misses: misses.as_deref(),
            })
        }
    }
}
