//! The prices people set (migration 0016): dollars per GPU-hour per GPU type
//! (`gpu_prices`) and dollars per hour for one run's deployment (`run_prices`). Both
//! tables are append-only — each change a row with who and when, the latest row of a type
//! (or run) its price, a row without a price a removal — so the history of every price is
//! there to read. Every price is checked here too (`domain::analysis::cost`), so no path stores one
//! the API would refuse.

use super::backend::{begin_write, Db, DbRow, Q};
use super::error::DbError;
use crate::domain::analysis::cost::{
    check_gpu_type, check_usd_per_hour, gpu_key, GpuPrice, PriceChange, PriceError, RunPrice, MAX_GPU_PRICES,
};
use crate::domain::RunId;

/// Most history rows read at once.
pub const MAX_PRICE_HISTORY: i64 = 500;

/// Sets (`Some`) or removes (`None`) the price of `gpu_type`, by `set_by` at `set_at`
/// (RFC 3339). Refused: a bad type or price (`DbError::Price`, naming the field), a removal
/// of a type without a price (`NotFound`), a new type when [`MAX_GPU_PRICES`] have one.
pub async fn set_gpu_price(
    db: &Db,
    gpu_type: &str,
    usd_per_gpu_hour: Option<f64>,
    set_by: &str,
    set_at: &str,
) -> Result<Option<GpuPrice>, DbError> {
    let gpu_type = check_gpu_type(gpu_type)?;
    let price = usd_per_gpu_hour.map(|v| check_usd_per_hour("usd_per_gpu_hour", v)).transpose()?;
    let key = gpu_key(&gpu_type);
    let mut tx = begin_write(db).await?;
    let current: Option<Option<f64>> =
        Q::new("SELECT usd_per_gpu_hour FROM gpu_prices WHERE gpu_key = $1 ORDER BY id DESC LIMIT 1")
            .bind(&key)
            .optional_scalar(&mut tx)
            .await?;
    let has_price = current.flatten().is_some();
    match price {
        None if !has_price => return Err(DbError::NotFound(format!("a price for {gpu_type:?}"))),
        Some(_) if !has_price => {
            let priced: i64 = Q::new(
                "SELECT COUNT(*) FROM gpu_prices g WHERE g.usd_per_gpu_hour IS NOT NULL
                   AND g.id = (SELECT MAX(h.id) FROM gpu_prices h WHERE h.gpu_key = g.gpu_key)",
            )
            .scalar(&mut tx)
            .await?;
            if priced >= MAX_GPU_PRICES as i64 {
                return Err(DbError::Price(PriceError {
                    field: "gpu_type",
                    problem: format!("at most {MAX_GPU_PRICES} GPU types have a price; remove one first"),
                }));
            }
        }
        _ => {}
    }
    Q::new("INSERT INTO gpu_prices (gpu_type, gpu_key, usd_per_gpu_hour, set_by, set_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(&gpu_type)
        .bind(&key)
        .bind(price)
        .bind(set_by)
        .stamp(set_at)
        .execute(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(price.map(|usd_per_gpu_hour| GpuPrice {
        gpu_type,
        usd_per_gpu_hour,
        set_by: set_by.to_owned(),
        set_at: set_at.to_owned(),
    }))
}

/// Every GPU type's current price (removed ones left out), by type.
pub async fn gpu_prices(db: &Db) -> Result<Vec<GpuPrice>, DbError> {
    let rows = Q::new(
        "SELECT gpu_type, usd_per_gpu_hour, set_by, set_at FROM gpu_prices g
          WHERE g.usd_per_gpu_hour IS NOT NULL
            AND g.id = (SELECT MAX(h.id) FROM gpu_prices h WHERE h.gpu_key = g.gpu_key)
          ORDER BY g.gpu_key LIMIT $1",
    )
    .bind(MAX_GPU_PRICES as i64)
    .fetch_all(db)
    .await?;
    // The query leaves removed prices out: every row has one.
    Ok(rows
        .iter()
        .map(change_of)
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter_map(|c| {
            c.usd_per_gpu_hour.map(|usd_per_gpu_hour| GpuPrice {
                gpu_type: c.gpu_type,
                usd_per_gpu_hour,
                set_by: c.set_by,
                set_at: c.set_at,
            })
        })
        .collect())
}

/// Every change to the GPU prices, newest first (at most [`MAX_PRICE_HISTORY`]).
pub async fn gpu_price_history(db: &Db) -> Result<Vec<PriceChange>, DbError> {
    let rows = Q::new("SELECT gpu_type, usd_per_gpu_hour, set_by, set_at FROM gpu_prices ORDER BY id DESC LIMIT $1")
        .bind(MAX_PRICE_HISTORY)
        .fetch_all(db)
        .await?;
    rows.iter().map(change_of).collect()
}

/// One row of `gpu_prices` (a price, or its removal: no price).
fn change_of(r: &DbRow) -> Result<PriceChange, DbError> {
    Ok(PriceChange {
        gpu_type: r.try_get("gpu_type")?,
        usd_per_gpu_hour: r.try_get("usd_per_gpu_hour")?,
        set_by: r.try_get("set_by")?,
        set_at: r.stamp("set_at")?,
    })
}

/// The GPU types the stored runs name, with how many runs each (at most [`MAX_GPU_PRICES`]).
pub async fn gpu_types_in_runs(db: &Db) -> Result<Vec<(String, i64)>, DbError> {
    let rows = Q::new(
        "SELECT gpu_type, COUNT(*) AS n FROM runs WHERE gpu_type IS NOT NULL AND gpu_type <> ''
          GROUP BY gpu_type ORDER BY gpu_type LIMIT $1",
    )
    .bind(MAX_GPU_PRICES as i64)
    .fetch_all(db)
    .await?;
    rows.iter().map(|r| Ok((r.try_get("gpu_type")?, r.try_get("n")?))).collect()
}

/// Sets (`Some`) or removes (`None`) run `run`'s deployment price per hour. `NotFound` for
/// an unknown run, or a removal where none is set.
pub async fn set_run_price(
    db: &Db,
    run: &RunId,
    usd_per_hour: Option<f64>,
    set_by: &str,
    set_at: &str,
) -> Result<Option<RunPrice>, DbError> {
    let price = usd_per_hour.map(|v| check_usd_per_hour("usd_per_hour", v)).transpose()?;
    let mut tx = begin_write(db).await?;
    let row_id: i64 = Q::new("SELECT id FROM runs WHERE public_id = $1")
        .bind(run.as_str())
        .optional_scalar(&mut tx)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {run}")))?;
    if price.is_none() {
        let current: Option<Option<f64>> =
            Q::new("SELECT usd_per_hour FROM run_prices WHERE run_id = $1 ORDER BY id DESC LIMIT 1")
                .bind(row_id)
                .optional_scalar(&mut tx)
                .await?;
        if current.flatten().is_none() {
            return Err(DbError::NotFound(format!("a price for run {run}")));
        }
    }
    Q::new("INSERT INTO run_prices (run_id, usd_per_hour, set_by, set_at) VALUES ($1, $2, $3, $4)")
        .bind(row_id)
        .bind(price)
        .bind(set_by)
        .stamp(set_at)
        .execute(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(price.map(|usd_per_hour| RunPrice { usd_per_hour, set_by: set_by.to_owned(), set_at: set_at.to_owned() }))
}

/// Run `run`'s deployment price, when one is set (`NotFound` for an unknown run).
pub async fn run_price(db: &Db, run: &RunId) -> Result<Option<RunPrice>, DbError> {
    let row_id: i64 = Q::new("SELECT id FROM runs WHERE public_id = $1")
        .bind(run.as_str())
        .optional_scalar(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {run}")))?;
    let row = Q::new("SELECT usd_per_hour, set_by, set_at FROM run_prices WHERE run_id = $1 ORDER BY id DESC LIMIT 1")
        .bind(row_id)
        .fetch_optional(db)
        .await?;
    let Some(r) = row else { return Ok(None) };
    let usd: Option<f64> = r.try_get("usd_per_hour")?;
    Ok(match usd {
        Some(usd_per_hour) => Some(RunPrice { usd_per_hour, set_by: r.try_get("set_by")?, set_at: r.stamp("set_at")? }),
        None => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::insert_run;
    use crate::db::testing::{backends, execute, sample};

    #[tokio::test]
    async fn gpu_prices_are_set_changed_removed_with_their_history() {
        for t in backends().await {
            let db = &t.db;
            assert!(gpu_prices(db).await.unwrap().is_empty(), "{}: no default prices", t.name);
            set_gpu_price(db, "H200", Some(2.5), "ana", "2026-12-01T09:00:00Z").await.unwrap();
            set_gpu_price(db, "A100 80GB", Some(1.2), "ana", "2026-12-01T09:01:00Z").await.unwrap();
            // The same type, spelled differently: a change, not a second type.
            set_gpu_price(db, " h200 ", Some(3.1), "bo", "2026-12-02T10:00:00Z").await.unwrap();
            let now = gpu_prices(db).await.unwrap();
            assert_eq!(now.len(), 2, "{}", t.name);
            assert_eq!((now[1].gpu_type.as_str(), now[1].usd_per_gpu_hour), ("h200", 3.1), "{}", t.name);
            assert_eq!(now[1].set_by, "bo", "{}", t.name);
            assert!(now[1].set_at.starts_with("2026-12-02T10:00:00"), "{}: {}", t.name, now[1].set_at);
            set_gpu_price(db, "A100 80GB", None, "bo", "2026-12-02T11:00:00Z").await.unwrap();
            assert_eq!(gpu_prices(db).await.unwrap().len(), 1, "{}", t.name);
            let history = gpu_price_history(db).await.unwrap();
            assert_eq!(
                history.iter().map(|c| (c.gpu_type.as_str(), c.usd_per_gpu_hour)).collect::<Vec<_>>(),
                [("A100 80GB", None), ("h200", Some(3.1)), ("A100 80GB", Some(1.2)), ("H200", Some(2.5))],
                "{}",
                t.name
            );
            // Removing what has no price, and hostile prices: refused, nothing stored.
            assert!(matches!(
                set_gpu_price(db, "A100 80GB", None, "bo", "2026-12-02T12:00:00Z").await,
                Err(DbError::NotFound(_))
            ));
            for bad in [f64::NAN, -1.0, 0.0, 1e308, f64::INFINITY] {
                let e = set_gpu_price(db, "H100", Some(bad), "x", "2026-12-02T12:00:00Z").await.unwrap_err();
                assert!(matches!(e, DbError::Price(PriceError { field: "usd_per_gpu_hour", .. })), "{}: {bad}", t.name);
            }
            let e = set_gpu_price(db, "", Some(1.0), "x", "2026-12-02T12:00:00Z").await.unwrap_err();
            assert!(matches!(e, DbError::Price(PriceError { field: "gpu_type", .. })), "{}", t.name);
            assert_eq!(gpu_price_history(db).await.unwrap().len(), 4, "{}", t.name);
        }
    }

    #[tokio::test]
    async fn a_runs_price_is_set_replaced_removed_and_goes_with_the_run() {
        for t in backends().await {
            let db = &t.db;
            let mut new = sample();
            new.facts.gpu_type = Some("H200 141GB".into());
            let id = insert_run(db, &new).await.unwrap();
            assert_eq!(run_price(db, &id).await.unwrap(), None, "{}", t.name);
            assert_eq!(gpu_types_in_runs(db).await.unwrap(), [("H200 141GB".to_owned(), 1)], "{}", t.name);
            set_run_price(db, &id, Some(20.0), "ana", "2026-12-01T09:00:00Z").await.unwrap();
            set_run_price(db, &id, Some(36.5), "bo", "2026-12-01T10:00:00Z").await.unwrap();
            let p = run_price(db, &id).await.unwrap().unwrap();
            assert_eq!((p.usd_per_hour, p.set_by.as_str()), (36.5, "bo"), "{}", t.name);
            set_run_price(db, &id, None, "bo", "2026-12-01T11:00:00Z").await.unwrap();
            assert_eq!(run_price(db, &id).await.unwrap(), None, "{}", t.name);
            let e = set_run_price(db, &id, Some(f64::NAN), "x", "2026-12-01T12:00:00Z").await.unwrap_err();
            assert!(matches!(e, DbError::Price(PriceError { field: "usd_per_hour", .. })), "{}", t.name);
            let missing = RunId::parse("nosuchrun0000").unwrap();
            assert!(matches!(
                set_run_price(db, &missing, Some(1.0), "x", "2026-12-01T12:00:00Z").await,
                Err(DbError::NotFound(_))
            ));
            execute(db, "DELETE FROM runs WHERE public_id = $1", &[id.as_str()]).await;
            assert_eq!(crate::db::testing::count(db, "run_prices").await, 0, "{}: the run's prices go with it", t.name);
        }
    }
}
