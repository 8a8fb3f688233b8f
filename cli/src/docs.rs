//! Reading an ingest input file into documents, completely, before anything is written: a `.json`
//! file is one document or an array of documents, a `.jsonl` file one document per line. Every
//! error names the file and where in it (line, or byte offset for a `.json` file), then the
//! document's JSON path.

use engram::ingest::IngestDoc;
use serde_json::value::RawValue;
use std::path::Path;

/// The UTF-8 byte order mark some editors write first. RFC 8259 lets a parser ignore it; engram
/// does, for both formats.
const BOM: &str = "\u{feff}";

/// One document of the input and where it starts, for messages: "line 3" or "byte 120".
pub struct Located {
    /// Where the document starts.
    pub at: String,
    /// The document.
    pub doc: IngestDoc,
}

/// Parses every document of `file`'s `text`; the errors of all bad documents, one per line.
pub fn parse_file(file: &Path, text: &str) -> Result<Vec<Located>, String> {
    parse_with(file, text, false, |piece| engram::ingest::parse(piece).map(|doc| vec![doc]))
}

/// Parses every conversation of `file`'s `text` into its documents, one per turn (located by the
/// conversation and the turn's id).
pub fn parse_conversations(file: &Path, text: &str) -> Result<Vec<Located>, String> {
    parse_with(file, text, true, |piece| engram::ingest::parse_conversation(piece).and_then(|c| engram::ingest::conversation_documents(&c)))
}

/// The pieces of `file` (documents of a `.json` value, lines of a `.jsonl` file), each parsed
/// into documents by `parse`; `by_turn`: each located by its message id too.
fn parse_with(
    file: &Path,
    text: &str,
    by_turn: bool,
    parse: impl Fn(&str) -> Result<Vec<IngestDoc>, engram::ingest::IngestError>,
) -> Result<Vec<Located>, String> {
    let name = file.display();
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let pieces: Vec<(String, &str)> = if file.extension().is_some_and(|e| e == "jsonl") {
        text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).map(|(i, l)| (format!("line {}", i + 1), l)).collect()
    } else {
        json_documents(text).map_err(|e| format!("{name}: {e}"))?
    };
    let mut docs = Vec::with_capacity(pieces.len());
    let mut errors = Vec::new();
    for (at, piece) in pieces {
        match parse(piece) {
            Ok(parsed) => docs.extend(parsed.into_iter().map(|doc| match (by_turn, &doc.source.message_id) {
                (true, Some(turn)) => Located { at: format!("{at}, turn {turn}"), doc },
                _ => Located { at: at.clone(), doc },
            })),
            Err(e) => errors.push(format!("{name}: {at}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(docs)
    } else {
        let n = errors.len();
        errors.push(format!("{n} document(s) invalid; nothing was written"));
        Err(errors.join("\n"))
    }
}

/// The documents of a `.json` text, each with its byte offset: exactly one JSON value, an object
/// (one document) or an array of them. Anything after it is an error naming its byte offset.
fn json_documents(text: &str) -> Result<Vec<(String, &str)>, String> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    let first = match stream.next() {
        None => return Err("no JSON document (the file is empty)".into()),
        Some(Err(e)) => return Err(format!("byte {}: {e}", byte_offset(text, e.line(), e.column()))),
        Some(Ok(v)) => v,
    };
    let end = stream.byte_offset();
    if let Some(extra) = text[end..].find(|c: char| !c.is_whitespace()) {
        return Err(format!(
            "byte {}: more after the first JSON value (a .json file holds one document or an array of documents; \
             use .jsonl for one document per line)",
            end + extra
        ));
    }
    let raw = first.get();
    let start = offset_in(text, raw);
    if !raw.starts_with('[') {
        return Ok(vec![(format!("byte {start}"), raw)]);
    }
    let items: Vec<&RawValue> = serde_json::from_str(raw).map_err(|e| format!("byte {start}: {e}"))?;
    Ok(items.into_iter().enumerate().map(|(i, v)| (format!("byte {} (document {i})", offset_in(text, v.get())), v.get())).collect())
}

/// Where `part`, a slice of `whole`, starts in it.
fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

/// The byte offset of `serde_json`'s 1-based line and column (column counts bytes).
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"source": {"conversation_id": "c", "message_id": "m"}, "claims": []}"#;

    #[test]
    fn one_document_an_array_or_an_error_naming_the_byte() {
        let json = Path::new("x.json");
        assert_eq!(parse_file(json, DOC).map(|d| d.len()), Ok(1));
        assert_eq!(parse_file(json, &format!("{BOM}{DOC}")).map(|d| d.len()), Ok(1));
        assert_eq!(parse_file(json, &format!("[{DOC},\n {DOC}]")).map(|d| d.len()), Ok(2));
        let two = format!("{DOC}\n{DOC}");
        let e = parse_file(json, &two).err().unwrap_or_default();
        assert!(e.contains(&format!("byte {}: more after the first JSON value", DOC.len() + 1)), "{e}");
        let e = parse_file(json, &format!("{DOC} x")).err().unwrap_or_default();
        assert!(e.contains(&format!("byte {}", DOC.len() + 1)), "{e}");
        let e = parse_file(json, &format!("[{DOC}, {{\"claims\": 3}}]")).err().unwrap_or_default();
        assert!(e.contains(&format!("byte {} (document 1): claims", DOC.len() + 3)), "{e}");
        assert!(parse_file(json, "  ").is_err());
    }

    #[test]
    fn a_jsonl_error_names_its_line_and_every_bad_line_is_reported() {
        let e = parse_file(Path::new("x.jsonl"), &format!("{DOC}\n\n{{\"claims\": 3}}\n{{\"x\": 1}}\n")).err().unwrap_or_default();
        assert!(e.contains("x.jsonl: line 3: claims"), "{e}");
        assert!(e.contains("x.jsonl: line 4:"), "{e}");
        assert!(e.ends_with("2 document(s) invalid; nothing was written"), "{e}");
    }

    #[test]
    fn byte_offsets_count_bytes_across_lines() {
        assert_eq!(byte_offset("ab\ncd", 2, 2), 4);
        assert_eq!(byte_offset("ab", 1, 1), 0);
    }
}
