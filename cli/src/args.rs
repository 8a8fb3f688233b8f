//! The command line: every command, its arguments and their help.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// engram: the long-term memory of AI agents.
#[derive(Parser, Debug)]
#[command(
    name = "engram",
    version,
    about = "engram, the long-term memory of AI agents: a typed, temporal knowledge graph in a database folder.\nCommands work on a database folder DIR; only init, import, import-ontology, ingest, serve and mcp create one.",
    after_help = crate::fail::EXIT_CODES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create an empty database in DIR (a new or empty folder).
    Init {
        /// Database folder.
        dir: PathBuf,
    },
    /// Load CSV files into workspace `default` of DIR (created if absent), or a JSON-lines file
    /// (the `export` format) into the workspaces it names.
    Import {
        /// Database folder.
        dir: PathBuf,
        /// Entities file: `id,type,name,aliases` (aliases `|`-separated).
        #[arg(long, requires = "claims", conflicts_with = "jsonl")]
        entities: Option<PathBuf>,
        /// Claims file: `id,subject,predicate,object,confidence,state,valid_from`.
        #[arg(long, requires = "entities")]
        claims: Option<PathBuf>,
        /// JSON-lines file in the `export` format.
        #[arg(long, required_unless_present = "entities")]
        jsonl: Option<PathBuf>,
        /// Little-endian f32 vectors, row i for the i-th entity row (needs --dim).
        #[arg(long, requires = "dim", requires = "entities")]
        vectors: Option<PathBuf>,
        /// Vector dimension.
        #[arg(long)]
        dim: Option<usize>,
    },
    /// Write every workspace of DIR as JSON lines (to stdout, or `--out F`).
    Export {
        /// Database folder.
        dir: PathBuf,
        /// Output file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only what was visible at a valid or transaction time (a report of a past view, not a
        /// copy of the database: the default exports everything, history included).
        #[command(flatten)]
        time: TimeArgs,
    },
    /// Print row counts: totals, per state, per workspace.
    Stats {
        /// Database folder.
        dir: PathBuf,
    },
    /// Verify every checksum and invariant without changing anything.
    Check {
        /// Database folder.
        dir: PathBuf,
    },
    /// Write a checkpoint (snapshot) and drop the WAL it covers.
    Checkpoint {
        /// Database folder.
        dir: PathBuf,
    },
    /// Show or change the settings stored in DIR: all of them, one, or set one. With
    /// `--workspace`, that workspace's settings (`accept_confidence`, `resolve_similarity`,
    /// `retention_days`; the value `-` unsets one).
    Config {
        /// Database folder.
        dir: PathBuf,
        /// Setting name.
        key: Option<String>,
        /// New value.
        value: Option<String>,
        /// A workspace's settings instead of the database's.
        #[arg(long)]
        workspace: Option<String>,
    },
    /// Erase a workspace's deleted and expired history older than its `retention_days` setting
    /// (nothing when unset: the default keeps everything); prints the claims erased.
    Retention {
        /// Database folder.
        dir: PathBuf,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Merge entity FROM into INTO (each an external id, a name or an alias): FROM's claims
    /// move to INTO, its names become INTO's aliases, and FROM is retired; `unmerge` undoes it.
    Merge {
        /// Database folder.
        dir: PathBuf,
        /// The entity that goes away.
        from: String,
        /// The entity that stays.
        into: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Soft-delete an entity (with its claims) or a claim: reads no longer see it, `restore`
    /// brings it back, history (`ALL VERSIONS`, exports) keeps it.
    Delete(TargetArgs),
    /// Undo a soft delete.
    Restore(TargetArgs),
    /// Erase an entity with its claims, or a conversation's evidence and the claims only it
    /// supports, from every index and file: irreversible.
    Forget {
        /// Database folder.
        dir: PathBuf,
        /// The entity's external id.
        #[arg(long, required_unless_present = "conversation", conflicts_with = "conversation")]
        entity: Option<String>,
        /// A conversation id (the `source.conversation_id` of ingested documents).
        #[arg(long)]
        conversation: Option<String>,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Undo the merge that retired ENTITY (its external id): its claims and names go back.
    Unmerge {
        /// Database folder.
        dir: PathBuf,
        /// The merged-away entity's external id.
        entity: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Print every distinct entity within N hops of ENTITY (an external id, a name or an alias).
    Neighbors {
        /// Database folder.
        dir: PathBuf,
        /// The start: external id, canonical name or alias.
        entity: String,
        /// Hops.
        #[arg(long, default_value_t = 1)]
        hops: u32,
        /// Which claims to follow.
        #[arg(long, value_enum, default_value_t = Dir::Both)]
        direction: Dir,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        #[command(flatten)]
        time: TimeArgs,
        /// One JSON array, one object per entity reached.
        #[arg(long)]
        json: bool,
    },
    /// Run a query (a subset of Cypher) on DIR: a table by default, one JSON object with --json.
    Query {
        /// Database folder.
        dir: PathBuf,
        /// The query text.
        query: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// A parameter, `name=JSON` (a number without fraction or exponent is an integer); repeat.
        #[arg(long = "param", value_name = "NAME=JSON")]
        params: Vec<String>,
        /// One JSON object `{"columns", "rows", "stats"}`; an error as `{"error": {...}}`.
        #[arg(long)]
        json: bool,
    },
    /// Serve DIR over the network: RESP2/RESP3 for any Redis client, FalkorDB's GRAPH.* and
    /// engram's ENGRAM.* commands. Prints `listening on ADDR:PORT` first. Creates DIR if absent.
    Serve(ServeArgs),
    /// Serve MCP on stdin/stdout for a desktop agent or IDE (trusted local: who can run it can
    /// read the files). Creates DIR if absent; fails while a server holds DIR.
    Mcp {
        /// Database folder.
        dir: PathBuf,
        /// The workspace the agent works in.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Act as this user (its grants), without a password; default: `default` while no user
        /// exists.
        #[arg(long, conflicts_with = "connect")]
        user: Option<String>,
        /// Speak to the engram server at `redis://[user:password@]host:port` as a client (as the
        /// URL's user) instead of opening DIR: for a DIR a server holds.
        #[arg(long)]
        connect: Option<String>,
        /// The embedder for recall and ingest (default: the one the database records, else none).
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// Manage the server's users and grants (stored in the database). Refused while a server
    /// holds DIR: use ENGRAM.USER then.
    #[command(subcommand)]
    User(UserCommand),
    /// Print the access history: who read and wrote what, oldest first (works while a server
    /// holds DIR). One line per record, or with `--jsonl` one JSON object per line with `at`,
    /// `user`, `roles`, `interface`, `workspace`, `op`, `text`, `params_sha256`, `rows`, `claims`,
    /// `duration_us` and `outcome`.
    Audit {
        /// Database folder.
        dir: PathBuf,
        /// One JSON object per line.
        #[arg(long)]
        jsonl: bool,
        /// Only records at or after this time (RFC 3339, a date, or microseconds).
        #[arg(long)]
        since: Option<String>,
        /// Only this user's.
        #[arg(long)]
        user: Option<String>,
        /// Only this operation's (a command name such as GRAPH.QUERY, or a CLI command).
        #[arg(long)]
        op: Option<String>,
        /// Only the newest N.
        #[arg(long, default_value_t = 0)]
        limit: usize,
    },
    /// Set, remove or show tags (`key=value`) of a claim, an entity or a message: `set claim ID
    /// k=v...`, `set message CONVERSATION MESSAGE|* k=v...`, `del entity ID key...`, `get claim
    /// ID` (a claim's tags include those of the messages its evidence came from). Refused while a
    /// server holds DIR: use ENGRAM.TAG then.
    Tag {
        /// Database folder.
        dir: PathBuf,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// `set|del|get claim|entity|message …`
        #[arg(required = true, num_args = 3.., allow_hyphen_values = true)]
        words: Vec<String>,
    },
    /// Manage roles: grants per workspace that users hold. Refused while a server holds DIR: use
    /// ENGRAM.ROLE then.
    #[command(subcommand)]
    Role(RoleCommand),
    /// Manage row policies: which claims and entities of a workspace a role sees. Refused while a
    /// server holds DIR: use ENGRAM.POLICY then.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Open an interactive query shell on DIR: statements end with `;`; `:explain`, `:profile`, `:help`.
    Shell {
        /// Database folder.
        dir: PathBuf,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Recall the facts relevant to TEXT, packed into a token budget, each citing its evidence.
    Recall {
        /// Database folder.
        dir: PathBuf,
        /// The question.
        text: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Token budget of the context block.
        #[arg(long, default_value_t = 800)]
        budget: usize,
        /// An entity the question is about (repeatable): external id, name or alias.
        #[arg(long)]
        seed: Vec<String>,
        #[command(flatten)]
        time: TimeArgs,
        /// The question's embedding, as a JSON array (from the client's embedder).
        #[arg(long)]
        vector: Option<String>,
        /// Hops of the graph path.
        #[arg(long, default_value_t = 2)]
        hops: u32,
        /// Include deprecated and deleted claims (an audit of history); with --as-of, those
        /// valid then, else every version whatever its validity.
        #[arg(long)]
        history: bool,
        /// Vector scan mode: f32, f16 or i8.
        #[arg(long, default_value = "f32")]
        mode: String,
        /// One JSON object: `facts`, `context`, `tokens_used`, `budget`, `cut`, `paths_run`, `skipped`.
        #[arg(long)]
        json: bool,
        /// The question is embedded when no --vector is given (default embedder: the one the
        /// database records, if any).
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// An entity's context: the claims within --depth hops, nearest first, then by confidence,
    /// decay and recent activity, packed into a token budget; with --text, its neighbourhood ranked
    /// by similarity to the text (embedded by the database's embedder, else by keywords).
    Context {
        /// Database folder.
        dir: PathBuf,
        /// The entity: external id, name or alias.
        entity: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Rank the neighbourhood by similarity to this text.
        #[arg(long)]
        text: Option<String>,
        /// Hops from the entity.
        #[arg(long, default_value_t = 2)]
        depth: u32,
        /// Token budget of the context block.
        #[arg(long, default_value_t = 800)]
        budget: usize,
        /// Most facts.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// A relationship type to follow (repeatable; none: every type).
        #[arg(long)]
        predicate: Vec<String>,
        /// An entity type to reach (repeatable; none: every type).
        #[arg(long = "type")]
        types: Vec<String>,
        #[command(flatten)]
        time: TimeArgs,
        /// One JSON object: `facts`, `context`, `tokens_used`, `budget`, `cut`, `paths_run`, `skipped`.
        #[arg(long)]
        json: bool,
        /// With --text, the text is embedded (default embedder: the one the database records, if any).
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// Ingest extraction output: FILE.json is one document or an array of them, FILE.jsonl one per
    /// line; each document is its own transaction, committed in groups (one fsync per group). The
    /// whole file is checked first: a bad document is named (line or byte offset, JSON path) and
    /// nothing is written. Prints one JSON report per document once it is durable.
    Ingest {
        /// Database folder (created if absent).
        dir: PathBuf,
        /// The document(s).
        file: PathBuf,
        /// Combined confidence at which a claim becomes ACCEPTED (default: the workspace's
        /// stored setting, else 0.9).
        #[arg(long)]
        accept_confidence: Option<f32>,
        /// Name-vector cosine at which a mention resolves to an existing entity of its type
        /// (default: the workspace's stored setting, else 0.92).
        #[arg(long)]
        resolve_similarity: Option<f32>,
        /// The file holds conversations, not extraction documents: `{"id", "workspace"?,
        /// "turns": [{"id", "speaker", "text", "at"?, "image_caption"?}]}` (an array of them in a
        /// `.json` file, one per line in `.jsonl`). Each turn becomes a claim `speaker SAID turn`
        /// with its text, valid from its time, linked to the names it mentions; no extractor.
        #[arg(long)]
        conversation: bool,
        /// Names and claim texts without vectors are embedded (default embedder: the one the
        /// database records, if any).
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// Print the memory's health as JSON: extraction quality by model version, confidence calibration,
    /// graph density, freshness; with `--trace CLAIM`, that claim's evidence (the attribution
    /// trace: claim → evidence → conversation and message).
    Report {
        /// Database folder.
        dir: PathBuf,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// A claim's external id to trace to its sources.
        #[arg(long)]
        trace: Option<String>,
    },
    /// Import an ontology (OBO, Turtle, N-Triples, RDF/XML, cellxgene JSON, engram term JSON
    /// lines; `.gz` read as is) into a workspace of DIR (created if absent), in one transaction.
    /// Re-importing a newer release updates in place.
    ImportOntology {
        /// Database folder.
        dir: PathBuf,
        /// The ontology file.
        file: PathBuf,
        /// obo, ttl, nt, owl, json, jsonl (default: from the extension, else the content).
        #[arg(long)]
        format: Option<String>,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Print the ancestors of TERM (a CURIE, label or synonym) with their shortest distance.
    Ancestors(HierarchyArgs),
    /// Print the descendants of TERM (a CURIE, label or synonym) with their shortest distance.
    Descendants(HierarchyArgs),
    /// Resolve TEXT to concepts, best first: mappings, CURIE, label, synonyms, then profile search.
    Resolve {
        /// Database folder.
        dir: PathBuf,
        /// The text.
        text: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Most candidates.
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// One JSON array of `{id, label, matched_by, score}`.
        #[arg(long)]
        json: bool,
        /// The search step's profile vectors (default embedder: static when its table is
        /// present, else hash; minilm takes minutes on a large ontology).
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// Print the flattened profile of TERM (label, definition, synonyms, parents, children, samples of
    /// grandparents and grandchildren, aggregated attributes).
    Profile {
        /// Database folder.
        dir: PathBuf,
        /// CURIE, label or synonym.
        term: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Hierarchy relations, comma-separated.
        #[arg(long, default_value = "is_a")]
        relations: String,
        /// Entity property to aggregate over the descendants (repeatable).
        #[arg(long)]
        aggregate: Vec<String>,
        /// Type of linked entities to aggregate over the descendants (repeatable).
        #[arg(long)]
        aggregate_linked: Vec<String>,
    },
    /// Manage curated term mappings: `set TEXT --to CURIE...`, `remove TEXT`, `list`.
    Mapping {
        /// Database folder.
        dir: PathBuf,
        /// set, remove or list.
        action: String,
        /// The phrase.
        text: Option<String>,
        /// A concept the phrase stands for (repeatable).
        #[arg(long)]
        to: Vec<String>,
        /// Why the mapping exists.
        #[arg(long)]
        note: Option<String>,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Embed texts with a built-in embedder (no database): one JSON array per text on stdout.
    /// Default embedder: minilm when its files are present, else static, else hash.
    Embed {
        #[command(flatten)]
        embedding: EmbedArgs,
        /// Dimension of the `hash` embedder.
        #[arg(long, default_value_t = 384)]
        dim: usize,
        /// The texts.
        #[arg(required = true)]
        texts: Vec<String>,
    },
    /// Maintain the embedders: `distill` builds the static table from `MiniLM`.
    Embedder {
        /// distill.
        action: String,
        /// Model folder (default: `$ENGRAM_MODEL_DIR`, else `models/all-minilm-l6-v2`).
        #[arg(long)]
        model_dir: Option<PathBuf>,
        /// Dimension of the static table (PCA); `--dims` is accepted too.
        #[arg(long = "dim", visible_alias = "dims", default_value_t = 256)]
        dims: usize,
    },
    /// Replay conversations in `LoCoMo`'s format (a JSON array of samples; `.gz` read as is): each
    /// ingested into a fresh in-memory database (or `DIR/SAMPLE` with --keep), every question asked
    /// through recall, recall scored by evidence turn (recall@k, all@k, MRR, recall inside the
    /// packed context at each token budget), per category and overall (categories 1-4).
    Replay {
        /// The conversations.
        file: PathBuf,
        /// Token budgets of the packed context.
        #[arg(long, value_delimiter = ',', default_value = "256,512,1024,2048")]
        budgets: Vec<usize>,
        /// Ranks at which recall is counted.
        #[arg(long, value_delimiter = ',', default_value = "5,10,20")]
        k: Vec<usize>,
        /// One JSON object: `overall`, `by_category`, `timings`.
        #[arg(long)]
        json: bool,
        /// Keep each sample's database in `DIR/SAMPLE_ID` (created) instead of memory.
        #[arg(long)]
        keep: Option<PathBuf>,
        /// Recall's path weights `semantic,lexical,graph,recency` (default recall's own): what
        /// each path adds, judged on the same questions.
        #[arg(long, value_delimiter = ',')]
        weights: Option<Vec<f64>>,
        /// Write the questions of categories 1-4 whose evidence is not all in recall's top 10 to
        /// FILE, one JSON object a line: the question, its evidence (turn, text, rank) and what
        /// ranked above it.
        #[arg(long, value_name = "FILE")]
        misses: Option<PathBuf>,
        /// Default embedder: minilm when its files are present, else static, else hash.
        #[command(flatten)]
        embedding: EmbedArgs,
    },
    /// Write a consistent copy of DIR into DEST (a folder that opens as a database).
    Backup {
        /// Database folder.
        dir: PathBuf,
        /// Destination folder (created; must not hold a database).
        dest: PathBuf,
    },
}

/// Which embedder, and where its model files are.
#[derive(clap::Args, Debug)]
pub struct EmbedArgs {
    /// minilm, static or hash.
    #[arg(long)]
    pub embedder: Option<String>,
    /// Model folder (default: `$ENGRAM_MODEL_DIR`, else `models/all-minilm-l6-v2`).
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
}

/// Arguments of `ancestors` and `descendants`.
#[derive(clap::Args, Debug)]
pub struct HierarchyArgs {
    /// Database folder.
    pub dir: PathBuf,
    /// CURIE, label or synonym.
    pub term: String,
    /// Relations to follow, comma-separated (`is_a`, `part_of`, …).
    #[arg(long, default_value = "is_a")]
    pub relations: String,
    /// Workspace.
    #[arg(long, default_value = "default")]
    pub workspace: String,
    /// One JSON array of `{id, name, distance}`.
    #[arg(long)]
    pub json: bool,
}

/// Traversal direction on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Dir {
    /// Claims whose object is the entity.
    In,
    /// Claims whose subject is the entity.
    Out,
    /// Both.
    Both,
}

/// `engram role …`.
#[derive(Debug, clap::Subcommand)]
pub enum RoleCommand {
    /// Create role NAME with no grants.
    Add {
        /// Database folder.
        dir: PathBuf,
        /// The role's name.
        name: String,
    },
    /// Delete role NAME (users holding it lose it).
    Del {
        /// Database folder.
        dir: PathBuf,
        /// The role's name.
        name: String,
    },
    /// Grant role NAME read, write or admin on WORKSPACE (`*`: every workspace).
    Grant {
        /// Database folder.
        dir: PathBuf,
        /// The role's name.
        name: String,
        /// A workspace, or `*`.
        workspace: String,
        /// `read`, `write` (includes read) or `admin` (includes write).
        access: String,
        /// Sensitive claims exist for this grant.
        #[arg(long)]
        see_sensitive: bool,
    },
    /// Remove role NAME's grant on WORKSPACE (or `*`).
    Revoke {
        /// Database folder.
        dir: PathBuf,
        /// The role's name.
        name: String,
        /// A workspace, or `*`.
        workspace: String,
    },
    /// Make USER hold ROLE.
    Assign {
        /// Database folder.
        dir: PathBuf,
        /// The user.
        user: String,
        /// The role.
        role: String,
    },
    /// Take ROLE from USER.
    Unassign {
        /// Database folder.
        dir: PathBuf,
        /// The user.
        user: String,
        /// The role.
        role: String,
    },
    /// One line per role: name, grants, `users=` holding it.
    List {
        /// Database folder.
        dir: PathBuf,
    },
}

/// `engram policy …`.
#[derive(Debug, clap::Subcommand)]
pub enum PolicyCommand {
    /// Store (or replace) policy NAME of WORKSPACE: the roles given see only the rows PREDICATE
    /// (a Cypher expression over `c`, `s`, `o` for claims or `e` for entities; `$user` is the
    /// asking user) holds for.
    Set {
        /// Database folder.
        dir: PathBuf,
        /// The workspace.
        workspace: String,
        /// The policy's name.
        name: String,
        /// The predicate, e.g. `c.user_id = $user`.
        predicate: String,
        /// What it filters: `claims` or `entities`.
        #[arg(long, default_value = "claims")]
        on: String,
        /// A role (or user) it applies to; repeatable, at least one.
        #[arg(long = "role", required = true)]
        roles: Vec<String>,
    },
    /// Store (or replace) masking policy NAME of WORKSPACE: the roles given see what ON names
    /// masked by MODE.
    Mask {
        /// Database folder.
        dir: PathBuf,
        /// The workspace.
        workspace: String,
        /// The policy's name.
        name: String,
        /// What it masks: `pii:email|phone|card|ip|*`, `tag:KEY[=VALUE]` or `property:KEY`.
        on: String,
        /// How: `redact` (`[REDACTED:email]`), `hash` (a keyed HMAC) or `hide`.
        mode: String,
        /// A role (or user) it applies to; repeatable, at least one.
        #[arg(long = "role", required = true)]
        roles: Vec<String>,
    },
    /// Delete masking policy NAME of WORKSPACE.
    Unmask {
        /// Database folder.
        dir: PathBuf,
        /// The workspace.
        workspace: String,
        /// The policy's name.
        name: String,
    },
    /// Delete policy NAME of WORKSPACE.
    Del {
        /// Database folder.
        dir: PathBuf,
        /// The workspace.
        workspace: String,
        /// The policy's name.
        name: String,
    },
    /// One line per policy: workspace, name, target, `roles=`, predicate.
    List {
        /// Database folder.
        dir: PathBuf,
        /// Only this workspace's.
        workspace: Option<String>,
    },
    /// Which policies apply to USER, what they hide from it, and QUERY's answer as USER sees it.
    Explain {
        /// Database folder.
        dir: PathBuf,
        /// The user.
        user: String,
        /// A read query, run as USER.
        query: String,
        /// Workspace.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
}

/// `engram user …`.
#[derive(Debug, clap::Subcommand)]
pub enum UserCommand {
    /// Add a user (or set its password), the password read from stdin (one line).
    Add {
        /// Database folder.
        dir: PathBuf,
        /// The user's name.
        name: String,
        /// Read the password from stdin.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Grant NAME read, write or admin on WORKSPACE (`*`: every workspace).
    Grant {
        /// Database folder.
        dir: PathBuf,
        /// The user's name.
        name: String,
        /// A workspace, or `*`.
        workspace: String,
        /// `read`, `write` (includes read) or `admin` (includes write).
        access: String,
        /// Sensitive claims exist for this grant.
        #[arg(long)]
        see_sensitive: bool,
    },
    /// Remove NAME's grant on WORKSPACE (or `*`).
    Revoke {
        /// Database folder.
        dir: PathBuf,
        /// The user's name.
        name: String,
        /// A workspace, or `*`.
        workspace: String,
    },
    /// Delete a user.
    Del {
        /// Database folder.
        dir: PathBuf,
        /// The user's name.
        name: String,
    },
    /// One line per user: name, password or nopass, grants.
    List {
        /// Database folder.
        dir: PathBuf,
    },
    /// Print a new bearer token for NAME (for the HTTP API; shown once, stored hashed).
    Token {
        /// Database folder.
        dir: PathBuf,
        /// The user's name.
        name: String,
    },
    /// One line per token: id, user, creation time (Unix seconds); never the token.
    Tokens {
        /// Database folder.
        dir: PathBuf,
    },
    /// Revoke the token with this id (the part after `engram_`, before the next `_`).
    RevokeToken {
        /// Database folder.
        dir: PathBuf,
        /// The token's id.
        id: String,
    },
}

/// What `delete` and `restore` act on.
#[derive(clap::Args, Debug)]
pub struct TargetArgs {
    /// Database folder.
    pub dir: PathBuf,
    /// An entity's external id.
    #[arg(long, required_unless_present = "claim", conflicts_with = "claim")]
    pub entity: Option<String>,
    /// A claim's id.
    #[arg(long)]
    pub claim: Option<String>,
    /// Workspace.
    #[arg(long, default_value = "default")]
    pub workspace: String,
}

/// The two time axes of a read.
#[derive(clap::Args, Debug, Default)]
pub struct TimeArgs {
    /// Valid time: what was true then, whatever is known now, facts superseded since included
    /// (RFC 3339 or epoch seconds).
    #[arg(long)]
    pub as_of: Option<String>,
    /// Transaction time: what the memory had recorded by then (RFC 3339 or epoch seconds).
    #[arg(long)]
    pub known_as_of: Option<String>,
}

impl TimeArgs {
    /// Whether either time was given.
    pub fn given(&self) -> bool {
        self.as_of.is_some() || self.known_as_of.is_some()
    }

    /// The visibility of a read at these times; `history` widens it to every state and deleted
    /// rows (and, with no valid time, to every version whatever its validity).
    pub fn visibility(&self, history: bool) -> Result<engram::Visibility, String> {
        let parse = |flag: &str, t: &Option<String>| {
            t.as_deref().map(|t| engram::Timestamp::parse(t).map_err(|e| format!("--{flag} `{t}`: {e}"))).transpose()
        };
        let mut v = engram::Visibility {
            as_of: parse("as-of", &self.as_of)?,
            known_as_of: parse("known-as-of", &self.known_as_of)?,
            ..Default::default()
        };
        if history {
            if v.as_of.is_none() && v.known_as_of.is_none() {
                return Ok(engram::Visibility::all_versions());
            }
            v.states = engram::StateSet::ALL;
            v.include_deleted = true;
        }
        Ok(v)
    }
}

/// `engram serve`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Database folder.
    pub dir: PathBuf,
    /// The address to listen on (only loopback until users exist: protected mode).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// The RESP port (0: a free one).
    #[arg(long, default_value_t = 6379)]
    pub port: u16,
    /// Also serve HTTP on this port (same address): the JSON API, /metrics, /openapi.json,
    /// MCP at /mcp and the Explorer at / (0: a free one).
    #[arg(long)]
    pub http_port: Option<u16>,
    /// Threads that read, answer and run quick reads for the connections (default: one per
    /// core). Slow queries and writes run on their own pool either way; where the clients share
    /// the machine's few cores, fewer threads wake each other less.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub io_threads: Option<u16>,
    /// Read a password for the built-in user `default` from stdin (one line) and store it
    /// (argon2id): every connection must then AUTH, and the server may listen beyond loopback.
    #[arg(long)]
    pub requirepass_stdin: bool,
    /// Speak TLS on the RESP port with this certificate (PEM: the certificate, then its chain);
    /// needs --tls-key. Clients connect with `rediss://` (redis-cli --tls).
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM: PKCS#8, PKCS#1 or SEC1); needs --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The embedder for recall and ingest (default: the one the database records, else none).
    #[command(flatten)]
    pub embedding: EmbedArgs,
}
