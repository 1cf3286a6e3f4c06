//! The server's own metrics per level (tables `level_telemetry` and `level_series`,
//! migration 0010): written with the level in its transaction (`runs::insert_level`, so an
//! import and a live sweep's `append_level` both store it), read back per run in load
//! order. The types are `domain::model::telemetry`; series values are JSON text, read back digit
//! for digit.

use super::backend::{Db, Tx, Q};
use super::error::{corrupt, DbError};
use crate::domain::analysis::why_signals::{self, StoredSignals};
use crate::domain::model::level::LevelKey;
use crate::domain::model::telemetry::{LevelTelemetry, Series, SeriesData, TelemetrySource};
use crate::domain::{LoadKind, RunId};

/// One level's telemetry as stored, with the level it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTelemetry {
    /// The level's position in the run, in the order levels were stored (0-based).
    pub seq: i64,
    pub load_kind: LoadKind,
    pub load_value: f64,
    pub telemetry: LevelTelemetry,
}

fn kind_name(d: &SeriesData) -> &'static str {
    match d {
        SeriesData::Gauge { .. } => "gauge",
        SeriesData::GaugeStats { .. } => "gauge_stats",
        SeriesData::Counter { .. } => "counter",
        SeriesData::Histogram { .. } => "histogram",
    }
}

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Stores `t` as the telemetry of the level whose row id is `point_id` (in `tx`, the level's
/// own transaction).
pub(super) async fn insert_in(tx: &mut Tx, point_id: i64, t: &LevelTelemetry) -> Result<(), DbError> {
    Q::new(
        "INSERT INTO level_telemetry (point_id, engine, source, interval_ms, window_s, scrapes_ok,
                                      scrapes_failed, series_dropped)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(point_id)
    .bind(t.engine.as_deref())
    .bind(t.source.as_str())
    .bind(t.interval_ms)
    .bind(t.window_s)
    .bind(count(t.scrapes_ok))
    .bind(count(t.scrapes_failed))
    .bind(count(t.series_dropped))
    .execute(&mut *tx)
    .await?;
    for (i, s) in t.series.iter().enumerate() {
        let labels = serde_json::to_string(&s.labels).map_err(|e| DbError::Corrupt(e.to_string()))?;
        let data = serde_json::to_string(&s.data).map_err(|e| DbError::Corrupt(e.to_string()))?;
        Q::new(
            "INSERT INTO level_series (point_id, seq, name, source_name, kind, labels_json, data_json)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(point_id)
        .bind(i as i64)
        .bind(&s.name)
        .bind(&s.source_name)
        .bind(kind_name(&s.data))
        .bind(labels)
        .bind(data)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

fn non_negative(what: &str, v: i64) -> Result<u64, DbError> {
    u64::try_from(v).map_err(|_| corrupt(what, &v.to_string()))
}

/// What is stored beside run `id` as signals (`domain::analysis::why_signals`): every level's
/// telemetry, and the late sends an open-loop (request-rate) level's raw fields record.
pub async fn stored_signals(db: &Db, id: &RunId) -> Result<StoredSignals, DbError> {
    let telemetry = run_telemetry(db, id).await?;
    let mut out = why_signals::from_telemetry(
        telemetry.iter().map(|t| (LevelKey { load_kind: t.load_kind, load_value: t.load_value }, &t.telemetry)),
    );
    // Only the levels whose raw fields may hold a schedule (rate levels) or the client's
    // CPU (a live sweep's, or its export imported) are read: an import's raw fields can be
    // large, and are never parsed for this.
    let rows = Q::new(
        "SELECT p.load_kind, p.load_value, p.raw_json FROM points p JOIN runs r ON r.id = p.run_id
         WHERE r.public_id = $1 AND p.raw_json IS NOT NULL
           AND (p.load_kind = 'request_rate' OR r.source_format IN ('live_sweep', 'plateau'))
         ORDER BY p.load_kind, p.load_value, p.seq",
    )
    .bind(id.as_str())
    .fetch_all(db)
    .await?;
    for row in rows {
        let text: String = row.try_get("raw_json")?;
        let raw: serde_json::Value = serde_json::from_str(&text).map_err(|_| corrupt("raw_json", &text))?;
        let kind: String = row.try_get("load_kind")?;
        let load_kind = LoadKind::parse(&kind).ok_or_else(|| corrupt("load_kind", &kind))?;
        let key = LevelKey { load_kind, load_value: row.try_get("load_value")? };
        if load_kind == LoadKind::RequestRate {
            out.add_open_loop(&key, &raw);
        }
        out.add_client(&key, &raw);
    }
    Ok(out)
}

/// The telemetry of every level of run `id` that has some, in load order (as the run page
/// lists its levels); levels without telemetry are absent, not empty.
pub async fn run_telemetry(db: &Db, id: &RunId) -> Result<Vec<StoredTelemetry>, DbError> {
    let levels = Q::new(
        "SELECT p.id AS point_id, p.seq, p.load_kind, p.load_value, t.engine, t.source, t.interval_ms,
                t.window_s, t.scrapes_ok, t.scrapes_failed, t.series_dropped
         FROM level_telemetry t JOIN points p ON p.id = t.point_id JOIN runs r ON r.id = p.run_id
         WHERE r.public_id = $1
         ORDER BY p.load_kind, p.load_value, p.seq",
    )
    .bind(id.as_str())
    .fetch_all(db)
    .await?;
    let series = Q::new(
        "SELECT s.point_id, s.name, s.source_name, s.labels_json, s.data_json
         FROM level_series s JOIN points p ON p.id = s.point_id JOIN runs r ON r.id = p.run_id
         WHERE r.public_id = $1
         ORDER BY s.point_id, s.seq",
    )
    .bind(id.as_str())
    .fetch_all(db)
    .await?;
    // Series arrive grouped by level: hand each level its run of rows.
    let mut by_point: std::collections::HashMap<i64, Vec<Series>> = std::collections::HashMap::new();
    for row in &series {
        let point_id: i64 = row.try_get("point_id")?;
        let labels: String = row.try_get("labels_json")?;
        let data: String = row.try_get("data_json")?;
        let s = Series {
            name: row.try_get("name")?,
            source_name: row.try_get("source_name")?,
            labels: serde_json::from_str(&labels).map_err(|_| corrupt("labels_json", &labels))?,
            data: serde_json::from_str(&data).map_err(|_| corrupt("data_json", &data))?,
        };
        by_point.entry(point_id).or_default().push(s);
    }
    let mut out = Vec::with_capacity(levels.len());
    for row in &levels {
        let point_id: i64 = row.try_get("point_id")?;
        let kind: String = row.try_get("load_kind")?;
        let source: String = row.try_get("source")?;
        out.push(StoredTelemetry {
            seq: row.try_get("seq")?,
            load_kind: LoadKind::parse(&kind).ok_or_else(|| corrupt("load_kind", &kind))?,
            load_value: row.try_get("load_value")?,
            telemetry: LevelTelemetry {
                engine: row.try_get("engine")?,
                source: TelemetrySource::parse(&source).ok_or_else(|| corrupt("source", &source))?,
                interval_ms: row.try_get("interval_ms")?,
                window_s: row.try_get("window_s")?,
                scrapes_ok: non_negative("scrapes_ok", row.try_get("scrapes_ok")?)?,
                scrapes_failed: non_negative("scrapes_failed", row.try_get("scrapes_failed")?)?,
                series_dropped: non_negative("series_dropped", row.try_get("series_dropped")?)?,
                series: by_point.remove(&point_id).unwrap_or_default(),
            },
        });
    }
    Ok(out)
}

/// The telemetry of level `seq` of run `id` (in the order levels were stored); `None` when
/// the level has none.
pub async fn level_telemetry(db: &Db, id: &RunId, seq: i64) -> Result<Option<LevelTelemetry>, DbError> {
    let all = run_telemetry(db, id).await?;
    Ok(all.into_iter().find(|t| t.seq == seq).map(|t| t.telemetry))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{backends, count, execute, sample, sample_telemetry};
    use super::super::*;
    use crate::domain::NewLevel;

    #[tokio::test]
    async fn telemetry_round_trips_with_its_level_on_both_backends() {
        for t in backends().await {
            let db = &t.db;
            let new = sample();
            let id = insert_run(db, &new).await.unwrap();
            let stored = run_telemetry(db, &id).await.unwrap();
            // The sample's first level has telemetry, its second none.
            assert_eq!(stored.len(), 1, "{}", t.name);
            assert_eq!(Some(&stored[0].telemetry), new.levels[0].telemetry.as_ref(), "{}", t.name);
            assert_eq!(stored[0].seq, 0);
            assert_eq!(level_telemetry(db, &id, 0).await.unwrap(), new.levels[0].telemetry);
            assert_eq!(level_telemetry(db, &id, 1).await.unwrap(), None);
            let series = new.levels[0].telemetry.as_ref().map_or(0, |t| t.series.len()) as i64;
            assert_eq!(count(db, "level_series").await, series, "{}", t.name);
            // A live sweep's level carries its telemetry the same way.
            let mut level = NewLevel::new(crate::domain::Point::at(crate::domain::LoadKind::Concurrency, 64.0));
            level.telemetry = Some(sample_telemetry());
            append_level(db, &id, &level).await.unwrap();
            let stored = run_telemetry(db, &id).await.unwrap();
            assert_eq!(stored.len(), 2, "{}", t.name);
            assert_eq!(stored[1].load_value, 64.0, "load order");
            assert_eq!(stored[1].telemetry.max("requests_running"), Some(4.0), "{}", t.name);
            // Deleting the run takes its telemetry.
            execute(db, "DELETE FROM runs WHERE public_id = $1", &[id.as_str()]).await;
            assert_eq!(count(db, "level_telemetry").await, 0, "{}", t.name);
            assert_eq!(count(db, "level_series").await, 0, "{}", t.name);
        }
    }
}
