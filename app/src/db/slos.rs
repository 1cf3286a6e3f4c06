//! Named SLOs (migration 0015): a team's promises stored under a name, listed on every
//! page to choose from. The SLO is stored as its canonical text and read back through
//! [`Slo::parse`], so a stored SLO is always one the syntax accepts.

use super::backend::{Db, Q};
use super::error::DbError;
use crate::domain::analysis::slo::{check_name, NamedSlo, Slo};

/// At most this many named SLOs are listed (and stored).
pub const MAX_NAMED_SLOS: i64 = 200;

/// Stores (or replaces) the SLO `name`. Refused: a bad name, an SLO that does not check,
/// a new name when [`MAX_NAMED_SLOS`] are stored.
pub async fn put_slo(db: &Db, named: &NamedSlo) -> Result<(), DbError> {
    check_name(&named.name).map_err(|e| DbError::Slo { field: "name", error: e })?;
    named.slo.check().map_err(|e| DbError::Slo { field: "slo", error: e })?;
    if !room_for(db, NamedTable::Slos, &named.name, MAX_NAMED_SLOS).await? {
        return Err(DbError::Slo {
            field: "name",
            error: crate::domain::analysis::slo::SloError {
                part: None,
                problem: format!("at most {MAX_NAMED_SLOS} SLOs are stored; delete one first"),
            },
        });
    }
    Q::new(
        "INSERT INTO slos (name, text, author, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO UPDATE SET text = excluded.text, author = excluded.author,
         created_at = excluded.created_at",
    )
    .bind(&named.name)
    .bind(named.slo.to_string())
    .bind(&named.author)
    .stamp(named.created_at.clone())
    .execute(db)
    .await?;
    Ok(())
}

/// Every named SLO, by name.
pub async fn list_slos(db: &Db) -> Result<Vec<NamedSlo>, DbError> {
    let rows = Q::new("SELECT name, text, author, created_at FROM slos ORDER BY name LIMIT $1")
        .bind(MAX_NAMED_SLOS)
        .fetch_all(db)
        .await?;
    rows.iter()
        .map(|row| {
            let name: String = row.try_get("name")?;
            let text: String = row.try_get("text")?;
            let slo = Slo::parse(&text).map_err(|e| DbError::Corrupt(format!("SLO {name:?}: {e}")))?;
            Ok(NamedSlo { name, slo, author: row.try_get("author")?, created_at: row.stamp("created_at")? })
        })
        .collect()
}

/// The SLO `name`.
pub async fn get_slo(db: &Db, name: &str) -> Result<NamedSlo, DbError> {
    list_slos(db).await?.into_iter().find(|n| n.name == name).ok_or_else(|| DbError::NotFound(format!("SLO {name:?}")))
}

/// Deletes the SLO `name` (pages whose address holds its text keep working: the address
/// carries the limits, not the name).
pub async fn delete_slo(db: &Db, name: &str) -> Result<(), DbError> {
    delete_named(db, NamedTable::Slos, name, || format!("SLO {name:?}")).await
}

/// The tables of things a team stores under a name (SLOs, demands): `name` is their key.
#[derive(Clone, Copy)]
pub(super) enum NamedTable {
    Slos,
    Demands,
}

impl NamedTable {
    fn sql(self) -> &'static str {
        match self {
            NamedTable::Slos => "slos",
            NamedTable::Demands => "demands",
        }
    }
}

/// Whether `name` may be stored in `table`: it is there already (a replacement), or fewer
/// than `max` are.
pub(super) async fn room_for(db: &Db, table: NamedTable, name: &str, max: i64) -> Result<bool, DbError> {
    let t = table.sql();
    if Q::new(format!("SELECT 1 FROM {t} WHERE name = $1")).bind(name).fetch_optional(db).await?.is_some() {
        return Ok(true);
    }
    let n: i64 = Q::new(format!("SELECT COUNT(*) FROM {t}")).scalar(db).await?;
    Ok(n < max)
}

/// Deletes `name` from `table`; `NotFound(what())` when there was none.
pub(super) async fn delete_named(
    db: &Db,
    table: NamedTable,
    name: &str,
    what: impl FnOnce() -> String,
) -> Result<(), DbError> {
    let done = Q::new(format!("DELETE FROM {} WHERE name = $1", table.sql())).bind(name).execute(db).await?;
    super::error::touched(done, what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::backends;

    fn named(name: &str, text: &str) -> NamedSlo {
        NamedSlo {
            name: name.into(),
            slo: Slo::parse(text).unwrap(),
            author: "ana".into(),
            created_at: "2026-12-02T10:00:00Z".into(),
        }
    }

    #[tokio::test]
    async fn named_slos_are_stored_replaced_listed_and_deleted() {
        for t in backends().await {
            let db = &t.db;
            put_slo(db, &named("chat-interactive", "ttft:p99<=2s,tpot:p99<=50ms,errors<=1%")).await.unwrap();
            put_slo(db, &named("batch", "e2e:p99<=40s")).await.unwrap();
            let all = list_slos(db).await.unwrap();
            assert_eq!(
                all.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
                ["batch", "chat-interactive"],
                "{}",
                t.name
            );
            assert_eq!(all[1].slo.to_string(), "ttft:p99<=2s,tpot:p99<=50ms,errors<=1%", "{}", t.name);
            assert!(all[1].created_at.starts_with("2026-12-02T10:00:00"), "{}: {}", t.name, all[1].created_at);
            put_slo(db, &named("batch", "e2e:p99<=60s")).await.unwrap();
            assert_eq!(get_slo(db, "batch").await.unwrap().slo.to_string(), "e2e:p99<=60s", "{}", t.name);
            delete_slo(db, "batch").await.unwrap();
            assert!(matches!(get_slo(db, "batch").await, Err(DbError::NotFound(_))), "{}", t.name);
            assert!(matches!(delete_slo(db, "batch").await, Err(DbError::NotFound(_))), "{}", t.name);
            // A bad name is refused, nothing stored.
            let e = put_slo(db, &named("chat interactive", "e2e:p99<=40s")).await.unwrap_err();
            assert!(matches!(e, DbError::Slo { field: "name", .. }), "{}: {e}", t.name);
            let mut bad = named("nan", "e2e:p99<=40s");
            bad.slo.limits.push(bad.slo.limits[0]);
            assert!(matches!(put_slo(db, &bad).await, Err(DbError::Slo { field: "slo", .. })), "{}", t.name);
            assert_eq!(list_slos(db).await.unwrap().len(), 1, "{}", t.name);
        }
    }
}
