//! The one path to stdout. Every command prints through it, so a closed stdout (`engram stats
//! DIR | head -1`) ends the command quietly with exit 141, as a SIGPIPE would, instead of a panic.

use crate::fail::Failure;
use std::io::Write;

/// Writes `text` to stdout and flushes it.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| stdout_error(&e))
}

/// What a failed write to stdout means: the reader went away (quiet), or a real I/O error.
pub fn stdout_error(e: &std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::closed_stdout()
    } else {
        Failure::operator(format!("writing to stdout: {e}"))
    }
}

/// `println!` through `out::print`, returning early with the failure.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::out::print(&format!("{}\n", format_args!($($arg)*)))?
    };
}
