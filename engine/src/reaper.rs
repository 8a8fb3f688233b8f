//! Drops retired states off the writer's thread.
//!
//! Publishing a commit retires the state it replaces; freeing the parts only that state held
//! (copied column leaves, map nodes, bitmap shards) is a measurable share of a small commit.
//! Handing it to a background thread lets a lone writer use the second core for it. The reaper
//! is woken once per `BATCH` retired values (or `LINGER` after the first), not once per value:
//! on a virtual machine a wake-up costs the waker several microseconds, as much as the drop it
//! hands off. The queue is bounded: when the reaper falls behind, the caller drops inline, so
//! memory never piles up.

use parking_lot::{Condvar, Mutex};
use std::sync::OnceLock;
use std::time::Duration;

type Garbage = Box<dyn Send>;

/// Retired values waiting for the reaper at most.
const QUEUE: usize = 64;
/// Retired values that wake the reaper.
const BATCH: usize = 16;
/// Longest a retired value waits for its batch to fill.
const LINGER: Duration = Duration::from_millis(5);

struct Reaper {
    pending: Mutex<Pending>,
    wake: Condvar,
}

struct Pending {
    items: Vec<Garbage>,
    /// The reaper sleeps with no deadline: the next value must wake it.
    idle: bool,
}

fn reaper() -> Option<&'static Reaper> {
    static REAPER: OnceLock<Option<&'static Reaper>> = OnceLock::new();
    *REAPER.get_or_init(|| {
        let r: &'static Reaper =
            Box::leak(Box::new(Reaper { pending: Mutex::new(Pending { items: Vec::new(), idle: false }), wake: Condvar::new() }));
        let spawned = std::thread::Builder::new().name("engram-reaper".into()).spawn(move || run(r));
        spawned.ok().map(|_| r)
    })
}

fn run(r: &Reaper) {
    let mut p = r.pending.lock();
    loop {
        if p.items.is_empty() {
            p.idle = true;
            r.wake.wait(&mut p);
            continue;
        }
        if p.items.len() < BATCH {
            r.wake.wait_for(&mut p, LINGER);
        }
        let items = std::mem::take(&mut p.items);
        parking_lot::MutexGuard::unlocked(&mut p, || drop(items));
    }
}

/// Drops `value` on the reaper thread, or here when its queue is full (or no thread could start).
pub fn drop_later<T: Send + 'static>(value: T) {
    let Some(r) = reaper() else { return };
    let mut p = r.pending.lock();
    if p.items.len() >= QUEUE {
        drop(p);
        drop(value);
        return;
    }
    p.items.push(Box::new(value));
    if p.idle || p.items.len() == BATCH {
        p.idle = false;
        r.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn every_value_is_dropped_exactly_once() {
        let dropped = Arc::new(AtomicUsize::new(0));
        for _ in 0..1000 {
            drop_later(Counted(dropped.clone()));
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while dropped.load(Ordering::SeqCst) < 1000 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(dropped.load(Ordering::SeqCst), 1000);
    }

    /// A value retired alone (no batch fills after it) is still dropped, on the reaper's thread.
    #[test]
    fn a_lone_value_is_dropped_on_the_reaper() {
        struct Named(Arc<Mutex<Option<String>>>);
        impl Drop for Named {
            fn drop(&mut self) {
                *self.0.lock() = std::thread::current().name().map(str::to_owned);
            }
        }
        let seen = Arc::new(Mutex::new(None));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        // Other tests may be filling the queue at the same moment: retry until one value is
        // taken by the reaper rather than dropped inline.
        while seen.lock().as_deref() != Some("engram-reaper") && std::time::Instant::now() < deadline {
            *seen.lock() = None;
            drop_later(Named(seen.clone()));
            while seen.lock().is_none() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        assert_eq!(seen.lock().as_deref(), Some("engram-reaper"));
    }
}
