//! `plateau db copy`: every table of one database into another (SQLite ⇄ PostgreSQL, or
//! the same kind), all or nothing. The target must be empty (freshly migrated); the rows
//! are written in one transaction, then each table's row count and a SHA-256 over its
//! rows in key order are compared on both sides before the transaction commits: a
//! mismatch anywhere rolls everything back.

use super::backend::{begin_write, Arg, Backend, Db, DbRow, Exec, Tx, Q};
use super::error::DbError;
use sha2::{Digest, Sha256};

/// The type of a column, so each backend binds and reads its own.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    Real,
    Text,
    Bool,
    Bytes,
    Stamp,
}

use Kind::{Bool, Bytes, Int, Real, Stamp, Text};

/// A table: name, the columns that order its rows (its key), whether `id` is an identity
/// column (PostgreSQL's sequence is moved past the copied ids), its columns.
struct Table {
    name: &'static str,
    order: &'static str,
    identity: bool,
    columns: &'static [(&'static str, Kind)],
}

/// Every table, parents before children. A new migration's table or column goes here too
/// (`every_table_is_copied` fails otherwise). Not SQLite's `runs_search` (migration 0009):
/// an index kept by triggers, which fill it on the target as the rows arrive.
const TABLES: &[Table] = &[
    Table {
        name: "runs",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("public_id", Text),
            ("name", Text),
            ("created_at", Stamp),
            ("status", Text),
            ("source_format", Text),
            ("source_file_name", Text),
            ("model", Text),
            ("engine", Text),
            ("engine_version", Text),
            ("gpu_type", Text),
            ("gpu_count", Int),
            ("endpoint_kind", Text),
            ("max_tokens", Int),
            ("prompt_tokens", Int),
            ("notes", Text),
            ("definitions_json", Text),
            ("heartbeat_at", Stamp),
            ("cancel_requested_at", Stamp),
            ("level_count", Int),
            ("peak_tok_s", Real),
        ],
    },
    Table { name: "run_tags", order: "run_id, tag", identity: false, columns: &[("run_id", Int), ("tag", Text)] },
    Table {
        name: "points",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("run_id", Int),
            ("seq", Int),
            ("load_kind", Text),
            ("load_value", Real),
            ("requests_ok", Int),
            ("requests_failed", Int),
            ("wall_s", Real),
            ("output_tok_s", Real),
            ("latency_avg_ms", Real),
            ("latency_p50_ms", Real),
            ("latency_p90_ms", Real),
            ("latency_p99_ms", Real),
            ("ttft_avg_ms", Real),
            ("ttft_p50_ms", Real),
            ("ttft_p99_ms", Real),
            ("itl_avg_ms", Real),
            ("itl_p50_ms", Real),
            ("itl_p99_ms", Real),
            ("output_tokens_per_request", Real),
            ("truncated", Bool),
            ("raw_json", Text),
            ("over_capacity", Bool),
            ("failures_json", Text),
        ],
    },
    Table {
        name: "point_measures",
        order: "point_id, metric, stat",
        identity: false,
        columns: &[("point_id", Int), ("metric", Text), ("stat", Text), ("value", Real)],
    },
    Table {
        name: "point_trials",
        order: "point_id, trial",
        identity: false,
        columns: &[
            ("point_id", Int),
            ("trial", Int),
            ("requests_ok", Int),
            ("requests_failed", Int),
            ("wall_s", Real),
            ("measures_json", Text),
            ("warmup", Bool),
        ],
    },
    Table {
        name: "run_sources",
        order: "run_id, seq",
        identity: false,
        columns: &[("run_id", Int), ("seq", Int), ("file_name", Text), ("format", Text), ("content", Bytes)],
    },
    Table {
        name: "requests",
        order: "point_id, seq",
        identity: false,
        columns: &[
            ("point_id", Int),
            ("seq", Int),
            ("ok", Bool),
            ("ttft_ms", Real),
            ("e2e_ms", Real),
            ("tpot_ms", Real),
            ("input_tokens", Real),
            ("output_tokens", Real),
            ("error", Text),
            ("turn", Int),
            ("cached_tokens", Real),
        ],
    },
    Table {
        name: "level_telemetry",
        order: "point_id",
        identity: false,
        columns: &[
            ("point_id", Int),
            ("engine", Text),
            ("source", Text),
            ("interval_ms", Real),
            ("window_s", Real),
            ("scrapes_ok", Int),
            ("scrapes_failed", Int),
            ("series_dropped", Int),
        ],
    },
    Table {
        name: "level_series",
        order: "point_id, seq",
        identity: false,
        columns: &[
            ("point_id", Int),
            ("seq", Int),
            ("name", Text),
            ("source_name", Text),
            ("kind", Text),
            ("labels_json", Text),
            ("data_json", Text),
        ],
    },
    Table {
        name: "annotations",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("run_id", Int),
            ("anchor", Text),
            ("load_kind", Text),
            ("load_from", Real),
            ("load_to", Real),
            ("compare_runs", Text),
            ("kind", Text),
            ("effect", Text),
            ("body", Text),
            ("author", Text),
            ("created_at", Stamp),
            ("updated_at", Stamp),
            ("superseded_by", Text),
            ("proposal_key", Text),
            ("new_baseline", Bool),
        ],
    },
    Table {
        name: "annotation_revisions",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("annotation_id", Int),
            ("body", Text),
            ("kind", Text),
            ("effect", Text),
            ("author", Text),
            ("replaced_at", Stamp),
        ],
    },
    Table {
        name: "run_audit",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("at", Stamp),
            ("who", Text),
            ("action", Text),
            ("run_public_id", Text),
            ("run_name", Text),
            ("detail", Text),
        ],
    },
    Table {
        name: "dismissed_proposals",
        order: "proposal_key",
        identity: false,
        columns: &[("proposal_key", Text), ("author", Text), ("dismissed_at", Stamp)],
    },
    Table {
        name: "alert_deliveries",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("run_id", Int),
            ("alert_key", Text),
            ("endpoint", Text),
            ("summary", Text),
            ("status", Text),
            ("attempts", Int),
            ("last_error", Text),
            ("created_at", Stamp),
            ("updated_at", Stamp),
        ],
    },
    Table {
        name: "alert_acks",
        order: "alert_key",
        identity: false,
        columns: &[
            ("alert_key", Text),
            ("run_id", Int),
            ("author", Text),
            ("reason", Text),
            ("acknowledged_at", Stamp),
        ],
    },
    Table {
        name: "reports",
        order: "slug",
        identity: false,
        columns: &[
            ("slug", Text),
            ("title", Text),
            ("description", Text),
            ("view_path", Text),
            ("author", Text),
            ("created_at", Stamp),
        ],
    },
    Table {
        name: "snapshots",
        order: "id",
        identity: false,
        columns: &[
            ("id", Text),
            ("title", Text),
            ("view_path", Text),
            ("payload", Text),
            ("author", Text),
            ("created_at", Stamp),
        ],
    },
    Table {
        name: "slos",
        order: "name",
        identity: false,
        columns: &[("name", Text), ("text", Text), ("author", Text), ("created_at", Stamp)],
    },
    Table {
        name: "demands",
        order: "name",
        identity: false,
        columns: &[("name", Text), ("text", Text), ("author", Text), ("created_at", Stamp)],
    },
    Table {
        name: "experiments",
        order: "id",
        identity: true,
        columns: &[("id", Int), ("public_id", Text), ("name", Text), ("created_at", Stamp)],
    },
    Table {
        name: "experiment_runs",
        order: "experiment_id, run_id",
        identity: false,
        columns: &[("experiment_id", Int), ("run_id", Int), ("position", Int)],
    },
    Table {
        name: "gpu_prices",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("gpu_type", Text),
            ("gpu_key", Text),
            ("usd_per_gpu_hour", Real),
            ("set_by", Text),
            ("set_at", Stamp),
        ],
    },
    Table {
        name: "gpu_specs",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("name", Text),
            ("name_key", Text),
            ("spec", Text),
            ("set_by", Text),
            ("set_at", Stamp),
        ],
    },
    Table {
        name: "model_facts",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("model", Text),
            ("model_key", Text),
            ("facts", Text),
            ("set_by", Text),
            ("set_at", Stamp),
        ],
    },
    Table {
        name: "run_prices",
        order: "id",
        identity: true,
        columns: &[("id", Int), ("run_id", Int), ("usd_per_hour", Real), ("set_by", Text), ("set_at", Stamp)],
    },
    Table {
        name: "users",
        order: "id",
        identity: true,
        columns: &[("id", Int), ("name", Text), ("password_hash", Text), ("created_at", Stamp)],
    },
    Table {
        name: "sessions",
        order: "token_hash",
        identity: false,
        columns: &[("token_hash", Text), ("user_id", Int), ("created_at", Stamp), ("expires_at", Stamp)],
    },
    Table {
        name: "api_tokens",
        order: "id",
        identity: true,
        columns: &[
            ("id", Int),
            ("public_id", Text),
            ("user_id", Int),
            ("label", Text),
            ("token_hash", Text),
            ("created_at", Stamp),
            ("last_used_at", Stamp),
            ("revoked_at", Stamp),
        ],
    },
    Table {
        name: "login_attempts",
        order: "id",
        identity: true,
        columns: &[("id", Int), ("name_key", Text), ("started_at", Stamp)],
    },
];

/// What was copied: per table, its rows and the checksum both sides agree on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopiedTable {
    pub table: &'static str,
    pub rows: u64,
    /// SHA-256 (hex) over the table's rows in key order, the same on both sides.
    pub sha256: String,
}

/// One value as read, before it is bound on the other side.
fn read(row: &DbRow, col: &str, kind: Kind) -> Result<Arg, DbError> {
    Ok(match kind {
        Int => Arg::Int(row.try_get(col)?),
        Real => Arg::Real(row.try_get(col)?),
        Text => Arg::Text(row.try_get(col)?),
        Bool => Arg::Bool(row.try_get(col)?),
        Bytes => Arg::Bytes(row.try_get(col)?),
        Stamp => Arg::Stamp(row.opt_stamp(col)?),
    })
}

/// Feeds one value to the checksum in a form both backends give alike: floats by their
/// bits (SQLite keeps no sign on a zero, so ±0 count as 0), times as RFC 3339 with
/// milliseconds, text and bytes with their length.
fn feed(hash: &mut Sha256, value: &Arg) {
    fn bytes(hash: &mut Sha256, tag: u8, b: Option<&[u8]>) {
        match b {
            None => hash.update([tag, 0]),
            Some(b) => {
                hash.update([tag, 1]);
                hash.update((b.len() as u64).to_le_bytes());
                hash.update(b);
            }
        }
    }
    match value {
        Arg::Int(v) => bytes(hash, b'i', v.map(i64::to_le_bytes).as_ref().map(|b| b.as_slice())),
        Arg::Real(v) => {
            let v = v.map(|x| if x == 0.0 { 0.0_f64 } else { x });
            bytes(hash, b'r', v.map(|x| x.to_bits().to_le_bytes()).as_ref().map(|b| b.as_slice()));
        }
        Arg::Text(v) => bytes(hash, b't', v.as_deref().map(str::as_bytes)),
        Arg::Bool(v) => hash.update([b'b', u8::from(*v)]),
        Arg::Bytes(v) => bytes(hash, b'x', Some(v)),
        Arg::Stamp(v) => {
            let canonical = v.as_deref().map(|s| match chrono::DateTime::parse_from_rfc3339(s) {
                Ok(t) => super::backend::format_stamp(t.with_timezone(&chrono::Utc)),
                Err(_) => s.to_owned(),
            });
            bytes(hash, b's', canonical.as_deref().map(str::as_bytes));
        }
    }
}

fn select(t: &Table) -> String {
    let cols: Vec<&str> = t.columns.iter().map(|(c, _)| *c).collect();
    format!("SELECT {} FROM {} ORDER BY {}", cols.join(", "), t.name, t.order)
}

/// Row count and checksum of table `t` as `on` sees it.
async fn summary<'a>(t: &Table, on: impl Into<Exec<'a>>) -> Result<(u64, String), DbError> {
    let rows = Q::new(select(t)).fetch_all(on).await?;
    let mut hash = Sha256::new();
    for row in &rows {
        for (col, kind) in t.columns {
            feed(&mut hash, &read(row, col, *kind)?);
        }
    }
    Ok((rows.len() as u64, hex(&hash.finalize())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Copies every table of `from` into `to`, which must hold no rows. One transaction on
/// `to`: after the rows are written, each table's count and checksum are read back inside
/// it and compared with `from`'s; the copy commits only when all agree.
pub async fn copy_database(from: &Db, to: &Db) -> Result<Vec<CopiedTable>, DbError> {
    for t in TABLES {
        let n: i64 = Q::new(format!("SELECT COUNT(*) FROM {}", t.name)).scalar(to).await?;
        if n > 0 {
            return Err(DbError::Copy(format!("the target is not empty: {} has {n} rows", t.name)));
        }
    }
    let mut tx = begin_write(to).await?;
    let mut copied = Vec::with_capacity(TABLES.len());
    for t in TABLES {
        copy_table(t, from, &mut tx).await?;
        let source = summary(t, from).await?;
        let target = summary(t, &mut tx).await?;
        if source != target {
            return Err(DbError::Copy(format!(
                "{} differs after the copy: {} rows {} in the source, {} rows {} in the target; nothing was written",
                t.name, source.0, source.1, target.0, target.1
            )));
        }
        if t.identity && to.backend() == Backend::Postgres {
            // Explicit ids leave the identity's sequence behind: move it past them.
            Q::new(format!(
                "SELECT setval(pg_get_serial_sequence('{0}', 'id'), COALESCE((SELECT MAX(id) FROM {0}), 0) + 1, false)",
                t.name
            ))
            .execute(&mut tx)
            .await?;
        }
        copied.push(CopiedTable { table: t.name, rows: source.0, sha256: source.1 });
    }
    // The search index's tags are written once per run, not by a trigger per tag (0014).
    super::runs::refresh_all_search_tags(to, &mut tx).await?;
    tx.commit().await?;
    Ok(copied)
}

async fn copy_table(t: &Table, from: &Db, tx: &mut Tx) -> Result<(), DbError> {
    let cols: Vec<&str> = t.columns.iter().map(|(c, _)| *c).collect();
    let marks: Vec<String> = (1..=cols.len()).map(|i| format!("${i}")).collect();
    let insert = format!("INSERT INTO {} ({}) VALUES ({})", t.name, cols.join(", "), marks.join(", "));
    for row in Q::new(select(t)).fetch_all(from).await? {
        let mut q = Q::new(insert.clone());
        for (col, kind) in t.columns {
            q = q.bind(read(&row, col, *kind)?);
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{backends, count, sample};
    use super::super::*;
    use super::TABLES;
    use crate::domain::RunId;

    /// Every table and column of the schema is in `TABLES` (on SQLite: PRAGMA).
    #[tokio::test]
    async fn every_table_is_copied() {
        let t = &backends().await[0];
        let pool = t.db.sqlite().unwrap();
        let tables: Vec<String> = sqlx::query_scalar(
            // `runs_search` (the text search's index and its shadow tables) is derived: the
            // target's trigger fills it as the runs arrive, the copy adds their tags.
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'
               AND name NOT LIKE 'runs_search%'",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        for table in &tables {
            let spec = TABLES.iter().find(|s| s.name == table).unwrap_or_else(|| panic!("{table} is not copied"));
            let cols: Vec<String> = sqlx::query_scalar(&format!("SELECT name FROM pragma_table_info('{table}')"))
                .fetch_all(pool)
                .await
                .unwrap();
            let mut have: Vec<&str> = spec.columns.iter().map(|(c, _)| *c).collect();
            let mut want: Vec<&str> = cols.iter().map(String::as_str).collect();
            have.sort_unstable();
            want.sort_unstable();
            assert_eq!(have, want, "{table}");
        }
        assert_eq!(tables.len(), TABLES.len());
    }

    async fn fill(db: &Db) -> RunId {
        let id = insert_run(db, &sample()).await.unwrap();
        let input = crate::domain::model::annotations::AnnotationInput {
            anchor: crate::domain::model::annotations::Anchor::Run,
            kind: crate::domain::model::annotations::AnnotationKind::Note,
            effect: crate::domain::model::annotations::Effect::None,
            body: "first".into(),
            superseded_by: None,
            proposal_key: None,
            new_baseline: false,
        };
        let a = insert_annotation(db, &id, &input, "ada").await.unwrap();
        update_annotation(
            db,
            a,
            &crate::domain::model::annotations::AnnotationInput { body: "second".into(), ..input },
            "bob",
        )
        .await
        .unwrap();
        dismiss_proposal(db, "k/1", "ada").await.unwrap();
        create_user(db, "ada", "$argon2id$x").await.unwrap();
        create_session(db, "ada", "h1", chrono::Duration::days(1)).await.unwrap();
        create_api_token(db, "ada", "t1", "ci", "hash1").await.unwrap();
        take_login_slot(db, "bob", chrono::Utc::now(), std::time::Duration::from_secs(900), 5).await.unwrap();
        id
    }

    #[tokio::test]
    async fn a_copy_is_whole_verified_and_refuses_a_full_target() {
        let sources = backends().await;
        let from = &sources[0];
        let id = fill(&from.db).await;
        // Into each backend available (SQLite always; PostgreSQL with PLATEAU_TEST_PG), and
        // from there back into a fresh SQLite file.
        let targets = backends().await;
        for to in &targets {
            let copied = copy_database(&from.db, &to.db).await.unwrap();
            assert_eq!(copied.len(), TABLES.len());
            assert_eq!(copied.iter().find(|c| c.table == "requests").unwrap().rows, 2, "{}", to.name);
            assert_eq!(get_run(&to.db, &id).await.unwrap(), get_run(&from.db, &id).await.unwrap(), "{}", to.name);
            assert_eq!(run_files(&to.db, &id).await.unwrap(), run_files(&from.db, &id).await.unwrap());
            assert_eq!(session_user(&to.db, "h1").await.unwrap().as_deref(), Some("ada"));
            assert_eq!(list_api_tokens(&to.db).await.unwrap(), list_api_tokens(&from.db).await.unwrap());
            let back = backends().await.remove(0);
            assert_eq!(copy_database(&to.db, &back.db).await.unwrap(), copied, "the copy of the copy, {}", to.name);
            // The search index's tags come with the copy (written once per run, no trigger).
            let by_tag = crate::domain::view::query::RunQuery {
                q: Some("stor".into()),
                ..crate::domain::view::query::RunQuery::new()
            };
            for db in [&to.db, &back.db] {
                let found = find_runs(db, &by_tag).await.unwrap();
                assert_eq!(found.runs.iter().map(|r| &r.id).collect::<Vec<_>>(), vec![&id], "{}", to.name);
            }
            // New rows after the copy get new ids (the identity sequences moved on).
            let second = insert_run(&to.db, &sample()).await.unwrap();
            assert_eq!(list_runs(&to.db).await.unwrap().len(), 2);
            assert!(get_run(&to.db, &second).await.is_ok());
            // A target with data is refused and left as it was.
            assert!(matches!(copy_database(&from.db, &to.db).await, Err(DbError::Copy(_))));
            assert_eq!(count(&to.db, "runs").await, 2);
        }
    }
}
