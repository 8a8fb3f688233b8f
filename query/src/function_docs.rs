//! What `SHOW FUNCTIONS` says of each function: its name as documented (names compare
//! case-insensitively), category, arguments and one line. Kept beside `functions::FUNCTIONS`; a
//! test holds the two tables to the same names.

/// One function's documentation.
#[derive(Clone, Copy, Debug)]
pub struct FunctionDoc {
    /// The name as documented (`toLower`).
    pub name: &'static str,
    /// Neo4j's categories where one applies (`String`, `List`, `Numeric`, `Aggregating`, …).
    pub category: &'static str,
    /// The arguments as written in a call, optional ones in brackets.
    pub args: &'static str,
    /// One line.
    pub description: &'static str,
}

const fn doc(name: &'static str, category: &'static str, args: &'static str, description: &'static str) -> FunctionDoc {
    FunctionDoc { name, category, args, description }
}

/// Every function of `functions::FUNCTIONS`, documented.
pub const FUNCTION_DOCS: &[FunctionDoc] = &[
    doc("count", "Aggregating", "value", "How many non-null values (count(*): how many rows)."),
    doc("collect", "Aggregating", "value", "A list of the non-null values."),
    doc("sum", "Aggregating", "value", "The sum of numbers or durations."),
    doc("avg", "Aggregating", "value", "The average of numbers or durations."),
    doc("min", "Aggregating", "value", "The smallest value in the sort order."),
    doc("max", "Aggregating", "value", "The largest value in the sort order."),
    doc("stDev", "Aggregating", "value", "The sample standard deviation."),
    doc("stDevP", "Aggregating", "value", "The population standard deviation."),
    doc("percentileCont", "Aggregating", "value, percentile", "The percentile, interpolated between values."),
    doc("percentileDisc", "Aggregating", "value, percentile", "The percentile, the nearest value."),
    doc("id", "Scalar", "element", "A node's or relationship's integer id, stable for its life."),
    doc("labels", "List", "node", "A node's labels."),
    doc("type", "Scalar", "relationship", "A relationship's type."),
    doc("keys", "List", "element or map", "The property keys of a node, relationship or map."),
    doc("properties", "Scalar", "element or map", "The properties as a map."),
    doc("startNode", "Scalar", "relationship", "A relationship's start node."),
    doc("endNode", "Scalar", "relationship", "A relationship's end node."),
    doc("nodes", "List", "path", "A path's nodes."),
    doc("relationships", "List", "path", "A path's relationships."),
    doc("length", "Scalar", "path", "How many relationships a path has."),
    doc("size", "Scalar", "list or string", "A list's elements or a string's characters, counted."),
    doc("coalesce", "Scalar", "value, …", "The first non-null argument."),
    doc("head", "Scalar", "list", "A list's first element."),
    doc("last", "Scalar", "list", "A list's last element."),
    doc("tail", "List", "list", "A list without its first element."),
    doc("reverse", "List", "list or string", "The list or string, reversed."),
    doc("range", "List", "start, end[, step]", "The integers from start to end inclusive, by step."),
    doc("toInteger", "Scalar", "value", "An integer from a number, string or boolean; null if it cannot."),
    doc("toFloat", "Scalar", "value", "A float from a number or string; null if it cannot."),
    doc("toString", "String", "value", "The value as text."),
    doc("toBoolean", "Scalar", "value", "A boolean from a string, integer or boolean; null if it cannot."),
    doc("abs", "Numeric", "number", "The absolute value."),
    doc("sign", "Numeric", "number", "-1, 0 or 1."),
    doc(
        "round",
        "Numeric",
        "number[, precision[, mode]]",
        "Rounded to an integer, or to precision decimals by the mode (HALF_UP, HALF_EVEN, …).",
    ),
    doc("floor", "Numeric", "number", "The largest integer not above it, as a float."),
    doc("ceil", "Numeric", "number", "The smallest integer not below it, as a float."),
    doc("sqrt", "Logarithmic", "number", "The square root."),
    doc("vecf32", "Vector", "list", "A list of numbers as a 32-bit float vector (FalkorDB's)."),
    doc("vec.cosineDistance", "Vector", "a, b", "The cosine distance of two vectors (FalkorDB's)."),
    doc("vec.euclideanDistance", "Vector", "a, b", "The Euclidean distance of two vectors (FalkorDB's)."),
    doc("exp", "Logarithmic", "number", "e to the power of the number."),
    doc("log", "Logarithmic", "number", "The natural logarithm."),
    doc("log10", "Logarithmic", "number", "The base-10 logarithm."),
    doc("rand", "Numeric", "", "A random float in [0, 1)."),
    doc("toLower", "String", "string", "In lower case."),
    doc("toUpper", "String", "string", "In upper case."),
    doc("trim", "String", "string", "Without leading and trailing whitespace."),
    doc("ltrim", "String", "string[, characters]", "Without leading whitespace (or the given characters)."),
    doc("rtrim", "String", "string[, characters]", "Without trailing whitespace (or the given characters)."),
    doc("btrim", "String", "string[, characters]", "Without leading and trailing whitespace (or the given characters)."),
    doc("normalize", "String", "string[, form]", "In a Unicode normal form: NFC (the default), NFD, NFKC or NFKD."),
    doc("valueType", "Scalar", "value", "The value's type as a type predicate writes it (INTEGER NOT NULL)."),
    doc("split", "List", "string, delimiter", "The string split at each occurrence of the delimiter."),
    doc("substring", "String", "string, start[, length]", "Part of a string, from a zero-based start."),
    doc("left", "String", "string, length", "The first characters."),
    doc("right", "String", "string, length", "The last characters."),
    doc("replace", "String", "string, search, replacement", "Every occurrence of search replaced."),
    doc("timestamp", "Temporal", "", "The statement's time in epoch milliseconds."),
    doc("exists", "Predicate", "pattern or property", "Whether the pattern matches or the property is set."),
    doc("toStringOrNull", "String", "value", "The value as text; null where toString fails."),
    doc("toIntegerOrNull", "Scalar", "value", "An integer; null for any value it cannot convert."),
    doc("toFloatOrNull", "Scalar", "value", "A float; null for any value it cannot convert."),
    doc("toBooleanOrNull", "Scalar", "value", "A boolean; null for any value it cannot convert."),
    doc("isEmpty", "Predicate", "list, map or string", "Whether it has no elements, keys or characters."),
    doc("char_length", "Scalar", "string", "How many characters."),
    doc("character_length", "Scalar", "string", "How many characters."),
    doc("elementId", "Scalar", "element", "A node's or relationship's id as a string."),
    doc("randomUUID", "Scalar", "", "A random UUID, as a string."),
    doc("pi", "Trigonometric", "", "π."),
    doc("e", "Logarithmic", "", "Euler's number."),
    doc("sin", "Trigonometric", "radians", "The sine."),
    doc("cos", "Trigonometric", "radians", "The cosine."),
    doc("tan", "Trigonometric", "radians", "The tangent."),
    doc("cot", "Trigonometric", "radians", "The cotangent."),
    doc("asin", "Trigonometric", "number", "The arcsine, in radians."),
    doc("acos", "Trigonometric", "number", "The arccosine, in radians."),
    doc("atan", "Trigonometric", "number", "The arctangent, in radians."),
    doc("atan2", "Trigonometric", "y, x", "The arctangent of y / x, in radians, by quadrant."),
    doc("degrees", "Trigonometric", "radians", "Radians in degrees."),
    doc("radians", "Trigonometric", "degrees", "Degrees in radians."),
    doc("haversin", "Trigonometric", "radians", "Half the versine."),
    doc("lower", "String", "string", "In lower case (GQL's name of toLower)."),
    doc("upper", "String", "string", "In upper case (GQL's name of toUpper)."),
    doc("nullIf", "Scalar", "value, other", "Null if the two are equal, else the first."),
    doc("isNaN", "Predicate", "number", "Whether a float is NaN."),
    doc("typeOf", "Scalar", "value", "The value's type name (FalkorDB's: Integer, String, Node, …)."),
    doc("hasLabels", "Predicate", "node, labels", "Whether the node has every label of the list (FalkorDB's)."),
    doc("list.dedup", "List", "list", "The list without repeated elements, first occurrences kept (FalkorDB's)."),
    doc("list.insert", "List", "list, index, value[, dups]", "The list with a value inserted at an index (FalkorDB's)."),
    doc(
        "list.insertListElements",
        "List",
        "list, other, index[, dups]",
        "The list with another's elements inserted at an index (FalkorDB's).",
    ),
    doc("list.remove", "List", "list, index[, count]", "The list without count elements from an index (FalkorDB's)."),
    doc("list.sort", "List", "list[, ascending]", "The list sorted (FalkorDB's)."),
    doc("toBooleanList", "List", "list", "Each element as toBooleanOrNull gives it."),
    doc("toFloatList", "List", "list", "Each element as toFloatOrNull gives it."),
    doc("toIntegerList", "List", "list", "Each element as toIntegerOrNull gives it."),
    doc("toStringList", "List", "list", "Each element as toStringOrNull gives it."),
    doc("pow", "Numeric", "base, exponent", "base to the power of exponent (FalkorDB's)."),
    doc("string.join", "String", "list[, delimiter]", "The strings joined (FalkorDB's)."),
    doc("string.matchRegEx", "String", "string, regex", "Each match of the regular expression with its groups (FalkorDB's)."),
    doc("string.replaceRegEx", "String", "string, regex[, replacement]", "Each match of the regular expression replaced (FalkorDB's)."),
    doc("toJSON", "String", "value", "The value as JSON text, nodes and paths in FalkorDB's shapes."),
    doc("intern", "String", "string", "The string (FalkorDB's hint to share its storage)."),
    doc("indegree", "Scalar", "node[, types]", "How many relationships end at the node (of the types) (FalkorDB's)."),
    doc("outdegree", "Scalar", "node[, types]", "How many relationships start at the node (of the types) (FalkorDB's)."),
    doc("linenumber", "Scalar", "", "In LOAD CSV, the line the row starts on."),
    doc("file", "Scalar", "", "In LOAD CSV, the path of the file read."),
    doc("point", "Spatial", "map", "A point: {x, y[, z]} (Cartesian) or {longitude, latitude[, height]} (WGS-84)."),
    doc("point.distance", "Spatial", "a, b", "The distance between two points (meters for geographic ones)."),
    doc("distance", "Spatial", "a, b", "point.distance under FalkorDB's and Neo4j 4's name."),
    doc("point.withinBBox", "Spatial", "point, lowerLeft, upperRight", "Whether the point is in the box, edges included."),
    doc("date", "Temporal", "[value]", "A date from a map, ISO 8601 text or another temporal value; today without one."),
    doc("localtime", "Temporal", "[value]", "A time of day without an offset."),
    doc("time", "Temporal", "[value]", "A time of day with an offset."),
    doc("localdatetime", "Temporal", "[value]", "A date and time without an offset."),
    doc("datetime", "Temporal", "[value]", "A date and time with an offset or a named time zone; now without one."),
    doc("duration", "Temporal", "value", "A duration from a map or ISO 8601 text (P1DT2H)."),
    doc("duration.between", "Temporal", "from, to", "The duration between two temporal values."),
    doc("duration.inMonths", "Temporal", "from, to", "The whole months (and years) between two temporal values."),
    doc("duration.inDays", "Temporal", "from, to", "The whole days (and weeks) between two temporal values."),
    doc("duration.inSeconds", "Temporal", "from, to", "The time between two temporal values in seconds and nanoseconds."),
    doc(
        "date.truncate",
        "Temporal",
        "unit, value[, map]",
        "The date truncated to the unit (year, week, …), then the map's components set.",
    ),
    doc("localtime.truncate", "Temporal", "unit, value[, map]", "The local time truncated to the unit."),
    doc("time.truncate", "Temporal", "unit, value[, map]", "The time truncated to the unit."),
    doc("localdatetime.truncate", "Temporal", "unit, value[, map]", "The local date and time truncated to the unit."),
    doc("datetime.truncate", "Temporal", "unit, value[, map]", "The date and time truncated to the unit."),
    doc("datetime.fromEpoch", "Temporal", "seconds, nanoseconds", "The UTC date and time of an epoch instant."),
    doc("datetime.fromEpochMillis", "Temporal", "milliseconds", "The UTC date and time of an epoch instant in milliseconds."),
    doc("date.transaction", "Temporal", "[timezone]", "The date on the statement's clock."),
    doc("date.statement", "Temporal", "[timezone]", "The date on the statement's clock."),
    doc("date.realtime", "Temporal", "[timezone]", "The date on the wall clock."),
    doc("localtime.transaction", "Temporal", "[timezone]", "The local time on the statement's clock."),
    doc("localtime.statement", "Temporal", "[timezone]", "The local time on the statement's clock."),
    doc("localtime.realtime", "Temporal", "[timezone]", "The local time on the wall clock."),
    doc("time.transaction", "Temporal", "[timezone]", "The time on the statement's clock."),
    doc("time.statement", "Temporal", "[timezone]", "The time on the statement's clock."),
    doc("time.realtime", "Temporal", "[timezone]", "The time on the wall clock."),
    doc("localdatetime.transaction", "Temporal", "[timezone]", "The local date and time on the statement's clock."),
    doc("localdatetime.statement", "Temporal", "[timezone]", "The local date and time on the statement's clock."),
    doc("localdatetime.realtime", "Temporal", "[timezone]", "The local date and time on the wall clock."),
    doc("datetime.transaction", "Temporal", "[timezone]", "The date and time on the statement's clock."),
    doc("datetime.statement", "Temporal", "[timezone]", "The date and time on the statement's clock."),
    doc("datetime.realtime", "Temporal", "[timezone]", "The date and time on the wall clock."),
    doc("shortestPath", "Graph", "pattern", "Between two bound nodes, one path of fewest hops, or null (FalkorDB's form)."),
    doc("allShortestPaths", "Graph", "pattern", "Between two bound nodes, every path of fewest hops (FalkorDB's form)."),
];

/// The documentation of function `name` (any case).
pub fn function_doc(name: &str) -> Option<&'static FunctionDoc> {
    FUNCTION_DOCS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::FUNCTIONS;

    #[test]
    fn every_function_has_one_doc_and_every_doc_a_function() {
        for f in FUNCTIONS {
            let n = FUNCTION_DOCS.iter().filter(|d| d.name.eq_ignore_ascii_case(f.name)).count();
            assert_eq!(n, 1, "{}: {n} docs", f.name);
        }
        for d in FUNCTION_DOCS {
            assert!(FUNCTIONS.iter().any(|f| f.name.eq_ignore_ascii_case(d.name)), "{}: no such function", d.name);
            assert!(!d.description.is_empty() && !d.category.is_empty(), "{}", d.name);
        }
    }
}
