//! Creation times stored once per commit instead of once per row.
//!
//! Rows are appended in commit order, so a row's creation time is the time of the last commit that
//! started at or before its id. A bulk load of millions of rows costs one entry.

use crate::index::cow::CowVec;
use crate::time::Timestamp;

/// `(first row id of a commit, commit time)`, ascending in both.
#[derive(Clone, Debug, Default)]
pub struct TimeLog {
    starts: CowVec<(u32, Timestamp)>,
}

impl TimeLog {
    /// Notes that row `id` was created at `t` (a no-op when the last entry already has time `t`).
    pub fn note(&mut self, id: u32, t: Timestamp) {
        let n = self.starts.len();
        if n > 0 && self.starts.get(n - 1).1 == t {
            return;
        }
        debug_assert!(n == 0 || self.starts.get(n - 1).0 < id);
        self.starts.push((id, t));
    }

    /// The `(first row, time)` entries, in order (for snapshots).
    pub fn entries(&self) -> Vec<(u32, Timestamp)> {
        self.starts.iter().copied().collect()
    }

    /// The creation time of row `id`.
    pub fn at(&self, id: u32) -> Timestamp {
        let (mut lo, mut hi) = (0usize, self.starts.len());
        while lo < hi {
            let mid = lo.midpoint(hi);
            if self.starts.get(mid).0 <= id {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 {
            Timestamp::MIN
        } else {
            self.starts.get(lo - 1).1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_commit_of_each_row() {
        let mut log = TimeLog::default();
        let t = |s| Timestamp::from_epoch_seconds(s);
        log.note(0, t(10));
        log.note(1, t(10));
        log.note(5, t(20));
        log.note(6, t(30));
        assert_eq!([log.at(0), log.at(4), log.at(5), log.at(6), log.at(100)], [t(10), t(10), t(20), t(30), t(30)]);
    }
}
