//! Moving data in and out: `import` (CSV or JSON lines) and `export`.

use crate::admin::open_for_reading;
use crate::fail::{caller, fail, Failure};
use engram::csv::{parse_claims, parse_entities, EntityIndex};
use engram::{BulkLoad, Database, DeclarePredicate};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::time::Duration;

pub fn spinner(msg: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
    bar.enable_steady_tick(Duration::from_millis(100));
    bar.set_message(msg.to_owned());
    bar
}

pub fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::io(path, &e))
}

fn name_of(path: &Path) -> String {
    path.display().to_string()
}

/// Reads a vector file of little-endian f32 rows, checking it holds `rows` rows of `dim` finite
/// values (a bad one is named by row and byte offset).
fn read_vectors(path: &Path, dim: usize, rows: usize) -> Result<Vec<f32>, Failure> {
    let bytes = read(path)?;
    if dim == 0 || bytes.len() % 4 != 0 || bytes.len() / 4 != rows * dim {
        return Err(format!("{}: {} bytes, expected {rows} rows × {dim} dimensions × 4 bytes", path.display(), bytes.len()).into());
    }
    let values: Vec<f32> = bytes.chunks_exact(4).map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        let what = if values[i].is_nan() { "NaN" } else { "infinite" };
        return Err(
            format!("{}: byte {}: row {}, component {}: a vector component is {what}", path.display(), i * 4, i / dim, i % dim).into()
        );
    }
    Ok(values)
}

/// Parses and checks every input completely before touching the folder (headers, every row's
/// fields, every value, the vectors), so bad input leaves it as it was and names file, line and
/// column.
pub fn import(dir: &Path, entities: &Path, claims: &Path, vectors: Option<(&Path, usize)>) -> Result<(), Failure> {
    let bar = spinner("parsing entities");
    let entity_bytes = read(entities)?;
    let ents = parse_entities(&entity_bytes, &name_of(entities)).map_err(caller)?;
    let vecs = vectors.map(|(p, dim)| read_vectors(p, dim, ents.ext_id.len()).map(|v| (v, dim))).transpose()?;
    bar.set_message(format!("parsing claims ({} entities)", ents.ext_id.len()));
    let index = EntityIndex::new(&ents, &name_of(entities)).map_err(caller)?;
    let claim_bytes = read(claims)?;
    let cls = parse_claims(&claim_bytes, &name_of(claims), &index).map_err(caller)?;
    drop(index);
    let load = BulkLoad {
        workspace: "default".into(),
        predicates: vec![DeclarePredicate::new("SUBCLASS_OF").transitive()],
        entities: ents,
        claims: cls,
    };
    load.check(&engram::Limits::default()).map_err(|e| {
        match engram::csv::locate(&e, (&entity_bytes, &name_of(entities)), (&claim_bytes, &name_of(claims))) {
            Some(located) => caller(located),
            None => fail(e),
        }
    })?;
    drop((entity_bytes, claim_bytes));
    bar.set_message(format!("loading {} entities and {} claims", load.entities.ext_id.len(), load.claims.subject.len()));
    let db = crate::audit::open(dir).map_err(fail)?;
    bar.set_message(format!(
        "loading {} entities and {} claims and writing the snapshot",
        load.entities.ext_id.len(),
        load.claims.subject.len()
    ));
    let info = db.bulk_load_checkpointed(load).map_err(fail)?;
    if let Some((values, dim)) = &vecs {
        bar.set_message("writing vectors");
        db.write_entity_vectors(*dim, values).map_err(fail)?;
    }
    db.wait_for_merge();
    bar.finish_and_clear();
    eprintln!("imported {} entities and {} claims into {}", info.entities, info.claims, dir.display());
    Ok(())
}

/// Parses the whole file before writing; a bad line names file, line and column.
pub fn import_jsonl(dir: &Path, file: &Path) -> Result<(), Failure> {
    let text =
        String::from_utf8(read(file)?).map_err(|e| format!("{}: not UTF-8 at byte {}", file.display(), e.utf8_error().valid_up_to()))?;
    let bar = spinner("importing JSON lines");
    // Parse first (with a throwaway in-memory database) so a bad line leaves the folder untouched.
    engram::jsonl::import(&Database::in_memory(), &text, &name_of(file)).map_err(caller)?;
    let db = crate::audit::open(dir).map_err(fail)?;
    let lines = engram::jsonl::import(&db, &text, &name_of(file)).map_err(caller)?;
    db.checkpoint().map_err(fail)?;
    db.wait_for_merge();
    bar.finish_and_clear();
    eprintln!("imported {lines} lines into {}", dir.display());
    Ok(())
}

/// Where an export's lines go, and what a failed write there means.
type Sink = (Box<dyn std::io::Write>, Box<dyn Fn(&std::io::Error) -> Failure>);

pub fn export(dir: &Path, out: Option<&Path>, time: &crate::args::TimeArgs) -> Result<(), Failure> {
    use std::io::Write;
    let at = time.given().then(|| time.visibility(false)).transpose()?;
    let db = open_for_reading(dir)?;
    // The command line has the embedded user's full access: the root principal's scope.
    let scope = db.scope(std::sync::Arc::new(engram::Principal::root()));
    let lines = match &at {
        Some(v) => engram::jsonl::export_scope_at(&scope, v),
        None => engram::jsonl::export_scope(&scope),
    }
    .map_err(fail)?;
    // Lines stream to the file or to stdout; a closed stdout ends the export quietly.
    let (mut sink, failed): Sink = match out {
        Some(p) => {
            let file = std::fs::File::create(p).map_err(|e| Failure::io(p, &e))?;
            let p = p.to_path_buf();
            (Box::new(std::io::BufWriter::new(file)), Box::new(move |e| Failure::io(&p, e)))
        }
        None => (Box::new(std::io::BufWriter::new(std::io::stdout().lock())), Box::new(crate::out::stdout_error)),
    };
    for l in lines {
        writeln!(sink, "{l}").map_err(|e| failed(&e))?;
    }
    sink.flush().map_err(|e| failed(&e))
}
