//! The types of type predicates (`x IS :: INTEGER NOT NULL`, `x :: LIST<STRING>`, `x IS ::
//! INTEGER | FLOAT`) and of `valueType()`: Neo4j 5's names, their synonyms, and how they print.

use std::fmt;

/// A type: a base and whether null belongs to it (every type but `… NOT NULL`, `NOTHING`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeSpec {
    /// What the non-null values are.
    pub base: BaseType,
    /// Whether null is a value of the type.
    pub nullable: bool,
}

/// A type without its nullability.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BaseType {
    /// `BOOLEAN` (`BOOL`).
    Boolean,
    /// `STRING` (`VARCHAR`).
    String,
    /// `INTEGER` (`INT`, `SIGNED INTEGER`, `INTEGER64`).
    Integer,
    /// `FLOAT` (`FLOAT64`).
    Float,
    /// `DATE`.
    Date,
    /// `LOCAL TIME` (`TIME WITHOUT TIME ZONE`).
    LocalTime,
    /// `ZONED TIME` (`TIME WITH TIME ZONE`).
    ZonedTime,
    /// `LOCAL DATETIME` (`TIMESTAMP WITHOUT TIME ZONE`).
    LocalDateTime,
    /// `ZONED DATETIME` (`TIMESTAMP WITH TIME ZONE`).
    ZonedDateTime,
    /// `DURATION`.
    Duration,
    /// `POINT`.
    Point,
    /// `NODE` (`ANY NODE`, `VERTEX`).
    Node,
    /// `RELATIONSHIP` (`ANY RELATIONSHIP`, `EDGE`).
    Relationship,
    /// `MAP` (`ANY MAP`).
    Map,
    /// `LIST<T>` (`ARRAY<T>`).
    List(Box<TypeSpec>),
    /// `PATH`.
    Path,
    /// `PROPERTY VALUE` (`ANY PROPERTY VALUE`): what a property may hold.
    PropertyValue,
    /// `ANY` (`ANY VALUE`).
    Any,
    /// `NULL`: null alone.
    Null,
    /// `NOTHING`: no value at all.
    Nothing,
    /// `A | B` (`ANY<A | B>`).
    Union(Vec<TypeSpec>),
}

impl TypeSpec {
    /// A type that holds null too.
    pub fn nullable(base: BaseType) -> TypeSpec {
        TypeSpec { base, nullable: true }
    }
}

impl fmt::Display for TypeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.base {
            BaseType::Union(items) => {
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" | ")?;
                    }
                    write!(f, "{t}")?;
                }
                return Ok(());
            }
            BaseType::List(inner) => write!(f, "LIST<{inner}>")?,
            other => f.write_str(match other {
                BaseType::Boolean => "BOOLEAN",
                BaseType::String => "STRING",
                BaseType::Integer => "INTEGER",
                BaseType::Float => "FLOAT",
                BaseType::Date => "DATE",
                BaseType::LocalTime => "LOCAL TIME",
                BaseType::ZonedTime => "ZONED TIME",
                BaseType::LocalDateTime => "LOCAL DATETIME",
                BaseType::ZonedDateTime => "ZONED DATETIME",
                BaseType::Duration => "DURATION",
                BaseType::Point => "POINT",
                BaseType::Node => "NODE",
                BaseType::Relationship => "RELATIONSHIP",
                BaseType::Map => "MAP",
                BaseType::Path => "PATH",
                BaseType::PropertyValue => "PROPERTY VALUE",
                BaseType::Any => "ANY",
                BaseType::Null => "NULL",
                _ => "NOTHING",
            })?,
        }
        if !self.nullable && !matches!(self.base, BaseType::Null | BaseType::Nothing) {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

/// The base type a run of words names (`["ZONED", "DATETIME"]`), any case; `None` when none.
pub fn base_of_words(words: &[&str]) -> Option<BaseType> {
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    let w: Vec<&str> = upper.iter().map(String::as_str).collect();
    Some(match w.as_slice() {
        ["BOOLEAN" | "BOOL"] => BaseType::Boolean,
        ["STRING" | "VARCHAR"] => BaseType::String,
        ["INTEGER" | "INT" | "INTEGER64"] | ["SIGNED", "INTEGER"] => BaseType::Integer,
        ["FLOAT" | "FLOAT64"] => BaseType::Float,
        ["DATE"] => BaseType::Date,
        ["LOCAL", "TIME"] | ["TIME", "WITHOUT", "TIME", "ZONE"] => BaseType::LocalTime,
        ["ZONED", "TIME"] | ["TIME", "WITH", "TIME", "ZONE"] => BaseType::ZonedTime,
        ["LOCAL", "DATETIME"] | ["TIMESTAMP", "WITHOUT", "TIME", "ZONE"] => BaseType::LocalDateTime,
        ["ZONED", "DATETIME"] | ["TIMESTAMP", "WITH", "TIME", "ZONE"] => BaseType::ZonedDateTime,
        ["DURATION"] => BaseType::Duration,
        ["POINT"] => BaseType::Point,
        ["NODE" | "VERTEX"] | ["ANY", "NODE" | "VERTEX"] => BaseType::Node,
        ["RELATIONSHIP" | "EDGE"] | ["ANY", "RELATIONSHIP" | "EDGE"] => BaseType::Relationship,
        ["MAP"] | ["ANY", "MAP"] => BaseType::Map,
        ["PATH"] => BaseType::Path,
        ["PROPERTY", "VALUE"] | ["ANY", "PROPERTY", "VALUE"] => BaseType::PropertyValue,
        ["ANY"] | ["ANY", "VALUE"] => BaseType::Any,
        ["NULL"] => BaseType::Null,
        ["NOTHING"] => BaseType::Nothing,
        _ => return None,
    })
}

/// The longest run of words, of those starting a type name, that can follow `first`.
pub const MAX_TYPE_WORDS: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_print_as_neo4j_prints_them() {
        let t = TypeSpec {
            base: BaseType::List(Box::new(TypeSpec {
                base: BaseType::Union(vec![
                    TypeSpec { base: BaseType::Integer, nullable: false },
                    TypeSpec { base: BaseType::String, nullable: false },
                ]),
                nullable: false,
            })),
            nullable: false,
        };
        assert_eq!(t.to_string(), "LIST<INTEGER NOT NULL | STRING NOT NULL> NOT NULL");
        assert_eq!(TypeSpec::nullable(BaseType::Null).to_string(), "NULL");
        assert_eq!(base_of_words(&["timestamp", "with", "time", "zone"]), Some(BaseType::ZonedDateTime));
        assert_eq!(base_of_words(&["any", "property", "value"]), Some(BaseType::PropertyValue));
        assert_eq!(base_of_words(&["integr"]), None);
    }
}
