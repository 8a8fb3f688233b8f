//! Replies as JSON: the same values the RESP3 reply holds (maps as objects), and errors as
//! `{"error": {"class", "message"}}` with the HTTP status of their class.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use crate::resp::encode::double_text;
use crate::resp::Reply;

/// An error's class (see `Reply::error_class`), its HTTP status and its message (the RESP
/// prefix such as `ERR` taken off).
pub fn classify(reply: &Reply) -> Option<(&'static str, StatusCode, String)> {
    let class = reply.error_class()?;
    let text = match reply {
        Reply::Failed(_, t) | Reply::Error(t) => t.as_str(),
        _ => "",
    };
    let status = match class {
        "denied" => StatusCode::FORBIDDEN,
        "auth" => StatusCode::UNAUTHORIZED,
        "conflict" => StatusCode::CONFLICT,
        "limit" if text.starts_with("OOM") => StatusCode::PAYLOAD_TOO_LARGE,
        "limit" if text.contains("max-pending-queries") => StatusCode::SERVICE_UNAVAILABLE,
        "limit" => StatusCode::UNPROCESSABLE_ENTITY,
        "operator" => StatusCode::SERVICE_UNAVAILABLE,
        "corruption" | "bug" => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    Some((class, status, text.split_once(' ').map_or(text, |(_, rest)| rest).to_owned()))
}

/// A reply as a JSON value (an error inside, such as one document's failed ingest, becomes
/// `{"error": {…}}` in place).
pub fn to_json(reply: &Reply) -> Value {
    match reply {
        Reply::Simple(s) => Value::String(s.clone()),
        Reply::Error(_) | Reply::Failed(..) => match classify(reply) {
            Some((class, _, message)) => json!({"error": {"class": class, "message": message}}),
            None => Value::Null,
        },
        Reply::Int(i) => Value::from(*i),
        Reply::Bulk(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        Reply::Nil => Value::Null,
        Reply::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Reply::Map(pairs) => Value::Object(pairs.iter().map(|(k, v)| (k.clone(), to_json(v))).collect::<Map<_, _>>()),
        Reply::Double(f) => serde_json::Number::from_f64(*f).map_or_else(|| Value::String(double_text(*f)), Value::Number),
        Reply::Bool(b) => Value::Bool(*b),
    }
}

/// An error response.
pub fn error(status: StatusCode, class: &str, message: impl Into<String>) -> Response {
    let body = json!({"error": {"class": class, "message": message.into()}});
    let mut r = (status, axum::Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Basic realm=\"engram\", Bearer"));
    }
    r
}

/// A command's reply as a response: 200 with its JSON, or the error's status.
pub fn respond(reply: &Reply) -> Response {
    match classify(reply) {
        Some((class, status, message)) => error(status, class, message),
        None => (StatusCode::OK, axum::Json(to_json(reply))).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engram::ErrorClass;

    #[test]
    fn values_and_errors() {
        let r = Reply::Map(vec![
            ("a".into(), Reply::Array(vec![Reply::Int(1), Reply::Double(0.5), Reply::Nil, Reply::Bool(true)])),
            ("b".into(), Reply::text("x")),
            ("c".into(), Reply::Double(f64::INFINITY)),
        ]);
        assert_eq!(to_json(&r), json!({"a": [1, 0.5, null, true], "b": "x", "c": "inf"}));
        let denied = Reply::Error("NOPERM User u has no write access to workspace 'w'".into());
        assert_eq!(classify(&denied).map(|(c, s, _)| (c, s)), Some(("denied", StatusCode::FORBIDDEN)));
        let limit = Reply::failed(ErrorClass::Limit, "ERR too many pending queries (max-pending-queries is 1); retry later");
        let (class, status, message) = classify(&limit).expect("an error");
        assert_eq!((class, status), ("limit", StatusCode::SERVICE_UNAVAILABLE));
        assert!(message.starts_with("too many pending"));
        assert_eq!(classify(&Reply::ok()), None);
    }
}
