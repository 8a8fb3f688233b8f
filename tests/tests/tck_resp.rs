//! The openCypher TCK over the wire: every scenario through `ENGRAM.QUERY` on a server started in
//! this process (127.0.0.1, a free port), one fresh workspace per scenario, replies read as RESP3.
//! It must give the same pass set as the embedded run (`tests/tck.rs`): the same skip list, no
//! failure. The client here is deliberately small (a RESP3 reader over a `TcpStream`); the server
//! is also tested with the real clients (redis-py, falkordb-py, redis-cli) in `tests/python`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use engram_tests::tck::{harness, value, Census, Failure, Graph, Outcome};

/// A RESP3 reply.
#[derive(Debug, Clone)]
enum R {
    Nil,
    Int(i64),
    Double(f64),
    Bool(bool),
    Str(String),
    Err(String),
    List(Vec<R>),
    Map(Vec<(String, R)>),
}

fn read_reply(r: &mut impl BufRead) -> std::io::Result<R> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let line = line.trim_end_matches(['\r', '\n']);
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, format!("bad reply line {line:?}"));
    let (kind, rest) = line.split_at_checked(1).ok_or_else(bad)?;
    let n = || rest.parse::<i64>().map_err(|_| bad());
    Ok(match kind {
        "+" => R::Str(rest.to_owned()),
        "-" => R::Err(rest.to_owned()),
        ":" => R::Int(n()?),
        "_" => R::Nil,
        "#" => R::Bool(rest == "t"),
        "," => R::Double(match rest {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "nan" => f64::NAN,
            x => x.parse().map_err(|_| bad())?,
        }),
        "$" => {
            let len = n()?;
            if len < 0 {
                return Ok(R::Nil);
            }
            let mut buf = vec![0u8; usize::try_from(len).map_err(|_| bad())? + 2];
            r.read_exact(&mut buf)?;
            buf.truncate(buf.len() - 2);
            R::Str(String::from_utf8(buf).map_err(|_| bad())?)
        }
        "*" => R::List((0..n()?).map(|_| read_reply(r)).collect::<Result<_, _>>()?),
        "%" => {
            let mut pairs = Vec::new();
            for _ in 0..n()? {
                let R::Str(k) = read_reply(r)? else { return Err(bad()) };
                pairs.push((k, read_reply(r)?));
            }
            R::Map(pairs)
        }
        _ => return Err(bad()),
    })
}

/// One connection speaking RESP3.
struct Client {
    out: TcpStream,
    input: BufReader<TcpStream>,
}

impl Client {
    fn connect(addr: SocketAddr) -> std::io::Result<Client> {
        let out = TcpStream::connect(addr)?;
        out.set_nodelay(true)?;
        let mut c = Client { input: BufReader::new(out.try_clone()?), out };
        c.call(&["HELLO", "3"])?;
        Ok(c)
    }

    fn call(&mut self, args: &[&str]) -> std::io::Result<R> {
        let mut frame = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            frame.extend(format!("${}\r\n", a.len()).as_bytes());
            frame.extend(a.as_bytes());
            frame.extend(b"\r\n");
        }
        self.out.write_all(&frame)?;
        read_reply(&mut self.input)
    }
}

fn get<'a>(m: &'a [(String, R)], k: &str) -> Option<&'a R> {
    m.iter().find(|(key, _)| key == k).map(|(_, v)| v)
}

fn keys(m: &[(String, R)]) -> Vec<&str> {
    let mut k: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
    k.sort_unstable();
    k
}

fn props(r: Option<&R>) -> BTreeMap<String, value::Value> {
    match r {
        Some(R::Map(m)) => m.iter().map(|(k, v)| (k.clone(), to_tck(v))).collect(),
        _ => BTreeMap::new(),
    }
}

fn node(m: &[(String, R)]) -> (i64, value::Node) {
    let labels = match get(m, "labels") {
        Some(R::List(l)) => l.iter().filter_map(|x| if let R::Str(s) = x { Some(s.clone()) } else { None }).collect(),
        _ => std::collections::BTreeSet::new(),
    };
    let id = if let Some(R::Int(i)) = get(m, "id") { *i } else { -1 };
    (id, value::Node { labels, props: props(get(m, "properties")) })
}

fn rel(m: &[(String, R)]) -> (i64, value::Rel) {
    let ty = if let Some(R::Str(s)) = get(m, "type") { s.clone() } else { String::new() };
    let start = if let Some(R::Int(i)) = get(m, "start") { *i } else { -1 };
    (start, value::Rel { ty, props: props(get(m, "properties")) })
}

/// A reply value as the TCK's value: maps shaped as a node, relationship or path are those.
fn to_tck(r: &R) -> value::Value {
    use value::Value as V;
    match r {
        R::Nil | R::Err(_) => V::Null,
        R::Int(i) => V::Int(*i),
        R::Double(f) => V::Float(*f),
        R::Bool(b) => V::Bool(*b),
        R::Str(s) => V::Str(s.clone()),
        R::List(items) => V::List(items.iter().map(to_tck).collect()),
        R::Map(m) => match keys(m).as_slice() {
            ["id", "labels", "properties"] => V::Node(node(m).1),
            ["end", "id", "properties", "start", "type"] => V::Rel(rel(m).1),
            ["nodes", "relationships"] => {
                let (Some(R::List(ns)), Some(R::List(rs))) = (get(m, "nodes"), get(m, "relationships")) else { return V::Null };
                let nodes: Vec<(i64, value::Node)> =
                    ns.iter().filter_map(|n| if let R::Map(m) = n { Some(node(m)) } else { None }).collect();
                let Some(first) = nodes.first() else { return V::Null };
                let steps = rs
                    .iter()
                    .zip(nodes.windows(2))
                    .filter_map(|(r, w)| if let R::Map(m) = r { Some((rel(m), w)) } else { None })
                    .map(|((start, r), w)| (r, start == w[0].0, w[1].1.clone()))
                    .collect();
                V::Path(first.1.clone(), steps)
            }
            _ => V::Map(m.iter().map(|(k, v)| (k.clone(), to_tck(v))).collect()),
        },
    }
}

fn to_json(v: &value::Value) -> serde_json::Value {
    use value::Value as V;
    match v {
        V::Null | V::Node(_) | V::Rel(_) | V::Path(..) => serde_json::Value::Null,
        V::Bool(b) => serde_json::Value::Bool(*b),
        V::Int(i) => serde_json::json!(i),
        V::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, serde_json::Value::Number),
        V::Str(s) => serde_json::Value::String(s.clone()),
        V::List(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        V::Map(m) => serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
    }
}

/// `ERR <Type>[ at l:c]: <message> (<phase>: <detail>)`, as the server words a query error.
fn failure(text: &str) -> Failure {
    let text = text.strip_prefix("ERR ").unwrap_or(text);
    let kind = text.split([' ', ':']).next().unwrap_or("").to_owned();
    let (message, tail) = text.rsplit_once(" (").unwrap_or((text, ""));
    let (phase, detail) = tail.trim_end_matches(')').split_once(": ").unwrap_or(("", ""));
    let phase = if phase == "compile" { "compile time" } else { phase };
    Failure { kind, phase: phase.to_owned(), detail: detail.to_owned(), message: message.to_owned() }
}

/// One scenario's graph: a fresh workspace on the shared server.
struct Remote {
    client: Client,
    workspace: String,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl Graph for Remote {
    fn run(&mut self, query: &str, params: &BTreeMap<String, value::Value>) -> Result<Outcome, Failure> {
        let params = serde_json::Value::Object(params.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()).to_string();
        let harness = |m: String| Failure { kind: "Error".into(), phase: "runtime".into(), detail: "Harness".into(), message: m };
        let reply = self.client.call(&["ENGRAM.QUERY", &self.workspace, query, "PARAMS", &params]).map_err(|e| harness(e.to_string()))?;
        match reply {
            R::Map(m) => {
                let columns = match get(&m, "columns") {
                    Some(R::List(c)) => c.iter().map(|c| if let R::Str(s) = c { s.clone() } else { String::new() }).collect(),
                    _ => Vec::new(),
                };
                let rows = match get(&m, "rows") {
                    Some(R::List(rows)) => {
                        rows.iter().map(|r| if let R::List(cells) = r { cells.iter().map(to_tck).collect() } else { Vec::new() }).collect()
                    }
                    _ => Vec::new(),
                };
                Ok(Outcome { columns, rows })
            }
            R::Err(e) => Err(failure(&e)),
            other => Err(harness(format!("unexpected reply {other:?}"))),
        }
    }

    fn census(&self) -> Census {
        let mut c = Census::default();
        let Ok(mut client) = Client::connect(self.client.out.peer_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))) else {
            return c;
        };
        let Ok(R::Map(m)) = client.call(&["ENGRAM.RO_QUERY", &self.workspace, "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN n, r"]) else {
            return c;
        };
        let Some(R::List(rows)) = get(&m, "rows") else { return c };
        for row in rows {
            let R::List(cells) = row else { continue };
            if let Some(R::Map(n)) = cells.first() {
                let (id, node) = node(n);
                c.nodes.insert(u64::try_from(id).unwrap_or(0));
                c.labels.extend(node.labels.iter().cloned());
                for (k, v) in &node.props {
                    c.props.insert((false, u64::try_from(id).unwrap_or(0), k.clone(), format!("{v:?}")));
                }
            }
            if let Some(R::Map(r)) = cells.get(1) {
                let id = if let Some(R::Int(i)) = get(r, "id") { u64::try_from(*i).unwrap_or(0) } else { 0 };
                c.rels.insert(id);
                for (k, v) in &props(get(r, "properties")) {
                    c.props.insert((true, id, k.clone(), format!("{v:?}")));
                }
            }
        }
        c
    }
}

fn main() -> ExitCode {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let config = engram_server::Config { port: 0, ..engram_server::Config::default() };
        let ran = engram_server::run(engram::Database::in_memory(), &config, |addr, _| {
            let _ = tx.send(addr);
        });
        if let Err(e) = ran {
            eprintln!("TCK over RESP: the server stopped: {e}");
        }
    });
    let Ok(addr) = rx.recv_timeout(std::time::Duration::from_secs(30)) else {
        eprintln!("TCK over RESP: the server did not start");
        return ExitCode::FAILURE;
    };
    harness::run_all("TCK over RESP", &|| -> Box<dyn Graph> {
        let workspace = format!("tck-{}", NEXT.fetch_add(1, Ordering::SeqCst));
        match Client::connect(addr) {
            Ok(client) => Box::new(Remote { client, workspace }),
            Err(e) => panic!("TCK over RESP: cannot connect to {addr}: {e}"),
        }
    })
}
