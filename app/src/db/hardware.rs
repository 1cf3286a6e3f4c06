//! The hardware a team describes for the roofline (migration 0024): GPUs it adds or whose
//! shipped figures it corrects (`gpu_specs`) and its models' facts (`model_facts`). Both
//! append-only like the prices — each change a row with who and when, the latest row of a
//! name in force, a row without figures a removal. Every value is checked here too
//! (`domain::analysis::roofline`), so no path stores one the API would refuse.

use super::backend::{begin_write, Db, DbRow, Q};
use super::error::DbError;
use crate::domain::analysis::roofline::{
    check_gpu_spec, check_model_facts, check_text, name_key, FactError, GpuSpec, ModelFacts, MAX_GPU_SPECS,
    MAX_MODEL_FACTS,
};
use crate::domain::model::text::MAX_FACT_CHARS;

/// Which of the two tables.
struct Table {
    table: &'static str,
    name: &'static str,
    key: &'static str,
    value: &'static str,
    max: usize,
}

const GPUS: Table = Table { table: "gpu_specs", name: "name", key: "name_key", value: "spec", max: MAX_GPU_SPECS };
const MODELS: Table =
    Table { table: "model_facts", name: "model", key: "model_key", value: "facts", max: MAX_MODEL_FACTS };

/// Stores `value` (JSON; `None` removes) under `name` in `t`, refusing a removal of what
/// is not there and a new name past the table's bound.
async fn set(
    db: &Db,
    t: &Table,
    field: &'static str,
    name: &str,
    value: Option<String>,
    set_by: &str,
    set_at: &str,
) -> Result<(), DbError> {
    let key = name_key(name);
    let mut tx = begin_write(db).await?;
    let current: Option<Option<String>> =
        Q::new(format!("SELECT {} FROM {} WHERE {} = $1 ORDER BY id DESC LIMIT 1", t.value, t.table, t.key))
            .bind(&key)
            .optional_scalar(&mut tx)
            .await?;
    let present = current.flatten().is_some();
    match &value {
        None if !present => return Err(DbError::NotFound(format!("{name:?}"))),
        Some(_) if !present => {
            let n: i64 = Q::new(format!(
                "SELECT COUNT(*) FROM {tb} g WHERE g.{v} IS NOT NULL
                   AND g.id = (SELECT MAX(h.id) FROM {tb} h WHERE h.{k} = g.{k})",
                tb = t.table,
                v = t.value,
                k = t.key
            ))
            .scalar(&mut tx)
            .await?;
            if n >= t.max as i64 {
                return Err(DbError::Fact(FactError {
                    field,
                    problem: format!("at most {} are kept; remove one first", t.max),
                }));
            }
        }
        _ => {}
    }
    Q::new(format!(
        "INSERT INTO {} ({}, {}, {}, set_by, set_at) VALUES ($1, $2, $3, $4, $5)",
        t.table, t.name, t.key, t.value
    ))
    .bind(name)
    .bind(&key)
    .bind(value)
    .bind(set_by)
    .stamp(set_at)
    .execute(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The rows in force of `t`: (value JSON, set_by, set_at), by name.
async fn current(db: &Db, t: &Table) -> Result<Vec<(String, String, String)>, DbError> {
    let rows = Q::new(format!(
        "SELECT {v} AS value, set_by, set_at FROM {tb} g WHERE g.{v} IS NOT NULL
            AND g.id = (SELECT MAX(h.id) FROM {tb} h WHERE h.{k} = g.{k})
          ORDER BY g.{k} LIMIT $1",
        tb = t.table,
        v = t.value,
        k = t.key
    ))
    .bind(t.max as i64)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|r: &DbRow| Ok((r.try_get::<String, _>("value")?, r.try_get("set_by")?, r.stamp("set_at")?)))
        .collect()
}

/// Adds or corrects a GPU (`Some`), or removes the team's entry of that name (`None`:
/// the shipped figures, if any, are in force again).
pub async fn set_gpu_spec(
    db: &Db,
    name: &str,
    spec: Option<GpuSpec>,
    set_by: &str,
    set_at: &str,
) -> Result<Option<GpuSpec>, DbError> {
    let name = check_text("name", name, MAX_FACT_CHARS, true)?;
    let spec =
        spec.map(|s| check_gpu_spec(GpuSpec { name: name.clone(), set_by: None, set_at: None, ..s })).transpose()?;
    let json = spec.as_ref().map(|s| serde_json::to_string(s).unwrap_or_default());
    set(db, &GPUS, "name", &name, json, set_by, set_at).await?;
    Ok(spec.map(|s| GpuSpec { set_by: Some(set_by.to_owned()), set_at: Some(set_at.to_owned()), ..s }))
}

/// The team's GPUs in force, by name, each with who set it and when.
pub async fn gpu_specs(db: &Db) -> Result<Vec<GpuSpec>, DbError> {
    current(db, &GPUS)
        .await?
        .into_iter()
        .map(|(json, by, at)| {
            let s: GpuSpec = serde_json::from_str(&json).map_err(|e| DbError::Corrupt(format!("a stored GPU: {e}")))?;
            Ok(GpuSpec { set_by: Some(by), set_at: Some(at), ..s })
        })
        .collect()
}

/// Sets a model's facts (`Some`) or removes them (`None`).
pub async fn set_model_facts(
    db: &Db,
    model: &str,
    facts: Option<ModelFacts>,
    set_by: &str,
    set_at: &str,
) -> Result<Option<ModelFacts>, DbError> {
    let model = check_text("model", model, MAX_FACT_CHARS, true)?;
    let facts = facts
        .map(|f| {
            check_model_facts(ModelFacts {
                model: model.clone(),
                set_by: set_by.to_owned(),
                set_at: set_at.to_owned(),
                ..f
            })
        })
        .transpose()?;
    let json = facts.as_ref().map(|f| serde_json::to_string(f).unwrap_or_default());
    set(db, &MODELS, "model", &model, json, set_by, set_at).await?;
    Ok(facts)
}

/// Every model's facts in force, by model.
pub async fn model_facts(db: &Db) -> Result<Vec<ModelFacts>, DbError> {
    current(db, &MODELS)
        .await?
        .into_iter()
        .map(|(json, by, at)| {
            let f: ModelFacts =
                serde_json::from_str(&json).map_err(|e| DbError::Corrupt(format!("a stored model's facts: {e}")))?;
            Ok(ModelFacts { set_by: by, set_at: at, ..f })
        })
        .collect()
}

/// Whether `model` ever had facts (set, changed or removed): the demo enters its model's
/// facts only once, so a person's removal stays.
pub async fn model_facts_ever_set(db: &Db, model: &str) -> Result<bool, DbError> {
    let n: i64 =
        Q::new("SELECT COUNT(*) FROM model_facts WHERE model_key = $1").bind(name_key(model)).scalar(db).await?;
    Ok(n > 0)
}

/// The models the stored runs name, with how many runs each (at most [`MAX_MODEL_FACTS`]).
pub async fn models_in_runs(db: &Db) -> Result<Vec<(String, i64)>, DbError> {
    let rows = Q::new(
        "SELECT model, COUNT(*) AS n FROM runs WHERE model IS NOT NULL AND model <> ''
          GROUP BY model ORDER BY model LIMIT $1",
    )
    .bind(MAX_MODEL_FACTS as i64)
    .fetch_all(db)
    .await?;
    rows.iter().map(|r| Ok((r.try_get("model")?, r.try_get("n")?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::backends;
    use crate::domain::analysis::roofline::shipped;

    fn facts() -> ModelFacts {
        ModelFacts {
            model: String::new(),
            total_params_b: Some(70.0),
            active_params_b: Some(70.0),
            bits_per_weight: Some(16.0),
            kv_bytes_per_token: Some(327_680.0),
            source: "config.json".into(),
            set_by: String::new(),
            set_at: String::new(),
        }
    }

    #[tokio::test]
    async fn gpus_and_model_facts_are_set_corrected_removed_and_refused_whole() {
        for t in backends().await {
            let db = &t.db;
            assert!(gpu_specs(db).await.unwrap().is_empty(), "{}", t.name);
            let mut h100 = shipped()[0].clone();
            h100.memory_tb_s = 3.0;
            h100.source = "measured with nvbandwidth".into();
            set_gpu_spec(db, "H100 SXM", Some(h100), "ana", "2026-12-01T09:00:00Z").await.unwrap();
            let got = gpu_specs(db).await.unwrap();
            assert_eq!((got[0].name.as_str(), got[0].memory_tb_s), ("H100 SXM", 3.0), "{}", t.name);
            assert_eq!(got[0].set_by.as_deref(), Some("ana"), "{}", t.name);
            assert!(got[0].set_at.as_deref().unwrap().starts_with("2026-12-01T09:00:00"), "{}", t.name);
            // Hostile figures: refused naming the field, nothing stored.
            let mut bad = shipped()[0].clone();
            bad.memory_tb_s = f64::NAN;
            let e = set_gpu_spec(db, "X1", Some(bad), "ana", "2026-12-01T09:01:00Z").await.unwrap_err();
            assert!(matches!(e, DbError::Fact(FactError { field: "memory_tb_s", .. })), "{}: {e}", t.name);
            assert_eq!(gpu_specs(db).await.unwrap().len(), 1, "{}", t.name);
            set_gpu_spec(db, " h100   sxm", None, "bo", "2026-12-01T10:00:00Z").await.unwrap();
            assert!(gpu_specs(db).await.unwrap().is_empty(), "{}: removed by any spelling", t.name);
            assert!(matches!(
                set_gpu_spec(db, "H100 SXM", None, "bo", "2026-12-01T10:01:00Z").await,
                Err(DbError::NotFound(_))
            ));

            set_model_facts(db, "llama-70b", Some(facts()), "ana", "2026-12-01T09:00:00Z").await.unwrap();
            let mut changed = facts();
            changed.bits_per_weight = Some(8.0);
            set_model_facts(db, "Llama-70B", Some(changed), "bo", "2026-12-02T09:00:00Z").await.unwrap();
            let all = model_facts(db).await.unwrap();
            assert_eq!(all.len(), 1, "{}", t.name);
            assert_eq!(
                (all[0].model.as_str(), all[0].bits_per_weight, all[0].set_by.as_str()),
                ("Llama-70B", Some(8.0), "bo")
            );
            let mut worse = facts();
            worse.active_params_b = Some(700.0);
            let e = set_model_facts(db, "llama-70b", Some(worse), "x", "2026-12-03T09:00:00Z").await.unwrap_err();
            assert!(matches!(e, DbError::Fact(FactError { field: "active_params_b", .. })), "{}", t.name);
            let e = set_model_facts(db, "a\u{7}b", Some(facts()), "x", "2026-12-03T09:00:00Z").await.unwrap_err();
            assert!(matches!(e, DbError::Fact(FactError { field: "model", .. })), "{}: {e}", t.name);
            assert_eq!(model_facts(db).await.unwrap()[0].bits_per_weight, Some(8.0), "{}", t.name);
            set_model_facts(db, "llama-70b", None, "x", "2026-12-03T09:00:00Z").await.unwrap();
            assert!(model_facts(db).await.unwrap().is_empty(), "{}", t.name);
        }
    }
}
