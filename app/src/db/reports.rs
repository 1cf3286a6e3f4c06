//! Saved reports (a titled view under a short slug) and snapshots (frozen data under an id
//! derived from the content), migration 0003.

use super::backend::{Db, Q};
use super::error::DbError;
use crate::domain::model::text;
use crate::domain::view::state::SavedReport;

/// Stores a report under `slug`; false when the slug is taken.
pub async fn insert_report(db: &Db, r: &SavedReport) -> Result<bool, DbError> {
    text::check_report(&r.title, &r.description, &r.view_path)?;
    let done = Q::new(
        "INSERT INTO reports (slug, title, description, view_path, author, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
    )
    .bind(&r.slug)
    .bind(&r.title)
    .bind(&r.description)
    .bind(&r.view_path)
    .bind(&r.author)
    .stamp(r.created_at.clone())
    .execute(db)
    .await?;
    Ok(done == 1)
}

pub async fn get_report(db: &Db, slug: &str) -> Result<SavedReport, DbError> {
    let row = Q::new("SELECT slug, title, description, view_path, author, created_at FROM reports WHERE slug = $1")
        .bind(slug)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("report {slug:?}")))?;
    Ok(SavedReport {
        slug: row.try_get("slug")?,
        title: row.try_get("title")?,
        description: row.try_get("description")?,
        view_path: row.try_get("view_path")?,
        author: row.try_get("author")?,
        created_at: row.stamp("created_at")?,
    })
}

/// A frozen view: its data as JSON (`payload`), under an id derived from that content.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredSnapshot {
    pub id: String,
    pub title: String,
    pub view_path: String,
    pub payload: String,
    pub author: String,
    pub created_at: String,
}

/// Stores a snapshot; storing the same content twice keeps the first (same id, same data).
pub async fn insert_snapshot(db: &Db, s: &StoredSnapshot) -> Result<(), DbError> {
    text::check_snapshot_title(&s.title, &s.view_path)?;
    Q::new(
        "INSERT INTO snapshots (id, title, view_path, payload, author, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
    )
    .bind(&s.id)
    .bind(&s.title)
    .bind(&s.view_path)
    .bind(&s.payload)
    .bind(&s.author)
    .stamp(s.created_at.clone())
    .execute(db)
    .await?;
    Ok(())
}

pub async fn get_snapshot(db: &Db, id: &str) -> Result<StoredSnapshot, DbError> {
    let row = Q::new("SELECT id, title, view_path, payload, author, created_at FROM snapshots WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("snapshot {id:?}")))?;
    Ok(StoredSnapshot {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        view_path: row.try_get("view_path")?,
        payload: row.try_get("payload")?,
        author: row.try_get("author")?,
        created_at: row.stamp("created_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::backends;
    use super::super::*;
    use crate::domain::view::state::SavedReport;

    #[tokio::test]
    async fn reports_keep_their_slug_and_snapshots_never_change() {
        for t in backends().await {
            let pool = &t.db;
            // Times are real times: PostgreSQL stores them as timestamptz.
            let r = SavedReport {
                slug: "abcd2345".into(),
                title: "t".into(),
                description: String::new(),
                view_path: "/compare".into(),
                author: "ada".into(),
                created_at: "2026-11-29T15:43:10.123Z".into(),
            };
            assert!(insert_report(pool, &r).await.unwrap());
            assert!(!insert_report(pool, &r).await.unwrap(), "slug taken");
            assert_eq!(get_report(pool, "abcd2345").await.unwrap(), r);
            let snap = StoredSnapshot {
                id: "f00d".into(),
                title: "s".into(),
                view_path: "/runs/x".into(),
                payload: "{}".into(),
                author: "ada".into(),
                created_at: "2026-11-29T15:43:10.123Z".into(),
            };
            insert_snapshot(pool, &snap).await.unwrap();
            insert_snapshot(pool, &StoredSnapshot { payload: "{\"changed\":1}".into(), ..snap.clone() }).await.unwrap();
            assert_eq!(get_snapshot(pool, "f00d").await.unwrap().payload, "{}", "a snapshot never changes");
            assert_eq!(get_snapshot(pool, "f00d").await.unwrap(), snap);
            assert!(matches!(get_report(pool, "nope").await, Err(DbError::NotFound(_))));
        }
    }
}
