//! Named demands (migration 0023): the traffic a team plans for, stored under a name and
//! chosen on the plan page. A demand is stored as its canonical text and read back through
//! [`Demand::parse`], so a stored demand is always one the syntax accepts.

use super::backend::{Db, Q};
use super::error::DbError;
use super::slos::{delete_named, room_for, NamedTable};
use crate::domain::analysis::plan::demand::check_name;
use crate::domain::analysis::plan::{Demand, DemandError, NamedDemand};

/// At most this many named demands are listed (and stored).
pub const MAX_NAMED_DEMANDS: i64 = 200;

/// Stores (or replaces) the demand `name`. Refused: a bad name, a new name when
/// [`MAX_NAMED_DEMANDS`] are stored.
pub async fn put_demand(db: &Db, named: &NamedDemand) -> Result<(), DbError> {
    check_name(&named.name).map_err(|e| DbError::Demand { field: "name", error: e })?;
    let text = Demand { name: None, ..named.demand.clone() }.spec();
    Demand::parse(&text).map_err(|e| DbError::Demand { field: "demand", error: e })?;
    if !room_for(db, NamedTable::Demands, &named.name, MAX_NAMED_DEMANDS).await? {
        return Err(DbError::Demand {
            field: "name",
            error: DemandError {
                part: named.name.clone(),
                problem: format!("at most {MAX_NAMED_DEMANDS} demands are stored; delete one first"),
            },
        });
    }
    Q::new(
        "INSERT INTO demands (name, text, author, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO UPDATE SET text = excluded.text, author = excluded.author,
         created_at = excluded.created_at",
    )
    .bind(&named.name)
    .bind(text)
    .bind(&named.author)
    .stamp(named.created_at.clone())
    .execute(db)
    .await?;
    Ok(())
}

/// Every named demand, by name.
pub async fn list_demands(db: &Db) -> Result<Vec<NamedDemand>, DbError> {
    let rows = Q::new("SELECT name, text, author, created_at FROM demands ORDER BY name LIMIT $1")
        .bind(MAX_NAMED_DEMANDS)
        .fetch_all(db)
        .await?;
    rows.iter()
        .map(|row| {
            let name: String = row.try_get("name")?;
            let text: String = row.try_get("text")?;
            let demand = Demand::parse(&text).map_err(|e| DbError::Corrupt(format!("demand {name:?}: {e}")))?;
            Ok(NamedDemand {
                demand: Demand { name: Some(name.clone()), ..demand },
                name,
                author: row.try_get("author")?,
                created_at: row.stamp("created_at")?,
            })
        })
        .collect()
}

/// The demand `name`.
pub async fn get_demand(db: &Db, name: &str) -> Result<NamedDemand, DbError> {
    list_demands(db)
        .await?
        .into_iter()
        .find(|n| n.name == name)
        .ok_or_else(|| DbError::NotFound(format!("demand {name:?}")))
}

/// Deletes the demand `name` (a plan whose address names it then says it is not found).
pub async fn delete_demand(db: &Db, name: &str) -> Result<(), DbError> {
    delete_named(db, NamedTable::Demands, name, || format!("demand {name:?}")).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::backends;

    fn named(name: &str, text: &str) -> NamedDemand {
        NamedDemand {
            name: name.into(),
            demand: Demand::parse(text).unwrap(),
            author: "ana".into(),
            created_at: "2026-12-02T10:00:00Z".into(),
        }
    }

    #[tokio::test]
    async fn named_demands_are_stored_replaced_listed_and_deleted() {
        for t in backends().await {
            let db = &t.db;
            put_demand(db, &named("chat-peak", "rate=12; prompt=1000; output=500")).await.unwrap();
            put_demand(db, &named("batch", "hourly=1,2,3")).await.unwrap();
            put_demand(db, &named("chat-peak", "rate=14; output=500")).await.unwrap();
            let all = list_demands(db).await.unwrap();
            assert_eq!(all.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), ["batch", "chat-peak"], "{}", t.name);
            let peak = get_demand(db, "chat-peak").await.unwrap();
            assert_eq!((peak.demand.rates_req_s.clone(), peak.demand.output_tokens), (vec![14.0], Some(500)));
            assert_eq!(peak.demand.name.as_deref(), Some("chat-peak"), "{}", t.name);
            assert_eq!(peak.created_at, "2026-12-02T10:00:00.000Z", "stored in one spelling: {}", t.name);
            let e = put_demand(db, &named("chat peak", "rate=1")).await.unwrap_err();
            assert!(matches!(e, DbError::Demand { field: "name", .. }), "{e}");
            delete_demand(db, "batch").await.unwrap();
            assert!(matches!(delete_demand(db, "batch").await, Err(DbError::NotFound(_))));
            assert_eq!(list_demands(db).await.unwrap().len(), 1, "{}", t.name);
        }
    }
}
