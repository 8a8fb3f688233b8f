//! Query errors: a type, a detail code, the phase and the place.
//!
//! Type and detail use the names of the openCypher TCK (`SyntaxError` / `VariableTypeConflict`), so
//! a client can match on them and the TCK runner can compare them; the message says what was
//! expected and what was found, and the position is a line and a column (1-based, in characters).

use std::fmt;

/// A byte range in the query text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The range `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    #[must_use]
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// A place in the query text, for people: line and column count from 1, columns in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Byte offset.
    pub offset: usize,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `text` (clamped to the text, and to a character boundary).
    pub fn of(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Position { offset, line, column }
    }
}

/// The error type, as the TCK names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// The text is not a valid query, or it breaks a rule checked before running.
    SyntaxError,
    /// A rule checked while running (e.g. MERGE reading its own writes).
    SemanticError,
    /// A parameter the query uses was not given.
    ParameterMissing,
    /// A write would leave the graph inconsistent (deleting a node that still has relationships).
    ConstraintValidationFailed,
    /// An entity was used after it was deleted.
    EntityNotFound,
    /// A value has the wrong type for an operation.
    TypeError,
    /// A function or clause got an argument it cannot take.
    ArgumentError,
    /// Integer overflow or division by zero.
    ArithmeticError,
    /// A procedure failed or does not exist.
    ProcedureError,
    /// A limit was reached (rows, memory, time); the detail names it.
    LimitError,
}

impl ErrorType {
    /// The TCK name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::SyntaxError => "SyntaxError",
            ErrorType::SemanticError => "SemanticError",
            ErrorType::ParameterMissing => "ParameterMissing",
            ErrorType::ConstraintValidationFailed => "ConstraintValidationFailed",
            ErrorType::EntityNotFound => "EntityNotFound",
            ErrorType::TypeError => "TypeError",
            ErrorType::ArgumentError => "ArgumentError",
            ErrorType::ArithmeticError => "ArithmeticError",
            ErrorType::ProcedureError => "ProcedureError",
            ErrorType::LimitError => "LimitError",
        }
    }
}

/// When the error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// While parsing, checking or planning: nothing ran.
    Compile,
    /// While running.
    Runtime,
}

impl Phase {
    /// `compile time` / `runtime`, as the TCK writes them.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Compile => "compile time",
            Phase::Runtime => "runtime",
        }
    }

    /// `compile` / `runtime`: the short form used in JSON errors.
    pub fn short(self) -> &'static str {
        match self {
            Phase::Compile => "compile",
            Phase::Runtime => "runtime",
        }
    }
}

/// The detail code, as the TCK names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // Reason: each variant is the TCK's name for the rule it reports.
pub enum Detail {
    UnexpectedSyntax,
    VariableTypeConflict,
    VariableAlreadyBound,
    UndefinedVariable,
    InvalidArgumentType,
    InvalidArgumentValue,
    InvalidAggregation,
    AmbiguousAggregationExpression,
    NoSingleRelationshipType,
    RequiresDirectedRelationship,
    InvalidRelationshipPattern,
    CreatingVarLength,
    NegativeIntegerArgument,
    InvalidParameterUse,
    NonConstantExpression,
    IntegerOverflow,
    InvalidNumberLiteral,
    InvalidUnicodeLiteral,
    InvalidDelete,
    ColumnNameConflict,
    NoVariablesInScope,
    UnknownFunction,
    DifferentColumnsInUnion,
    InvalidClauseComposition,
    DeletedEntityAccess,
    DeleteConnectedNode,
    MergeReadOwnWrites,
    InvalidPropertyType,
    MissingParameter,
    DivisionByZero,
    ProcedureNotFound,
    NoExpressionAlias,
    InvalidNumberOfArguments,
    InvalidArgumentPassingMode,
    /// A construct the language has and engram does not run yet; the message names it.
    Unsupported,
    /// A named limit was reached; the message names it.
    Limit,
    /// The query was cancelled or ran past its deadline.
    Deadline,
}

impl Detail {
    /// The TCK name.
    pub fn as_str(self) -> &'static str {
        match self {
            Detail::UnexpectedSyntax => "UnexpectedSyntax",
            Detail::VariableTypeConflict => "VariableTypeConflict",
            Detail::VariableAlreadyBound => "VariableAlreadyBound",
            Detail::UndefinedVariable => "UndefinedVariable",
            Detail::InvalidArgumentType => "InvalidArgumentType",
            Detail::InvalidArgumentValue => "InvalidArgumentValue",
            Detail::InvalidAggregation => "InvalidAggregation",
            Detail::AmbiguousAggregationExpression => "AmbiguousAggregationExpression",
            Detail::NoSingleRelationshipType => "NoSingleRelationshipType",
            Detail::RequiresDirectedRelationship => "RequiresDirectedRelationship",
            Detail::InvalidRelationshipPattern => "InvalidRelationshipPattern",
            Detail::CreatingVarLength => "CreatingVarLength",
            Detail::NegativeIntegerArgument => "NegativeIntegerArgument",
            Detail::InvalidParameterUse => "InvalidParameterUse",
            Detail::NonConstantExpression => "NonConstantExpression",
            Detail::IntegerOverflow => "IntegerOverflow",
            Detail::InvalidNumberLiteral => "InvalidNumberLiteral",
            Detail::InvalidUnicodeLiteral => "InvalidUnicodeLiteral",
            Detail::InvalidDelete => "InvalidDelete",
            Detail::ColumnNameConflict => "ColumnNameConflict",
            Detail::NoVariablesInScope => "NoVariablesInScope",
            Detail::UnknownFunction => "UnknownFunction",
            Detail::DifferentColumnsInUnion => "DifferentColumnsInUnion",
            Detail::InvalidClauseComposition => "InvalidClauseComposition",
            Detail::DeletedEntityAccess => "DeletedEntityAccess",
            Detail::DeleteConnectedNode => "DeleteConnectedNode",
            Detail::MergeReadOwnWrites => "MergeReadOwnWrites",
            Detail::InvalidPropertyType => "InvalidPropertyType",
            Detail::MissingParameter => "MissingParameter",
            Detail::DivisionByZero => "DivisionByZero",
            Detail::ProcedureNotFound => "ProcedureNotFound",
            Detail::NoExpressionAlias => "NoExpressionAlias",
            Detail::InvalidNumberOfArguments => "InvalidNumberOfArguments",
            Detail::InvalidArgumentPassingMode => "InvalidArgumentPassingMode",
            Detail::Unsupported => "Unsupported",
            Detail::Limit => "Limit",
            Detail::Deadline => "Deadline",
        }
    }
}

/// A query error. Nothing was written when a query returns one.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryError {
    /// The error type.
    pub kind: ErrorType,
    /// The rule broken.
    pub detail: Detail,
    /// When it was found.
    pub phase: Phase,
    /// What was expected and what was found, for people.
    pub message: String,
    /// Where, when the error belongs to a place in the text.
    pub at: Option<Position>,
}

impl QueryError {
    /// A compile-time syntax error at `span` of `text`.
    pub fn syntax(text: &str, span: Span, detail: Detail, message: impl Into<String>) -> QueryError {
        QueryError {
            kind: ErrorType::SyntaxError,
            detail,
            phase: Phase::Compile,
            message: message.into(),
            at: Some(Position::of(text, span.start)),
        }
    }

    /// A runtime error with no place in the text.
    pub fn runtime(kind: ErrorType, detail: Detail, message: impl Into<String>) -> QueryError {
        QueryError { kind, detail, phase: Phase::Runtime, message: message.into(), at: None }
    }

    /// The line, when the error has a place.
    pub fn line(&self) -> Option<usize> {
        self.at.map(|p| p.line)
    }

    /// The column, when the error has a place.
    pub fn column(&self) -> Option<usize> {
        self.at.map(|p| p.column)
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(at) = self.at {
            let place = format!("{}:{}", at.line, at.column);
            if !self.message.contains(&place) {
                write!(f, " at {place}")?;
            }
        }
        write!(f, " ({}: {})", self.kind.as_str(), self.detail.as_str())
    }
}

impl std::error::Error for QueryError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters_from_one() {
        let text = "MATCH (n)\nRETURN né, x";
        assert_eq!(Position::of(text, 0), Position { offset: 0, line: 1, column: 1 });
        let comma = text.find(',').expect("comma");
        assert_eq!(Position::of(text, comma), Position { offset: comma, line: 2, column: 10 });
        // Past the end and inside a character are clamped, not a panic.
        assert_eq!(Position::of(text, 10_000).line, 2);
        let inside_e = text.find('é').expect("é") + 1;
        assert_eq!(Position::of(text, inside_e).column, 9);
    }
}
