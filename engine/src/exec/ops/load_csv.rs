//! `LOAD CSV`: one row per line of a file of the import folder, each a list of its fields or,
//! `WITH HEADERS`, a map from the first line's names. Fields are strings; an empty one is null
//! (as in Neo4j); a short line's missing fields are null too. RFC 4180 quoting (`"a, b"`, `""`
//! for a quote), a leading byte order mark skipped, blank lines skipped. The file is read and
//! parsed once per query however many input rows name it.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Arc;

use engram_query::plan::CExpr;
use engram_query::{Detail, ErrorType, QueryError};

use super::{limit, Fallible, Row, Runner};
use crate::exec::value::Val;

/// A file's rows: each line's value and line number, and the file's path.
struct File {
    lines: Vec<(Val, i64)>,
    path: Val,
}

fn load_error(message: String) -> QueryError {
    QueryError::runtime(ErrorType::ArgumentError, Detail::InvalidArgumentValue, message)
}

impl Runner<'_, '_, '_> {
    /// `LOAD CSV [WITH HEADERS] FROM from AS slot`: each input row once per line of its file.
    /// `slots`: the row's, its line number's and its file's.
    pub(super) fn load_csv(
        &self,
        from: &CExpr,
        (slot, line_slot, file_slot): (usize, usize, usize),
        headers: bool,
        delimiter: u8,
        rows: Vec<Row>,
    ) -> Fallible<Vec<Row>> {
        let Some(files) = self.files else {
            return Err(Box::new(load_error(
                "LOAD CSV reads the import folder: run the query through Database::query or Scope::query".to_owned(),
            )));
        };
        let mut parsed: HashMap<Arc<str>, Arc<File>> = HashMap::new();
        let mut out = Vec::new();
        for row in rows {
            let url: Arc<str> = match self.eval(from, &row)? {
                Val::Str(s) => s,
                other => return Err(Box::new(load_error(format!("LOAD CSV FROM takes the file's URL as a string, got {}", other.kind())))),
            };
            let file = match parsed.get(&url) {
                Some(file) => Arc::clone(file),
                None => {
                    let (path, bytes) = files(&url).map_err(|e| Box::new(load_error(e)))?;
                    let file = Arc::new(File { lines: parse(&url, &bytes, headers, delimiter, self.rows_max())?, path: Val::Str(path) });
                    parsed.insert(Arc::clone(&url), Arc::clone(&file));
                    file
                }
            };
            if out.len() + file.lines.len() > self.rows_max() {
                return Err(Box::new(limit("rows_max", self.rows_max(), "an intermediate result")));
            }
            for (line, number) in &file.lines {
                let mut r = row.clone();
                r[slot] = line.clone();
                r[line_slot] = Val::Int(*number);
                r[file_slot] = file.path.clone();
                out.push(r);
            }
            self.check()?;
        }
        Ok(out)
    }
}

/// The file's lines as values (lists of fields, or maps by the header's names), each with its line
/// number (where its record starts: a quoted field may span lines).
fn parse(url: &str, bytes: &[u8], headers: bool, delimiter: u8, rows_max: usize) -> Fallible<Vec<(Val, i64)>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).delimiter(delimiter).from_reader(bytes);
    let field = |f: &str| if f.is_empty() { Val::Null } else { Val::str(f) };
    let mut names: Option<Vec<Arc<str>>> = None;
    let mut out = Vec::new();
    // Line numbers counted from the records' byte offsets (the reader's own count leaves out the
    // blank lines it skips).
    let (mut counted_to, mut line) = (0usize, 1i64);
    for record in reader.records() {
        let record = record.map_err(|e| Box::new(load_error(format!("LOAD CSV: {url}{}: {}", at_line(&e), reason(&e)))))?;
        if headers && names.is_none() {
            names = Some(record.iter().map(Arc::from).collect());
            continue;
        }
        let value = match &names {
            Some(names) => {
                let mut map = BTreeMap::new();
                for (i, name) in names.iter().enumerate() {
                    map.insert(Arc::clone(name), record.get(i).map_or(Val::Null, field));
                }
                Val::map(map)
            }
            None => Val::list(record.iter().map(field).collect()),
        };
        // A record's position is where the reader began it, blank lines it skipped included.
        let mut start = record.position().map_or(counted_to, |p| usize::try_from(p.byte()).unwrap_or(usize::MAX)).min(bytes.len());
        while matches!(bytes.get(start), Some(b'\n' | b'\r')) {
            start += 1;
        }
        if start > counted_to {
            #[allow(clippy::naive_bytecount)] // Reason: each byte is counted once over the whole file; no crate for it.
            let newlines = bytes[counted_to..start].iter().filter(|b| **b == b'\n').count();
            line += i64::try_from(newlines).unwrap_or(i64::MAX);
            counted_to = start;
        }
        out.push((value, line));
        if out.len() > rows_max {
            return Err(Box::new(limit("rows_max", rows_max, "the lines of a LOAD CSV file")));
        }
    }
    Ok(out)
}

/// ` line N` of a parse error, when the reader knows it.
fn at_line(e: &csv::Error) -> String {
    e.position().map_or_else(String::new, |p| format!(" line {}", p.line()))
}

fn reason(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { err, .. } => format!("field {} is not UTF-8", err.field() + 1),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(v: &Val) -> String {
        match v {
            Val::Null => "null".to_owned(),
            Val::Str(s) => format!("{s:?}"),
            Val::List(items) => format!("[{}]", items.iter().map(shown).collect::<Vec<_>>().join(", ")),
            Val::Map(m) => format!("{{{}}}", m.iter().map(|(k, v)| format!("{k}: {}", shown(v))).collect::<Vec<_>>().join(", ")),
            other => format!("{other:?}"),
        }
    }

    fn lines(text: &[u8], headers: bool, delimiter: u8) -> Vec<String> {
        parse("t.csv", text, headers, delimiter, 100).unwrap().iter().map(|(v, _)| shown(v)).collect()
    }

    #[test]
    fn fields_quotes_nulls_and_headers() {
        assert_eq!(
            lines(b"a,b\n\"x, y\",\"say \"\"hi\"\"\"\n,3\n", false, b','),
            [r#"["a", "b"]"#, r#"["x, y", "say \"hi\""]"#, r#"[null, "3"]"#]
        );
        assert_eq!(
            lines(b"\xEF\xBB\xBFname;age\r\nAnn;30\r\n\r\nBob\r\n", true, b';'),
            [r#"{age: "30", name: "Ann"}"#, r#"{age: null, name: "Bob"}"#]
        );
        assert_eq!(lines(b"a\tb\n1\t2", false, b'\t'), [r#"["a", "b"]"#, r#"["1", "2"]"#]);
        assert!(lines(b"", true, b',').is_empty());
        let e = parse("t.csv", b"a\n\xFF\n", false, b',', 100).unwrap_err();
        assert!(e.message.contains("t.csv line 2: field 1 is not UTF-8"), "{}", e.message);
        let e = parse("t.csv", b"1\n2\n3\n", false, b',', 2).unwrap_err();
        assert!(e.message.contains("rows_max"), "{}", e.message);
    }
}
