//! `Database`: the embedded API. One writer at a time; readers never wait on it.
//!
//! The published state is an `Arc<State>` behind a lock held only to clone or swap the pointer.
//! A write clones the published state (copy-on-write columns make that cheap), applies the batch to
//! the clone and, only if every operation succeeded, appends the change to the WAL (durable per the
//! fsync policy) and then swaps the pointer. A change is visible only once it is durable, and a
//! failed WAL append leaves it invisible and unacknowledged. Readers holding the old `Arc` keep a
//! consistent snapshot for as long as they like.

use crate::error::{Error, WorkspaceError};
use crate::ids::{ClaimId, EntityId, TypeId, WorkspaceId};
use crate::index::graph::{initial_dirty, Graph};
use crate::index::vectors::{VectorBase, VectorColumn};
use crate::limits::Limits;
use crate::model::WorkspaceInfo;
use crate::read::view::{Snapshot, WorkspaceView};
use crate::state::State;
use crate::time::{Clock, SystemClock, Timestamp};
use crate::write::apply::{apply_batch, Created};
use crate::write::batch::WriteBatch;
use crate::write::bulk::{apply_bulk, BulkLoad};
use crate::write::mutation::{encode_batch, MutationRef};
use crate::write::workspace;
use commit::{Applied, JobContext};
use engram_storage::{FsyncPolicy, OsVfs, StorageError, Vfs, VfsLock, WalWriter};
use parking_lot::{Mutex, RwLock};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub mod audit;
pub(crate) mod commit;
mod files;
mod governance;
mod import;
mod jobs;
mod recovery;
pub mod scope;
pub use commit::CommitStats;
use files::{install_vectors, mapped_base, write_checkpoint, write_state, VectorFiles};
pub use files::{CLAIM_VECTOR_FILE, VECTOR_FILE};
use jobs::{apply_write, embed_batch, take_out, QUEUED_OPS_MAX};
pub use recovery::{check, CheckReport};
use recovery::{load, temp_files};

/// The workspace every new database starts with.
pub use crate::model::DEFAULT_WORKSPACE;

/// Database settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Input limits.
    pub limits: Limits,
    /// Source of "now" (transaction time and default valid time).
    pub clock: Arc<dyn Clock>,
    /// Fold the delta overlay into a fresh CSR once it holds this many edges (and at least a
    /// quarter of the base). Default 65,536.
    pub merge_delta_edges_min: usize,
    /// Run merges on a background thread (default); `false` merges inside the commit that
    /// crosses the threshold (deterministic, for tests).
    pub background_merge: bool,
    /// When a durable database makes appended WAL records durable (default: before every
    /// acknowledgement).
    pub fsync: FsyncPolicy,
    /// WAL segment size at which a new segment starts (default 64 MiB).
    pub wal_segment_bytes_max: u64,
    /// The WAL file is extended with zeros this many bytes at a time ahead of its records
    /// (default 1 MiB; 0 turns it off), so a commit's fdatasync writes the record and not the
    /// file's new size as well.
    pub wal_preallocate_bytes: u64,
    /// Write a checkpoint (snapshot) in the background once this many WAL bytes were written
    /// since the last one (default 256 MiB; `u64::MAX` turns automatic checkpoints off).
    pub checkpoint_wal_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            limits: Limits::default(),
            clock: Arc::new(SystemClock),
            merge_delta_edges_min: 65_536,
            background_merge: true,
            fsync: FsyncPolicy::Always,
            wal_segment_bytes_max: 64 << 20,
            wal_preallocate_bytes: 1 << 20,
            checkpoint_wal_bytes: 256 << 20,
        }
    }
}

/// The outcome of a committed batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitInfo {
    /// The version the commit published.
    pub version: u64,
    /// Its transaction time.
    pub committed_at: Timestamp,
    /// What the batch created, in operation order.
    pub created: Created,
}

/// The outcome of a bulk load: the loaded rows have consecutive dense ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkInfo {
    /// The version the load published.
    pub version: u64,
    /// Its transaction time.
    pub committed_at: Timestamp,
    /// Dense id of entity row 0 of the load.
    pub first_entity: EntityId,
    /// Entities loaded.
    pub entities: usize,
    /// Dense id of claim row 0 of the load.
    pub first_claim: ClaimId,
    /// Claims loaded.
    pub claims: usize,
}

/// The writer's exclusive section.
struct Writer {
    /// The WAL of a durable database.
    wal: Option<WalWriter>,
    /// The newest applied state: the base of the next commit. Ahead of the published state while
    /// group-committed records wait for their fsync.
    latest: Arc<State>,
    /// Sequence number of the last record written to the WAL.
    lsn: u64,
    /// WAL bytes written since the last checkpoint.
    wal_bytes: u64,
}

struct Inner {
    published: RwLock<Arc<State>>,
    writer: Mutex<Writer>,
    /// Commits written to the WAL and waiting for their fsync.
    group: Mutex<commit::Group>,
    /// Small writes waiting to be combined into a group.
    queue: Mutex<commit::Queue>,
    /// What the next fsync covers: the current segment and the last record written to it.
    sync_target: Mutex<Option<commit::SyncTarget>>,
    stats: commit::Counters,
    config: Config,
    merging: AtomicBool,
    /// The folder lock of a durable database (released on drop).
    _lock: Option<VfsLock>,
    /// The file system and folder of a durable database.
    home: Option<(Arc<dyn Vfs>, PathBuf)>,
    /// One checkpoint at a time.
    checkpointing: Mutex<()>,
    /// Opened with `open_read_only`: every write fails with `Error::ReadOnly`.
    read_only: bool,
    /// The entity and claim vector files (row `i` belongs to id `i`) and the rows checkpoints
    /// have written to them since open.
    vector_files: Mutex<VectorFiles>,
    checkpoint_running: AtomicBool,
    /// Embeds texts that writes carry without a vector (see `Database::set_embedder`).
    embedder: RwLock<Option<Arc<dyn engram_embed::Embedder>>>,
    /// Gives verdicts for ingested claims that carry none (see `Database::set_classifier`).
    classifier: RwLock<Option<Arc<dyn crate::write::classifier::ClaimClassifier>>>,
    /// The access history (`audit.rs`).
    audit: Arc<audit::AuditLog>,
    /// The rows row policies hid on recent states (`scope.rs`, `hidden_for`).
    hidden_cache: Mutex<Vec<scope::CachedHidden>>,
}

impl Inner {
    fn new(st: State, wal: Option<WalWriter>, config: Config, lock: Option<VfsLock>, home: Option<(Arc<dyn Vfs>, PathBuf)>) -> Inner {
        let st = Arc::new(st);
        Inner {
            vector_files: Mutex::new(VectorFiles::default()),
            read_only: false,
            home,
            checkpointing: Mutex::new(()),
            checkpoint_running: AtomicBool::new(false),
            embedder: RwLock::new(None),
            classifier: RwLock::new(None),
            audit: audit::AuditLog::in_memory(),
            hidden_cache: Mutex::new(Vec::new()),
            published: RwLock::new(st.clone()),
            writer: Mutex::new(Writer { wal, latest: st, lsn: 0, wal_bytes: 0 }),
            group: Mutex::new(commit::Group::default()),
            queue: Mutex::new(commit::Queue::default()),
            sync_target: Mutex::new(None),
            stats: commit::Counters::default(),
            config,
            merging: AtomicBool::new(false),
            _lock: lock,
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.group.get_mut().stop_syncer();
    }
}

/// The name of the lock file inside a database folder.
pub const LOCK_FILE: &str = "LOCK";

/// An engram database. Cheap to clone (shared handle); `Send + Sync`.
#[derive(Clone)]
pub struct Database {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("version", &self.inner.published.read().version).finish_non_exhaustive()
    }
}

impl Database {
    /// A new in-memory database with the default settings and a `default` workspace.
    pub fn in_memory() -> Database {
        Database::with_config(Config::default())
    }

    /// A new in-memory database with `config` and a `default` workspace.
    pub fn with_config(config: Config) -> Database {
        let mut st = State::default();
        let now = config.clock.now();
        st.committed_at = now;
        workspace::create(&mut st, DEFAULT_WORKSPACE, now).expect("the default workspace name is valid");
        Database { inner: Arc::new(Inner::new(st, None, config, None, None)) }
    }

    /// Opens the database in folder `dir` on the real file system, creating it if absent.
    pub fn open(dir: impl AsRef<Path>) -> Result<Database, Error> {
        Database::open_with(dir, Config::default(), Arc::new(OsVfs))
    }

    /// Opens the database in `dir` for reading only, without its lock, so it works while another
    /// process has the folder open for writing: it reads the newest snapshot and every complete WAL
    /// record after it (a record being written is left out, nothing is cut or removed). Writes
    /// fail with `Error::ReadOnly`.
    pub fn open_read_only(dir: impl AsRef<Path>) -> Result<Database, Error> {
        Database::open_read_only_with(dir, Config::default(), Arc::new(OsVfs))
    }

    /// `open_read_only` through `vfs`. A checkpoint of the writer may remove the files being read
    /// meanwhile; the load is then retried.
    pub fn open_read_only_with(dir: impl AsRef<Path>, config: Config, vfs: Arc<dyn Vfs>) -> Result<Database, Error> {
        let dir = dir.as_ref();
        let mut attempt = 0;
        let mut st = loop {
            match load(vfs.as_ref(), dir) {
                Ok(loaded) => break loaded.state,
                Err(Error::Storage(StorageError::Io { ref source, .. }))
                    if source.kind() == std::io::ErrorKind::NotFound && attempt < 5 =>
                {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        let files = install_vectors(&mut st, vfs.as_ref(), dir, false)?;
        let mut inner = Inner::new(st, None, config, None, Some((vfs, dir.to_path_buf())));
        inner.read_only = true;
        *inner.vector_files.lock() = files;
        Ok(Database { inner: Arc::new(inner) })
    }

    /// Writes a consistent copy of the database, as of now, into the folder `dest` (created; it
    /// must not hold a database) while writes go on: a snapshot of the newest durable state. The
    /// copy opens as a database of its own.
    pub fn backup(&self, dest: impl AsRef<Path>) -> Result<PathBuf, Error> {
        let dest = dest.as_ref();
        let vfs: Arc<dyn Vfs> = self.inner.home.as_ref().map_or_else(|| Arc::new(OsVfs) as Arc<dyn Vfs>, |(v, _)| v.clone());
        let state = {
            let mut writer = self.inner.writer.lock();
            if let Some(wal) = writer.wal.as_mut() {
                // Everything in the state being copied must be durable first.
                wal.sync()?;
            }
            writer.latest.clone()
        };
        vfs.create_dir_all(dest).map_err(|e| StorageError::io(dest, e))?;
        let existing = vfs.list(dest).map_err(|e| StorageError::io(dest, e))?;
        if existing.iter().any(|n| Path::new(n).extension().is_some_and(|e| e == "snap" || e == "wal")) {
            let why = std::io::Error::new(std::io::ErrorKind::AlreadyExists, "the backup folder already holds a database");
            return Err(StorageError::io(dest, why).into());
        }
        VectorFiles::default().flush(vfs.as_ref(), dest, &state)?;
        let name = format!("{:016x}.snap", state.version);
        Ok(write_state(vfs.as_ref(), dest, &name, &state, (0, 0))?)
    }

    /// Opens (creating if absent) the database in `dir` through `vfs`: takes the folder lock,
    /// replays the WAL (cutting a torn tail, refusing corruption with the file and offset), and
    /// appends every later commit to it.
    pub fn open_with(dir: impl AsRef<Path>, config: Config, vfs: Arc<dyn Vfs>) -> Result<Database, Error> {
        let dir = dir.as_ref();
        vfs.create_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
        let lock = vfs.lock(&dir.join(LOCK_FILE)).map_err(|e| {
            if e.kind() == std::io::ErrorKind::WouldBlock {
                StorageError::Locked(dir.to_path_buf())
            } else {
                StorageError::io(dir.join(LOCK_FILE), e)
            }
        })?;
        // Leftovers of an interrupted checkpoint are removed before loading.
        for tmp in temp_files(vfs.as_ref(), dir)? {
            vfs.remove(&dir.join(&tmp)).map_err(|e| StorageError::io(dir.join(&tmp), e))?;
        }
        let recovery::Loaded { state: mut st, report, snapshot: newest, carried } = load(vfs.as_ref(), dir)?;
        let fresh = report.records == 0 && newest.is_none();
        let mut config = config;
        apply_settings(&st.settings, &mut config);
        let wal = WalWriter::open(vfs.clone(), dir, &report, config.fsync, config.wal_segment_bytes_max, config.wal_preallocate_bytes)?;
        let files = install_vectors(&mut st, vfs.as_ref(), dir, true)?;
        let flush = std::time::Duration::from_millis(st.settings.audit_flush_ms.unwrap_or(10));
        let retention = st.settings.audit_retention_days;
        let mut inner = Inner::new(st, Some(wal), config, Some(lock), Some((vfs.clone(), dir.to_path_buf())));
        inner.audit = audit::AuditLog::open(vfs, dir, flush)?;
        inner.audit.recover_carried(carried)?;
        if let Some(days) = retention {
            let before = Timestamp(inner.config.clock.now().0.saturating_sub(i64::from(days) * 86_400_000_000));
            inner.audit.drop_before(before)?;
        }
        let db = Database { inner: Arc::new(inner) };
        *db.inner.vector_files.lock() = files;
        if fresh {
            db.create_workspace(DEFAULT_WORKSPACE)?;
        }
        Ok(db)
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Whether the access history records the embedded (root) caller's calls, read from the
    /// published state in place (no snapshot taken: every embedded query asks).
    pub(crate) fn audit_root_on(&self) -> bool {
        self.inner.published.read().settings.audit_root_on()
    }

    /// A consistent snapshot of the latest commit, evaluating validity at the clock's "now"
    /// (never earlier than the snapshot's own last commit, should the clock lag behind it).
    pub fn snapshot(&self) -> Snapshot {
        let state = self.inner.published.read().clone();
        let now = self.inner.config.clock.now().max(state.committed_at);
        Snapshot { state, now }
    }

    /// Ingests an extraction document (JSON; see `engram::ingest`) as one atomic transaction:
    /// entity resolution and the claim lifecycle are planned against the newest state under the
    /// writer lock, so concurrent ingests see each other. A message ingested before (same
    /// conversation and message id) writes nothing; a document that would change nothing writes
    /// nothing. A bad document is an `Error::Ingest` naming the JSON path, and changes nothing.
    pub fn ingest(&self, json: &str, opts: &crate::write::ingest::IngestOptions) -> Result<crate::write::ingest::IngestReport, Error> {
        let doc = crate::write::ingest::parse(json)?;
        self.ingest_doc(&doc, opts)
    }

    /// `ingest` of a parsed document.
    pub fn ingest_doc(
        &self,
        doc: &crate::write::ingest::IngestDoc,
        opts: &crate::write::ingest::IngestOptions,
    ) -> Result<crate::write::ingest::IngestReport, Error> {
        // The commit's job owns its document: one copy, completed in place.
        let mut docs = [doc.clone()];
        let hints = self.prepare_ingest(&mut docs)?;
        let [doc] = docs;
        let mut hints = hints.into_iter();
        let done = self.commit_queued(ingest_job(Arc::new(doc), hints.next().unwrap_or_default(), *opts))?;
        let report: crate::write::ingest::IngestReport = take_out(done.out);
        if report.version.is_some() {
            self.maybe_merge();
        }
        Ok(report)
    }

    /// Ingests many documents as one commit group: each is its own atomic transaction, planned
    /// after the ones before it (a failing document is rejected alone, the others commit), and
    /// all of them share one WAL write and one fsync, durable when this returns. Texts without
    /// vectors are embedded in one call for the group. The outer error (embedding) rejects all.
    pub fn ingest_docs(
        &self,
        docs: Vec<crate::write::ingest::IngestDoc>,
        opts: &crate::write::ingest::IngestOptions,
    ) -> Result<Vec<Result<crate::write::ingest::IngestReport, Error>>, Error> {
        let mut docs = docs;
        let hints = self.prepare_ingest(&mut docs)?;
        let mut jobs: Vec<_> = docs.into_iter().zip(hints).map(|(doc, hints)| ingest_job(Arc::new(doc), hints, *opts)).collect();
        let mut refs: Vec<&mut commit::JobFn<'_>> = jobs.iter_mut().map(|j| j as &mut commit::JobFn<'_>).collect();
        let results = self.commit_group(&mut refs);
        let reports: Vec<_> = results.into_iter().map(|r| r.map(|done| take_out::<crate::write::ingest::IngestReport>(done.out))).collect();
        if reports.iter().any(|r| r.as_ref().is_ok_and(|r| r.version.is_some())) {
            self.maybe_merge();
        }
        Ok(reports)
    }

    /// The work of an ingest that needs no newest state, done before the commit: texts without
    /// vectors are embedded (one call for all the documents, outside the writer lock); then, on
    /// a snapshot, the classifier runs and mentions without an exact name are searched by vector
    /// (the commit then scores only the entities added since). Returns each document's hints.
    fn prepare_ingest(
        &self,
        docs: &mut [crate::write::ingest::IngestDoc],
    ) -> Result<Vec<Vec<Option<crate::write::ingest::VectorHint>>>, Error> {
        if let Some(e) = self.embedder() {
            // A claim is embedded by its text, or, without one, by its statement.
            let statements: Vec<Vec<Option<String>>> =
                docs.iter().map(|doc| doc.claims.iter().map(crate::write::ingest::ClaimIn::statement).collect()).collect();
            let mut texts: Vec<&str> = Vec::new();
            for (doc, statements) in docs.iter().zip(&statements) {
                texts.extend(doc.entities.iter().filter(|x| x.vector.is_none()).map(|x| x.name.as_str()));
                let claims = doc.claims.iter().zip(statements).filter(|(c, _)| c.vector.is_none());
                texts.extend(claims.filter_map(|(c, statement)| c.text.as_deref().or(statement.as_deref())));
            }
            if !texts.is_empty() {
                // Each distinct text is embedded once: a group repeats names (a speaker in every
                // turn, an entity in every document about it).
                let mut slot: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
                let mut unique: Vec<&str> = Vec::new();
                let at: Vec<usize> = texts
                    .iter()
                    .map(|t| {
                        *slot.entry(t).or_insert_with(|| {
                            unique.push(t);
                            unique.len() - 1
                        })
                    })
                    .collect();
                let embedded = jobs::embed_directed(e.as_ref(), &unique)?;
                let mut vectors = at.into_iter().map(|i| embedded.get(i).cloned().flatten());
                for (doc, statements) in docs.iter_mut().zip(&statements) {
                    for x in doc.entities.iter_mut().filter(|x| x.vector.is_none()) {
                        x.vector = vectors.next().flatten();
                    }
                    for (c, statement) in doc.claims.iter_mut().zip(statements) {
                        if c.vector.is_none() && (c.text.is_some() || statement.is_some()) {
                            c.vector = vectors.next().flatten();
                        }
                    }
                }
            }
        }
        let snap = self.snapshot();
        let classifier = self.inner.classifier.read().clone();
        Ok(docs
            .iter_mut()
            .map(|doc| {
                let Ok(ws) = snap.workspace(&doc.workspace) else { return Vec::new() };
                if let Some(classifier) = &classifier {
                    crate::write::classifier::classify_doc(&ws, doc, classifier.as_ref());
                }
                crate::write::ingest::vector_hints(&ws, doc)
            })
            .collect())
    }

    /// Commits `batch` atomically: all of it, or (on error) none of it. On a durable database
    /// the batch is in the WAL (per the fsync policy) before this returns. With an embedder set,
    /// new entities' names and new claims' texts that come without a vector are embedded first
    /// (one batched call, outside the writer lock) and their vectors written in the same commit;
    /// an embedding failure rejects the batch. Concurrent small batches are committed together
    /// (one state copy, one WAL write, one fsync), each still atomic and rejected alone.
    pub fn write(&self, batch: &WriteBatch) -> Result<CommitInfo, Error> {
        let vectors = match self.embedder() {
            None => None,
            Some(embedder) => embed_batch(batch, embedder.as_ref())?,
        };
        let done = if batch.ops.len() > QUEUED_OPS_MAX {
            let mut job = |st: &mut State, cx: &JobContext<'_>| apply_write(st, cx, batch, vectors.as_ref(), None);
            self.commit_alone(&mut job)?
        } else {
            let batch = batch.clone();
            // The record is encoded here, on the writer's own thread, not by the combiner, whose
            // work every writer of the group waits for.
            let record = (vectors.is_none() && self.inner.home.is_some()).then(|| encode_batch(&batch));
            self.commit_queued(move |st, cx| apply_write(st, cx, &batch, vectors.as_ref(), record.as_deref()))?
        };
        self.maybe_merge();
        Ok(CommitInfo { version: done.version, committed_at: done.committed_at, created: take_out(done.out) })
    }

    /// Makes `embedder` embed, in the write path, entity names and claim texts that arrive
    /// without a vector, and records it (`name/version/dim`) in the database's settings. Refused
    /// with `Error::EmbedderMismatch` when the database records another embedder or holds vectors
    /// of another dimension: vectors of two embedders are never mixed. Client-supplied vectors of
    /// the right dimension are still accepted.
    pub fn set_embedder(&self, embedder: Arc<dyn engram_embed::Embedder>) -> Result<(), Error> {
        let id = embedder.id();
        let settings = self.settings();
        if let Some(stored) = &settings.embedder {
            if *stored != id {
                return Err(Error::EmbedderMismatch { stored: stored.clone(), configured: id });
            }
        }
        if let Some(dim) = settings.vector_dim {
            if dim as usize != embedder.dim() {
                return Err(Error::EmbedderMismatch { stored: format!("vectors of dimension {dim}"), configured: id });
            }
        }
        if settings.embedder.is_none() && !self.inner.read_only {
            self.set_setting("embedder", &id)?;
        }
        *self.inner.embedder.write() = Some(embedder);
        Ok(())
    }

    /// Gives the database the embedder named `name` (`minilm`, `static`, `hash`), else the one
    /// its settings record (a database written with `MiniLM` embeds its queries with `MiniLM`),
    /// else none; models are read from `model_dir` or the default folder. Returns which one was
    /// chosen and why, or `None` when there is none to choose.
    pub fn use_embedder(&self, name: Option<&str>, model_dir: Option<&Path>) -> Result<Option<String>, Error> {
        let stored = self.settings().embedder;
        let Some(name) = name.map(str::to_owned).or_else(|| stored.as_deref().and_then(|s| s.split('/').next()).map(str::to_owned)) else {
            return Ok(None);
        };
        let dim = stored.as_deref().and_then(|s| s.rsplit('/').next()).and_then(|d| d.parse().ok()).unwrap_or(384);
        let (embedder, why) = engram_embed::select(Some(&name), model_dir, dim)?;
        self.set_embedder(embedder)?;
        Ok(Some(why))
    }

    /// Makes `classifier` give a verdict (corroborates / contradicts / refines an existing claim)
    /// for each ingested claim that comes without one, before planning, on a snapshot and outside
    /// the writer lock; the verdict is then applied exactly like a client's. `None` removes it.
    pub fn set_classifier(&self, classifier: Option<Arc<dyn crate::write::classifier::ClaimClassifier>>) {
        *self.inner.classifier.write() = classifier;
    }

    /// The embedder set with `set_embedder`.
    pub fn embedder(&self) -> Option<Arc<dyn engram_embed::Embedder>> {
        self.inner.embedder.read().clone()
    }

    /// `text` embedded with the database's embedder (for a recall query), or `None` without one.
    pub fn embed_query(&self, text: &str) -> Result<Option<Vec<f32>>, Error> {
        match self.embedder() {
            None => Ok(None),
            Some(e) => Ok(jobs::embed_directed(e.as_ref(), &[text])?.pop().flatten()),
        }
    }

    /// The vector recall's semantic path searches with for `question`, given what it asks
    /// (`WorkspaceView::question_to_embed`): both embedded in one batch and averaged
    /// (`search::semantic::question_vector`); the question's alone when they are the same text.
    /// `None` without an embedder.
    pub fn embed_question(&self, question: &str, asked: &str) -> Result<Option<Vec<f32>>, Error> {
        let Some(e) = self.embedder() else { return Ok(None) };
        if asked == question {
            return Ok(jobs::embed_directed(e.as_ref(), &[question])?.pop().flatten());
        }
        let mut both = jobs::embed_directed(e.as_ref(), &[question, asked])?.into_iter();
        let (whole, asked) = (both.next().flatten(), both.next().flatten());
        Ok(crate::search::semantic::question_vector(whole, asked))
    }

    fn commit<E: Into<Error>>(
        &self,
        record: impl FnOnce() -> Vec<u8>,
        f: impl FnOnce(&mut State, Timestamp, &Limits) -> Result<Created, E>,
    ) -> Result<CommitInfo, Error> {
        self.commit_with(record, f).map(|(version, committed_at, created)| CommitInfo { version, committed_at, created })
    }

    /// Commits one change alone on this thread (a group of one; see `commit`): `f` changes a
    /// copy of the newest state, `record()` is its encoded mutation (`encode_mutation`), asked
    /// for only by a durable database.
    fn commit_with<R: Send + 'static, E: Into<Error>>(
        &self,
        record: impl FnOnce() -> Vec<u8>,
        f: impl FnOnce(&mut State, Timestamp, &Limits) -> Result<R, E>,
    ) -> Result<(u64, Timestamp, R), Error> {
        let (mut record, mut f) = (Some(record), Some(f));
        let mut job = |st: &mut State, cx: &JobContext<'_>| {
            // A group of one never runs its job twice.
            let (Some(f), Some(record)) = (f.take(), record.take()) else { unreachable!("a job alone runs once") };
            let out = f(st, cx.now, cx.limits).map_err(Into::into)?;
            Ok(Applied::wrote(if cx.log { record() } else { Vec::new() }, out))
        };
        let done = self.commit_alone(&mut job)?;
        Ok((done.version, done.committed_at, take_out(done.out)))
    }

    /// The state a commit starts from, and its transaction time: strictly increasing even if the
    /// clock stalls or steps back.
    fn successor(&self, latest: &State) -> (State, Timestamp) {
        let now = self.next_commit_time(latest);
        (latest.successor(now), now)
    }

    /// The transaction time of the commit after `latest`: strictly increasing even if the clock
    /// stalls or steps back.
    fn next_commit_time(&self, latest: &State) -> Timestamp {
        self.inner.config.clock.now().max(Timestamp(latest.committed_at.0.saturating_add(1)))
    }

    /// Sets every entity's name vector at once: `values` holds one row of `dim` floats per entity,
    /// row `i` for entity id `i` (an all-zero row means "no vector"), what an import produces. On a
    /// durable database it writes the entity vector file, replacing an earlier one. It records
    /// `vector_dim`, which cannot change once set; entities given vectors one by one (by
    /// `Op::SetVector`) cannot be replaced this way.
    pub fn write_entity_vectors(&self, dim: usize, values: &[f32]) -> Result<usize, Error> {
        self.entity_vectors(dim, Cow::Borrowed(values))
    }

    /// `write_entity_vectors` taking the rows by value: an in-memory database keeps them without
    /// a copy.
    pub fn set_entity_vectors(&self, dim: usize, values: Vec<f32>) -> Result<usize, Error> {
        self.entity_vectors(dim, Cow::Owned(values))
    }

    fn entity_vectors(&self, dim: usize, values: Cow<'_, [f32]>) -> Result<usize, Error> {
        if self.inner.read_only {
            return Err(Error::ReadOnly);
        }
        let bad = |key: &str, value: String, expected| crate::settings::SettingsError::BadValue { key: key.into(), value, expected };
        if dim == 0 || !values.len().is_multiple_of(dim) {
            return Err(bad("vector_dim", dim.to_string(), "a dimension dividing the number of floats").into());
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(bad("vectors", "a NaN or infinite component".into(), "finite floats").into());
        }
        let snap = self.snapshot();
        let rows = values.len() / dim;
        if rows != snap.counts().0 {
            return Err(bad("vectors", format!("{rows} rows"), "one row per entity").into());
        }
        if !snap.state.vectors.entity.written_rows().is_empty() {
            return Err(bad("vectors", "a full set".into(), "entity vectors not yet written one by one").into());
        }
        // Refused before the file is touched: a dimension that differs from the one set.
        self.settings().set("vector_dim", &dim.to_string())?;
        drop(snap);
        let base = Arc::new(match &self.inner.home {
            Some((vfs, dir)) => {
                let path = dir.join(VECTOR_FILE);
                let mut file = engram_storage::VectorFile::create(vfs.as_ref(), &path, dim)?;
                file.append(vfs.as_ref(), &values)?;
                let mut files = self.inner.vector_files.lock();
                let (file, mapped) = engram_storage::VectorFile::open(vfs.as_ref(), &path, false)?;
                let base = mapped_base(&file, mapped, &path)?;
                files.entity = Some(file);
                files.flushed[0].clear();
                base
            }
            None => VectorBase::owned(dim, values.into_owned()),
        });
        // The column is installed by a commit (its record: the settings with `vector_dim`), so it
        // goes through the one publication path: visible after every group before it is durable,
        // and never dropped by a group published after it.
        let settings: std::cell::RefCell<Option<crate::settings::Settings>> = std::cell::RefCell::new(None);
        self.commit(
            || settings.borrow().as_ref().map(|s| MutationRef::SettingsV6(s).encode()).unwrap_or_default(),
            |st, _, _| {
                if st.entities.len() != rows {
                    return Err(Error::from(bad("vectors", format!("{rows} rows"), "one row per entity")));
                }
                if !st.vectors.entity.written_rows().is_empty() {
                    return Err(bad("vectors", "a full set".into(), "entity vectors not yet written one by one").into());
                }
                let mut next = (*st.settings).clone();
                next.set("vector_dim", &dim.to_string())?;
                st.settings = Arc::new(next.clone());
                st.vectors.entity = VectorColumn::with_base(base.clone());
                *settings.borrow_mut() = Some(next);
                Ok(Created::default())
            },
        )?;
        Ok(rows)
    }

    /// The stored name vector of entity `id`, if it has one.
    pub fn entity_vector(&self, id: EntityId) -> Option<Vec<f32>> {
        self.snapshot().state.vectors.entity.get(id.0)
    }

    /// The stored text vector of claim `id`, if it has one.
    pub fn claim_vector(&self, id: ClaimId) -> Option<Vec<f32>> {
        self.snapshot().state.vectors.claim.get(id.0)
    }

    /// The settings stored in this database.
    pub fn settings(&self) -> crate::settings::Settings {
        (*self.snapshot().state.settings).clone()
    }

    /// Changes one stored setting (a logged commit). It takes effect for this process at the next
    /// open; `fsync` and the thresholds are read at open.
    pub fn set_setting(&self, key: &str, value: &str) -> Result<(), Error> {
        self.update_settings(|s, _| s.set(key, value).map_err(Error::from))
    }

    /// The network server's users (name → password hash and grants), stored in the database.
    pub fn users(&self) -> std::collections::BTreeMap<String, crate::settings::StoredUser> {
        self.snapshot().state.settings.users.clone()
    }

    /// Adds or replaces user `name`: a logged commit (a WAL record, then in every snapshot). The
    /// engine stores the password hash as given; hashing is the caller's (the server's argon2).
    pub fn put_user(&self, name: &str, user: crate::settings::StoredUser) -> Result<(), Error> {
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) || name.len() > 128 {
            return Err(crate::settings::SettingsError::BadValue {
                key: "user".to_owned(),
                value: name.chars().take(64).collect(),
                expected: "a name of 1 to 128 bytes without spaces or control characters",
            }
            .into());
        }
        self.update_settings(|s, _| {
            s.users.insert(name.to_owned(), user);
            Ok(())
        })
    }

    /// Removes user `name`; `false` when there was none (nothing is written then).
    pub fn remove_user(&self, name: &str) -> Result<bool, Error> {
        if !self.snapshot().state.settings.users.contains_key(name) {
            return Ok(false);
        }
        self.update_settings(|s, _| {
            s.users.remove(name);
            s.tokens.retain(|_, t| t.user != name);
            Ok(())
        })?;
        Ok(true)
    }

    /// The HTTP API's bearer tokens by id (their secrets' hashes, never the secrets).
    pub fn tokens(&self) -> std::collections::BTreeMap<String, crate::settings::StoredToken> {
        self.snapshot().state.settings.tokens.clone()
    }

    /// Stores token `id` for an existing user (a logged commit); hashing the secret is the
    /// caller's.
    pub fn put_token(&self, id: &str, token: crate::settings::StoredToken) -> Result<(), Error> {
        let user = token.user.clone();
        self.update_settings(|s, _| {
            if !s.users.contains_key(&user) {
                return Err(
                    crate::settings::SettingsError::BadValue { key: "user".to_owned(), value: user, expected: "an existing user" }.into()
                );
            }
            s.tokens.insert(id.to_owned(), token);
            Ok(())
        })
    }

    /// Revokes token `id`; `false` when there was none (nothing is written then).
    pub fn remove_token(&self, id: &str) -> Result<bool, Error> {
        if !self.snapshot().state.settings.tokens.contains_key(id) {
            return Ok(false);
        }
        self.update_settings(|s, _| {
            s.tokens.remove(id);
            Ok(())
        })?;
        Ok(true)
    }

    /// Changes one per-workspace setting (`accept_confidence`, `resolve_similarity`,
    /// `retention_days`; `-` unsets it), a logged commit that takes effect at once.
    pub fn set_workspace_setting(&self, workspace: &str, key: &str, value: &str) -> Result<(), Error> {
        if self.snapshot().state.catalog.workspace(workspace).is_none() {
            return Err(WorkspaceError::Unknown(workspace.to_owned()).into());
        }
        self.update_settings(|s, _| s.set_for(workspace, key, value).map_err(Error::from))
    }

    /// Applies workspace `workspace`'s `retention_days` setting now: erases (as `forget` does, from
    /// every index) its claims deleted or expired more than that many days ago. Returns how many
    /// claims were erased; 0, and nothing written, when the setting is unset (the default keeps
    /// everything).
    pub fn apply_retention(&self, workspace: &str) -> Result<usize, Error> {
        let Some(days) = self.settings().workspace_value::<u32>(workspace, "retention_days") else { return Ok(0) };
        let now = self.inner.config.clock.now();
        let before = Timestamp(now.0.saturating_sub(i64::from(days) * 86_400_000_000));
        let mut batch = WriteBatch::new(workspace);
        batch.push(crate::write::batch::Op::Forget(crate::write::batch::ForgetTarget::History { before }));
        let (_, _, erased) = self.commit_with(
            || encode_batch(&batch),
            |st, now, limits| {
                let ws = st.catalog.workspace(workspace).ok_or_else(|| WorkspaceError::Unknown(workspace.to_owned()))?;
                let erased = st.history_before(ws, before).len();
                apply_batch(st, &batch, now, limits)?;
                Ok::<_, Error>(erased)
            },
        )?;
        Ok(erased)
    }

    /// Changes the stored settings under the writer, so concurrent changes are never lost (the
    /// change sees the state as it stands, to check the data against a new constraint).
    pub(crate) fn update_settings(
        &self,
        change: impl FnOnce(&mut crate::settings::Settings, &State) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let changed: std::cell::RefCell<Option<crate::settings::Settings>> = std::cell::RefCell::new(None);
        self.commit(
            || changed.borrow().as_ref().map(|s| MutationRef::SettingsV6(s).encode()).unwrap_or_default(),
            |st, _, _| {
                let mut settings = (*st.settings).clone();
                change(&mut settings, st)?;
                st.settings = Arc::new(settings.clone());
                *changed.borrow_mut() = Some(settings);
                Ok::<_, Error>(Created::default())
            },
        )?;
        Ok(())
    }

    /// Loads columnar data into an empty workspace in one atomic commit, validating and building
    /// on all cores (see `bulk`). The result is compacted: no delta overlay is left behind.
    pub fn bulk_load(&self, load: &BulkLoad) -> Result<BulkInfo, Error> {
        let (version, committed_at, (entities, claims)) = self.commit_with(
            || MutationRef::Bulk(load).encode(),
            |st, now, limits| {
                let first = (st.entities.len() as u32, st.claims.len() as u32);
                apply_bulk(st, Cow::Borrowed(load), now, limits).map(|_| first)
            },
        )?;
        Ok(BulkInfo {
            version,
            committed_at,
            first_entity: EntityId(entities),
            entities: load.entities.ext_id.len(),
            first_claim: ClaimId(claims),
            claims: load.claims.subject.len(),
        })
    }

    /// `bulk_load` taking the load by value. On an in-memory database the load's string columns
    /// become the database's without a copy and its other columns are freed as they are copied,
    /// which lowers the load's peak memory by about the size of the load. A durable database
    /// logs the load first, so it gains nothing over `bulk_load` there (`bulk_load_checkpointed`
    /// is the fast path on disk).
    pub fn bulk_load_owned(&self, load: BulkLoad) -> Result<BulkInfo, Error> {
        if self.inner.home.is_some() {
            return self.bulk_load(&load);
        }
        let (entities, claims) = (load.entities.ext_id.len(), load.claims.subject.len());
        let (version, committed_at, (first_entity, first_claim)) = self.commit_with(Vec::new, |st, now, limits| {
            let first = (st.entities.len() as u32, st.claims.len() as u32);
            apply_bulk(st, Cow::Owned(load), now, limits).map(|_| first)
        })?;
        Ok(BulkInfo { version, committed_at, first_entity: EntityId(first_entity), entities, first_claim: ClaimId(first_claim), claims })
    }

    /// Creates a workspace.
    pub fn create_workspace(&self, name: &str) -> Result<WorkspaceId, Error> {
        let mut id = WorkspaceId(0);
        self.commit(
            || MutationRef::CreateWorkspace(name).encode(),
            |st, now, _| {
                id = workspace::create(st, name, now)?;
                Ok::<_, WorkspaceError>(Created::default())
            },
        )?;
        Ok(id)
    }

    /// Whether a live workspace of exactly this name exists: the published catalog, read in
    /// place (no snapshot taken: a server asks before every query).
    pub fn workspace_exists(&self, name: &str) -> bool {
        self.inner.published.read().catalog.workspace(name).is_some()
    }

    /// Creates workspace `name` unless it exists; returns once it is visible to reads. When a
    /// concurrent call created it a moment before (its commit not yet published), waits for that
    /// commit, at most `ENSURE_WAIT`, then tries once more.
    pub fn ensure_workspace(&self, name: &str) -> Result<(), Error> {
        const ENSURE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
        let visible = |db: &Database| db.workspace_exists(name);
        if visible(self) {
            return Ok(());
        }
        match self.create_workspace(name) {
            Ok(_) => Ok(()),
            Err(Error::Workspace(WorkspaceError::AlreadyExists(_))) => {
                let start = std::time::Instant::now();
                while !visible(self) {
                    if start.elapsed() > ENSURE_WAIT {
                        return self.create_workspace(name).map(|_| ());
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Drops (erases) a workspace and everything in it.
    pub fn drop_workspace(&self, name: &str) -> Result<(), Error> {
        self.commit(|| MutationRef::DropWorkspace(name).encode(), |st, _, _| workspace::drop(st, name).map(|()| Created::default()))?;
        Ok(())
    }

    /// Live workspaces, by name.
    pub fn workspaces(&self) -> Vec<WorkspaceInfo> {
        self.snapshot().workspaces()
    }

    fn should_merge(&self, st: &State) -> bool {
        let delta = st.graph.delta_len();
        delta >= self.inner.config.merge_delta_edges_min.max(st.graph.base[0].edge_count() / 2)
    }

    fn maybe_merge(&self) {
        if !self.should_merge(&self.inner.published.read()) {
            return;
        }
        if self.inner.merging.swap(true, Ordering::AcqRel) {
            return; // one merge at a time
        }
        if self.inner.config.background_merge {
            let db = self.clone();
            std::thread::spawn(move || {
                let _ = db.merge_from_snapshot();
                db.inner.merging.store(false, Ordering::Release);
            });
        } else {
            let _ = self.merge_from_snapshot();
            self.inner.merging.store(false, Ordering::Release);
        }
    }

    /// Folds the delta overlay into a fresh base CSR now, on the calling thread. Useful after a
    /// bulk load; the automatic merge does the same in the background.
    pub fn compact(&self) {
        while self.inner.merging.swap(true, Ordering::AcqRel) {
            std::thread::yield_now();
        }
        while !self.merge_from_snapshot() {
            std::thread::yield_now();
        }
        self.inner.merging.store(false, Ordering::Release);
    }

    /// Builds a new base from a snapshot without holding the writer, then swaps it in under the
    /// writer lock, re-threading into a new delta the claims committed meanwhile and marking dirty
    /// the entities whose claims changed visibility meanwhile (their stored bits are stale).
    fn merge_from_snapshot(&self) -> bool {
        let snap = self.inner.published.read().clone();
        let n = snap.claims.len();
        if snap.graph.watermark as usize == n && snap.graph.delta_len() == 0 && !snap.graph.dirty.any() && snap.graph.moved.is_empty() {
            return true;
        }
        let (base, snap_fast) = snap.build_base();
        let entity_count = snap.entities.len();
        let mut writer = self.inner.writer.lock();
        let current = writer.latest.clone();
        let mut next = (*current).clone();
        let mut stale: Vec<(u32, u32)> = current.timed_live_endpoints(n);
        let now_fast = current.claims.fast.flatten();
        for (w, (a, b)) in snap_fast.iter().zip(&now_fast).enumerate() {
            let mut diff = a ^ b;
            while diff != 0 {
                let c = w * 64 + diff.trailing_zeros() as usize;
                diff &= diff - 1;
                if c < n {
                    stale.push((*current.claims.subject.get(c), *current.claims.object.get(c)));
                }
            }
        }
        // Claims given other endpoints (entity merges) after the snapshot: the new base holds them
        // where the snapshot had them.
        let mut moved = Vec::new();
        for (&c, _) in current.graph.moved.iter().filter(|(c, _)| (**c as usize) < n) {
            let i = c as usize;
            let then = (*snap.claims.subject.get(i), *snap.claims.object.get(i));
            let now = (*current.claims.subject.get(i), *current.claims.object.get(i));
            if then != now {
                moved.push((c, then, now));
            }
        }
        drop(snap);
        let mut graph = Graph::new(base, n as u32, initial_dirty(entity_count, stale.into_iter()));
        for (c, then, now) in moved {
            graph.repoint(c, *current.claims.pred.get(c as usize), then, now);
        }
        for c in n..current.claims.len() {
            graph.add_claim(c as u32, *current.claims.subject.get(c), *current.claims.pred.get(c), *current.claims.object.get(c));
        }
        next.graph = graph;
        // Commits waiting for their fsync hold states derived from the old graph; they publish as
        // they are, and the merged graph becomes visible with the first commit built on it.
        let garbage = self.install(&mut writer, next);
        drop(writer);
        drop(garbage);
        true
    }

    /// The folder of a durable database (`None` in memory).
    pub fn dir(&self) -> Option<&Path> {
        self.inner.home.as_ref().map(|(_, d)| d.as_path())
    }

    /// Writes a checkpoint: a snapshot of the newest state, taken while writes go on, after which
    /// the WAL segments it covers are removed and older snapshots deleted. Returns the snapshot's
    /// path (`None` for an in-memory database).
    pub fn checkpoint(&self) -> Result<Option<PathBuf>, Error> {
        let Some((vfs, dir)) = &self.inner.home else { return Ok(None) };
        if self.inner.read_only {
            return Err(Error::ReadOnly);
        }
        let _one = self.inner.checkpointing.lock();
        // Under the writer lock only: roll the log (syncing what was written), take the state.
        let (state, seq) = {
            let mut writer = self.inner.writer.lock();
            let seq = writer.wal.as_mut().expect("a durable database has a WAL").roll_now()?;
            writer.wal_bytes = 0;
            (writer.latest.clone(), seq)
        };
        // The snapshot drops the WAL that holds the vectors written since open: they go to the
        // vector files first.
        self.inner.vector_files.lock().flush(vfs.as_ref(), dir, &state)?;
        // Access records the removed WAL carried must be durable in the history first.
        self.inner.audit.sync_all()?;
        Ok(Some(write_checkpoint(vfs.as_ref(), dir, &state, seq)?))
    }

    /// A bulk load for a fresh import: instead of logging the load as one (large) WAL record, it
    /// writes the resulting state directly as a snapshot, holding the writer throughout. A crash
    /// before the snapshot is in place leaves the folder as it was; after, the load is complete.
    /// On an in-memory database it is `bulk_load_owned`. It takes the load and frees each column
    /// as it is applied, and the snapshot is streamed to its file: an import's peak memory holds
    /// the state and the columns captured from it, not the parsed columns or a serialized copy.
    pub fn bulk_load_checkpointed(&self, load: BulkLoad) -> Result<BulkInfo, Error> {
        let Some((vfs, dir)) = &self.inner.home else { return self.bulk_load_owned(load) };
        if self.inner.read_only {
            return Err(Error::ReadOnly);
        }
        let _one = self.inner.checkpointing.lock();
        let mut writer = self.inner.writer.lock();
        if !self.inner.group.lock().pending.is_empty() {
            return Err(Error::Bulk(crate::write::bulk::BulkError {
                section: "workspace",
                row: 0,
                field: "workspace",
                kind: crate::error::WriteErrorKind::Invalid("commits are in flight; a checkpointed bulk load needs the database to itself"),
            }));
        }
        let (mut next, now) = self.successor(&writer.latest);
        let (first_entity, first_claim) = (EntityId(next.entities.len() as u32), ClaimId(next.claims.len() as u32));
        let (entities, claims) = (load.entities.ext_id.len(), load.claims.subject.len());
        apply_bulk(&mut next, Cow::Owned(load), now, &self.inner.config.limits)?;
        let seq = writer.wal.as_mut().expect("a durable database has a WAL").roll_now()?;
        self.inner.vector_files.lock().flush(vfs.as_ref(), dir, &next)?;
        self.inner.audit.sync_all()?;
        write_checkpoint(vfs.as_ref(), dir, &next, seq)?;
        writer.wal_bytes = 0;
        let version = next.version;
        let garbage = self.install(&mut writer, next);
        drop(writer);
        drop(garbage);
        Ok(BulkInfo { version, committed_at: now, first_entity, entities, first_claim, claims })
    }

    /// Whether a background merge is running.
    pub fn merge_in_progress(&self) -> bool {
        self.inner.merging.load(Ordering::Acquire)
    }

    /// Blocks until no merge is running.
    pub fn wait_for_merge(&self) {
        while self.merge_in_progress() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// The id of an entity type name, if interned.
    pub fn type_id(&self, name: &str) -> Option<TypeId> {
        self.inner.published.read().catalog.types.get(&crate::normalize::vocabulary_key(name)).map(TypeId)
    }
}

/// `config` with the stored settings applied over it.
fn apply_settings(settings: &crate::settings::Settings, config: &mut Config) {
    if let Some(p) = settings.fsync.as_deref().and_then(crate::settings::parse_fsync) {
        config.fsync = p;
    }
    if let Some(v) = settings.checkpoint_wal_bytes {
        config.checkpoint_wal_bytes = v;
    }
    if let Some(v) = settings.wal_segment_bytes_max {
        config.wal_segment_bytes_max = v;
    }
    if let Some(v) = settings.merge_delta_edges_min {
        config.merge_delta_edges_min = usize::try_from(v).unwrap_or(usize::MAX);
    }
}

/// The commit job of one ingest: plans the document against the newest state under the writer
/// lock and applies the plan (what the WAL records, so replay needs no planning).
fn ingest_job(
    doc: Arc<crate::write::ingest::IngestDoc>,
    hints: Vec<Option<crate::write::ingest::VectorHint>>,
    opts: crate::write::ingest::IngestOptions,
) -> impl FnMut(&mut State, &JobContext<'_>) -> Result<Applied, Error> + Send + 'static {
    use crate::write::ingest::{plan, IngestError, IngestReport};
    move |st, cx| {
        let ws = st.catalog.workspace(&doc.workspace).ok_or_else(|| {
            Error::from(IngestError { path: "workspace".into(), message: format!("unknown workspace `{}`", doc.workspace) })
        })?;
        let view = WorkspaceView {
            st: &*st,
            ws,
            now: cx.now,
            hide_sensitive: false,
            hidden_keys: None,
            cx: &crate::read::scope::ROOT_CONTEXT,
            sees_sensitive: true,
            policy: None,
            masked: None,
        };
        let Some((batch, mut report)) = plan(&view, &doc, opts, cx.now, &hints)? else {
            return Ok(Applied::nothing(IngestReport { duplicate: true, ..Default::default() }));
        };
        if batch.is_empty() {
            return Ok(Applied::nothing(report));
        }
        // Planning read this state through the default visibility, which materializes its
        // flat filter; the batch changes the bits, so the filter is rebuilt on first use.
        st.reset_caches();
        apply_batch(st, &batch, cx.now, cx.limits)?;
        report.version = Some(st.version);
        Ok(Applied::wrote(if cx.log { encode_batch(&batch) } else { Vec::new() }, report))
    }
}
