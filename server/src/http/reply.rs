//! Replies as JSON: the same values the RESP3 reply holds (maps as objects), and errors as
//! `{"error": {"class", "message"}}` with the HTTP status of their class.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub use crate::resp::json::to_json;
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
