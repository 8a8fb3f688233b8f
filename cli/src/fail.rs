//! How a command fails: a message for stderr and the exit code of its class, one table for every
//! command (`EXIT_CODES`, shown by `--help`).

use engram::ErrorClass;

/// The exit codes, as `--help` and the README print them.
pub const EXIT_CODES: &str = "Exit codes: 0 ok; 1 a finding (`check` found a problem); 2 caller (usage, bad input, query \
errors); 3 conflict; 4 limit or deadline; 5 operator (I/O, locked, disk full, not a database); 6 corruption; 70 bug; 141 \
stdout closed (as for SIGPIPE, nothing on stderr).";

/// A closed stdout ends a command with this code, as a shell reports a SIGPIPE death.
pub const CLOSED_STDOUT: u8 = 141;

/// A failed command: what to print on stderr (nothing when empty) and the exit code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// The message, without the `engram: ` prefix; empty for a quiet exit.
    pub message: String,
}

impl Failure {
    /// A failure of `class` saying `message`.
    pub fn of(class: ErrorClass, message: impl Into<String>) -> Failure {
        Failure { code: class.exit_code(), message: message.into() }
    }

    /// A finding (exit 1): the command ran, and what it checked is not right.
    pub fn finding(message: impl Into<String>) -> Failure {
        Failure { code: 1, message: message.into() }
    }

    /// The environment is wrong (exit 5).
    pub fn operator(message: impl Into<String>) -> Failure {
        Failure::of(ErrorClass::Operator, message)
    }

    /// stdout was closed by its reader: end quietly.
    pub fn closed_stdout() -> Failure {
        Failure { code: CLOSED_STDOUT, message: String::new() }
    }

    /// A failure of reading or writing `what`: a closed stdout ends quietly, anything else is
    /// the operator's.
    pub fn io(what: &std::path::Path, e: &std::io::Error) -> Failure {
        Failure::operator(format!("{}: {e}", what.display()))
    }
}

/// Bad input from the caller (exit 2): the default for a message the command composes itself.
impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::of(ErrorClass::Caller, message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::from(message.to_owned())
    }
}

/// An engine error, with the exit code of its class.
pub fn fail(e: impl Into<engram::Error>) -> Failure {
    let e = e.into();
    Failure::of(e.class(), e.to_string())
}

/// A JSON encoding failure: our bug, never the input's.
pub fn bug(e: impl std::fmt::Display) -> Failure {
    Failure::of(ErrorClass::Bug, e.to_string())
}

/// Bad input the engine's parsers reported (a CSV row, an ontology file, a JSON line): exit 2.
pub fn caller(e: impl std::fmt::Display) -> Failure {
    Failure::of(ErrorClass::Caller, e.to_string())
}
