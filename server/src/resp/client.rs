//! A small RESP3 client (`engram mcp --connect`): connects to `redis://[user:password@]host:port`,
//! says `HELLO 3` (authenticating when the URL names a user), sends commands and reads each reply
//! as JSON, the same JSON the HTTP API gives for a reply (`resp::json`).

use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Largest reply element accepted (a bulk string or an aggregate's count).
pub const CLIENT_REPLY_ELEMENT_MAX: usize = 512 * 1024 * 1024;

/// A connection to an engram (or any RESP3) server.
pub struct Client {
    stream: BufReader<TcpStream>,
}

/// Where and as whom to connect, from a `redis://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `host:port`.
    pub addr: String,
    /// User and password.
    pub auth: Option<(String, String)>,
}

impl Target {
    /// Parses `redis://[user[:password]@]host[:port]` (port 6379 by default).
    pub fn parse(url: &str) -> Result<Target, String> {
        let rest = url.strip_prefix("redis://").ok_or_else(|| format!("`{url}`: expected redis://[user:password@]host:port"))?;
        let rest = rest.trim_end_matches('/');
        let (auth, host) = match rest.rsplit_once('@') {
            Some((cred, host)) => {
                let (u, p) = cred.split_once(':').unwrap_or((cred, ""));
                let u = if u.is_empty() { "default" } else { u };
                (Some((u.to_owned(), p.to_owned())), host)
            }
            None => (None, rest),
        };
        if host.is_empty() {
            return Err(format!("`{url}`: no host"));
        }
        let addr =
            if host.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) { host.to_owned() } else { format!("{host}:6379") };
        Ok(Target { addr, auth })
    }
}

fn invalid(what: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.into())
}

impl Client {
    /// Connects and says `HELLO 3` (with `AUTH` when the target names a user).
    pub async fn connect(target: &Target) -> std::io::Result<Client> {
        let stream = TcpStream::connect(&target.addr).await?;
        stream.set_nodelay(true)?;
        let mut c = Client { stream: BufReader::new(stream) };
        let mut hello = vec!["HELLO".to_owned(), "3".to_owned()];
        if let Some((u, p)) = &target.auth {
            hello.extend(["AUTH".to_owned(), u.clone(), p.clone()]);
        }
        if let Err(e) = c.call(&hello).await? {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                e["error"]["message"].as_str().unwrap_or("HELLO failed").to_owned(),
            ));
        }
        Ok(c)
    }

    /// Sends one command; its reply as JSON, or the error reply as `{"error": {class, message}}`.
    pub async fn call(&mut self, args: &[String]) -> std::io::Result<Result<Value, Value>> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend(format!("${}\r\n", a.len()).as_bytes());
            out.extend(a.as_bytes());
            out.extend(b"\r\n");
        }
        self.stream.get_mut().write_all(&out).await?;
        let v = self.read().await?;
        Ok(if v.get("error").is_some() && v.as_object().is_some_and(|o| o.len() == 1) { Err(v) } else { Ok(v) })
    }

    async fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        if self.stream.read_line(&mut line).await? == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the server closed the connection"));
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    fn count(text: &str) -> std::io::Result<usize> {
        let n: usize = text.parse().map_err(|_| invalid(format!("bad length `{text}`")))?;
        if n > CLIENT_REPLY_ELEMENT_MAX {
            return Err(invalid(format!("a reply element of {n} is over {CLIENT_REPLY_ELEMENT_MAX}")));
        }
        Ok(n)
    }

    /// Reads one reply.
    fn read(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Value>> + Send + '_>> {
        Box::pin(async move {
            let line = self.line().await?;
            let (kind, rest) = line.split_at_checked(1).ok_or_else(|| invalid("an empty reply line"))?;
            Ok(match kind {
                "+" => Value::String(rest.to_owned()),
                "-" | "!" => {
                    let text = if kind == "!" { self.bulk(rest).await? } else { rest.to_owned() };
                    let (prefix, message) = text.split_once(' ').unwrap_or(("ERR", &text));
                    let class = match prefix {
                        "NOPERM" => "denied",
                        "NOAUTH" | "WRONGPASS" => "auth",
                        "OOM" => "limit",
                        _ if message.contains("max-pending-queries") || message.contains("deadline") => "limit",
                        _ => "caller",
                    };
                    json!({"error": {"class": class, "message": message}})
                }
                ":" => Value::from(rest.parse::<i64>().map_err(|_| invalid(format!("bad integer `{rest}`")))?),
                "$" | "=" | "(" | "*" if rest == "-1" => Value::Null,
                "$" | "=" => Value::String(self.bulk(rest).await?),
                "(" => rest.parse::<f64>().map_or(Value::String(rest.to_owned()), Value::from),
                "_" => Value::Null,
                "," => serde_json::Number::from_f64(rest.parse::<f64>().unwrap_or(f64::NAN))
                    .map_or(Value::String(rest.to_owned()), Value::Number),
                "#" => Value::Bool(rest == "t"),
                "*" | "~" | ">" => {
                    let n = Client::count(rest)?;
                    let mut items = Vec::with_capacity(n.min(1024));
                    for _ in 0..n {
                        items.push(self.read().await?);
                    }
                    Value::Array(items)
                }
                "%" | "|" => {
                    let n = Client::count(rest)?;
                    let mut map = Map::new();
                    for _ in 0..n {
                        let k = self.read().await?;
                        let v = self.read().await?;
                        map.insert(k.as_str().map_or_else(|| k.to_string(), str::to_owned), v);
                    }
                    if kind == "|" {
                        // An attribute frame: the reply it annotates follows.
                        return self.read().await;
                    }
                    Value::Object(map)
                }
                other => return Err(invalid(format!("unknown reply type `{other}`"))),
            })
        })
    }

    async fn bulk(&mut self, len: &str) -> std::io::Result<String> {
        let n = Client::count(len)?;
        let mut buf = vec![0u8; n + 2];
        self.stream.read_exact(&mut buf).await?;
        buf.truncate(n);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::Target;

    #[test]
    fn urls_parse() {
        assert_eq!(Target::parse("redis://127.0.0.1:6390").unwrap(), Target { addr: "127.0.0.1:6390".into(), auth: None });
        assert_eq!(Target::parse("redis://ann:pw@h").unwrap(), Target { addr: "h:6379".into(), auth: Some(("ann".into(), "pw".into())) });
        assert_eq!(Target::parse("redis://:pw@h:1/").unwrap().auth, Some(("default".into(), "pw".into())));
        assert!(Target::parse("http://h").is_err() && Target::parse("redis://").is_err());
    }
}
