//! Which parser reads a file: from the `--format` given, else the extension (under an optional
//! `.gz`), else the first bytes.

use crate::ontology::{cxg, terms_jsonl, OntologyDoc};
#[cfg(feature = "ontology-formats")]
use crate::ontology::{obo, rdf};
#[cfg(feature = "ontology-formats")]
use oxrdfio::RdfFormat;
use std::io::{BufRead, BufReader, Read};

/// An ontology file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OBO 1.2 / 1.4.
    Obo,
    /// Turtle.
    Turtle,
    /// N-Triples.
    NTriples,
    /// RDF/XML (`.owl`, `.rdf`).
    RdfXml,
    /// The cellxgene ontology-guide JSON.
    CxgJson,
    /// Engram's term JSON lines.
    TermsJsonl,
}

impl Format {
    /// Parses a `--format` value.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s.to_ascii_lowercase().as_str() {
            "obo" => Format::Obo,
            "ttl" | "turtle" => Format::Turtle,
            "nt" | "ntriples" | "n-triples" => Format::NTriples,
            "owl" | "rdf" | "xml" | "rdfxml" | "rdf/xml" => Format::RdfXml,
            "json" | "cxg" => Format::CxgJson,
            "jsonl" => Format::TermsJsonl,
            _ => return None,
        })
    }

    /// The names `parse` accepts, for error messages.
    pub const NAMES: &'static str = "obo, ttl, nt, owl (RDF/XML), json (cellxgene), jsonl (engram terms)";

    fn from_extension(ext: &str) -> Option<Format> {
        match ext.to_ascii_lowercase().as_str() {
            "obo" => Some(Format::Obo),
            "ttl" => Some(Format::Turtle),
            "nt" => Some(Format::NTriples),
            "owl" | "rdf" => Some(Format::RdfXml),
            "json" => Some(Format::CxgJson),
            "jsonl" | "ndjson" => Some(Format::TermsJsonl),
            _ => None,
        }
    }

    /// Guesses from the first bytes of the (decompressed) content.
    fn sniff(head: &[u8]) -> Option<Format> {
        let text = String::from_utf8_lossy(head);
        let t = text.trim_start_matches('\u{feff}').trim_start();
        if t.starts_with("format-version:") || t.starts_with("[Term]") || t.contains("\n[Term]") {
            Some(Format::Obo)
        } else if t.starts_with("<?xml") || t.starts_with("<rdf:RDF") {
            Some(Format::RdfXml)
        } else if t.starts_with("@prefix") || t.starts_with("PREFIX") || t.starts_with("@base") {
            Some(Format::Turtle)
        } else if t.starts_with('<') {
            Some(Format::NTriples)
        } else if t.starts_with('{') {
            // One term per line has `"id"` in its first object; the cellxgene shape is keyed by CURIE.
            let first = t.lines().next().unwrap_or_default();
            Some(if first.contains("\"id\"") || first.contains("\"ontology\"") { Format::TermsJsonl } else { Format::CxgJson })
        } else {
            None
        }
    }
}

/// Why an ontology file could not be read. Nothing is imported when this is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OntologyError {
    /// The file could not be read.
    #[error("cannot read the ontology file: {0}")]
    Io(String),
    /// The format's parser is not in this build.
    #[error("{0} is not in this build (built without the `ontology-formats` feature)")]
    NotBuilt(&'static str),
    /// The format could not be told.
    #[error("cannot tell the format of {0}; pass --format ({names})", names = Format::NAMES)]
    UnknownFormat(String),
    /// A syntax error, with the parser's position.
    #[error("{format} syntax error: {message}")]
    Syntax {
        /// Which parser.
        format: &'static str,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A JSON document with a wrong field.
    #[error("JSON error at `{path}`: {message}")]
    Json {
        /// The JSON path of the field.
        path: String,
        /// What was wrong (with line and column).
        message: String,
    },
    /// A JSON-lines document with a wrong field.
    #[error("line {line}, field `{path}`: {message}")]
    JsonLine {
        /// 1-based line number.
        line: usize,
        /// The JSON path within the line.
        path: String,
        /// What was wrong.
        message: String,
    },
}

/// Reads an ontology from `input`, the content of a file named `file_name` (gzip-compressed when
/// the name ends in `.gz`), in `format` or the format told by the name's extension, else by the
/// first bytes. The name also names the ontology when its content does not. The engine opens no
/// file itself: the caller passes the reader.
pub fn read_ontology(input: impl Read, file_name: &str, format: Option<Format>) -> Result<OntologyDoc, OntologyError> {
    let (gz, name) = match file_name.strip_suffix(".gz") {
        Some(stem) => (true, stem),
        None => (false, file_name),
    };
    let reader: Box<dyn Read> = if gz { gunzip(input)? } else { Box::new(input) };
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let stem = stem.rsplit(['/', '\\']).next().unwrap_or(stem);
    let stem = stem.split(['-', '_', '.']).next().unwrap_or(stem).to_ascii_lowercase();
    let format = match format.or_else(|| Format::from_extension(ext)) {
        Some(f) => f,
        None => {
            let head = reader.fill_buf().map_err(|e| OntologyError::Io(e.to_string()))?;
            Format::sniff(head).ok_or_else(|| OntologyError::UnknownFormat(file_name.to_owned()))?
        }
    };
    parse(reader, format, &stem)
}

/// A decompressing reader over `input`.
#[cfg(feature = "ontology-formats")]
#[allow(clippy::unnecessary_wraps)] // Reason: one signature with the build without gzip, which fails.
fn gunzip<'r>(input: impl Read + 'r) -> Result<Box<dyn Read + 'r>, OntologyError> {
    Ok(Box::new(flate2::read::MultiGzDecoder::new(input)))
}

#[cfg(not(feature = "ontology-formats"))]
fn gunzip<'r>(_input: impl Read + 'r) -> Result<Box<dyn Read + 'r>, OntologyError> {
    Err(OntologyError::NotBuilt("gzip"))
}

/// Parses `input` in `format`; `name` names the ontology when the content does not. The JSON
/// formats are always built; OBO and RDF need the `ontology-formats` feature.
pub fn parse(input: impl BufRead, format: Format, name: &str) -> Result<OntologyDoc, OntologyError> {
    match format {
        Format::CxgJson => cxg::parse(input, name),
        Format::TermsJsonl => terms_jsonl::parse(input, name),
        #[cfg(feature = "ontology-formats")]
        Format::Obo => obo::parse(input, name),
        #[cfg(feature = "ontology-formats")]
        Format::Turtle => rdf::parse(input, RdfFormat::Turtle, name),
        #[cfg(feature = "ontology-formats")]
        Format::NTriples => rdf::parse(input, RdfFormat::NTriples, name),
        #[cfg(feature = "ontology-formats")]
        Format::RdfXml => rdf::parse(input, RdfFormat::RdfXml, name),
        #[cfg(not(feature = "ontology-formats"))]
        Format::Obo | Format::Turtle | Format::NTriples | Format::RdfXml => Err(OntologyError::NotBuilt("OBO and RDF")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_formats_from_content() {
        assert_eq!(Format::sniff(b"format-version: 1.2\n"), Some(Format::Obo));
        assert_eq!(Format::sniff(b"<?xml version=\"1.0\"?>"), Some(Format::RdfXml));
        assert_eq!(Format::sniff(b"@prefix x: <y> ."), Some(Format::Turtle));
        assert_eq!(Format::sniff(b"<a> <b> <c> ."), Some(Format::NTriples));
        assert_eq!(Format::sniff(b"{\"id\": \"a\"}\n"), Some(Format::TermsJsonl));
        assert_eq!(Format::sniff(b"{\"CL:1\": {\"label\": \"x\"}}"), Some(Format::CxgJson));
        assert_eq!(Format::sniff(b"hello"), None);
    }

    #[test]
    #[cfg(feature = "ontology-formats")]
    fn reads_gzip_and_names_unknown_formats() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"format-version: 1.2\n\n[Term]\nid: T:1\nname: one\n").expect("write");
        let bytes = gz.finish().expect("gz");
        let doc = read_ontology(&bytes[..], "dir/tiny-2024.dat.gz", None).expect("sniffed as OBO");
        assert_eq!((doc.terms.len(), doc.name.as_str()), (1, "tiny"));
        assert!(matches!(read_ontology(&b"\x00\x01"[..], "x.bin", None), Err(OntologyError::UnknownFormat(_))));
    }
}
