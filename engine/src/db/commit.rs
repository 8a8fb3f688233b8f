//! The commit protocol: combining writers into groups, the WAL write, group fsync, publication.
//!
//! A small write does not apply itself. It queues a job (an owned closure that changes a state
//! and says what to log) and sleeps; the first writer to find no combiner at work becomes one. The
//! combiner takes every queued job, clones the newest state **once**, applies the jobs to that one
//! copy in order, each at its own transaction time and version, and writes their WAL records with
//! one write call. It goes on combining the jobs that arrived meanwhile, round after round, until
//! its own result is in (it would only sleep until then); then the next queued writer, if any,
//! takes the turn. Under fsync policy `always` the group then waits for an fsync: one leader at a
//! time runs them, each covering every group written before it started, publishing the newest
//! durable state and delivering the covered results. A writer that finds no fsync in flight leads
//! one itself (a lone writer pays no hand-off); when groups were written meanwhile, the lead
//! passes to the fsync thread, which keeps it while groups keep coming. Each writer wakes once,
//! with its result (or to take a turn combining).
//!
//! With many writers the groups move in step: a group's writers all wait for its fsync, and come
//! back together when it is done. Delivering their results is a wake-up each (several
//! microseconds on a virtual machine), so a combining writer that leads an fsync passes the turn
//! to combine on *before* it delivers them, and the next combiner keeps taking the jobs of the
//! writers being woken into its open group while the delivery lasts: applying the next group
//! overlaps waking its writers, instead of following it.
//!
//! Why: a commit's fixed cost is copy-on-write against the published snapshot (column tails,
//! bitmap shards, map paths) plus a wake-up; paid once per group instead of once per commit, it
//! no longer caps what many writers reach together.
//!
//! A job that fails leaves no trace: the copy is rebuilt from the group's base and the jobs that
//! succeeded before it are run again (they are deterministic given the state and their recorded
//! time, as WAL replay already requires). Failures are rare where throughput matters, so the
//! common path never pays for a savepoint. Large or borrowed writes (bulk loads, workspaces,
//! settings, batches of many operations) run alone as a group of one on their own thread.

use super::{Database, Writer};
use crate::error::Error;
use crate::limits::Limits;
use crate::state::State;
use crate::time::Timestamp;
use crate::write::mutation::WalRecord;
use engram_storage::{FsyncPolicy, StorageError, RECORD_BYTES_MAX};
use parking_lot::Mutex;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::Instant;

/// What a job runs with.
pub(crate) struct JobContext<'a> {
    /// The job's transaction time.
    pub now: Timestamp,
    /// Input limits.
    pub limits: &'a Limits,
    /// True on a durable database: the job must return its mutation's encoding.
    pub log: bool,
}

/// A job's outcome after it changed the state, or decided to change nothing.
pub(crate) struct Applied {
    /// `Some(encoded mutation)` when the job changed the state (empty bytes unless `log`);
    /// `None` when it left the state untouched and logs nothing.
    pub record: Option<Vec<u8>>,
    /// What the caller gets back.
    pub out: Box<dyn Any + Send>,
}

impl Applied {
    /// The job changed the state; `record` is its encoded mutation (empty when not logging).
    pub fn wrote(record: Vec<u8>, out: impl Any + Send) -> Applied {
        Applied { record: Some(record), out: Box::new(out) }
    }

    /// The job changed nothing.
    pub fn nothing(out: impl Any + Send) -> Applied {
        Applied { record: None, out: Box::new(out) }
    }
}

/// A job: changes `state` (or fails, leaving whatever it did to be discarded). It may be run
/// again on a rebuilt copy after a later job of its group fails, so it must be deterministic in
/// the state and `JobContext::now`.
pub(crate) type JobFn<'a> = dyn FnMut(&mut State, &JobContext<'_>) -> Result<Applied, Error> + 'a;

/// A queued job: owned, and movable to the combining writer's thread.
type QueuedJob = Box<dyn FnMut(&mut State, &JobContext<'_>) -> Result<Applied, Error> + Send>;

/// A committed job: its version, transaction time and output.
pub(crate) struct Done {
    pub version: u64,
    pub committed_at: Timestamp,
    pub out: Box<dyn Any + Send>,
    /// Its access record (`JobRecorder`) rode in its group's WAL write.
    pub carried: bool,
}

enum SlotState {
    Waiting,
    /// The owner is to combine the queue.
    Combine,
    Finished(Result<Done, Error>),
}

/// Where a job's result is delivered; its owner parks until then. An owner wakes once per
/// commit (with its result), or to take a turn combining or leading an fsync.
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    owner: Thread,
}

impl Slot {
    fn new() -> Arc<Slot> {
        Arc::new(Slot { state: Mutex::new(SlotState::Waiting), owner: std::thread::current() })
    }

    fn set(&self, s: SlotState) {
        *self.state.lock() = s;
        self.owner.unpark();
    }

    /// True once the owner's result is delivered.
    fn is_finished(&self) -> bool {
        matches!(*self.state.lock(), SlotState::Finished(_))
    }

    /// Parks until the slot leaves `Waiting`; returns what it holds and resets it.
    fn wait(&self) -> SlotState {
        loop {
            let s = std::mem::replace(&mut *self.state.lock(), SlotState::Waiting);
            if !matches!(s, SlotState::Waiting) {
                return s;
            }
            std::thread::park();
        }
    }
}

struct Job {
    run: QueuedJob,
    slot: Arc<Slot>,
    record: Option<JobRecorder>,
}

/// Counters of the commit path since open.
#[derive(Default)]
pub(super) struct Counters {
    groups: AtomicU64,
    commits: AtomicU64,
    fsyncs: AtomicU64,
    apply_ns: AtomicU64,
    wal_write_ns: AtomicU64,
    fsync_ns: AtomicU64,
    ack_ns: AtomicU64,
}

/// Adds the time since `start` to `total` (nanoseconds).
fn add_elapsed(total: &AtomicU64, start: Instant) {
    total.fetch_add(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// What the commit path did since the database was opened: how well writers were combined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Commit attempts (each write, ingest, workspace or settings change; failed ones too).
    pub commits: u64,
    /// Groups applied: each one state copy and at most one WAL write.
    pub groups: u64,
    /// Group-commit fsyncs (policy `always`).
    pub fsyncs: u64,
    /// Where the commit path's time went, in nanoseconds summed over groups (each phase runs on
    /// one thread at a time, so these add up to the serial part of a commit cycle): applying
    /// groups to their state copies (the copy included),
    pub apply_ns: u64,
    /// writing their WAL records,
    pub wal_write_ns: u64,
    /// group-commit fsyncs,
    pub fsync_ns: u64,
    /// and delivering the results an fsync made durable (a wake-up per writer).
    pub ack_ns: u64,
}

impl Database {
    /// Counters of the commit path since open (see `CommitStats`).
    pub fn commit_stats(&self) -> CommitStats {
        let c = &self.inner.stats;
        CommitStats {
            commits: c.commits.load(Ordering::Relaxed),
            groups: c.groups.load(Ordering::Relaxed),
            fsyncs: c.fsyncs.load(Ordering::Relaxed),
            apply_ns: c.apply_ns.load(Ordering::Relaxed),
            wal_write_ns: c.wal_write_ns.load(Ordering::Relaxed),
            fsync_ns: c.fsync_ns.load(Ordering::Relaxed),
            ack_ns: c.ack_ns.load(Ordering::Relaxed),
        }
    }
}

/// Writers waiting to be combined.
#[derive(Default)]
pub(super) struct Queue {
    jobs: Vec<Job>,
    /// A writer is combining (or has been told to).
    combining: bool,
    /// Deliveries of results in progress (`lead`).
    acking: usize,
}

/// A group written to the WAL, waiting for its fsync (policy `always`).
pub(super) struct Pending {
    lsn: u64,
    /// The newest state once this group is durable.
    pub(super) state: Arc<State>,
    /// Its jobs' results, delivered after the fsync.
    acks: Vec<(Arc<Slot>, Result<Done, Error>)>,
}

/// Group commit under policy `always`: one fsync at a time, each covering every group written
/// before it started.
#[derive(Default)]
pub(super) struct Group {
    /// Groups up to this log sequence number are durable.
    synced: u64,
    /// A writer is leading an fsync (or has been told to).
    leader: bool,
    /// Groups waiting for their fsync, in log order.
    pub(super) pending: std::collections::VecDeque<Pending>,
    /// Set when an fsync failed: fail-stop.
    poisoned: Option<String>,
    /// The fsync thread, once started (see `Database::hand_to_syncer`).
    syncer: Option<Thread>,
    /// The fsync thread is to lead the next fsync.
    syncer_turn: bool,
}

impl Group {
    /// Stops the fsync thread (it holds no strong reference while it waits).
    pub(super) fn stop_syncer(&mut self) {
        if let Some(t) = self.syncer.take() {
            t.unpark();
        }
    }
}

/// The WAL segment the next fsync must sync and the last group written to it (records in
/// earlier segments were synced when the log rolled past them).
pub(super) struct SyncTarget {
    file: Arc<dyn engram_storage::VfsFile>,
    path: std::path::PathBuf,
    lsn: u64,
}

/// Longest a combiner waits for writers being woken to queue their next commits (`more_jobs`).
const STREAM_WAIT: std::time::Duration = std::time::Duration::from_micros(200);

/// A group being applied: the copy of the state, and per job so far its outcome and, for a job
/// that wrote, its transaction time and record.
struct Applying {
    next: State,
    results: Vec<Option<Result<Done, Error>>>,
    written: Vec<Option<(Timestamp, Vec<u8>)>>,
}

impl Applying {
    fn new(base: &State) -> Applying {
        Applying { next: base.clone(), results: Vec::new(), written: Vec::new() }
    }
}

/// What `run_group` leaves to its caller, after the writer lock is released.
struct GroupOutcome {
    /// Results to deliver now (the others are delivered after the group's fsync).
    now: Vec<(Arc<Slot>, Result<Done, Error>)>,
    /// The caller must lead an fsync.
    lead: bool,
    /// A replaced state, dropped outside every lock (freeing copied pages takes time).
    garbage: Option<Arc<State>>,
    /// The group's access records rode in its WAL write (see `Recorder`).
    carried: bool,
}

/// Builds the access records of a group's jobs from their results, once they are applied and
/// before they are logged: the records ride in the group's WAL write (`audit::encode_carried`),
/// made durable by its fsync instead of one of their own, and reach the access history's file
/// right after the write (replayed into it after a crash that lost them there). A group that
/// writes nothing, or whose WAL write fails, carries none: its caller records them itself.
/// The history gets them when the group is written, before its fsync, so that it holds them in
/// group order: a group whose fsync fails, or a machine that stops before it, may leave records of
/// writes whose callers were never told they succeeded (never an answered write without one).
pub(crate) type Recorder<'a> = dyn FnMut(&[Result<Done, Error>]) -> Vec<crate::db::audit::AccessRecord> + 'a;

/// The access record of one queued job, made from its output once it is applied: it rides in
/// its group's WAL write as a `Recorder`'s do (`Done::carried` says it did; a job that fails
/// carries none).
pub(crate) type JobRecorder = Box<dyn FnOnce(&Done) -> crate::db::audit::AccessRecord + Send>;

impl Database {
    /// Commits a small write by combining: queues `job` and returns once it is committed (and,
    /// per the fsync policy, durable), or failed without a trace.
    pub(crate) fn commit_queued(
        &self,
        job: impl FnMut(&mut State, &JobContext<'_>) -> Result<Applied, Error> + Send + 'static,
    ) -> Result<Done, Error> {
        self.commit_queued_recorded(job, None)
    }

    /// `commit_queued`, with `record` making the job's access record to ride in its group's WAL
    /// write (see `JobRecorder`).
    pub(crate) fn commit_queued_recorded(
        &self,
        job: impl FnMut(&mut State, &JobContext<'_>) -> Result<Applied, Error> + Send + 'static,
        record: Option<JobRecorder>,
    ) -> Result<Done, Error> {
        if self.inner.read_only {
            return Err(Error::ReadOnly);
        }
        let slot = Slot::new();
        let combine = {
            let mut q = self.inner.queue.lock();
            q.jobs.push(Job { run: Box::new(job), slot: slot.clone(), record });
            !std::mem::replace(&mut q.combining, true)
        };
        if combine {
            self.combine(&slot);
        }
        self.finish(&slot)
    }

    /// Commits one job alone, on this thread, under the writer lock: for writes that are large
    /// or borrow their input.
    pub(crate) fn commit_alone(&self, job: &mut JobFn<'_>) -> Result<Done, Error> {
        if self.inner.read_only {
            return Err(Error::ReadOnly);
        }
        let slot = Slot::new();
        let outcome = {
            let mut writer = self.inner.writer.lock();
            self.run_group(&mut writer, &mut [job], std::slice::from_ref(&slot), false, None, Vec::new())
        };
        self.settle(outcome, false);
        self.finish(&slot)
    }

    /// Commits `jobs` as one group on this thread: applied in order to one copy of the state, each
    /// atomic on its own (a failing job is rolled back alone), one WAL write and one fsync for
    /// all. For a client's pipelined writes, so that they share the disk's flush.
    pub(crate) fn commit_group(&self, jobs: &mut [&mut JobFn<'_>]) -> Vec<Result<Done, Error>> {
        self.commit_group_recorded(jobs, None).0
    }

    /// `commit_group`, with `record` building the jobs' access records to ride in the group's
    /// WAL write (see `Recorder`); true when they did.
    pub(crate) fn commit_group_recorded(
        &self,
        jobs: &mut [&mut JobFn<'_>],
        record: Option<&mut Recorder<'_>>,
    ) -> (Vec<Result<Done, Error>>, bool) {
        if self.inner.read_only {
            return (jobs.iter().map(|_| Err(Error::ReadOnly)).collect(), false);
        }
        let slots: Vec<Arc<Slot>> = jobs.iter().map(|_| Slot::new()).collect();
        let outcome = {
            let mut writer = self.inner.writer.lock();
            self.run_group(&mut writer, jobs, &slots, false, record, Vec::new())
        };
        let carried = outcome.carried;
        self.settle(outcome, false);
        (slots.iter().map(|s| self.finish(s)).collect(), carried)
    }

    /// Waits for `slot`'s result, taking the turns (combining, leading an fsync) it is handed.
    fn finish(&self, slot: &Slot) -> Result<Done, Error> {
        loop {
            match slot.wait() {
                SlotState::Combine => self.combine(slot),
                SlotState::Finished(result) => return result,
                SlotState::Waiting => unreachable!("wait returns only a delivered state"),
            }
        }
    }

    /// Combines queued jobs into groups, round after round, while jobs keep arriving and the
    /// combiner's own result (`own`) has not: until then it would only sleep, and handing the
    /// turn to a sleeping writer costs a wake-up per round. Once its result is in, the turn
    /// passes to the next queued writer, so no caller combines for others for long.
    fn combine(&self, own: &Slot) {
        loop {
            let mut jobs = std::mem::take(&mut self.inner.queue.lock().jobs);
            let slots: Vec<Arc<Slot>> = jobs.iter().map(|j| j.slot.clone()).collect();
            let records: Vec<Option<JobRecorder>> = jobs.iter_mut().map(|j| j.record.take()).collect();
            let outcome = {
                let mut writer = self.inner.writer.lock();
                let mut runs: Vec<&mut JobFn<'static>> = jobs.iter_mut().map(|j| &mut *j.run as &mut JobFn<'static>).collect();
                self.run_group(&mut writer, &mut runs, &slots, true, None, records)
            };
            drop(jobs);
            if outcome.lead {
                // This writer leads the group's fsync, and passes the turn to combine on as soon
                // as the fsync is done (`lead`), so the next group is applied while the results
                // of this one are delivered.
                self.settle(outcome, true);
                return;
            }
            self.settle(outcome, false);
            let mut q = self.inner.queue.lock();
            match q.jobs.first() {
                None => {
                    q.combining = false;
                    return;
                }
                Some(next) if own.is_finished() => {
                    next.slot.set(SlotState::Combine);
                    return;
                }
                Some(_) => {}
            }
        }
    }

    /// Delivers a group's immediate results, leads its fsync if asked (passing the turn to
    /// combine on after it when `pass_turn`), drops the old state.
    fn settle(&self, outcome: GroupOutcome, pass_turn: bool) {
        for (slot, result) in outcome.now {
            slot.set(SlotState::Finished(result));
        }
        if outcome.lead && self.lead(pass_turn) {
            self.hand_to_syncer();
        }
        if let Some(old) = outcome.garbage {
            crate::reaper::drop_later(old);
        }
    }

    /// One fsync covering every group written so far; publishes the newest durable state and
    /// delivers the covered results. A combining writer that leads (`pass_turn`) passes the turn
    /// to combine on before it delivers them. Returns true when groups written meanwhile wait for
    /// the next fsync (the lead stays taken), false when it was given up.
    fn lead(&self, pass_turn: bool) -> bool {
        let inner = &self.inner;
        let target = inner.sync_target.lock().as_ref().map(|t| (t.file.clone(), t.path.clone(), t.lsn));
        inner.stats.fsyncs.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let result = match &target {
            Some((file, path, _)) => file.sync().map_err(|e| format!("fsync of {} failed: {e}", path.display())),
            None => Ok(()),
        };
        add_elapsed(&inner.stats.fsync_ns, started);
        let target_lsn = target.as_ref().map_or(0, |t| t.2);
        let mut acks = Vec::new();
        let mut garbage = None;
        let next_leader = {
            let mut g = inner.group.lock();
            match &result {
                Ok(()) => {
                    garbage = publish_synced(inner, &mut g, target_lsn, &mut acks);
                }
                Err(why) => {
                    g.poisoned = Some(why.clone());
                    for p in g.pending.drain(..) {
                        acks.extend(p.acks.into_iter().map(|(slot, _)| (slot, Err(StorageError::Poisoned(why.clone()).into()))));
                    }
                }
            }
            // Groups written meanwhile need the next fsync: the lead stays taken and goes on (to
            // the fsync thread, which keeps it while groups keep coming); else it is given up.
            let more = !g.pending.is_empty();
            if !more {
                g.leader = false;
            }
            more
        };
        if let Err(why) = result {
            if let Some(wal) = inner.writer.lock().wal.as_mut() {
                wal.poison(why);
            }
        }
        {
            // Writers woken from here on come back with their next commits while the rest are
            // still being woken; the combiner waits for them (`more_jobs`).
            let mut q = inner.queue.lock();
            q.acking += 1;
            if pass_turn {
                match q.jobs.first() {
                    None => q.combining = false,
                    Some(next) => next.slot.set(SlotState::Combine),
                }
            }
        }
        let started = Instant::now();
        for (slot, result) in acks {
            slot.set(SlotState::Finished(result));
        }
        add_elapsed(&inner.stats.ack_ns, started);
        inner.queue.lock().acking -= 1;
        if let Some(old) = garbage {
            crate::reaper::drop_later(old);
        }
        next_leader
    }

    /// Hands the lead of fsyncs to the fsync thread (started on first use). A writer that led
    /// one fsync returns to its caller; the thread then leads every fsync while groups keep
    /// arriving, with no hand-off between them (handing the lead to a sleeping writer cost a
    /// wake-up per fsync, and a writer that kept leading kept its own caller waiting).
    fn hand_to_syncer(&self) {
        let mut g = self.inner.group.lock();
        g.syncer_turn = true;
        if let Some(t) = &g.syncer {
            t.unpark();
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new().name("engram-fsync".into()).spawn(move || syncer_loop(&weak));
        match spawned {
            Ok(handle) => g.syncer = Some(handle.thread().clone()),
            Err(_) => {
                // No thread: this writer keeps leading.
                g.syncer_turn = false;
                drop(g);
                while self.lead(false) {}
            }
        }
    }

    /// Applies `jobs` in order to one copy of the newest state (with `stream`, also the jobs
    /// queued meanwhile, see `more_jobs`), logs the records of those that succeeded with one
    /// write, and installs the copy as the newest state: published now, or, under policy
    /// `always`, queued for the group's fsync with the results that wait for it. With `record`,
    /// or the jobs' own recorders (`job_records`, by job), the jobs' access records ride in the
    /// same WAL write.
    fn run_group(
        &self,
        w: &mut Writer,
        jobs: &mut [&mut JobFn<'_>],
        slots: &[Arc<Slot>],
        stream: bool,
        record: Option<&mut Recorder<'_>>,
        mut job_records: Vec<Option<JobRecorder>>,
    ) -> GroupOutcome {
        if let Some(wal) = w.wal.as_ref() {
            // Fail-stop: after a failed fsync nothing more is accepted, not even for validation.
            if let Err(e) = wal.check() {
                let now = slots.iter().map(|s| (s.clone(), Err(Error::from(e.duplicate())))).collect();
                return GroupOutcome { now, lead: false, garbage: None, carried: false };
            }
        }
        let log = w.wal.is_some();
        let base = w.latest.clone();
        let started = Instant::now();
        let mut applying = Applying::new(&base);
        let mut extra: Vec<Job> = Vec::new();
        loop {
            let mut runs: Vec<&mut JobFn<'_>> =
                jobs.iter_mut().map(|j| &mut **j).chain(extra.iter_mut().map(|j| &mut *j.run as &mut JobFn<'_>)).collect();
            self.apply_jobs(&base, &mut applying, &mut runs, log);
            if !stream || !self.more_jobs(&mut extra) {
                break;
            }
        }
        add_elapsed(&self.inner.stats.apply_ns, started);
        let slots: Vec<Arc<Slot>> = slots.iter().cloned().chain(extra.iter().map(|j| j.slot.clone())).collect();
        job_records.resize_with(jobs.len(), || None);
        job_records.extend(extra.iter_mut().map(|j| j.record.take()));
        drop(extra);
        self.inner.stats.groups.fetch_add(1, Ordering::Relaxed);
        self.inner.stats.commits.fetch_add(slots.len() as u64, Ordering::Relaxed);
        let deliver_now = |results: Vec<Result<Done, Error>>| GroupOutcome {
            now: slots.iter().cloned().zip(results).collect(),
            lead: false,
            garbage: None,
            carried: false,
        };
        let Applying { next, results, written } = applying;
        let mut results: Vec<Result<Done, Error>> = results.into_iter().map(|r| r.expect("every job ran")).collect();
        let mut records: Vec<&[u8]> = written.iter().flatten().map(|(_, r)| r.as_slice()).collect();
        if records.is_empty() {
            return deliver_now(results);
        }
        // The access records ride with the group (stamped with its last commit's time).
        let (access, own) = if log { group_access(&results, record, job_records) } else { (None, Vec::new()) };
        let group_at = written.iter().flatten().last().map_or(Timestamp::MIN, |(t, _)| *t);
        let carried_payload = access.as_ref().map(|a| crate::db::audit::encode_carried(group_at, a));
        if let Some(p) = &carried_payload {
            records.push(p);
        }
        let bytes: u64 = records.iter().map(|r| r.len() as u64).sum();
        let always = match w.wal.as_mut() {
            None => false,
            Some(wal) => {
                let always = wal.policy() == FsyncPolicy::Always;
                let started = Instant::now();
                let logged = if always { wal.write_many(&records) } else { wal.append_many(&records) };
                add_elapsed(&self.inner.stats.wal_write_ns, started);
                if let Err(e) = logged {
                    for (r, wrote) in results.iter_mut().zip(&written) {
                        if wrote.is_some() {
                            *r = Err(e.duplicate().into());
                        }
                    }
                    return deliver_now(results);
                }
                w.wal_bytes += bytes;
                always
            }
        };
        // Appended under the writer lock: the history gets carried records in group order.
        let carried = access.map(|a| self.inner.audit.append_carried(group_at, a, 0)).is_some();
        for done in results.iter_mut().zip(own).filter(|(_, own)| carried && *own).filter_map(|(r, _)| r.as_mut().ok()) {
            done.carried = true;
        }
        if !always {
            let garbage = self.install(w, next);
            self.maybe_checkpoint(w);
            return GroupOutcome { garbage, carried, ..deliver_now(results) };
        }
        w.lsn += 1;
        let lsn = w.lsn;
        let (file, path) = w.wal.as_ref().expect("policy `always` has a WAL").sync_handle();
        *self.inner.sync_target.lock() = Some(SyncTarget { file, path, lsn });
        let mut g = self.inner.group.lock();
        if let Some(why) = &g.poisoned {
            // An fsync failed meanwhile: this group can never be acknowledged.
            let why = why.clone();
            for r in &mut results {
                *r = Err(StorageError::Poisoned(why.clone()).into());
            }
            return GroupOutcome { carried, ..deliver_now(results) };
        }
        let (mut now, mut acks) = (Vec::new(), Vec::new());
        for (slot, result) in slots.iter().cloned().zip(results) {
            // Failed jobs learn at once; the others, including jobs that wrote nothing (what
            // they read may be in this group), after the fsync.
            if result.is_err() {
                now.push((slot, result));
            } else {
                acks.push((slot, result));
            }
        }
        install_pending(w, &mut g, next, lsn, acks);
        drop(g);
        self.maybe_checkpoint(w);
        let lead = !std::mem::replace(&mut self.inner.group.lock().leader, true);
        GroupOutcome { now, lead, garbage: None, carried }
    }

    /// Takes the jobs queued since, into `extra`. While results of an fsync are being delivered
    /// and nothing is queued yet, waits (yielding, for at most `STREAM_WAIT`) for the writers it
    /// wakes to queue their next commits: they join this group instead of waiting a whole fsync
    /// for the next one, and applying them overlaps the rest of the delivery. Returns whether
    /// jobs were taken.
    fn more_jobs(&self, extra: &mut Vec<Job>) -> bool {
        let deadline = Instant::now() + STREAM_WAIT;
        loop {
            {
                let mut q = self.inner.queue.lock();
                if !q.jobs.is_empty() {
                    extra.append(&mut q.jobs);
                    return true;
                }
                if q.acking == 0 || Instant::now() >= deadline {
                    return false;
                }
            }
            std::thread::yield_now();
        }
    }

    /// Runs the jobs of `jobs` that `a` has not run yet, in order, on its copy of `base`, each
    /// at its own transaction time and version.
    fn apply_jobs(&self, base: &State, a: &mut Applying, jobs: &mut [&mut JobFn<'_>], log: bool) {
        let limits = &self.inner.config.limits;
        let Applying { next, results, written } = a;
        for i in results.len()..jobs.len() {
            let now = self.next_commit_time(next);
            let before = (next.version, next.committed_at);
            begin(next, now);
            let outcome = run_job(&mut *jobs[i], next, &JobContext { now, limits, log }).and_then(|applied| {
                let record = applied.record.map(|body| if log { WalRecord::encode_parts(now, &body) } else { body });
                match &record {
                    Some(r) if r.len() > RECORD_BYTES_MAX => {
                        Err(StorageError::RecordTooLarge { len: r.len(), limit: RECORD_BYTES_MAX }.into())
                    }
                    _ => Ok((record, applied.out)),
                }
            });
            match outcome {
                Ok((Some(record), out)) => {
                    results.push(Some(Ok(Done { version: next.version, committed_at: now, out, carried: false })));
                    written.push(Some((now, record)));
                }
                Ok((None, out)) => {
                    (next.version, next.committed_at) = before;
                    next.reset_caches();
                    results.push(Some(Ok(Done { version: before.0, committed_at: before.1, out, carried: false })));
                    written.push(None);
                }
                Err(e) => {
                    results.push(Some(Err(e)));
                    written.push(None);
                    *next = rebuild(base, jobs, results, written, limits, log);
                }
            }
        }
    }

    /// Starts a background checkpoint once enough WAL was written since the last one.
    fn maybe_checkpoint(&self, w: &mut Writer) {
        if w.wal_bytes >= self.inner.config.checkpoint_wal_bytes && !self.inner.checkpoint_running.swap(true, Ordering::AcqRel) {
            w.wal_bytes = 0;
            let db = self.clone();
            std::thread::spawn(move || {
                // A failed background checkpoint changes nothing: the WAL still holds everything.
                let _ = db.checkpoint();
                db.inner.checkpoint_running.store(false, Ordering::Release);
            });
        }
    }
}

// Publication: the one path by which a state becomes the newest (`Writer::latest`, the base of the
// next commit) and the visible one (`Inner::published`). Here alone the rules hold: nothing is
// published ahead of its WAL fsync; published states follow log order; the derived filters of a
// state are reset before it is shared. The version moves with every commit (`begin`); a change
// of layout only (the CSR merge) keeps it.

impl Database {
    /// Makes `next` the newest state, for a change that needs no fsync of its own: an in-memory
    /// database, a policy other than `always`, a state already on disk as a snapshot, or a new
    /// layout of the same content (the CSR merge). It is published at once when no group waits
    /// for its fsync; otherwise those groups' states publish as they are when durable, and `next`
    /// becomes visible with the first group built on it. Returns the state publication replaced,
    /// to be dropped outside the locks.
    pub(super) fn install(&self, w: &mut Writer, next: State) -> Option<Arc<State>> {
        let next = Arc::new(reset_derived(next));
        w.latest = next.clone();
        let g = self.inner.group.lock();
        g.pending.is_empty().then(|| std::mem::replace(&mut *self.inner.published.write(), next))
    }
}

/// Makes `next`, the state after the group just written to the WAL as `lsn`, the newest state;
/// it is published by the fsync that covers `lsn` (`publish_synced`), its results delivered then.
fn install_pending(w: &mut Writer, g: &mut Group, next: State, lsn: u64, acks: Vec<(Arc<Slot>, Result<Done, Error>)>) {
    let next = Arc::new(reset_derived(next));
    w.latest = next.clone();
    g.pending.push_back(Pending { lsn, state: next, acks });
}

/// The access records to carry in a group's WAL write: the group's (`record`), or those of the
/// jobs that applied and have a recorder of their own; and, by job, whether its own record is
/// among them.
fn group_access(
    results: &[Result<Done, Error>],
    record: Option<&mut Recorder<'_>>,
    job_records: Vec<Option<JobRecorder>>,
) -> (Option<Vec<crate::db::audit::AccessRecord>>, Vec<bool>) {
    let own: Vec<bool> = results.iter().zip(&job_records).map(|(r, f)| r.is_ok() && f.is_some()).collect();
    let access = match record {
        Some(f) => f(results),
        None => results
            .iter()
            .zip(job_records)
            .filter_map(|(r, f)| match (r, f) {
                (Ok(done), Some(f)) => Some(f(done)),
                _ => None,
            })
            .collect(),
    };
    ((!access.is_empty()).then_some(access), own)
}

/// After an fsync that covered the groups up to `lsn`: publishes the newest state they made
/// durable, moves their results to `acks`, and returns the state it replaced.
fn publish_synced(inner: &super::Inner, g: &mut Group, lsn: u64, acks: &mut Vec<(Arc<Slot>, Result<Done, Error>)>) -> Option<Arc<State>> {
    g.synced = g.synced.max(lsn);
    let mut newest = None;
    while g.pending.front().is_some_and(|p| p.lsn <= lsn) {
        let p = g.pending.pop_front().expect("checked non-empty");
        acks.extend(p.acks);
        newest = Some(p.state);
    }
    newest.map(|st| std::mem::replace(&mut *inner.published.write(), st))
}

/// `st` with its derived, lazily built filters dropped: they belong to the bits they were built
/// from, and whoever changed the bits may have built them on the way.
fn reset_derived(mut st: State) -> State {
    st.reset_caches();
    st
}

/// The fsync thread: leads fsyncs while it holds the turn, then waits, holding only a weak
/// reference, so dropping the database ends it (`Group::stop_syncer`).
fn syncer_loop(weak: &std::sync::Weak<super::Inner>) {
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let turn = std::mem::take(&mut inner.group.lock().syncer_turn);
        if turn {
            let db = Database { inner };
            if db.lead(false) {
                db.inner.group.lock().syncer_turn = true;
            }
            continue;
        }
        drop(inner);
        std::thread::park();
    }
}

/// Runs one job. A panic (a bug: jobs validate their input) fails that job alone, as an internal
/// error, instead of unwinding through the combining writer and stopping every other writer; the
/// copy it may have torn is rebuilt like after any failed job.
fn run_job(job: &mut JobFn<'_>, st: &mut State, cx: &JobContext<'_>) -> Result<Applied, Error> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(st, cx))) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_owned());
            Err(Error::Internal(what))
        }
    }
}

/// Moves `st` to the next version at transaction time `now`.
fn begin(st: &mut State, now: Timestamp) {
    st.version += 1;
    st.committed_at = now;
    // The flattened visibility filter belongs to one version's bits.
    st.reset_caches();
}

/// A fresh copy of `base` with the jobs that wrote so far run again at their recorded times. A
/// job that fails on the rerun (it should not: jobs are deterministic) is failed too, and the
/// copy is rebuilt without it.
fn rebuild(
    base: &State,
    jobs: &mut [&mut JobFn<'_>],
    results: &mut [Option<Result<Done, Error>>],
    written: &mut [Option<(Timestamp, Vec<u8>)>],
    limits: &Limits,
    log: bool,
) -> State {
    'again: loop {
        let mut next = base.clone();
        for j in 0..written.len() {
            let Some((now, _)) = written[j] else { continue };
            let before = (next.version, next.committed_at);
            begin(&mut next, now);
            match run_job(&mut *jobs[j], &mut next, &JobContext { now, limits, log }) {
                Ok(applied) => {
                    if applied.record.is_none() {
                        // It wrote nothing this time: the state is untouched, it logs nothing.
                        (next.version, next.committed_at) = before;
                        written[j] = None;
                    }
                    if let Some(Ok(done)) = &mut results[j] {
                        done.version = next.version;
                        done.out = applied.out;
                    }
                }
                Err(e) => {
                    results[j] = Some(Err(e));
                    written[j] = None;
                    continue 'again;
                }
            }
        }
        return next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::apply::apply_batch;
    use crate::write::batch::{AddClaim, WriteBatch};

    fn job(batch: WriteBatch) -> impl FnMut(&mut State, &JobContext<'_>) -> Result<Applied, Error> {
        move |st, cx| {
            let created = apply_batch(st, &batch, cx.now, cx.limits)?;
            Ok(Applied::wrote(Vec::new(), created))
        }
    }

    /// Runs `jobs` as one group on `db`; their results, in order.
    fn group(db: &Database, jobs: &mut [&mut JobFn<'_>]) -> Vec<Result<Done, Error>> {
        let slots: Vec<Arc<Slot>> = jobs.iter().map(|_| Slot::new()).collect();
        let outcome = {
            let mut w = db.inner.writer.lock();
            db.run_group(&mut w, jobs, &slots, false, None, Vec::new())
        };
        outcome.now.into_iter().map(|(_, r)| r).collect()
    }

    /// A job that fails in the middle of a group leaves no trace, and the jobs around it commit
    /// at consecutive versions in their order (the copy is rebuilt and the earlier job run again).
    #[test]
    fn a_failed_job_in_a_group_leaves_no_trace() {
        let db = Database::in_memory();
        let mut a = WriteBatch::new("default");
        a.upsert_entity("a", "t", "A");
        let mut bad = WriteBatch::new("default");
        bad.upsert_entity("b", "t", "B");
        bad.add_claim(AddClaim::new("b", "likes", "missing"));
        let mut c = WriteBatch::new("default");
        c.upsert_entity("c", "t", "C");
        c.add_claim(AddClaim::new("c", "likes", "a"));
        let (mut ja, mut jb, mut jc) = (job(a), job(bad), job(c));
        let results = group(&db, &mut [&mut ja, &mut jb, &mut jc]);
        assert_eq!(results.len(), 3);
        assert_eq!(results[0].as_ref().map(|d| d.version).ok(), Some(1));
        assert!(results[1].as_ref().is_err_and(|e| e.as_write().is_some_and(|w| w.op_index == 1)));
        assert_eq!(results[2].as_ref().map(|d| d.version).ok(), Some(2));
        let snap = db.snapshot();
        assert_eq!(snap.version(), 2);
        let ws = snap.workspace("default").unwrap();
        assert!(ws.entity_id("a").is_some() && ws.entity_id("c").is_some());
        assert!(ws.entity_id("b").is_none());
        assert_eq!(snap.counts(), (2, 1, 0));
        let stats = db.commit_stats();
        assert_eq!((stats.commits, stats.groups, stats.fsyncs), (3, 1, 0));
        // In memory: the group was applied (timed), and nothing was written or synced.
        assert!(stats.apply_ns > 0);
        assert_eq!((stats.wal_write_ns, stats.fsync_ns, stats.ack_ns), (0, 0, 0));
    }

    /// A job that panics fails alone with an internal error; the group's other jobs commit and
    /// the next write works.
    #[test]
    fn a_panicking_job_fails_alone() {
        let db = Database::in_memory();
        let mut a = WriteBatch::new("default");
        a.upsert_entity("a", "t", "A");
        let mut c = WriteBatch::new("default");
        c.upsert_entity("c", "t", "C");
        let (mut ja, mut jc) = (job(a), job(c));
        let mut boom = |_: &mut State, _: &JobContext<'_>| -> Result<Applied, Error> { panic!("boom") };
        let results = group(&db, &mut [&mut ja, &mut boom, &mut jc]);
        assert!(matches!(&results[1], Err(Error::Internal(m)) if m == "boom"));
        assert!(results[0].is_ok() && results[2].is_ok());
        let mut d = WriteBatch::new("default");
        d.upsert_entity("d", "t", "D");
        db.write(&d).unwrap();
        let snap = db.snapshot();
        assert_eq!(snap.counts().0, 3);
        assert_eq!(snap.version(), 3);
    }
}
