//! Every write the command line makes is recorded in the database's access history: the commands
//! that open a database for writing do so through `open`, which keeps a handle, and `finish`
//! records the command (its words, `--param` values only as a digest) once it is done, durably,
//! before the folder's lock is released.

use std::path::Path;
use std::sync::Mutex;

use engram::db::audit::{sha256_hex, AccessRecord};
use engram::Database;

/// The database the command opened for writing, kept until its record is written.
static OPENED: Mutex<Option<Database>> = Mutex::new(None);

/// Opens the database in `dir` for writing, remembering it for the command's record.
pub fn open(dir: &Path) -> Result<Database, engram::Error> {
    let db = Database::open(dir)?;
    if let Ok(mut opened) = OPENED.lock() {
        *opened = Some(db.clone());
    }
    Ok(db)
}

/// Records the command that ran (when it opened a database for writing) with its outcome.
pub fn finish(op: &str, at: engram::Timestamp, started: std::time::Instant, outcome: Result<(), &str>) -> Result<(), engram::Error> {
    let Some(db) = OPENED.lock().ok().and_then(|mut o| o.take()) else { return Ok(()) };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut words = Vec::with_capacity(args.len());
    let mut params = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--param" {
            params.extend(it.next().cloned());
            words.push("--param [hashed]".to_owned());
        } else if let Some(v) = a.strip_prefix("--param=") {
            params.push(v.to_owned());
            words.push("--param [hashed]".to_owned());
        } else {
            words.push(a.clone());
        }
    }
    let workspace = args.iter().position(|a| a == "--workspace").and_then(|i| args.get(i + 1)).cloned();
    let record = AccessRecord {
        at,
        user: std::env::var("USER").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "cli".to_owned()),
        roles: Vec::new(),
        interface: "cli".to_owned(),
        workspace,
        op: op.to_owned(),
        text: words.join(" "),
        params_sha256: (!params.is_empty()).then(|| sha256_hex(&params.join("\n"))),
        rows: 0,
        claims: Vec::new(),
        duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        outcome: match outcome {
            Ok(()) => "ok".to_owned(),
            Err(e) => format!("error: {}", e.chars().take(300).collect::<String>()),
        },
    };
    db.record_access(record, true)
}
