//! The functions and procedures the language knows: names, arities, which aggregate, and each
//! procedure's arguments and `YIELD` columns. The checker refuses what is not here; the engine
//! implements exactly these.

/// What a function is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// Row by row.
    Scalar,
    /// Over a group of rows.
    Aggregate,
}

/// One function's signature.
#[derive(Clone, Copy, Debug)]
pub struct Function {
    /// Lower-case name (names compare case-insensitively).
    pub name: &'static str,
    /// Scalar or aggregate.
    pub kind: FunctionKind,
    /// Fewest arguments.
    pub min_args: usize,
    /// Most arguments.
    pub max_args: usize,
}

const fn scalar(name: &'static str, min_args: usize, max_args: usize) -> Function {
    Function { name, kind: FunctionKind::Scalar, min_args, max_args }
}

const fn aggregate(name: &'static str) -> Function {
    Function { name, kind: FunctionKind::Aggregate, min_args: 1, max_args: 1 }
}

/// Every function, by name.
pub const FUNCTIONS: &[Function] = &[
    aggregate("count"),
    aggregate("collect"),
    aggregate("sum"),
    aggregate("avg"),
    aggregate("min"),
    aggregate("max"),
    aggregate("stdev"),
    aggregate("stdevp"),
    Function { name: "percentilecont", kind: FunctionKind::Aggregate, min_args: 2, max_args: 2 },
    Function { name: "percentiledisc", kind: FunctionKind::Aggregate, min_args: 2, max_args: 2 },
    scalar("id", 1, 1),
    scalar("labels", 1, 1),
    scalar("type", 1, 1),
    scalar("keys", 1, 1),
    scalar("properties", 1, 1),
    scalar("startnode", 1, 1),
    scalar("endnode", 1, 1),
    scalar("nodes", 1, 1),
    scalar("relationships", 1, 1),
    scalar("length", 1, 1),
    scalar("size", 1, 1),
    scalar("coalesce", 1, usize::MAX),
    scalar("head", 1, 1),
    scalar("last", 1, 1),
    scalar("tail", 1, 1),
    scalar("reverse", 1, 1),
    scalar("range", 2, 3),
    scalar("tointeger", 1, 1),
    scalar("tofloat", 1, 1),
    scalar("tostring", 1, 1),
    scalar("toboolean", 1, 1),
    scalar("abs", 1, 1),
    scalar("sign", 1, 1),
    scalar("round", 1, 3),
    scalar("floor", 1, 1),
    scalar("ceil", 1, 1),
    scalar("sqrt", 1, 1),
    // FalkorDB's vector functions: a list of numbers as a vector, and the distances of two.
    scalar("vecf32", 1, 1),
    scalar("vec.cosinedistance", 2, 2),
    scalar("vec.euclideandistance", 2, 2),
    scalar("exp", 1, 1),
    scalar("log", 1, 1),
    scalar("log10", 1, 1),
    scalar("rand", 0, 0),
    scalar("tolower", 1, 1),
    scalar("toupper", 1, 1),
    scalar("trim", 1, 1),
    scalar("ltrim", 1, 2),
    scalar("rtrim", 1, 2),
    scalar("btrim", 1, 2),
    scalar("normalize", 1, 2),
    scalar("valuetype", 1, 1),
    scalar("split", 2, 2),
    scalar("substring", 2, 3),
    scalar("left", 2, 2),
    scalar("right", 2, 2),
    scalar("replace", 3, 3),
    scalar("timestamp", 0, 0),
    scalar("exists", 1, 1),
    // Conversions that give null where the plain ones refuse the argument's type.
    scalar("tostringornull", 1, 1),
    scalar("tointegerornull", 1, 1),
    scalar("tofloatornull", 1, 1),
    scalar("tobooleanornull", 1, 1),
    scalar("isempty", 1, 1),
    scalar("char_length", 1, 1),
    scalar("character_length", 1, 1),
    scalar("elementid", 1, 1),
    scalar("randomuuid", 0, 0),
    scalar("pi", 0, 0),
    scalar("e", 0, 0),
    scalar("sin", 1, 1),
    scalar("cos", 1, 1),
    scalar("tan", 1, 1),
    scalar("cot", 1, 1),
    scalar("asin", 1, 1),
    scalar("acos", 1, 1),
    scalar("atan", 1, 1),
    scalar("atan2", 2, 2),
    scalar("degrees", 1, 1),
    scalar("radians", 1, 1),
    scalar("haversin", 1, 1),
    // Neo4j 5's names and null helpers.
    scalar("lower", 1, 1),
    scalar("upper", 1, 1),
    scalar("nullif", 2, 2),
    scalar("isnan", 1, 1),
    // FalkorDB's extensions (`exec/functions/falkordb.rs`).
    scalar("typeof", 1, 1),
    scalar("haslabels", 2, 2),
    scalar("list.dedup", 1, 1),
    scalar("list.insert", 3, 4),
    scalar("list.insertlistelements", 3, 4),
    scalar("list.remove", 2, 3),
    scalar("list.sort", 1, 2),
    scalar("tobooleanlist", 1, 1),
    scalar("tofloatlist", 1, 1),
    scalar("tointegerlist", 1, 1),
    scalar("tostringlist", 1, 1),
    scalar("pow", 2, 2),
    scalar("string.join", 1, 2),
    scalar("string.matchregex", 2, 2),
    scalar("string.replaceregex", 3, 3),
    scalar("tojson", 1, 1),
    scalar("intern", 1, 1),
    scalar("indegree", 1, usize::MAX),
    scalar("outdegree", 1, usize::MAX),
    // The line and the file of `LOAD CSV`'s row (slots it fills: the planner reads them).
    scalar("linenumber", 0, 0),
    scalar("file", 0, 0),
    // Spatial points (`exec/functions/spatial.rs`).
    scalar("point", 1, 1),
    scalar("point.distance", 2, 2),
    scalar("distance", 2, 2),
    scalar("point.withinbbox", 3, 3),
    // Temporal values (`exec/functions/temporal.rs`).
    scalar("date", 0, 1),
    scalar("localtime", 0, 1),
    scalar("time", 0, 1),
    scalar("localdatetime", 0, 1),
    scalar("datetime", 0, 1),
    scalar("duration", 1, 1),
    scalar("duration.between", 2, 2),
    scalar("duration.inmonths", 2, 2),
    scalar("duration.indays", 2, 2),
    scalar("duration.inseconds", 2, 2),
    scalar("date.truncate", 2, 3),
    scalar("localtime.truncate", 2, 3),
    scalar("time.truncate", 2, 3),
    scalar("localdatetime.truncate", 2, 3),
    scalar("datetime.truncate", 2, 3),
    scalar("datetime.fromepoch", 2, 2),
    scalar("datetime.fromepochmillis", 1, 1),
    scalar("date.transaction", 0, 1),
    scalar("date.statement", 0, 1),
    scalar("date.realtime", 0, 1),
    scalar("localtime.transaction", 0, 1),
    scalar("localtime.statement", 0, 1),
    scalar("localtime.realtime", 0, 1),
    scalar("time.transaction", 0, 1),
    scalar("time.statement", 0, 1),
    scalar("time.realtime", 0, 1),
    scalar("localdatetime.transaction", 0, 1),
    scalar("localdatetime.statement", 0, 1),
    scalar("localdatetime.realtime", 0, 1),
    scalar("datetime.transaction", 0, 1),
    scalar("datetime.statement", 0, 1),
    scalar("datetime.realtime", 0, 1),
    // A pattern as the argument: the shortest path between its two bound ends (null when there
    // is none), or the list of all of them.
    scalar("shortestpath", 1, 1),
    scalar("allshortestpaths", 1, 1),
];

/// The function named `name` (any case).
pub fn function(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

/// One procedure's signature.
#[derive(Clone, Copy, Debug)]
pub struct Procedure {
    /// The dotted name, case as documented (matched case-insensitively).
    pub name: &'static str,
    /// Argument names, required first.
    pub args: &'static [&'static str],
    /// How many of `args` are required.
    pub required: usize,
    /// The `YIELD` columns, in order.
    pub yields: &'static [&'static str],
    /// One line for `:help` and the docs.
    pub doc: &'static str,
    /// It writes: a query calling it is a write (one transaction, write access).
    pub writes: bool,
}

/// Every procedure.
pub const PROCEDURES: &[Procedure] = &[
    Procedure {
        name: "engram.audit.history",
        args: &["options"],
        required: 0,
        yields: &["at", "user", "roles", "interface", "workspace", "op", "text", "rows", "claims", "duration_us", "outcome"],
        doc: "the access history, oldest first (admin on * only); options: since (a time), user, op, limit",
        writes: false,
    },
    Procedure {
        name: "db.idx.vector.queryNodes",
        args: &["label", "attribute", "k", "query"],
        required: 4,
        yields: &["node", "score"],
        doc: "the k nodes of the label nearest to the vector by the declared distance (exact), nearest first",
        writes: false,
    },
    Procedure {
        name: "db.idx.vector.queryRelationships",
        args: &["type", "attribute", "k", "query"],
        required: 4,
        yields: &["relationship", "score"],
        doc: "the k relationships of the type nearest to the vector by the declared distance (exact), nearest first",
        writes: false,
    },
    Procedure {
        name: "db.idx.fulltext.queryNodes",
        args: &["label", "query"],
        required: 2,
        yields: &["node", "score"],
        doc: "the label's nodes matching a RediSearch-style query over their full-text properties, best first",
        writes: false,
    },
    Procedure {
        name: "db.idx.fulltext.queryRelationships",
        args: &["type", "query"],
        required: 2,
        yields: &["relationship", "score"],
        doc: "the type's relationships matching a RediSearch-style query over their full-text properties, best first",
        writes: false,
    },
    Procedure {
        name: "db.index.fulltext.queryNodes",
        args: &["indexName", "queryString"],
        required: 2,
        yields: &["node", "score"],
        doc: "Neo4j's form: the nodes of the full-text index declared under that name matching the query, best first",
        writes: false,
    },
    Procedure {
        name: "db.index.fulltext.queryRelationships",
        args: &["indexName", "queryString"],
        required: 2,
        yields: &["relationship", "score"],
        doc: "Neo4j's form: the relationships of the full-text index declared under that name matching the query, best first",
        writes: false,
    },
    Procedure {
        name: "db.index.vector.queryNodes",
        args: &["indexName", "numberOfNearestNeighbours", "query"],
        required: 3,
        yields: &["node", "score"],
        doc: "Neo4j's form: the k nodes nearest to the vector in the vector index declared under that name (exact), scored as a similarity in [0, 1]",
        writes: false,
    },
    Procedure {
        name: "db.index.vector.queryRelationships",
        args: &["indexName", "numberOfNearestNeighbours", "query"],
        required: 3,
        yields: &["relationship", "score"],
        doc: "Neo4j's form: the k relationships nearest to the vector in the vector index declared under that name (exact), scored as a similarity in [0, 1]",
        writes: false,
    },
    Procedure {
        name: "db.showIndexes",
        args: &["type"],
        required: 0,
        yields: &[
            "id",
            "name",
            "state",
            "populationPercent",
            "type",
            "entityType",
            "labelsOrTypes",
            "properties",
            "indexProvider",
            "owningConstraint",
            "lastRead",
            "readCount",
            "options",
        ],
        doc: "what SHOW [type] INDEXES gives: the declared indexes in Neo4j's columns (type: ALL, RANGE, FULLTEXT, VECTOR, …)",
        writes: false,
    },
    Procedure {
        name: "db.indexes",
        args: &[],
        required: 0,
        yields: &["label", "properties", "types", "options", "language", "stopwords", "entitytype", "status", "info"],
        doc: "the indexes declared by index statements, one row per label (FalkorDB's shape)",
        writes: false,
    },
    Procedure {
        name: "db.meta.stats",
        args: &[],
        required: 0,
        yields: &["labels", "relTypes", "relCount", "nodeCount", "labelCount", "relTypeCount", "propertyKeyCount"],
        doc: "what the caller sees of the workspace: nodes per label and relationships per type (maps), the totals, and how many labels, types and property keys (FalkorDB's shape)",
        writes: false,
    },
    Procedure {
        name: "db.constraints",
        args: &[],
        required: 0,
        yields: &["type", "label", "properties", "entitytype", "status"],
        doc: "the constraints declared (UNIQUE or MANDATORY, on a node label or a relationship type), in FalkorDB's shape",
        writes: false,
    },
    Procedure {
        name: "db.showConstraints",
        args: &[],
        required: 0,
        yields: &["id", "name", "type", "entityType", "labelsOrTypes", "properties", "ownedIndex", "propertyType"],
        doc: "what SHOW CONSTRAINTS gives: the declared constraints in Neo4j's columns",
        writes: false,
    },
    Procedure {
        name: "algo.BFS",
        args: &["source", "max_level", "relationship_type"],
        required: 3,
        yields: &["nodes", "edges"],
        doc: "the nodes reached from source along outgoing relationships (of the type; any when null) within max_level hops (any when 0), nearest first, and the relationship that reached each; no row when none",
        writes: false,
    },
    Procedure {
        name: "algo.pageRank",
        args: &["label", "relationship_type"],
        required: 2,
        yields: &["node", "score"],
        doc: "each node of the label (any when null) with its PageRank over the relationships of the type (any when null) between them, highest first",
        writes: false,
    },
    Procedure {
        name: "algo.WCC",
        args: &["config"],
        required: 0,
        yields: &["node", "componentId"],
        doc: "each node (of config.nodeLabels; any when absent) with its weakly connected component over the relationships of config.relationshipTypes (any when absent); a component's id is its smallest node id",
        writes: false,
    },
    Procedure {
        name: "dbms.showFunctions",
        args: &["kind"],
        required: 0,
        yields: &["name", "category", "description", "signature", "isBuiltIn", "aggregating", "isDeprecated"],
        doc: "what SHOW FUNCTIONS gives: every function in Neo4j's columns (kind: ALL, BUILT IN or USER DEFINED, of which there are none)",
        writes: false,
    },
    Procedure {
        name: "dbms.showProcedures",
        args: &["kind"],
        required: 0,
        yields: &["name", "description", "mode", "worksOnSystem", "signature", "argumentDescription", "returnDescription", "isDeprecated"],
        doc: "what SHOW PROCEDURES gives: every procedure in Neo4j's columns (kind: ALL, BUILT IN or USER DEFINED, of which there are none; mode READ or WRITE; argument and column types are ANY: they are checked when called)",
        writes: false,
    },
    Procedure {
        name: "db.schema.nodeTypeProperties",
        args: &[],
        required: 0,
        yields: &["nodeType", "nodeLabels", "propertyName", "propertyTypes", "mandatory"],
        doc: "per set of labels nodes carry together and property key: the types its values have (String, Long, Double, …, StringArray) and whether every such node has it; what the caller sees",
        writes: false,
    },
    Procedure {
        name: "db.schema.relTypeProperties",
        args: &[],
        required: 0,
        yields: &["relType", "propertyName", "propertyTypes", "mandatory"],
        doc: "per relationship type and property key: the types its values have and whether every such relationship has it; what the caller sees",
        writes: false,
    },
    Procedure {
        name: "dbms.procedures",
        args: &[],
        required: 0,
        yields: &["name", "mode"],
        doc: "every procedure and whether it reads or writes ('read' / 'write')",
        writes: false,
    },
    Procedure {
        name: "db.labels",
        args: &[],
        required: 0,
        yields: &["label"],
        doc: "every label in the workspace; row i is label id i",
        writes: false,
    },
    Procedure {
        name: "db.relationshipTypes",
        args: &[],
        required: 0,
        yields: &["relationshipType"],
        doc: "every relationship type; row i is type id i",
        writes: false,
    },
    Procedure {
        name: "db.propertyKeys",
        args: &[],
        required: 0,
        yields: &["propertyKey"],
        doc: "every property key; row i is key id i",
        writes: false,
    },
    Procedure {
        name: "engram.recall",
        args: &["text", "options"],
        required: 1,
        yields: &["rank", "claim", "subject", "object", "text", "score", "evidence", "context"],
        doc: "hybrid recall under a token budget; options {budget, entities, hops, as_of}",
        writes: false,
    },
    Procedure {
        name: "engram.neighbors",
        args: &["node", "options"],
        required: 1,
        yields: &["relationship", "neighbor", "direction"],
        doc: "the claims at a node; options {direction: 'out'|'in'|'both', types: [..]}",
        writes: false,
    },
    Procedure {
        name: "engram.ancestors",
        args: &["node", "type"],
        required: 2,
        yields: &["node", "depth"],
        doc: "the transitive closure upward over one relationship type",
        writes: false,
    },
    Procedure {
        name: "engram.descendants",
        args: &["node", "type"],
        required: 2,
        yields: &["node", "depth"],
        doc: "the transitive closure downward over one relationship type",
        writes: false,
    },
    Procedure {
        name: "engram.search.text",
        args: &["query", "k"],
        required: 1,
        yields: &["relationship", "score"],
        doc: "BM25 over claim text",
        writes: false,
    },
    Procedure {
        name: "engram.search.vector",
        args: &["query", "k"],
        required: 1,
        yields: &["relationship", "score"],
        doc: "cosine similarity of claim embeddings to the query (text, embedded by the workspace's model)",
        writes: false,
    },
    Procedure {
        name: "engram.forget",
        args: &["node"],
        required: 1,
        yields: &["claims"],
        doc: "erases a node for good, with every claim it takes part in (DELETE is the soft delete); yields the claims erased",
        writes: true,
    },
];

/// The procedure named `name` (any case).
pub fn procedure(name: &str) -> Option<&'static Procedure> {
    PROCEDURES.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}
