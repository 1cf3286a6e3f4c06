//! Sign-in attempts per user name (migration 0006), for `server::auth::throttle`: kept in
//! the database so that every replica serving the same database counts the same failures.
//! Taking a slot is one transaction that cannot race with another replica's: SQLite has one
//! writer at a time (`begin_write`); PostgreSQL takes a transaction-scoped advisory lock on
//! the name first, so two replicas checking the same name run one after the other.

use super::backend::{begin_write, format_stamp, Db, Q};
use super::error::DbError;
use std::time::Duration;

/// What [`take_login_slot`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoginSlot {
    /// The attempt holds this slot (counted as a failure until cleared or given back).
    Taken(i64),
    /// The name has its failures for the window: wait this long.
    Wait(Duration),
}

/// Takes a slot for a sign-in as `key` at `now` when fewer than `max` attempts of that
/// name (failed, or still being checked) lie within `window` before `now`. Attempts older
/// than the window are deleted on the way, for every name.
pub async fn take_login_slot(
    db: &Db,
    key: &str,
    now: chrono::DateTime<chrono::Utc>,
    window: Duration,
    max: usize,
) -> Result<LoginSlot, DbError> {
    // Times are stored to the millisecond: reckon in that precision, so a wait is exact.
    let now = chrono::DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now);
    let window_c = chrono::Duration::from_std(window).map_err(|_| DbError::Corrupt("window too long".into()))?;
    let cutoff = format_stamp(now - window_c);
    let mut tx = begin_write(db).await?;
    if db.backend() == super::backend::Backend::Postgres {
        // Held until the transaction ends: one slot decision per name at a time, across replicas.
        Q::new("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))").bind(key).execute(&mut tx).await?;
    }
    Q::new("DELETE FROM login_attempts WHERE started_at <= $1").stamp(cutoff).execute(&mut tx).await?;
    let rows = Q::new("SELECT started_at FROM login_attempts WHERE name_key = $1 ORDER BY started_at")
        .bind(key)
        .fetch_all(&mut tx)
        .await?;
    if rows.len() >= max {
        let oldest = rows.first().map(|r| r.stamp("started_at")).transpose()?;
        let oldest = oldest
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(&s).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or(now);
        let since = (now - oldest).to_std().unwrap_or(Duration::ZERO);
        return Ok(LoginSlot::Wait(window.saturating_sub(since)));
    }
    let id: i64 = Q::new("INSERT INTO login_attempts (name_key, started_at) VALUES ($1, $2) RETURNING id")
        .bind(key)
        .stamp(format_stamp(now))
        .scalar(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(LoginSlot::Taken(id))
}

/// A sign-in as `key` succeeded: its failures are forgotten.
pub async fn clear_login_failures(db: &Db, key: &str) -> Result<(), DbError> {
    Q::new("DELETE FROM login_attempts WHERE name_key = $1").bind(key).execute(db).await?;
    Ok(())
}

/// The check of attempt `slot` could not be made: the slot is given back.
pub async fn give_back_login_slot(db: &Db, slot: i64) -> Result<(), DbError> {
    Q::new("DELETE FROM login_attempts WHERE id = $1").bind(slot).execute(db).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{backends, count};
    use super::*;

    const WINDOW: Duration = Duration::from_secs(15 * 60);

    #[tokio::test]
    async fn failures_lock_a_name_for_the_rest_of_the_window() {
        for t in backends().await {
            let db = &t.db;
            let start = chrono::Utc::now();
            let at = |s: i64| start + chrono::Duration::seconds(s);
            for i in 0..5 {
                assert!(matches!(take_login_slot(db, "ada", at(i), WINDOW, 5).await.unwrap(), LoginSlot::Taken(_)));
            }
            let wait = take_login_slot(db, "ada", at(60), WINDOW, 5).await.unwrap();
            assert_eq!(wait, LoginSlot::Wait(WINDOW - Duration::from_secs(60)), "{}", t.name);
            assert!(matches!(take_login_slot(db, "bob", at(60), WINDOW, 5).await.unwrap(), LoginSlot::Taken(_)));
            // The oldest failure lapses: one more try; a success clears the name.
            let window = i64::try_from(WINDOW.as_secs()).unwrap();
            let LoginSlot::Taken(_) = take_login_slot(db, "ada", at(window), WINDOW, 5).await.unwrap() else {
                panic!("the oldest failure has lapsed ({})", t.name)
            };
            clear_login_failures(db, "ada").await.unwrap();
            let LoginSlot::Taken(slot) = take_login_slot(db, "ada", at(window + 1), WINDOW, 5).await.unwrap() else {
                panic!("a success clears the count ({})", t.name)
            };
            give_back_login_slot(db, slot).await.unwrap();
            assert_eq!(count(db, "login_attempts").await, 1, "bob's lapsed too; ada's slot was given back");
        }
    }

    /// 50 attempts at once from two replicas (two pools on one database): exactly 5 slots.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn parallel_attempts_from_two_replicas_take_at_most_the_limit() {
        for t in backends().await {
            let other = t.reopen().await;
            let now = chrono::Utc::now();
            let tries = (0..50).map(|i| {
                let db = if i % 2 == 0 { t.db.clone() } else { other.clone() };
                tokio::spawn(async move { take_login_slot(&db, "ada", now, WINDOW, 5).await.unwrap() })
            });
            let mut taken = 0;
            for h in tries.collect::<Vec<_>>() {
                if matches!(h.await.unwrap(), LoginSlot::Taken(_)) {
                    taken += 1;
                }
            }
            assert_eq!(taken, 5, "{}", t.name);
        }
    }
}
