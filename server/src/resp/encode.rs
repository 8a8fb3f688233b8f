//! Replies and their encoding in RESP2 and RESP3. RESP3 types fall back in RESP2 as Redis does:
//! a map is a flat array of keys and values, a double a bulk string, a boolean an integer, null
//! a nil bulk. No attribute frames are ever sent (redis-py rejects them), and map keys are
//! strings only.

use std::io::Write as _;

/// A reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+OK`: engram's own words only, never a client's (no CR or LF to strip).
    Simple(&'static str),
    /// `-ERR …`: the text includes its prefix (`ERR`, `NOAUTH`, …).
    Error(String),
    /// An error from the engine, with its class (so the HTTP API can pick a status): encoded
    /// exactly as `Error`.
    Failed(engram::ErrorClass, String),
    /// `:n`.
    Int(i64),
    /// `$n` bytes.
    Bulk(Vec<u8>),
    /// Null (RESP2: a nil bulk).
    Nil,
    /// `*n` elements.
    Array(Vec<Reply>),
    /// `%n` pairs (RESP2: a flat array).
    Map(Vec<(String, Reply)>),
    /// `,x` (RESP2: a bulk string).
    Double(f64),
    /// `#t` / `#f` (RESP2: `:1` / `:0`).
    Bool(bool),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple("OK")
    }

    /// A bulk string from text.
    pub fn text(s: impl Into<String>) -> Reply {
        Reply::Bulk(s.into().into_bytes())
    }

    /// An `ERR` error.
    pub fn err(message: impl std::fmt::Display) -> Reply {
        Reply::Error(format!("ERR {message}"))
    }

    /// Whether this is an error reply.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_) | Reply::Failed(..))
    }

    /// An error's class as the HTTP API and the metrics name it: the engine's class for an
    /// engine error; `denied` (`NOPERM`), `auth` (`NOAUTH`, `WRONGPASS`) or `caller` for the
    /// server's own errors; `None` for a reply that is not an error.
    pub fn error_class(&self) -> Option<&'static str> {
        match self {
            Reply::Failed(class, _) => Some(class_name(*class)),
            Reply::Error(text) => Some(match text.split(' ').next().unwrap_or("") {
                "NOPERM" => "denied",
                "NOAUTH" | "WRONGPASS" => "auth",
                _ => "caller",
            }),
            _ => None,
        }
    }

    /// An error reply of the engine's class `class`; `text` includes its prefix.
    pub fn failed(class: engram::ErrorClass, text: impl Into<String>) -> Reply {
        Reply::Failed(class, text.into())
    }

    /// Appends the encoding of this reply for protocol `proto` (2 or 3) to `out`.
    pub fn encode(&self, proto: u8, out: &mut Vec<u8>) {
        let resp3 = proto >= 3;
        match self {
            Reply::Simple(s) => {
                out.push(b'+');
                out.extend_from_slice(s.as_bytes());
                out.extend(b"\r\n");
            }
            Reply::Error(s) | Reply::Failed(_, s) => {
                out.push(b'-');
                out.extend(s.bytes().map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
                out.extend(b"\r\n");
            }
            Reply::Int(i) => {
                let _ = write!(out, ":{i}\r\n");
            }
            Reply::Bulk(b) => {
                let _ = write!(out, "${}\r\n", b.len());
                out.extend(b);
                out.extend(b"\r\n");
            }
            Reply::Nil if resp3 => out.extend(b"_\r\n"),
            Reply::Nil => out.extend(b"$-1\r\n"),
            Reply::Array(items) => {
                let _ = write!(out, "*{}\r\n", items.len());
                for i in items {
                    i.encode(proto, out);
                }
            }
            Reply::Map(pairs) => {
                if resp3 {
                    let _ = write!(out, "%{}\r\n", pairs.len());
                } else {
                    let _ = write!(out, "*{}\r\n", pairs.len() * 2);
                }
                for (k, v) in pairs {
                    Reply::Bulk(k.as_bytes().to_vec()).encode(proto, out);
                    v.encode(proto, out);
                }
            }
            Reply::Double(f) => {
                let text = double_text(*f);
                if resp3 {
                    let _ = write!(out, ",{text}\r\n");
                } else {
                    Reply::Bulk(text.into_bytes()).encode(proto, out);
                }
            }
            Reply::Bool(b) if resp3 => out.extend(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            Reply::Bool(b) => Reply::Int(i64::from(*b)).encode(proto, out),
        }
    }
}

/// The API's name of an engine error class.
pub fn class_name(class: engram::ErrorClass) -> &'static str {
    match class {
        engram::ErrorClass::Caller => "caller",
        engram::ErrorClass::Conflict => "conflict",
        engram::ErrorClass::Limit => "limit",
        engram::ErrorClass::Operator => "operator",
        engram::ErrorClass::Corruption => "corruption",
        engram::ErrorClass::Bug => "bug",
    }
}

/// A double as RESP3 and Redis write it: the shortest text that reads back the same, `inf`,
/// `-inf`, `nan`.
pub fn double_text(f: f64) -> String {
    if f.is_nan() {
        "nan".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{f:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::Reply;

    fn enc(r: &Reply, proto: u8) -> String {
        let mut out = Vec::new();
        r.encode(proto, &mut out);
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn resp3_types_fall_back_in_resp2() {
        let r = Reply::Map(vec![("a".into(), Reply::Double(1.5)), ("b".into(), Reply::Bool(true)), ("c".into(), Reply::Nil)]);
        assert_eq!(enc(&r, 3), "%3\r\n$1\r\na\r\n,1.5\r\n$1\r\nb\r\n#t\r\n$1\r\nc\r\n_\r\n");
        assert_eq!(enc(&r, 2), "*6\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n:1\r\n$1\r\nc\r\n$-1\r\n");
        assert_eq!(enc(&Reply::Error("ERR a\r\nb".into()), 2), "-ERR a  b\r\n");
        assert_eq!(enc(&Reply::Double(f64::NEG_INFINITY), 3), ",-inf\r\n");
        assert_eq!(enc(&Reply::Double(1.0), 2), "$3\r\n1.0\r\n");
    }
}
