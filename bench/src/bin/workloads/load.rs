//! Loading the workload CSV files (`../shared/workloads/README.md`) into engram through its public
//! bulk-load API, parsing on all cores. The files are simple CSV without quoting; a quote or a row
//! with the wrong number of fields is reported with its file and line.

use engram::{BulkClaims, BulkEntities, BulkLoad, ClaimState, DeclarePredicate, TextColumn, Timestamp};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// A malformed input file.
#[derive(Debug)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Splits `data` after its header line into about `parts` pieces at line boundaries; each piece
/// comes with the 1-based line number of its first line.
fn split_lines(data: &[u8], parts: usize) -> Vec<(usize, &[u8])> {
    let start = memchr::memchr(b'\n', data).map_or(data.len(), |i| i + 1);
    let body = &data[start..];
    let target = body.len().div_ceil(parts.max(1)).max(1);
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let end = if at + target >= body.len() {
            body.len()
        } else {
            memchr::memchr(b'\n', &body[at + target..]).map_or(body.len(), |i| at + target + i + 1)
        };
        pieces.push(&body[at..end]);
        at = end;
    }
    // Line numbers: count newlines before each piece (header is line 1).
    let mut line = 2;
    pieces
        .into_iter()
        .map(|p| {
            let n = line;
            line += memchr::memchr_iter(b'\n', p).count();
            (n, p)
        })
        .collect()
}

fn fields<'a, const N: usize>(file: &str, line: usize, row: &'a [u8]) -> Result<[&'a str; N], LoadError> {
    let text = std::str::from_utf8(row).map_err(|_| LoadError(format!("{file}:{line}: not UTF-8")))?;
    if text.contains('"') {
        return Err(LoadError(format!("{file}:{line}: quoted fields are not supported by this loader")));
    }
    let mut out = [""; N];
    let mut it = text.split(',');
    for slot in &mut out {
        *slot = it.next().ok_or_else(|| LoadError(format!("{file}:{line}: expected {N} fields")))?;
    }
    if it.next().is_some() {
        return Err(LoadError(format!("{file}:{line}: expected {N} fields")));
    }
    Ok(out)
}

fn num<T: std::str::FromStr>(file: &str, line: usize, what: &str, s: &str) -> Result<T, LoadError> {
    s.parse().map_err(|_| LoadError(format!("{file}:{line}: bad {what} `{s}`")))
}

/// Interns names chunk-locally; chunks are remapped to one global list afterwards.
#[derive(Default)]
struct Names {
    names: Vec<String>,
    ids: HashMap<String, u16>,
}

impl Names {
    fn id(&mut self, s: &str) -> u16 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.names.len() as u16;
        self.names.push(s.to_owned());
        self.ids.insert(s.to_owned(), i);
        i
    }
}

fn merge_names(parts: &[Names], global: &mut Names) -> Vec<Vec<u16>> {
    parts.iter().map(|p| p.names.iter().map(|n| global.id(n)).collect()).collect()
}

struct EntityChunk {
    csv_ids: Vec<u32>,
    ext: TextColumn,
    ty: Vec<u16>,
    types: Names,
    name: TextColumn,
    aliases: TextColumn,
}

struct ClaimChunk {
    ext: TextColumn,
    subject: Vec<u32>,
    pred: Vec<u16>,
    preds: Names,
    object: Vec<u32>,
    confidence: Vec<f32>,
    state: Vec<ClaimState>,
    valid_from: Vec<Timestamp>,
}

/// Reads `entities.csv` and `claims.csv` of `dir` into a `BulkLoad` for workspace `default`,
/// with `SUBCLASS_OF` declared transitive.
pub fn read_dir(dir: &Path) -> Result<BulkLoad, LoadError> {
    let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| LoadError(format!("{}: {e}", dir.join(name).display())));
    let (ents, claims) = rayon::join(|| read("entities.csv"), || read("claims.csv"));
    let (ents, claims) = (ents?, claims?);
    let parts = rayon::current_num_threads() * 8;

    let chunks: Vec<EntityChunk> = split_lines(&ents, parts)
        .into_par_iter()
        .map(|(first_line, piece)| {
            let mut c = EntityChunk {
                csv_ids: Vec::new(),
                ext: TextColumn::new(),
                ty: Vec::new(),
                types: Names::default(),
                name: TextColumn::new(),
                aliases: TextColumn::new(),
            };
            for (k, row) in piece.split(|b| *b == b'\n').filter(|r| !r.is_empty()).enumerate() {
                let line = first_line + k;
                let [id, ty, name, aliases] = fields::<4>("entities.csv", line, row)?;
                c.csv_ids.push(num("entities.csv", line, "id", id)?);
                c.ext.push(id);
                let t = c.types.id(ty);
                c.ty.push(t);
                c.name.push(name);
                c.aliases.push(aliases);
            }
            Ok(c)
        })
        .collect::<Result<_, LoadError>>()?;
    let mut types = Names::default();
    let type_maps =
        merge_names(&chunks.iter().map(|c| Names { names: c.types.names.clone(), ids: HashMap::new() }).collect::<Vec<_>>(), &mut types);
    let mut e = BulkEntities { alias_separator: '|', ..BulkEntities::default() };
    let mut csv_ids: Vec<u32> = Vec::new();
    for (c, map) in chunks.iter().zip(&type_maps) {
        e.ext_id.append(&c.ext);
        e.name.append(&c.name);
        e.aliases.append(&c.aliases);
        e.entity_type.extend(c.ty.iter().map(|t| map[*t as usize]));
        csv_ids.extend_from_slice(&c.csv_ids);
    }
    e.type_names = types.names;
    // The generator numbers entities 0..n in order; anything else goes through a map.
    let dense = csv_ids.iter().enumerate().all(|(i, id)| *id as usize == i);
    let row_of: HashMap<u32, u32> =
        if dense { HashMap::new() } else { csv_ids.iter().enumerate().map(|(i, id)| (*id, i as u32)).collect() };
    let resolve = |id: u32| -> Option<u32> {
        if dense {
            Some(id)
        } else {
            row_of.get(&id).copied()
        }
    };

    let chunks: Vec<ClaimChunk> = split_lines(&claims, parts)
        .into_par_iter()
        .map(|(first_line, piece)| {
            let mut c = ClaimChunk {
                ext: TextColumn::new(),
                subject: Vec::new(),
                pred: Vec::new(),
                preds: Names::default(),
                object: Vec::new(),
                confidence: Vec::new(),
                state: Vec::new(),
                valid_from: Vec::new(),
            };
            for (k, row) in piece.split(|b| *b == b'\n').filter(|r| !r.is_empty()).enumerate() {
                let line = first_line + k;
                let [id, s, p, o, conf, state, vf] = fields::<7>("claims.csv", line, row)?;
                let unknown = |x: &str| LoadError(format!("claims.csv:{line}: unknown entity {x}"));
                c.ext.push(id);
                c.subject.push(resolve(num("claims.csv", line, "subject", s)?).ok_or_else(|| unknown(s))?);
                let pid = c.preds.id(p);
                c.pred.push(pid);
                c.object.push(resolve(num("claims.csv", line, "object", o)?).ok_or_else(|| unknown(o))?);
                c.confidence.push(num("claims.csv", line, "confidence", conf)?);
                c.state.push(ClaimState::parse(state).ok_or_else(|| LoadError(format!("claims.csv:{line}: bad state `{state}`")))?);
                c.valid_from.push(Timestamp::from_epoch_seconds(num("claims.csv", line, "valid_from", vf)?));
            }
            Ok(c)
        })
        .collect::<Result<_, LoadError>>()?;
    let mut preds = Names::default();
    let pred_maps =
        merge_names(&chunks.iter().map(|c| Names { names: c.preds.names.clone(), ids: HashMap::new() }).collect::<Vec<_>>(), &mut preds);
    let total: usize = chunks.iter().map(|c| c.subject.len()).sum();
    let mut cl = BulkClaims::default();
    cl.subject.reserve(total);
    cl.object.reserve(total);
    cl.predicate.reserve(total);
    cl.confidence.reserve(total);
    cl.state.reserve(total);
    cl.valid_from.reserve(total);
    for (c, map) in chunks.iter().zip(&pred_maps) {
        cl.ext_id.append(&c.ext);
        cl.subject.extend_from_slice(&c.subject);
        cl.object.extend_from_slice(&c.object);
        cl.predicate.extend(c.pred.iter().map(|p| map[*p as usize]));
        cl.confidence.extend_from_slice(&c.confidence);
        cl.state.extend_from_slice(&c.state);
        cl.valid_from.extend_from_slice(&c.valid_from);
    }
    cl.predicate_names = preds.names;
    Ok(BulkLoad {
        workspace: "default".into(),
        predicates: vec![DeclarePredicate::new("SUBCLASS_OF").transitive()],
        entities: e,
        claims: cl,
    })
}
