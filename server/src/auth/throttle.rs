//! Slows down password guessing: after [`MAX_FAILURES`] failed sign-ins for one user name
//! within [`WINDOW`], that name is refused until the oldest of those failures is a window
//! old. Kept in memory (a restart forgets it); keyed by name, not address, because behind a
//! proxy every visitor has the proxy's address. An attempt takes its slot before its
//! password is checked ([`LoginThrottle::try_begin`]), so 200 parallel guesses get 5
//! checks, not as many as arrive while argon2 is busy with the first ones.

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

/// A sign-in attempt that holds one of its name's slots. The slot is counted as a
/// failure from the moment it is taken — *before* the password is checked — so parallel
/// guesses cannot all pass the check while the first ones are still being verified.
/// [`Attempt::succeeded`] clears the name; [`Attempt::failed`] (or dropping it) leaves
/// the failure counted; [`Attempt::void`] gives the slot back (the check itself broke).
#[must_use = "say how the attempt ended"]
pub struct Attempt<'a> {
    throttle: &'a LoginThrottle,
    key: String,
    at: Instant,
}

impl Attempt<'_> {
    /// The password was right: the name's failures are forgotten.
    pub fn succeeded(self) {
        self.throttle.lock().remove(&self.key);
    }

    /// The password was wrong: the slot stays counted as a failure.
    pub fn failed(self) {}

    /// The check could not be made (a database error): the slot is given back.
    pub fn void(self) {
        let mut map = self.throttle.lock();
        if let Some(list) = map.get_mut(&self.key) {
            if let Some(i) = list.iter().position(|t| *t == self.at) {
                list.swap_remove(i);
            }
        }
    }
}

impl LoginThrottle {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Instant>>> {
        self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a slot for a sign-in as `name` at `now`, atomically: `Ok` when fewer than
    /// [`MAX_FAILURES`] failures (counting attempts still being checked) lie within the
    /// window; else how long the name must wait.
    pub fn try_begin(&self, name: &str, now: Instant) -> Result<Attempt<'_>, Duration> {
        let key = key(name);
        let mut map = self.lock();
        if map.len() >= MAX_NAMES {
            map.retain(|_, list| list.iter().any(|t| now.saturating_duration_since(*t) < WINDOW));
        }
        if let Some(list) = map.get_mut(&key) {
            list.retain(|t| now.saturating_duration_since(*t) < WINDOW);
            if list.len() >= MAX_FAILURES {
                let oldest = list.iter().min().copied().unwrap_or(now);
                return Err(WINDOW.saturating_sub(now.saturating_duration_since(oldest)));
            }
            list.push(now);
        } else if map.len() < MAX_NAMES {
            map.insert(key.clone(), vec![now]);
        } else {
            // Every remembered name failed recently: refuse new names until one lapses
            // rather than let them go unthrottled.
            return Err(Duration::from_secs(60));
        }
        Ok(Attempt { throttle: self, key, at: now })
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
            let a = t.try_begin("Ada", start + Duration::from_secs(i as u64));
            assert!(a.is_ok(), "attempt {i}");
            if let Ok(a) = a {
                a.failed();
            }
        }
        let wait = t.try_begin(" ada ", start + Duration::from_secs(60)).err();
        assert_eq!(wait, Some(WINDOW - Duration::from_secs(60)), "names match without case or spaces");
        assert!(t.try_begin("bob", start).is_ok(), "other names are not affected");
        // Once the oldest failure is a window old, one more try is allowed; a success clears the count.
        let again = t.try_begin("ada", start + WINDOW);
        assert!(again.is_ok());
        if let Ok(a) = again {
            a.succeeded();
        }
        assert!(t.try_begin("ada", start + Duration::from_secs(61)).is_ok(), "a success clears the count");
    }

    #[test]
    fn attempts_count_before_their_password_is_checked() {
        let t = LoginThrottle::default();
        let now = Instant::now();
        // Five attempts in flight at once, none decided yet: the sixth must wait.
        let pending: Vec<_> = (0..MAX_FAILURES).filter_map(|_| t.try_begin("ada", now).ok()).collect();
        assert_eq!(pending.len(), MAX_FAILURES);
        assert!(t.try_begin("ada", now).is_err());
        // A check that broke gives its slot back.
        let mut pending = pending.into_iter();
        if let Some(a) = pending.next() {
            a.void();
        }
        assert!(t.try_begin("ada", now).is_ok());
        assert!(t.try_begin("ada", now).is_err());
    }

    #[test]
    fn parallel_attempts_take_at_most_the_limit() {
        let t = std::sync::Arc::new(LoginThrottle::default());
        let now = Instant::now();
        let granted: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..50)
                .map(|_| {
                    let t = &t;
                    s.spawn(move || match t.try_begin("ada", now) {
                        Ok(a) => {
                            a.failed();
                            1
                        }
                        Err(_) => 0,
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
        });
        assert_eq!(granted, MAX_FAILURES);
    }
}
