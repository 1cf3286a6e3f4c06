//! Slows down password guessing, and keeps it from exhausting the server.
//!
//! - **Per name**: after [`MAX_FAILURES`] failed sign-ins for one user name within
//!   [`WINDOW`], that name is refused until the oldest of those failures is a window old.
//!   Kept in the database (`app::db::take_login_slot`), so every replica serving one
//!   database counts the same failures and a restart forgets nothing; keyed by name, not
//!   address, because behind a proxy every visitor has the proxy's address. An attempt takes
//!   its slot before its password is checked ([`LoginThrottle::try_begin`]), in a transaction
//!   that cannot race with another replica's, so 200 parallel guesses get 5 checks, not as
//!   many as arrive while argon2 is busy with the first ones.
//! - **All names together** (per process): at most [`GLOBAL_MAX_FAILURES`] failures within
//!   [`GLOBAL_WINDOW`]; past that every sign-in waits (`429` with `Retry-After`) until the
//!   oldest is a window old. Guessing one password across many names is slowed as much as
//!   guessing many passwords for one. Signed-in sessions and API tokens are unaffected.
//! - **Checks at once**: an argon2id check holds about 19 MiB for about 50 ms of a core, so
//!   at most [`PARALLEL_PASSWORD_CHECKS`] run at a time; up to [`MAX_WAITING_SIGN_INS`] more
//!   wait their turn for at most [`SIGN_IN_WAIT`], and the rest are answered `429` at once.
//!   120 parallel wrong passwords cost 2 × 19 MiB, not 120 × 19 MiB.

use app::db::{Db, DbError, LoginSlot};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, SemaphorePermit};

/// Failed sign-ins allowed per name within [`WINDOW`].
pub const MAX_FAILURES: usize = 5;
/// How long a failure counts.
pub const WINDOW: Duration = Duration::from_secs(15 * 60);

/// Failed sign-ins allowed across all names within [`GLOBAL_WINDOW`] (per process).
pub const GLOBAL_MAX_FAILURES: usize = 100;
/// How long a failure counts against [`GLOBAL_MAX_FAILURES`].
pub const GLOBAL_WINDOW: Duration = Duration::from_secs(60);
/// Password checks running at once.
pub const PARALLEL_PASSWORD_CHECKS: usize = 2;
/// Sign-ins waiting for a check; more are refused at once.
pub const MAX_WAITING_SIGN_INS: usize = 16;
/// Longest wait for a check before the sign-in is refused.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(5);

/// Failed sign-ins per user name (in the database), all failures of this process, and the
/// password checks running at once.
pub struct LoginThrottle {
    db: Db,
    checks: Semaphore,
    waiting: AtomicUsize,
    /// When each failure within [`GLOBAL_WINDOW`] happened, oldest first.
    failures: Mutex<VecDeque<Instant>>,
}

/// Why a sign-in cannot be checked now; `Retry-After` says when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Busy {
    /// Too many failures across all names lately.
    FailureBudget(Duration),
    /// Too many sign-ins being checked or waiting.
    Checks(Duration),
}

impl Busy {
    /// How long the client should wait, in whole seconds (at least one).
    pub fn retry_after_s(self) -> u64 {
        let (Busy::FailureBudget(d) | Busy::Checks(d)) = self;
        d.as_secs_f64().ceil().max(1.0) as u64
    }
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
    slot: i64,
}

impl Attempt<'_> {
    /// The password was right: the name's failures are forgotten.
    pub async fn succeeded(self) {
        if let Err(e) = app::db::clear_login_failures(&self.throttle.db, &self.key).await {
            tracing::error!(error = %e, "clearing sign-in failures failed");
        }
    }

    /// The password was wrong: the slot stays counted as a failure.
    pub fn failed(self) {}

    /// The check could not be made (a database error): the slot is given back.
    pub async fn void(self) {
        if let Err(e) = app::db::give_back_login_slot(&self.throttle.db, self.slot).await {
            tracing::error!(error = %e, "giving back a sign-in slot failed");
        }
    }
}

impl LoginThrottle {
    pub fn new(db: Db) -> Self {
        Self {
            db,
            checks: Semaphore::new(PARALLEL_PASSWORD_CHECKS),
            waiting: AtomicUsize::new(0),
            failures: Mutex::new(VecDeque::new()),
        }
    }

    /// `Err` with how long to wait when [`GLOBAL_MAX_FAILURES`] failures lie within
    /// [`GLOBAL_WINDOW`] before `now`.
    pub fn failure_budget(&self, now: Instant) -> Result<(), Busy> {
        let mut failures = self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while failures.front().is_some_and(|t| now.saturating_duration_since(*t) >= GLOBAL_WINDOW) {
            failures.pop_front();
        }
        match failures.front() {
            Some(oldest) if failures.len() >= GLOBAL_MAX_FAILURES => {
                Err(Busy::FailureBudget(GLOBAL_WINDOW.saturating_sub(now.saturating_duration_since(*oldest))))
            }
            _ => Ok(()),
        }
    }

    /// Counts one failed sign-in against the budget of all names.
    pub fn record_failure(&self, now: Instant) {
        let mut failures = self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        failures.push_back(now);
        // Only the newest GLOBAL_MAX_FAILURES matter.
        while failures.len() > GLOBAL_MAX_FAILURES {
            failures.pop_front();
        }
    }

    /// Waits for a turn to check a password (see the module doc); `Err` when too many are
    /// checked or waiting already, or the wait ran past [`SIGN_IN_WAIT`].
    pub async fn check_turn(&self) -> Result<SemaphorePermit<'_>, Busy> {
        if let Ok(permit) = self.checks.try_acquire() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING_SIGN_INS {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Busy::Checks(SIGN_IN_WAIT));
        }
        let turn = tokio::time::timeout(SIGN_IN_WAIT, self.checks.acquire()).await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        match turn {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(Busy::Checks(SIGN_IN_WAIT)),
        }
    }

    /// Takes a slot for a sign-in as `name` at `now`, atomically across replicas: `Ok(Ok)`
    /// when fewer than [`MAX_FAILURES`] failures (counting attempts still being checked)
    /// lie within the window; `Ok(Err)` with how long the name must wait; `Err` when the
    /// database could not say.
    pub async fn try_begin(
        &self,
        name: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Result<Attempt<'_>, Duration>, DbError> {
        let key = key(name);
        Ok(match app::db::take_login_slot(&self.db, &key, now, WINDOW, MAX_FAILURES).await? {
            LoginSlot::Taken(slot) => Ok(Attempt { throttle: self, key, slot }),
            LoginSlot::Wait(wait) => Err(wait),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A throttle over a fresh database of each backend (SQLite; PostgreSQL with `PLATEAU_TEST_PG`).
    async fn throttles() -> Vec<(app::db::testing::TestDb, LoginThrottle)> {
        let mut all = Vec::new();
        for db in app::db::testing::backends().await {
            let t = LoginThrottle::new(db.db.clone());
            all.push((db, t));
        }
        all
    }

    fn secs(s: u64) -> chrono::Duration {
        chrono::Duration::from_std(Duration::from_secs(s)).unwrap()
    }

    #[tokio::test]
    async fn five_failures_lock_the_name_for_the_rest_of_the_window() {
        for (_db, t) in throttles().await {
            let start = chrono::Utc::now();
            for i in 0..MAX_FAILURES {
                let a = t.try_begin("Ada", start + secs(i as u64)).await.unwrap();
                assert!(a.is_ok(), "attempt {i}");
                if let Ok(a) = a {
                    a.failed();
                }
            }
            let wait = t.try_begin(" ada ", start + secs(60)).await.unwrap().err();
            assert_eq!(wait, Some(WINDOW - Duration::from_secs(60)), "names match without case or spaces");
            assert!(t.try_begin("bob", start).await.unwrap().is_ok(), "other names are not affected");
            // Once the oldest failure is a window old, one more try is allowed; a success clears the count.
            let again = t.try_begin("ada", start + secs(WINDOW.as_secs())).await.unwrap();
            assert!(again.is_ok());
            if let Ok(a) = again {
                a.succeeded().await;
            }
            assert!(t.try_begin("ada", start + secs(61)).await.unwrap().is_ok(), "a success clears the count");
        }
    }

    #[tokio::test]
    async fn attempts_count_before_their_password_is_checked() {
        for (_db, t) in throttles().await {
            let now = chrono::Utc::now();
            // Five attempts in flight at once, none decided yet: the sixth must wait.
            let mut pending = Vec::new();
            for _ in 0..MAX_FAILURES {
                if let Ok(a) = t.try_begin("ada", now).await.unwrap() {
                    pending.push(a);
                }
            }
            assert_eq!(pending.len(), MAX_FAILURES);
            assert!(t.try_begin("ada", now).await.unwrap().is_err());
            // A check that broke gives its slot back.
            let mut pending = pending.into_iter();
            if let Some(a) = pending.next() {
                a.void().await;
            }
            assert!(t.try_begin("ada", now).await.unwrap().is_ok());
            assert!(t.try_begin("ada", now).await.unwrap().is_err());
        }
    }

    #[tokio::test]
    async fn failures_across_names_spend_one_budget() {
        let db = app::db::testing::backends().await.into_iter().next().expect("SQLite");
        let t = LoginThrottle::new(db.db.clone());
        let start = Instant::now();
        for i in 0..GLOBAL_MAX_FAILURES {
            assert_eq!(t.failure_budget(start), Ok(()), "failure {i}");
            t.record_failure(start);
        }
        let later = start + Duration::from_secs(20);
        assert_eq!(t.failure_budget(later), Err(Busy::FailureBudget(GLOBAL_WINDOW - Duration::from_secs(20))));
        assert_eq!(Busy::FailureBudget(Duration::from_millis(1)).retry_after_s(), 1);
        assert_eq!(t.failure_budget(start + GLOBAL_WINDOW), Ok(()), "failures a window old no longer count");
    }

    #[tokio::test]
    async fn password_checks_run_a_few_at_a_time_and_the_queue_is_bounded() {
        let db = app::db::testing::backends().await.into_iter().next().expect("SQLite");
        let t = std::sync::Arc::new(LoginThrottle::new(db.db.clone()));
        let held: Vec<_> = futures_util::future::join_all((0..PARALLEL_PASSWORD_CHECKS).map(|_| t.check_turn())).await;
        assert!(held.iter().all(Result::is_ok));
        // The queue fills up to its bound; the next one is refused at once.
        let queued: Vec<_> = (0..MAX_WAITING_SIGN_INS)
            .map(|_| {
                let t = t.clone();
                tokio::spawn(async move { t.check_turn().await.is_ok() })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let refused_at = Instant::now();
        assert_eq!(t.check_turn().await.err(), Some(Busy::Checks(SIGN_IN_WAIT)));
        assert!(refused_at.elapsed() < Duration::from_secs(1), "refused without waiting");
        // A turn given back lets one waiting sign-in in.
        drop(held);
        let mut served = 0;
        for q in queued {
            served += usize::from(q.await.unwrap_or(false));
        }
        assert_eq!(served, MAX_WAITING_SIGN_INS, "every waiting sign-in got its turn within the wait");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn parallel_attempts_take_at_most_the_limit() {
        for (_db, t) in throttles().await {
            let t = std::sync::Arc::new(t);
            let now = chrono::Utc::now();
            let handles: Vec<_> = (0..50)
                .map(|_| {
                    let t = t.clone();
                    tokio::spawn(async move {
                        match t.try_begin("ada", now).await.unwrap() {
                            Ok(a) => {
                                a.failed();
                                1
                            }
                            Err(_) => 0,
                        }
                    })
                })
                .collect();
            let mut granted = 0;
            for h in handles {
                granted += h.await.unwrap_or(0);
            }
            assert_eq!(granted, MAX_FAILURES);
        }
    }
}
