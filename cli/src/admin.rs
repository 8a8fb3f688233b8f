//! Looking after a database folder: `stats`, `check`, `checkpoint`, `config`, `retention`,
//! `backup`, and how commands open a folder.

use crate::fail::{fail, Failure};
use crate::outln;
use engram::Database;
use std::path::Path;

/// Refuses a folder that holds no database (missing, or without a log or snapshot) before
/// anything is opened, so a command other than those that create one never writes into it.
pub(crate) fn require_database(dir: &Path) -> Result<(), Failure> {
    let holds = |e: &std::fs::DirEntry| Path::new(&e.file_name()).extension().is_some_and(|x| x == "wal" || x == "snap");
    if std::fs::read_dir(dir).is_ok_and(|entries| entries.flatten().any(|e| holds(&e))) {
        Ok(())
    } else if !dir.exists() {
        Err(missing(dir))
    } else {
        Err(Failure::operator(format!("{} is not an engram database", dir.display())))
    }
}

/// The error for a database folder that does not exist, naming the commands that make one.
pub(crate) fn missing(dir: &Path) -> Failure {
    Failure::operator(format!(
        "{0} does not exist: `engram init {0}` creates an empty database (import, ingest, serve and mcp create one too)",
        dir.display()
    ))
}

/// Opens an existing database for writing.
pub(crate) fn open_existing(dir: &Path) -> Result<Database, Failure> {
    require_database(dir)?;
    crate::audit::open(dir).map_err(fail)
}

/// Opens an existing database for reading only: no lock taken, nothing written, so reads work
/// beside a writer (another process's `ingest` or `serve`) and on read-only media.
pub(crate) fn open_for_reading(dir: &Path) -> Result<Database, Failure> {
    require_database(dir)?;
    Database::open_read_only(dir).map_err(fail)
}

/// Opens an existing database for writing where that is possible, else for reading (another
/// process holds it, or the media is read-only): for the shell, whose statements may do either.
pub(crate) fn open_for_either(dir: &Path) -> Result<(Database, bool), Failure> {
    require_database(dir)?;
    match Database::open(dir) {
        Ok(db) => Ok((db, true)),
        // Locked by another process, or media that cannot be written: both the operator's.
        Err(e) if e.class() == engram::ErrorClass::Operator => Ok((Database::open_read_only(dir).map_err(fail)?, false)),
        Err(e) => Err(fail(e)),
    }
}

/// `engram init`: an empty database (the `default` workspace) in a new or empty folder.
pub fn init(dir: &Path) -> Result<(), Failure> {
    if require_database(dir).is_ok() {
        return Err(Failure::of(engram::ErrorClass::Conflict, format!("{} already holds an engram database", dir.display())));
    }
    if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(Failure::operator(format!("{} is not empty: init needs a new or empty folder", dir.display())));
    }
    drop(crate::audit::open(dir).map_err(fail)?);
    outln!("created an empty database in {}", dir.display());
    Ok(())
}

pub fn stats(dir: &Path) -> Result<(), Failure> {
    let db = open_for_reading(dir)?;
    // The command line has the embedded user's full access: the root principal's scope.
    let scope = db.scope(std::sync::Arc::new(engram::Principal::root()));
    let c = scope.row_counts().map_err(fail)?;
    outln!("entities {}", c.entities);
    outln!("claims {}", c.claims);
    for (state, n) in ["PROPOSED", "ACCEPTED", "DEPRECATED"].iter().zip(c.by_state) {
        outln!("state {state} {n}");
    }
    for (name, e, cl) in &c.workspaces {
        outln!("workspace {name} entities {e} claims {cl}");
    }
    // The names the query language numbers (db.labels(), db.relationshipTypes(), db.propertyKeys()).
    for (name, _, _) in &c.workspaces {
        if let Ok(ws) = scope.workspace(name) {
            let [labels, types, keys] = ws.vocabulary();
            outln!("vocabulary {name} labels {} relationship_types {} property_keys {}", labels.len(), types.len(), keys.len());
        }
    }
    Ok(())
}

pub fn check(dir: &Path) -> Result<(), Failure> {
    require_database(dir)?;
    // What `check` is for: a damaged file is its finding (exit 1), not a failure to run.
    let report = engram::check(&engram::OsVfs, dir).map_err(|e| match e.class() {
        engram::ErrorClass::Corruption => Failure::finding(e.to_string()),
        _ => fail(e),
    })?;
    if let Some(s) = &report.snapshot {
        outln!("snapshot {s}: ok");
    }
    outln!("wal: {} records ok", report.records);
    if let Some((path, offset, bytes)) = &report.torn_tail {
        outln!(
            "torn tail: {bytes} bytes at offset {offset} of {}: a write cut short by a crash, never acknowledged (cut at the next open)",
            path.display()
        );
    }
    for t in &report.temp_files {
        outln!("leftover temporary file: {t} (removed at the next open)");
    }
    outln!("entities {} claims {}", report.entities, report.claims);
    Ok(())
}

pub fn checkpoint(dir: &Path) -> Result<(), Failure> {
    let db = open_existing(dir)?;
    let path = db.checkpoint().map_err(fail)?;
    db.wait_for_merge();
    if let Some(p) = path {
        outln!("{}", p.display());
    }
    Ok(())
}

pub fn config(dir: &Path, key: Option<&str>, value: Option<&str>, workspace: Option<&str>) -> Result<(), Failure> {
    // Reading settings is a read: it works beside a writer.
    let db = if value.is_some() { open_existing(dir)? } else { open_for_reading(dir)? };
    let settings = db.settings();
    match (key, value, workspace) {
        (None, _, None) => {
            for (k, v) in settings.entries() {
                outln!("{k} {}", v.as_deref().unwrap_or("-"));
            }
        }
        (None, _, Some(ws)) => {
            for k in engram::settings::WORKSPACE_SETTING_KEYS {
                outln!("{k} {}", settings.get_for(ws, k).map_err(fail)?.as_deref().unwrap_or("-"));
            }
        }
        (Some(k), None, None) => outln!("{}", settings.get(k).map_err(fail)?.as_deref().unwrap_or("-")),
        (Some(k), None, Some(ws)) => outln!("{}", settings.get_for(ws, k).map_err(fail)?.as_deref().unwrap_or("-")),
        (Some(k), Some(v), None) => db.set_setting(k, v).map_err(fail)?,
        (Some(k), Some(v), Some(ws)) => db.set_workspace_setting(ws, k, v).map_err(fail)?,
    }
    Ok(())
}

/// `engram retention`: applies the workspace's retention setting now.
pub fn retention(dir: &Path, workspace: &str) -> Result<(), Failure> {
    let db = open_existing(dir)?;
    let erased = db.apply_retention(workspace).map_err(fail)?;
    outln!("{erased}");
    Ok(())
}

/// Backs up a folder another process may be writing: read-only open, then a snapshot copy.
pub fn backup(dir: &Path, dest: &Path) -> Result<(), Failure> {
    let db = open_for_reading(dir)?;
    let path = db.backup(dest).map_err(fail)?;
    outln!("{}", path.display());
    Ok(())
}

/// `engram audit DIR`: the access history, read from its files (no lock taken).
pub fn audit(dir: &Path, jsonl: bool, since: Option<&str>, user: Option<String>, op: Option<String>, limit: usize) -> Result<(), Failure> {
    require_database(dir)?;
    let since = since.map(engram::Timestamp::parse).transpose().map_err(|e| Failure::from(format!("--since: {e}")))?;
    let filter = engram::db::audit::AuditFilter { since, user, op, limit };
    let records = engram::db::audit::read_access_history(dir, &filter).map_err(fail)?;
    let lines: Vec<String> = records
        .iter()
        .map(|r| {
            if jsonl {
                r.to_json().to_string()
            } else {
                format!(
                    "{} {} {} {} {} rows={} {} {}",
                    r.at.to_rfc3339(),
                    r.user,
                    r.interface,
                    r.op,
                    r.workspace.as_deref().unwrap_or("-"),
                    r.rows,
                    r.outcome,
                    r.text.replace('\n', " ")
                )
            }
        })
        .collect();
    let text: String = lines.iter().flat_map(|l| [l.as_str(), "\n"]).collect();
    crate::out::print(&text)
}
