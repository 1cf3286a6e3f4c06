//! Alerts sent to webhooks and their acknowledgements (migration 0019): one delivery row
//! per alert and endpoint (its attempts, outcome and last error), and one acknowledgement
//! per alert key (who, when, why). The endpoint is stored as its origin only.

use super::backend::now_rfc3339;
use super::backend::{Db, DbRow, Q};
use super::error::{corrupt, DbError};
use crate::domain::analysis::alerts::{Ack, Delivery, DeliveryStatus, RunAlerts};
use crate::domain::model::text;
use crate::domain::RunId;

async fn run_row(db: &Db, run: &RunId) -> Result<i64, DbError> {
    Q::new("SELECT id FROM runs WHERE public_id = $1")
        .bind(run.as_str())
        .optional_scalar(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {run}")))
}

/// Records a delivery about to be attempted (status pending, no attempt yet); its id.
pub async fn start_delivery(db: &Db, run: &RunId, key: &str, endpoint: &str, summary: &str) -> Result<i64, DbError> {
    let row = run_row(db, run).await?;
    let now = now_rfc3339();
    let summary = text::truncate(summary, text::MAX_ANNOTATION_CHARS);
    Q::new(
        "INSERT INTO alert_deliveries (run_id, alert_key, endpoint, summary, status, attempts, last_error,
                                       created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'pending', 0, NULL, $5, $5) RETURNING id",
    )
    .bind(row)
    .bind(key)
    .bind(endpoint)
    .bind(summary)
    .stamp(now)
    .scalar(db)
    .await
}

/// Records an attempt's outcome: the status, the attempts so far, the last error.
pub async fn record_attempt(
    db: &Db,
    id: i64,
    status: DeliveryStatus,
    attempts: i64,
    error: Option<&str>,
) -> Result<(), DbError> {
    let error = error.map(|e| text::truncate(e, 500));
    Q::new("UPDATE alert_deliveries SET status = $2, attempts = $3, last_error = $4, updated_at = $5 WHERE id = $1")
        .bind(id)
        .bind(status.as_str())
        .bind(attempts)
        .bind(error)
        .stamp(now_rfc3339())
        .execute(db)
        .await?;
    Ok(())
}

/// Whether `key` needs no new delivery to `endpoint`: acknowledged, or already delivered
/// or being delivered there (a failed delivery is tried again when a later run lands).
pub async fn alert_settled(db: &Db, key: &str, endpoint: &str) -> Result<bool, DbError> {
    let acked: i64 = Q::new("SELECT COUNT(*) FROM alert_acks WHERE alert_key = $1").bind(key).scalar(db).await?;
    if acked > 0 {
        return Ok(true);
    }
    let sent: i64 = Q::new(
        "SELECT COUNT(*) FROM alert_deliveries
         WHERE alert_key = $1 AND endpoint = $2 AND status IN ('pending', 'delivered')",
    )
    .bind(key)
    .bind(endpoint)
    .scalar(db)
    .await?;
    Ok(sent > 0)
}

fn delivery_row(r: &DbRow) -> Result<Delivery, DbError> {
    let status: String = r.try_get("status")?;
    Ok(Delivery {
        id: r.try_get("id")?,
        alert_key: r.try_get("alert_key")?,
        endpoint: r.try_get("endpoint")?,
        summary: r.try_get("summary")?,
        status: DeliveryStatus::parse(&status).ok_or_else(|| corrupt("alert_deliveries.status", &status))?,
        attempts: r.try_get("attempts")?,
        last_error: r.try_get("last_error")?,
        created_at: r.stamp("created_at")?,
        updated_at: r.stamp("updated_at")?,
    })
}

/// Most deliveries shown for one run (newest kept).
const MAX_SHOWN: i64 = 200;

/// A run's deliveries (oldest first) and acknowledgements.
pub async fn run_alerts(db: &Db, run: &RunId) -> Result<RunAlerts, DbError> {
    let row = run_row(db, run).await?;
    let mut deliveries = Q::new(
        "SELECT id, alert_key, endpoint, summary, status, attempts, last_error, created_at, updated_at
         FROM alert_deliveries WHERE run_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(row)
    .bind(MAX_SHOWN)
    .fetch_all(db)
    .await?
    .iter()
    .map(delivery_row)
    .collect::<Result<Vec<_>, _>>()?;
    deliveries.reverse();
    let acks = Q::new(
        "SELECT alert_key, author, reason, acknowledged_at FROM alert_acks WHERE run_id = $1 ORDER BY acknowledged_at",
    )
    .bind(row)
    .fetch_all(db)
    .await?
    .iter()
    .map(|r| {
        Ok(Ack {
            alert_key: r.try_get("alert_key")?,
            author: r.try_get("author")?,
            reason: r.try_get("reason")?,
            acknowledged_at: r.stamp("acknowledged_at")?,
        })
    })
    .collect::<Result<Vec<_>, DbError>>()?;
    Ok(RunAlerts { deliveries, acks })
}

/// Acknowledges alert `key` of `run` (a key delivered about that run): who, why. A second
/// acknowledgement of the same key keeps the first.
pub async fn acknowledge_alert(db: &Db, run: &RunId, key: &str, author: &str, reason: &str) -> Result<(), DbError> {
    text::check_alert_reason(reason)?;
    let row = run_row(db, run).await?;
    let known: i64 = Q::new("SELECT COUNT(*) FROM alert_deliveries WHERE run_id = $1 AND alert_key = $2")
        .bind(row)
        .bind(key)
        .scalar(db)
        .await?;
    if known == 0 {
        return Err(DbError::NotFound(format!("alert {key:?} of run {run}")));
    }
    Q::new(
        "INSERT INTO alert_acks (alert_key, run_id, author, reason, acknowledged_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING",
    )
    .bind(key)
    .bind(row)
    .bind(author)
    .bind(reason.trim())
    .stamp(now_rfc3339())
    .execute(db)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::{backends, sample};

    #[tokio::test]
    async fn deliveries_and_acknowledgements_round_trip_on_both_backends() {
        for t in backends().await {
            let pool = &t.db;
            let id = crate::db::insert_run(pool, &sample()).await.unwrap();
            let key = format!("gate/{id}");
            assert!(!alert_settled(pool, &key, "https://hooks.example").await.unwrap());
            let d = start_delivery(pool, &id, &key, "https://hooks.example", "The gate fails").await.unwrap();
            assert!(alert_settled(pool, &key, "https://hooks.example").await.unwrap(), "pending counts");
            assert!(!alert_settled(pool, &key, "http://127.0.0.1:9").await.unwrap(), "per endpoint");
            record_attempt(pool, d, DeliveryStatus::Failed, 4, Some("HTTP 500")).await.unwrap();
            assert!(!alert_settled(pool, &key, "https://hooks.example").await.unwrap(), "a failure is retried later");
            let a = run_alerts(pool, &id).await.unwrap();
            assert_eq!(a.deliveries.len(), 1);
            let got = &a.deliveries[0];
            assert_eq!(
                (got.status, got.attempts, got.last_error.as_deref()),
                (DeliveryStatus::Failed, 4, Some("HTTP 500"))
            );
            assert!(matches!(
                acknowledge_alert(pool, &id, "gate/other", "ana", "known").await,
                Err(DbError::NotFound(_))
            ));
            assert!(matches!(acknowledge_alert(pool, &id, &key, "ana", " ").await, Err(DbError::Text(_))));
            acknowledge_alert(pool, &id, &key, "ana", "vLLM 0.14 upgrade, expected").await.unwrap();
            acknowledge_alert(pool, &id, &key, "bo", "again").await.unwrap();
            let a = run_alerts(pool, &id).await.unwrap();
            assert_eq!(a.acks.len(), 1);
            assert_eq!((a.acks[0].author.as_str(), a.acks[0].reason.as_str()), ("ana", "vLLM 0.14 upgrade, expected"));
            assert!(alert_settled(pool, &key, "http://127.0.0.1:9").await.unwrap(), "acknowledged: no endpoint");
        }
    }
}
