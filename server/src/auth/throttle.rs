//! Slows down password guessing: after [`MAX_FAILURES`] failed sign-ins for one user name
//! within [`WINDOW`], that name is refused until the oldest of those failures is a window
//! old. Kept in the database (`app::db::take_login_slot`), so every replica serving one
//! database counts the same failures and a restart forgets nothing; keyed by name, not
//! address, because behind a proxy every visitor has the proxy's address. An attempt takes
//! its slot before its password is checked ([`LoginThrottle::try_begin`]), in a transaction
//! that cannot race with another replica's, so 200 parallel guesses get 5 checks, not as
//! many as arrive while argon2 is busy with the first ones.

use app::db::{Db, DbError, LoginSlot};
use std::time::Duration;

/// Failed sign-ins allowed per name within [`WINDOW`].
pub const MAX_FAILURES: usize = 5;
/// How long a failure counts.
pub const WINDOW: Duration = Duration::from_secs(15 * 60);

/// Failed sign-ins per user name, in the database.
pub struct LoginThrottle {
    db: Db,
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
        Self { db }
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
