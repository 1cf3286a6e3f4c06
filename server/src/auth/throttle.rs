//! Slows down password guessing: after [`MAX_FAILURES`] failed sign-ins for one user name
//! within [`WINDOW`], that name is refused until the oldest of those failures is a window
//! old. Kept in memory (a restart forgets it); keyed by name, not address, because behind a
//! proxy every visitor has the proxy's address.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed sign-ins allowed per name within [`WINDOW`].
pub const MAX_FAILURES: usize = 5;
/// How long a failure counts.
pub const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Names remembered at most; beyond it, names with no recent failure are forgotten first.
const MAX_NAMES: usize = 10_000;

/// Failed sign-ins per user name.
#[derive(Default)]
pub struct LoginThrottle {
    failures: Mutex<HashMap<String, Vec<Instant>>>,
}

fn key(name: &str) -> String {
    name.trim().to_lowercase()
}

impl LoginThrottle {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Instant>>> {
        self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `Ok` when `name` may try to sign in at `now`; else how long it must wait.
    pub fn check(&self, name: &str, now: Instant) -> Result<(), Duration> {
        let mut map = self.lock();
        let Some(list) = map.get_mut(&key(name)) else { return Ok(()) };
        list.retain(|t| now.saturating_duration_since(*t) < WINDOW);
        if list.len() < MAX_FAILURES {
            return Ok(());
        }
        let oldest = list.iter().min().copied().unwrap_or(now);
        Err(WINDOW.saturating_sub(now.saturating_duration_since(oldest)))
    }

    /// Records a failed sign-in for `name` at `now`.
    pub fn failed(&self, name: &str, now: Instant) {
        let mut map = self.lock();
        if map.len() >= MAX_NAMES {
            map.retain(|_, list| list.iter().any(|t| now.saturating_duration_since(*t) < WINDOW));
        }
        if map.len() < MAX_NAMES || map.contains_key(&key(name)) {
            map.entry(key(name)).or_default().push(now);
        }
    }

    /// A successful sign-in clears the name's failures.
    pub fn succeeded(&self, name: &str) {
        self.lock().remove(&key(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_failures_lock_the_name_for_the_rest_of_the_window() {
        let t = LoginThrottle::default();
        let start = Instant::now();
        for i in 0..MAX_FAILURES {
            assert!(t.check("Ada", start).is_ok(), "attempt {i}");
            t.failed("Ada", start + Duration::from_secs(i as u64));
        }
        let wait = t.check(" ada ", start + Duration::from_secs(60)).unwrap_err();
        assert_eq!(wait, WINDOW - Duration::from_secs(60), "names match without case or spaces");
        assert!(t.check("bob", start).is_ok(), "other names are not affected");
        // Once the oldest failure is a window old, one more try is allowed.
        assert!(t.check("ada", start + WINDOW).is_ok());
        t.succeeded("ada");
        assert!(t.check("ada", start + Duration::from_secs(61)).is_ok(), "a success clears the count");
    }
}
