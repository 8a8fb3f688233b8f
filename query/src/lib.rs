//! engram's query language, a subset of Cypher: text → tokens → syntax tree → checked query →
//! logical plan. A leaf crate: no I/O and no engine types; the engine binds the plan to its
//! catalog and runs it.
//!
//! Errors carry the TCK's type and detail names (`SyntaxError` / `UndefinedVariable`), the phase
//! and a line and column, so clients and the TCK runner can match them exactly.

pub mod ast;
pub mod check;
mod cursor;
pub mod ddl;
pub mod error;
mod expr;
pub mod function_docs;
pub mod functions;
pub mod header;
pub mod lexer;
pub mod limits;
pub mod parser;
pub mod plan;
pub mod planner;
pub mod types;

pub use check::{check, Checked};
pub use error::{Detail, ErrorType, Phase, Position, QueryError, Span};
pub use parser::{parse, parse_expression};
pub use planner::{compile, Compiled, When};
