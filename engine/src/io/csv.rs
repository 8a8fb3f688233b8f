//! Parsing the CSV import format into bulk-load columns, on all cores. Pure: it takes the files'
//! bytes (callers read or map them) and returns columns or an error naming file, line and column.
//!
//! The format (the shared workloads' generator writes it; `engram import` reads it):
//! `entities.csv` = `id,type,name,aliases` with aliases `|`-separated; `claims.csv` =
//! `id,subject,predicate,object,confidence,state,valid_from` with subject/object naming entity ids,
//! state `PROPOSED|ACCEPTED|DEPRECATED` and `valid_from` in epoch seconds. One header line; no
//! quoting (a `"` is refused rather than misread).

use crate::index::strvec::STRVEC_LEAF_LEN;
use crate::model::ClaimState;
use crate::time::Timestamp;
use crate::write::bulk::{BulkClaims, BulkEntities, TextColumn};
use rayon::prelude::*;
use std::collections::HashMap;

/// A malformed CSV file: where, and what was wrong. Nothing was loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct CsvError {
    /// The file name as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based byte column of the offending field (1 for whole-line problems).
    pub column: usize,
    /// What was wrong.
    pub message: String,
}

/// The longest line accepted: far above any valid row, and low enough that 1,024 rows always fit
/// a string leaf's 32-bit offsets.
const LINE_BYTES_MAX: usize = 4 << 20;

fn err(file: &str, line: usize, column: usize, message: String) -> CsvError {
    CsvError { file: file.to_owned(), line, column, message }
}

/// 1-based column of `field` inside `row` (both borrowed from the same line).
fn column(row: &str, field: &str) -> usize {
    (field.as_ptr() as usize).saturating_sub(row.as_ptr() as usize) + 1
}

/// The header of an entities file.
pub const ENTITY_HEADER: [&str; 4] = ["id", "type", "name", "aliases"];
/// The header of a claims file.
pub const CLAIM_HEADER: [&str; 7] = ["id", "subject", "predicate", "object", "confidence", "state", "valid_from"];

/// Checks the first line of `data` against `want`, naming the first column that differs.
fn check_header(data: &[u8], file: &str, want: &[&str]) -> Result<(), CsvError> {
    let end = memchr::memchr(b'\n', data).unwrap_or(data.len());
    let line = String::from_utf8_lossy(&data[..end]);
    let line = line.strip_suffix('\r').unwrap_or(&line);
    let line = line.strip_prefix('\u{feff}').unwrap_or(line);
    let mut col = 1;
    let mut got = line.split(',');
    for w in want {
        match got.next() {
            Some(g) if g.trim() == *w => col += g.len() + 1,
            other => {
                let found = other.map_or("the end of the line".to_owned(), |g| format!("`{g}`"));
                return Err(err(file, 1, col, format!("header: expected `{w}` (the header is `{}`), found {found}", want.join(","))));
            }
        }
    }
    if let Some(extra) = got.next() {
        return Err(err(file, 1, col, format!("header: unexpected column `{extra}` (the header is `{}`)", want.join(","))));
    }
    Ok(())
}

/// The file position of a value the bulk load's checks refused (`BulkLoad::check`): row `row` is
/// line `row + 2` (a header, then one row per line), and `field` names its column.
pub fn locate(e: &crate::error::BulkError, entities: (&[u8], &str), claims: (&[u8], &str)) -> Option<CsvError> {
    let (header, (data, file)): (&[&str], _) = match e.section {
        "entities" => (&ENTITY_HEADER, entities),
        "claims" => (&CLAIM_HEADER, claims),
        _ => return None,
    };
    let csv_name = match e.field {
        "ext_id" => "id",
        "entity_type" => "type",
        f => f,
    };
    let index = header.iter().position(|h| *h == csv_name)?;
    let line = data.split(|b| *b == b'\n').nth(e.row + 1)?;
    let column = line.split(|b| *b == b',').take(index).map(|f| f.len() + 1).sum::<usize>() + 1;
    Some(err(file, e.row + 2, column, format!("{}: {}", e.field, e.kind)))
}

/// Splits `data` after its header line into about `parts` pieces at line boundaries; each piece
/// comes with the 1-based line number of its first line and its number of lines. Every piece but
/// the last holds a multiple of 1,024 lines, so the text columns parsed from the pieces join
/// without copying (`TextColumn::append` shares whole leaves).
fn split_lines(data: &[u8], parts: usize) -> Vec<(usize, &[u8], usize)> {
    let start = memchr::memchr(b'\n', data).map_or(data.len(), |i| i + 1);
    let body = &data[start..];
    if body.is_empty() {
        return Vec::new();
    }
    let target = body.len().div_ceil(parts.max(1)).max(1);
    let mut cuts = vec![0];
    let mut at = 0;
    while at < body.len() {
        at = if at + target >= body.len() {
            body.len()
        } else {
            memchr::memchr(b'\n', &body[at + target..]).map_or(body.len(), |i| at + target + i + 1)
        };
        cuts.push(at);
    }
    // Line numbers need every piece's newline count: counted in parallel, summed in order.
    let newlines: Vec<usize> = cuts.par_windows(2).map(|w| memchr::memchr_iter(b'\n', &body[w[0]..w[1]]).count()).collect();
    // Each inner cut moves forward to the next line number divisible by a leaf's rows: (byte
    // offset, lines before it).
    let mut aligned = vec![(0, 0)];
    let mut lines = 0;
    for (k, cut) in newlines.iter().zip(&cuts[1..cuts.len() - 1]) {
        lines += k;
        let skip = lines.next_multiple_of(STRVEC_LEAF_LEN) - lines;
        let moved = if skip == 0 { Some(*cut) } else { memchr::memchr_iter(b'\n', &body[*cut..]).nth(skip - 1).map(|j| cut + j + 1) };
        if let Some(pos) = moved.filter(|pos| *pos > aligned[aligned.len() - 1].0 && *pos < body.len()) {
            aligned.push((pos, lines + skip));
        }
    }
    let total = newlines.iter().sum::<usize>() + usize::from(body[body.len() - 1] != b'\n');
    aligned.push((body.len(), total));
    aligned.windows(2).map(|w| (2 + w[0].1, &body[w[0].0..w[1].0], w[1].1 - w[0].1)).collect()
}

/// Refuses a blank line and one longer than `LINE_BYTES_MAX`.
fn check_length(file: &str, line: usize, row: &str) -> Result<(), CsvError> {
    if row.is_empty() {
        return Err(err(file, line, 1, "blank line".to_owned()));
    }
    if row.len() > LINE_BYTES_MAX {
        return Err(err(file, line, LINE_BYTES_MAX + 1, format!("line longer than {} MiB", LINE_BYTES_MAX >> 20)));
    }
    Ok(())
}

/// The `N` comma-separated fields of one line.
fn fields<'a, const N: usize>(file: &str, line: usize, row: &'a str) -> Result<[&'a str; N], CsvError> {
    let bytes = row.as_bytes();
    let mut out = [""; N];
    let mut start = 0;
    for (k, slot) in out.iter_mut().enumerate() {
        let end = if k + 1 == N {
            if let Some(extra) = memchr::memchr(b',', &bytes[start..]) {
                return Err(err(file, line, start + extra + 1, format!("expected {N} fields, found more")));
            }
            bytes.len()
        } else {
            start
                + memchr::memchr(b',', &bytes[start..])
                    .ok_or_else(|| err(file, line, bytes.len() + 1, format!("expected {N} fields, found {}", k + 1)))?
        };
        *slot = &row[start..end];
        start = end + 1;
    }
    Ok(out)
}

/// A decimal integer (optionally negative).
fn int(file: &str, line: usize, row: &str, what: &str, s: &str) -> Result<i64, CsvError> {
    let bad = || err(file, line, column(row, s), format!("{what} `{s}` is not an integer"));
    let (neg, digits) = s.strip_prefix('-').map_or((false, s), |d| (true, d));
    if digits.is_empty() || digits.len() > 18 {
        return Err(bad());
    }
    let mut v: i64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return Err(bad());
        }
        v = v * 10 + i64::from(b - b'0');
    }
    Ok(if neg { -v } else { v })
}

/// A piece as text: UTF-8 and free of quotes, or an error naming the first offending byte.
fn checked_text<'a>(file: &str, first_line: usize, piece: &'a [u8]) -> Result<&'a str, CsvError> {
    let text = std::str::from_utf8(piece).map_err(|e| {
        let line = first_line + memchr::memchr_iter(b'\n', &piece[..e.valid_up_to()]).count();
        let col = e.valid_up_to() - piece[..e.valid_up_to()].iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
        err(file, line, col, "not UTF-8".to_owned())
    })?;
    if let Some(at) = memchr::memchr(b'"', piece) {
        let line = first_line + memchr::memchr_iter(b'\n', &piece[..at]).count();
        let col = at - piece[..at].iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
        return Err(err(file, line, col, "quoted fields are not supported".to_owned()));
    }
    Ok(text)
}

/// The lines of a piece, with their line numbers.
fn lines<'a>(file: &'a str, first_line: usize, piece: &'a [u8]) -> Result<impl Iterator<Item = (usize, &'a str)> + 'a, CsvError> {
    let text = checked_text(file, first_line, piece)?;
    let mut start = 0;
    let mut line = first_line;
    let len = piece.len();
    Ok(memchr::memchr_iter(b'\n', piece).chain(std::iter::once(len)).filter_map(move |end| {
        if start >= len && end == len {
            return None; // after the final newline
        }
        let l = &text[start..end.max(start)];
        let n = line;
        start = end + 1;
        line += 1;
        Some((n, l.strip_suffix('\r').unwrap_or(l)))
    }))
}

/// Few distinct names (types, predicates), looked up millions of times: a 256-slot table keyed by
/// length and a few bytes finds the candidate, one comparison confirms it.
#[derive(Clone)]
struct Names {
    names: Vec<String>,
    slots: [u16; 256],
}

impl Default for Names {
    fn default() -> Self {
        Names { names: Vec::new(), slots: [u16::MAX; 256] }
    }
}

impl Names {
    fn slot(s: &str) -> usize {
        let b = s.as_bytes();
        let (first, last) = (b.first().copied().unwrap_or(0), b.last().copied().unwrap_or(0));
        (b.len().wrapping_mul(31)
            ^ usize::from(first).wrapping_mul(7)
            ^ usize::from(last).wrapping_mul(131)
            ^ usize::from(b.get(b.len() / 2).copied().unwrap_or(0)))
            & 255
    }

    fn id(&mut self, s: &str) -> Option<u16> {
        let slot = Names::slot(s);
        let hit = self.slots[slot];
        if hit != u16::MAX && self.names[hit as usize] == s {
            return Some(hit);
        }
        if let Some(i) = self.names.iter().position(|n| n == s) {
            return Some(i as u16);
        }
        let id = u16::try_from(self.names.len()).ok().filter(|id| *id != u16::MAX)?;
        self.names.push(s.to_owned());
        if hit == u16::MAX {
            self.slots[slot] = id;
        }
        Some(id)
    }
}

fn merge_names(parts: &[&Names], global: &mut Names) -> Option<Vec<Vec<u16>>> {
    parts.iter().map(|p| p.names.iter().map(|n| global.id(n)).collect()).collect()
}

struct EntityChunk {
    ext: TextColumn,
    ty: Vec<u16>,
    types: Names,
    name: TextColumn,
    aliases: TextColumn,
}

/// Parses an entities file (`id,type,name,aliases`).
pub fn parse_entities(data: &[u8], file: &str) -> Result<BulkEntities, CsvError> {
    check_header(data, file, &ENTITY_HEADER)?;
    let parts = rayon::current_num_threads() * 8;
    let chunks: Vec<EntityChunk> = split_lines(data, parts)
        .into_par_iter()
        .map(|(first_line, piece, _)| {
            let rows = piece.len() / 60 + 16;
            let mut c = EntityChunk {
                ext: TextColumn::with_capacity(rows, rows * 8),
                ty: Vec::with_capacity(rows),
                types: Names::default(),
                name: TextColumn::with_capacity(rows, rows * 16),
                aliases: TextColumn::with_capacity(rows, rows * 32),
            };
            for (line, row) in lines(file, first_line, piece)? {
                check_length(file, line, row)?;
                let [ext, ty, name, aliases] = fields::<4>(file, line, row)?;
                c.ext.push(ext);
                c.ty.push(c.types.id(ty).ok_or_else(|| err(file, line, column(row, ty), "more than 65,535 types".to_owned()))?);
                c.name.push(name);
                c.aliases.push(aliases);
            }
            Ok(c)
        })
        .collect::<Result<_, CsvError>>()?;
    let mut types = Names::default();
    let maps = merge_names(&chunks.iter().map(|c| &c.types).collect::<Vec<_>>(), &mut types)
        .ok_or_else(|| err(file, 1, 1, "more than 65,535 types".to_owned()))?;
    let rows: usize = chunks.iter().map(|c| c.ty.len()).sum();
    let mut e = BulkEntities { alias_separator: '|', ..BulkEntities::default() };
    e.entity_type.reserve(rows);
    for (c, map) in chunks.iter().zip(&maps) {
        e.ext_id.append(&c.ext);
        e.name.append(&c.name);
        e.aliases.append(&c.aliases);
        e.entity_type.extend(c.ty.iter().map(|t| map[*t as usize]));
    }
    e.type_names = types.names;
    Ok(e)
}

/// Maps entity ids (as written in the file) to load rows: numerically when the ids are `0..n` in
/// order (the generator's files, no table needed), else through a table.
pub struct EntityIndex<'a> {
    dense: bool,
    n: usize,
    table: HashMap<&'a str, u32>,
}

impl<'a> EntityIndex<'a> {
    /// Indexes `entities`' ids; an id given twice is an error naming its second row.
    pub fn new(entities: &'a BulkEntities, file: &str) -> Result<EntityIndex<'a>, CsvError> {
        let n = entities.ext_id.len();
        let dense = (0..n).into_par_iter().all(|i| {
            let s = entities.ext_id.get(i);
            s.parse::<usize>().ok() == Some(i) && (s == "0" || !s.starts_with('0'))
        });
        let mut table = HashMap::new();
        if !dense {
            table.reserve(n);
            for i in 0..n {
                if table.insert(entities.ext_id.get(i), i as u32).is_some() {
                    return Err(err(file, i + 2, 1, format!("entity id `{}` appears twice", entities.ext_id.get(i))));
                }
            }
        }
        Ok(EntityIndex { dense, n, table })
    }

    /// `row` for an id already read as the number `value` (one leading-zero rule for both).
    fn row_of_number(&self, id: &str, value: u64) -> Option<u32> {
        if self.dense {
            (value < self.n as u64 && (id.len() == 1 || !id.starts_with('0'))).then_some(value as u32)
        } else {
            self.table.get(id).copied()
        }
    }

    fn row(&self, id: &str) -> Option<u32> {
        if self.dense {
            id.parse::<u64>().ok().and_then(|v| self.row_of_number(id, v))
        } else {
            self.table.get(id).copied()
        }
    }
}

/// One piece's share of the claim columns, parsed in place.
struct ClaimSlices<'a> {
    subject: &'a mut [u32],
    pred: &'a mut [u16],
    object: &'a mut [u32],
    confidence: &'a mut [f32],
    state: &'a mut [ClaimState],
    valid_from: &'a mut [Timestamp],
}

/// Parses a claims file (`id,subject,predicate,object,confidence,state,valid_from`). Rows are
/// counted first so every piece parses straight into its slice of the final columns.
pub fn parse_claims(data: &[u8], file: &str, entities: &EntityIndex<'_>) -> Result<BulkClaims, CsvError> {
    check_header(data, file, &CLAIM_HEADER)?;
    let parts = rayon::current_num_threads() * 8;
    let pieces = split_lines(data, parts);
    let counts: Vec<usize> = pieces.iter().map(|p| p.2).collect();
    let total: usize = counts.iter().sum();
    let mut cl = BulkClaims {
        subject: vec![0; total],
        predicate: vec![0; total],
        object: vec![0; total],
        confidence: vec![0.0; total],
        state: vec![ClaimState::Proposed; total],
        valid_from: vec![Timestamp::MIN; total],
        ..BulkClaims::default()
    };
    let mut slices = Vec::with_capacity(pieces.len());
    {
        let (mut s, mut p, mut o, mut c, mut st, mut v) = (
            &mut cl.subject[..],
            &mut cl.predicate[..],
            &mut cl.object[..],
            &mut cl.confidence[..],
            &mut cl.state[..],
            &mut cl.valid_from[..],
        );
        for &k in &counts {
            let (s1, s2) = s.split_at_mut(k);
            let (p1, p2) = p.split_at_mut(k);
            let (o1, o2) = o.split_at_mut(k);
            let (c1, c2) = c.split_at_mut(k);
            let (st1, st2) = st.split_at_mut(k);
            let (v1, v2) = v.split_at_mut(k);
            slices.push(ClaimSlices { subject: s1, pred: p1, object: o1, confidence: c1, state: st1, valid_from: v1 });
            (s, p, o, c, st, v) = (s2, p2, o2, c2, st2, v2);
        }
    }
    let parsed: Vec<(TextColumn, Names, usize)> = pieces
        .into_par_iter()
        .zip(slices)
        .map(|((first_line, piece, _), mut out)| parse_claim_piece(file, first_line, piece, entities, &mut out, true))
        .collect::<Result<_, CsvError>>()?;
    let rows: usize = parsed.iter().map(|p| p.2).sum();
    if rows != total {
        return Err(err(file, 1, 1, format!("counted {total} rows but parsed {rows}")));
    }
    let mut names = Names::default();
    let maps = merge_names(&parsed.iter().map(|p| &p.1).collect::<Vec<_>>(), &mut names)
        .ok_or_else(|| err(file, 1, 1, "more than 65,535 predicates".to_owned()))?;
    let mut remap: Vec<(&mut [u16], &Vec<u16>)> = Vec::new();
    let mut rest = &mut cl.predicate[..];
    for ((_, _, k), map) in parsed.iter().zip(&maps) {
        let (head, tail) = rest.split_at_mut(*k);
        remap.push((head, map));
        rest = tail;
    }
    remap.into_par_iter().for_each(|(slice, map)| slice.iter_mut().for_each(|p| *p = map[*p as usize]));
    cl.ext_id = TextColumn::new();
    for (ext, _, _) in &parsed {
        cl.ext_id.append(ext);
    }
    cl.predicate_names = names.names;
    Ok(cl)
}

/// One claims row's values.
struct ClaimRow<'a> {
    id: &'a str,
    subject: u32,
    pred: u16,
    object: u32,
    confidence: f32,
    state: ClaimState,
    valid_from: Timestamp,
}

/// Parses one piece of a claims file into its slice of the columns. With `quick`, rows in the
/// common shape are read by `quick_claim` in one pass over their bytes; every other row, and every
/// error, goes through the checked path, so both give the same columns and the same errors.
fn parse_claim_piece(
    file: &str,
    first_line: usize,
    piece: &[u8],
    entities: &EntityIndex<'_>,
    out: &mut ClaimSlices<'_>,
    quick: bool,
) -> Result<(TextColumn, Names, usize), CsvError> {
    let text = checked_text(file, first_line, piece)?;
    let mut ext = TextColumn::with_capacity(out.subject.len(), out.subject.len() * 8);
    let mut preds = Names::default();
    let (mut k, mut at, mut line) = (0, 0, first_line);
    while at < text.len() {
        let (row, next) = match quick.then(|| quick_claim(text, at, entities, &mut preds)).flatten() {
            Some(hit) => hit,
            None => {
                let end = memchr::memchr(b'\n', &piece[at..]).map_or(text.len(), |i| at + i);
                let l = &text[at..end];
                (checked_claim(file, line, l.strip_suffix('\r').unwrap_or(l), entities, &mut preds)?, end + 1)
            }
        };
        if k >= out.subject.len() {
            return Err(err(file, line, 1, "more rows than counted".to_owned()));
        }
        ext.push(row.id);
        out.subject[k] = row.subject;
        out.pred[k] = row.pred;
        out.object[k] = row.object;
        out.confidence[k] = row.confidence;
        out.state[k] = row.state;
        out.valid_from[k] = row.valid_from;
        (k, at, line) = (k + 1, next, line + 1);
    }
    Ok((ext, preds, k))
}

/// One claims line, every field checked; errors name the line and column.
fn checked_claim<'a>(
    file: &str,
    line: usize,
    row: &'a str,
    entities: &EntityIndex<'_>,
    preds: &mut Names,
) -> Result<ClaimRow<'a>, CsvError> {
    check_length(file, line, row)?;
    let [id, s, p, o, conf, state, vf] = fields::<7>(file, line, row)?;
    let unknown = |x: &str| err(file, line, column(row, x), format!("unknown entity `{x}`"));
    Ok(ClaimRow {
        id,
        subject: entities.row(s).ok_or_else(|| unknown(s))?,
        pred: preds.id(p).ok_or_else(|| err(file, line, column(row, p), "more than 65,535 predicates".to_owned()))?,
        object: entities.row(o).ok_or_else(|| unknown(o))?,
        confidence: conf.parse().map_err(|_| err(file, line, column(row, conf), format!("confidence `{conf}` is not a number")))?,
        state: ClaimState::parse(state)
            .ok_or_else(|| err(file, line, column(row, state), format!("state `{state}` is not PROPOSED, ACCEPTED or DEPRECATED")))?,
        valid_from: Timestamp::from_epoch_seconds(int(file, line, row, "valid_from", vf)?),
    })
}

/// The end of the non-empty field starting at `from`: the index of the next `,`. `None` when a
/// control byte (such as a line end) or the end of the text comes first. Eight bytes at a time:
/// the lowest flagged byte of the two word tests (equal to `,`; below `0x0e`) is always a real
/// hit, since a test's false flags sit only above one of its real ones.
fn field_end(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let stop = |c: u8| c == b',' || c < 0x0e;
    let mut i = from;
    while let Some(word) = b.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        let x = u64::from_le_bytes(word);
        let commas = x ^ (ONES * u64::from(b','));
        let flags = (commas.wrapping_sub(ONES) & !commas | x.wrapping_sub(ONES * 0x0e) & !x) & HIGHS;
        if flags != 0 {
            i += flags.trailing_zeros() as usize / 8;
            break;
        }
        i += 8;
    }
    while i < b.len() && !stop(b[i]) {
        i += 1;
    }
    (i > from && b.get(i) == Some(&b',')).then_some(i)
}

/// Exact powers of ten in `f32` (10^10 is the last one a 24-bit mantissa holds).
const POW10_F32: [f32; 8] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7];

/// The row at byte `at` of `text` when it has the common shape (decimal entity ids, a confidence
/// of at most 7 digits, an upper-case state, an integer `valid_from`, no `\r` but before the
/// newline), with where the next row starts; `None` sends it to `checked_claim`, which also names
/// any error. A confidence `m / 10^k` with `m < 2^24` and `k <= 7` is one correctly rounded `f32`
/// division of two exact values, so it equals what `str::parse` returns (Clinger's fast path).
fn quick_claim<'a>(text: &'a str, at: usize, entities: &EntityIndex<'_>, preds: &mut Names) -> Option<(ClaimRow<'a>, usize)> {
    let b = text.as_bytes();
    let field = |from: usize| field_end(b, from);
    let number = |from: usize| -> Option<(u64, usize)> {
        let mut i = from;
        let mut v = 0u64;
        while i < b.len() && b[i].is_ascii_digit() && i - from < 18 {
            v = v * 10 + u64::from(b[i] - b'0');
            i += 1;
        }
        (i > from).then_some((v, i))
    };
    let entity = |from: usize| -> Option<(u32, usize)> {
        let (v, end) = number(from)?;
        if b.get(end) != Some(&b',') {
            return None;
        }
        Some((entities.row_of_number(&text[from..end], v)?, end + 1))
    };
    let id_end = field(at)?;
    let (subject, p) = entity(id_end + 1)?;
    let p_end = field(p)?;
    let pred = preds.id(&text[p..p_end])?;
    let (object, c) = entity(p_end + 1)?;
    let (whole, mut i) = number(c)?;
    let (mut m, mut digits, mut frac) = (whole, i - c, 0);
    if b.get(i) == Some(&b'.') {
        let (f, end) = number(i + 1)?;
        frac = end - i - 1;
        digits += frac;
        if digits > 7 {
            return None;
        }
        m = whole * 10u64.pow(frac as u32) + f;
        i = end;
    }
    if digits > 7 || b.get(i) != Some(&b',') {
        return None;
    }
    let confidence = m as f32 / POW10_F32[frac];
    let state = match b.get(i + 1) {
        Some(b'A') => ClaimState::Accepted,
        Some(b'P') => ClaimState::Proposed,
        Some(b'D') => ClaimState::Deprecated,
        _ => return None,
    };
    let s_end = i + 1 + state.as_str().len();
    if b.get(i + 1..s_end) != Some(state.as_str().as_bytes()) || b.get(s_end) != Some(&b',') {
        return None;
    }
    let neg = b.get(s_end + 1) == Some(&b'-');
    let (secs, end) = number(s_end + 1 + usize::from(neg))?;
    let next = match b.get(end) {
        None => end,
        Some(b'\n') => end + 1,
        _ => return None,
    };
    if next - at > LINE_BYTES_MAX {
        return None;
    }
    let valid_from = Timestamp::from_epoch_seconds(if neg { -(secs as i64) } else { secs as i64 });
    Some((ClaimRow { id: &text[at..id_end], subject, pred, object, confidence, state, valid_from }, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field of a generated claims row: mostly the common shape, sometimes not.
    fn claim_field(k: usize) -> proptest::strategy::BoxedStrategy<String> {
        use proptest::prelude::*;
        let (common, odd) = match k {
            0 => ("[0-9]{1,7}|[a-z0-9]{1,9}", "[a-z\t\r é]{1,3}|[0-9a-z]{7,12}|"),
            1 | 3 => ("0|[1-9][0-9]{0,2}", "0[0-9]{1,2}|\\+[0-9]|[a-c]|[0-9]{19,20}|"),
            2 => ("[A-Z_]{1,12}", "[a-z]{1,3}|"),
            4 => ("[01]\\.[0-9]{1,6}|[0-9]{1,3}", "[0-9]{0,3}(\\.[0-9]{0,9})?|1e-3|-0\\.5|NaN|inf|0\\.[0-9]{7,9}"),
            5 => ("ACCEPTED|PROPOSED|DEPRECATED", "accepted| PROPOSED|DEPRECATEDX|ACCEPTE|"),
            _ => ("-?[0-9]{1,10}", "[0-9]{0,20}|1\\.5|[0-9]{1,10}\r|[0-9]{1,5},x"),
        };
        prop_oneof![24 => common, 1 => odd].boxed()
    }

    proptest::proptest! {
        /// The one-pass reader gives exactly the columns, and the errors, of the checked path on
        /// rows of every shape, against a dense id table and a hashed one.
        #[test]
        fn quick_claim_rows_parse_as_the_checked_path_does(
            rows in proptest::collection::vec(
                (0..7usize).map(claim_field).collect::<Vec<_>>(),
                0..40,
            ),
            dense in proptest::bool::ANY,
            final_newline in proptest::bool::ANY,
        ) {
            let mut ents = String::from("id,type,name,aliases\n");
            for i in 0..300 {
                let id = if dense { i.to_string() } else { ["a", "b", "c", "1", "02"][i % 5].repeat(i / 5 + 1) };
                ents.push_str(&id);
                ents.push_str(",t,n,\n");
            }
            let e = parse_entities(ents.as_bytes(), "e.csv").unwrap();
            let idx = EntityIndex::new(&e, "e.csv").unwrap();
            let mut text = rows.iter().map(|r| r.join(",")).collect::<Vec<_>>().join("\n");
            if final_newline {
                text.push('\n');
            }
            let parse = |quick: bool| {
                let n = rows.len() + 1;
                let (mut s, mut p, mut o, mut c, mut st, mut v) =
                    (vec![0; n], vec![0; n], vec![0; n], vec![0.0; n], vec![ClaimState::Proposed; n], vec![Timestamp::MIN; n]);
                let mut out = ClaimSlices { subject: &mut s, pred: &mut p, object: &mut o, confidence: &mut c, state: &mut st, valid_from: &mut v };
                parse_claim_piece("c.csv", 2, text.as_bytes(), &idx, &mut out, quick).map(|(ext, names, k)| {
                    let ext: Vec<String> = (0..ext.len()).map(|i| ext.get(i).to_owned()).collect();
                    let conf: Vec<u32> = c.iter().map(|x| x.to_bits()).collect();
                    (ext, names.names, k, s, p, o, conf, st, v)
                })
            };
            let checked = parse(false);
            proptest::prop_assert_eq!(parse(true), checked);
        }
    }

    #[test]
    fn quick_rows_take_the_common_shape() {
        let e = parse_entities(b"id,type,name,aliases\n0,t,a,\n1,t,b,\n", "e.csv").unwrap();
        let idx = EntityIndex::new(&e, "e.csv").unwrap();
        let mut preds = Names::default();
        let text = "17,1,MEMBER_OF,0,0.8932,DEPRECATED,-1677917794\nnext";
        let (row, next) = quick_claim(text, 0, &idx, &mut preds).unwrap();
        assert_eq!((row.id, row.subject, row.object, row.state, next), ("17", 1, 0, ClaimState::Deprecated, 47));
        assert_eq!((row.confidence, row.valid_from), (0.8932, Timestamp::from_epoch_seconds(-1_677_917_794)));
        // Dense ids are the row numbers as written: `01` names no entity, on either path.
        let leading_zero = b"id,subject,predicate,object,confidence,state,valid_from\n17,01,M,0,0.5,ACCEPTED,1\n";
        assert_eq!(parse_claims(leading_zero, "c.csv", &idx).unwrap_err().message, "unknown entity `01`");
        assert_eq!(idx.row("+1"), Some(1));
        for odd in ["17,1,M,0,1e-3,ACCEPTED,1", "17,1,M,0,0.5,accepted,1", "17,01,M,0,0.5,ACCEPTED,1", "17,1,M,0,0.5,ACCEPTED,1\r\n"] {
            assert!(quick_claim(odd, 0, &idx, &mut preds).is_none(), "{odd}");
        }
    }

    #[test]
    fn parses_and_names_bad_fields() {
        let ents = b"id,type,name,aliases\nauth,service,AuthService,auth-svc|AS\nk,technology,Kafka,\n";
        let e = parse_entities(ents, "entities.csv").unwrap();
        assert_eq!((e.ext_id.len(), e.type_names.len(), e.aliases.get(0)), (2, 2, "auth-svc|AS"));
        let idx = EntityIndex::new(&e, "entities.csv").unwrap();
        let claims = b"id,subject,predicate,object,confidence,state,valid_from\nc1,auth,USES,k,0.9,ACCEPTED,1735689600\n";
        let c = parse_claims(claims, "claims.csv", &idx).unwrap();
        assert_eq!((c.subject[0], c.object[0], c.state[0]), (0, 1, ClaimState::Accepted));
        let bad = b"id,subject,predicate,object,confidence,state,valid_from\nc1,auth,USES,k,0.9,ACCEPTED,1735689600\nc2,auth,USES,nobody,0.5,ACCEPTED,1\n";
        let e2 = parse_claims(bad, "claims.csv", &idx).unwrap_err();
        assert_eq!((e2.line, e2.column), (3, 14));
        assert_eq!(e2.to_string(), "claims.csv:3:14: unknown entity `nobody`");
        let bad = b"id,subject,predicate,object,confidence,state,valid_from\nc1,auth,USES,k,high,ACCEPTED,1\n";
        assert_eq!(parse_claims(bad, "claims.csv", &idx).unwrap_err().column, 16);
        let quoted = b"id,type,name,aliases\n1,t,\"x\",\n";
        assert_eq!(parse_entities(quoted, "e.csv").unwrap_err().to_string(), "e.csv:2:5: quoted fields are not supported");
        let short = b"id,type,name,aliases\n1,t,x\n";
        assert_eq!(parse_entities(short, "e.csv").unwrap_err().line, 2);
        let blank = b"id,type,name,aliases\n1,t,x,\n\n2,t,y,\n";
        assert_eq!(parse_entities(blank, "e.csv").unwrap_err().to_string(), "e.csv:3:1: blank line");
        let long = format!("id,type,name,aliases\n1,t,x,\n2,t,y,{}\n", "a".repeat(LINE_BYTES_MAX));
        assert_eq!(parse_entities(long.as_bytes(), "e.csv").unwrap_err().to_string(), "e.csv:3:4194305: line longer than 4 MiB");
        let no_final_newline = b"id,type,name,aliases\n1,t,x,";
        assert_eq!(parse_entities(no_final_newline, "e.csv").unwrap().ext_id.len(), 1);
    }

    #[test]
    fn pieces_hold_whole_leaves_and_number_lines_exactly() {
        for (rows, parts, final_newline) in
            [(0, 4, true), (1, 4, false), (1023, 3, true), (1024, 2, true), (5000, 16, true), (70_001, 16, false), (70_001, 1, true)]
        {
            let mut data = b"id,type,name,aliases\n".to_vec();
            for i in 0..rows {
                data.extend_from_slice(format!("{i},t,name {i},{}\n", "x".repeat(i % 37)).as_bytes());
            }
            if !final_newline && rows > 0 {
                data.pop();
            }
            let pieces = split_lines(&data, parts);
            assert_eq!(pieces.iter().map(|p| p.2).sum::<usize>(), rows);
            let mut line = 2;
            for (k, (first, piece, count)) in pieces.iter().enumerate() {
                assert_eq!(*first, line, "{rows} rows: piece {k} starts at the right line");
                assert!(k + 1 == pieces.len() || count % STRVEC_LEAF_LEN == 0, "{rows} rows: piece {k} holds {count} lines");
                assert_eq!(lines("e.csv", *first, piece).unwrap().count(), *count);
                line += count;
            }
            let parsed = parse_entities(&data, "e.csv").unwrap();
            assert_eq!(parsed.ext_id.len(), rows);
            for i in (0..rows).step_by(997) {
                assert_eq!((parsed.ext_id.get(i), parsed.name.get(i)), (i.to_string().as_str(), format!("name {i}").as_str()));
            }
        }
        // An error deep in a later piece still names its own line.
        let mut data = b"id,type,name,aliases\n".to_vec();
        for i in 0..50_000 {
            data.extend_from_slice(if i == 41_234 { b"oops\n".to_vec() } else { format!("{i},t,n,\n").into_bytes() }.as_slice());
        }
        assert_eq!(parse_entities(&data, "e.csv").unwrap_err().line, 41_236);
    }
}
