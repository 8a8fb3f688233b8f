//! Replies as JSON values (the HTTP API's bodies and MCP's tool results): the same values the
//! RESP3 reply holds, maps as objects, an error as `{"error": {"class", "message"}}`.

use serde_json::{json, Map, Value};

use super::encode::double_text;
use super::Reply;

/// A reply as a JSON value (an error inside, such as one document's failed ingest, becomes
/// `{"error": {…}}` in place).
pub fn to_json(reply: &Reply) -> Value {
    match reply {
        Reply::Simple(s) => Value::String((*s).to_owned()),
        Reply::Error(text) | Reply::Failed(_, text) => json!({"error": {
            "class": reply.error_class().unwrap_or("caller"),
            "message": text.split_once(' ').map_or(text.as_str(), |(_, rest)| rest),
        }}),
        Reply::Int(i) => Value::from(*i),
        Reply::Bulk(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        Reply::Nil => Value::Null,
        Reply::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Reply::Map(pairs) => Value::Object(pairs.iter().map(|(k, v)| (k.clone(), to_json(v))).collect::<Map<_, _>>()),
        Reply::Double(f) => serde_json::Number::from_f64(*f).map_or_else(|| Value::String(double_text(*f)), Value::Number),
        Reply::Bool(b) => Value::Bool(*b),
    }
}
