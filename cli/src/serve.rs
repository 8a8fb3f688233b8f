//! `engram serve`: the database over the network (the `engram-server` crate).

use std::net::IpAddr;
use std::path::Path;

use crate::fail::{fail, Failure};
use crate::out;

/// Opens (or creates) DIR and serves it until SHUTDOWN, SIGTERM or SIGINT.
pub fn run(dir: &Path, bind: IpAddr, port: u16, http_port: Option<u16>) -> Result<(), Failure> {
    if http_port.is_some() {
        return Err(Failure::from("--http-port: the HTTP API is not served yet"));
    }
    let db = engram::Database::open(dir).map_err(fail)?;
    let config = engram_server::Config { bind, port, ..engram_server::Config::default() };
    let mut printed = Ok(());
    engram_server::run(db, &config, |addr| printed = out::print(&format!("listening on {addr}\n")))
        .map_err(|e| Failure::operator(format!("engram serve: {e}")))?;
    printed
}
