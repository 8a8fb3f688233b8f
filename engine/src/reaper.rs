//! Drops retired states off the writer's thread.
//!
//! Publishing a commit retires the state it replaces; freeing the parts only that state held
//! (copied column leaves, map nodes, bitmap shards) is a measurable share of a small commit.
//! Handing it to a background thread lets a lone writer use the second core for it. The queue
//! is bounded: when the reaper falls behind, the caller drops inline, so memory never piles up.

use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::OnceLock;

type Garbage = Box<dyn Send>;

/// Retired values waiting for the reaper at most.
const QUEUE: usize = 64;

fn sender() -> Option<&'static SyncSender<Garbage>> {
    static SENDER: OnceLock<Option<SyncSender<Garbage>>> = OnceLock::new();
    SENDER
        .get_or_init(|| {
            let (tx, rx) = sync_channel::<Garbage>(QUEUE);
            let spawned = std::thread::Builder::new().name("engram-reaper".into()).spawn(move || {
                for garbage in rx {
                    drop(garbage);
                }
            });
            spawned.ok().map(|_| tx)
        })
        .as_ref()
}

/// Drops `value` on the reaper thread, or here when its queue is full (or no thread could start).
pub fn drop_later<T: Send + 'static>(value: T) {
    let Some(tx) = sender() else { return };
    if let Err(TrySendError::Full(garbage) | TrySendError::Disconnected(garbage)) = tx.try_send(Box::new(value)) {
        drop(garbage);
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
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while dropped.load(Ordering::SeqCst) < 1000 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(dropped.load(Ordering::SeqCst), 1000);
    }
}
