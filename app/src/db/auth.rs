//! Users, browser sessions and API tokens (migration 0004), for `server::auth`. These
//! functions take and compare hashes only: the caller hashes a password (argon2id) or a
//! token (SHA-256) before it gets here, so no secret ever reaches SQL or a log line.

use super::backend::now_rfc3339;
use super::backend::{begin_write, format_stamp, Db, Q};
use super::error::touched;
use super::error::DbError;

/// A user as logging in needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserCredentials {
    pub name: String,
    /// Argon2id PHC string (`$argon2id$v=19$...`), salt included.
    pub password_hash: String,
}

/// A user as `plateau user list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserSummary {
    pub name: String,
    pub created_at: String,
}

/// An API token as `plateau token list` shows it: never the token, nor its hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiTokenInfo {
    /// What `plateau token revoke` takes.
    pub public_id: String,
    pub label: String,
    /// The user the token acts as.
    pub user: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
    pub revoked_at: Option<String>,
}

/// Adds a user; `false` (and nothing changed) when the name is taken.
pub async fn create_user(db: &Db, name: &str, password_hash: &str) -> Result<bool, DbError> {
    let done =
        Q::new("INSERT INTO users (name, password_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING")
            .bind(name)
            .bind(password_hash)
            .stamp(now_rfc3339())
            .execute(db)
            .await?;
    Ok(done == 1)
}

/// Replaces a user's password hash and ends their sessions (`NotFound` for an unknown name).
pub async fn set_user_password(db: &Db, name: &str, password_hash: &str) -> Result<(), DbError> {
    let mut tx = begin_write(db).await?;
    let done = Q::new("UPDATE users SET password_hash = $1 WHERE name = $2")
        .bind(password_hash)
        .bind(name)
        .execute(&mut tx)
        .await?;
    touched(done, || format!("user {name:?}"))?;
    Q::new("DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE name = $1)")
        .bind(name)
        .execute(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The stored password hash of `name`, if such a user exists.
pub async fn user_credentials(db: &Db, name: &str) -> Result<Option<UserCredentials>, DbError> {
    let row = Q::new("SELECT name, password_hash FROM users WHERE name = $1").bind(name).fetch_optional(db).await?;
    row.map(|r| Ok(UserCredentials { name: r.try_get("name")?, password_hash: r.try_get("password_hash")? }))
        .transpose()
}

/// Every user, by name.
pub async fn list_users(db: &Db) -> Result<Vec<UserSummary>, DbError> {
    let rows = Q::new(db.pick(
        "SELECT name, created_at FROM users ORDER BY name",
        "SELECT name, created_at FROM users ORDER BY name COLLATE \"C\"",
    ))
    .fetch_all(db)
    .await?;
    rows.iter().map(|r| Ok(UserSummary { name: r.try_get("name")?, created_at: r.stamp("created_at")? })).collect()
}

/// Starts a session of `user` that ends after `lifetime`; returns when it expires.
/// Expired sessions of anyone are swept away on the way.
pub async fn create_session(
    db: &Db,
    user: &str,
    token_hash: &str,
    lifetime: chrono::Duration,
) -> Result<String, DbError> {
    let now = chrono::Utc::now();
    let expires_at = format_stamp(now + lifetime);
    let mut tx = begin_write(db).await?;
    Q::new("DELETE FROM sessions WHERE expires_at <= $1").stamp(format_stamp(now)).execute(&mut tx).await?;
    let done = Q::new(
        "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) \
         SELECT $1, id, $2, $3 FROM users WHERE name = $4",
    )
    .bind(token_hash)
    .stamp(format_stamp(now))
    .stamp(expires_at.clone())
    .bind(user)
    .execute(&mut tx)
    .await?;
    touched(done, || format!("user {user:?}"))?;
    tx.commit().await?;
    Ok(expires_at)
}

/// The user of an unexpired session, if there is one with this hash.
pub async fn session_user(db: &Db, token_hash: &str) -> Result<Option<String>, DbError> {
    Q::new(
        "SELECT users.name FROM sessions JOIN users ON users.id = sessions.user_id \
         WHERE sessions.token_hash = $1 AND sessions.expires_at > $2",
    )
    .bind(token_hash)
    .stamp(now_rfc3339())
    .optional_scalar(db)
    .await
}

/// Ends a session (logout); `false` when there was none with this hash.
pub async fn delete_session(db: &Db, token_hash: &str) -> Result<bool, DbError> {
    let done = Q::new("DELETE FROM sessions WHERE token_hash = $1").bind(token_hash).execute(db).await?;
    Ok(done > 0)
}

/// Stores a new API token of `user` (`NotFound` for an unknown user).
pub async fn create_api_token(
    db: &Db,
    user: &str,
    public_id: &str,
    label: &str,
    token_hash: &str,
) -> Result<(), DbError> {
    crate::domain::model::text::check_line("label", label, crate::domain::model::text::MAX_TOKEN_LABEL_CHARS)?;
    let done = Q::new(
        "INSERT INTO api_tokens (public_id, user_id, label, token_hash, created_at) \
         SELECT $1, id, $2, $3, $4 FROM users WHERE name = $5",
    )
    .bind(public_id)
    .bind(label)
    .bind(token_hash)
    .stamp(now_rfc3339())
    .bind(user)
    .execute(db)
    .await?;
    touched(done, || format!("user {user:?}"))?;
    Ok(())
}

/// The user of a live (not revoked) API token with this hash; records the use.
pub async fn api_token_user(db: &Db, token_hash: &str) -> Result<Option<String>, DbError> {
    let row = Q::new(
        "SELECT api_tokens.id, users.name FROM api_tokens JOIN users ON users.id = api_tokens.user_id \
         WHERE api_tokens.token_hash = $1 AND api_tokens.revoked_at IS NULL",
    )
    .bind(token_hash)
    .fetch_optional(db)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let id: i64 = row.try_get("id")?;
    Q::new("UPDATE api_tokens SET last_used_at = $1 WHERE id = $2").stamp(now_rfc3339()).bind(id).execute(db).await?;
    Ok(Some(row.try_get("name")?))
}

/// Every API token, oldest first.
pub async fn list_api_tokens(db: &Db) -> Result<Vec<ApiTokenInfo>, DbError> {
    let rows = Q::new(
        "SELECT api_tokens.public_id, api_tokens.label, users.name, api_tokens.created_at, \
                api_tokens.last_used_at, api_tokens.revoked_at \
         FROM api_tokens JOIN users ON users.id = api_tokens.user_id ORDER BY api_tokens.id",
    )
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ApiTokenInfo {
                public_id: r.try_get("public_id")?,
                label: r.try_get("label")?,
                user: r.try_get("name")?,
                created_at: r.stamp("created_at")?,
                last_used_at: r.opt_stamp("last_used_at")?,
                revoked_at: r.opt_stamp("revoked_at")?,
            })
        })
        .collect()
}

/// Revokes a token by its public id (`NotFound` if there is none); revoking twice keeps
/// the first time.
pub async fn revoke_api_token(db: &Db, public_id: &str) -> Result<(), DbError> {
    let done = Q::new("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE public_id = $2")
        .stamp(now_rfc3339())
        .bind(public_id)
        .execute(db)
        .await?;
    touched(done, || format!("token {public_id:?}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::backend::Q;
    use super::super::testing::backends;
    use super::*;

    #[tokio::test]
    async fn users_are_unique_and_their_password_can_change() {
        for t in backends().await {
            let pool = &t.db;
            assert!(create_user(pool, "ada", "$argon2id$one").await.unwrap());
            assert!(!create_user(pool, "ada", "$argon2id$two").await.unwrap(), "name taken");
            let creds = user_credentials(pool, "ada").await.unwrap().unwrap();
            assert_eq!(creds.password_hash, "$argon2id$one");
            assert_eq!(user_credentials(pool, "bob").await.unwrap(), None);
            create_session(pool, "ada", "h1", chrono::Duration::days(1)).await.unwrap();
            set_user_password(pool, "ada", "$argon2id$three").await.unwrap();
            assert_eq!(user_credentials(pool, "ada").await.unwrap().unwrap().password_hash, "$argon2id$three");
            assert_eq!(session_user(pool, "h1").await.unwrap(), None, "a new password ends the sessions");
            assert!(matches!(set_user_password(pool, "bob", "x").await, Err(DbError::NotFound(_))));
            assert_eq!(list_users(pool).await.unwrap().iter().map(|u| u.name.as_str()).collect::<Vec<_>>(), ["ada"]);
        }
    }

    #[tokio::test]
    async fn sessions_expire_and_end() {
        for t in backends().await {
            let pool = &t.db;
            create_user(pool, "ada", "x").await.unwrap();
            create_session(pool, "ada", "live", chrono::Duration::days(1)).await.unwrap();
            create_session(pool, "ada", "old", chrono::Duration::seconds(-1)).await.unwrap();
            assert_eq!(session_user(pool, "live").await.unwrap().as_deref(), Some("ada"));
            assert_eq!(session_user(pool, "old").await.unwrap(), None, "expired");
            assert_eq!(session_user(pool, "nope").await.unwrap(), None);
            assert!(matches!(
                create_session(pool, "bob", "h", chrono::Duration::days(1)).await,
                Err(DbError::NotFound(_))
            ));
            create_session(pool, "ada", "next", chrono::Duration::days(1)).await.unwrap();
            let hashes: Vec<String> = Q::new(pool.pick(
                "SELECT token_hash FROM sessions ORDER BY token_hash",
                "SELECT token_hash FROM sessions ORDER BY token_hash COLLATE \"C\"",
            ))
            .scalars(pool)
            .await
            .unwrap();
            assert_eq!(hashes, ["live", "next"], "the expired one was swept when the next session started");
            assert!(delete_session(pool, "live").await.unwrap());
            assert!(!delete_session(pool, "live").await.unwrap());
            assert_eq!(session_user(pool, "live").await.unwrap(), None);
        }
    }

    #[tokio::test]
    async fn tokens_work_until_revoked_and_record_their_use() {
        for t in backends().await {
            let pool = &t.db;
            create_user(pool, "ada", "x").await.unwrap();
            create_api_token(pool, "ada", "t1", "ci", "hash1").await.unwrap();
            assert!(matches!(create_api_token(pool, "bob", "t2", "", "hash2").await, Err(DbError::NotFound(_))));
            assert_eq!(list_api_tokens(pool).await.unwrap()[0].last_used_at, None);
            assert_eq!(api_token_user(pool, "hash1").await.unwrap().as_deref(), Some("ada"));
            assert_eq!(api_token_user(pool, "other").await.unwrap(), None);
            let listed = list_api_tokens(pool).await.unwrap();
            assert_eq!(listed.len(), 1);
            assert_eq!(
                (listed[0].public_id.as_str(), listed[0].label.as_str(), listed[0].user.as_str()),
                ("t1", "ci", "ada")
            );
            assert!(listed[0].last_used_at.is_some());
            revoke_api_token(pool, "t1").await.unwrap();
            assert_eq!(api_token_user(pool, "hash1").await.unwrap(), None);
            let first = list_api_tokens(pool).await.unwrap()[0].revoked_at.clone();
            assert!(first.is_some());
            revoke_api_token(pool, "t1").await.unwrap();
            assert_eq!(list_api_tokens(pool).await.unwrap()[0].revoked_at, first, "first revocation kept");
            assert!(matches!(revoke_api_token(pool, "zz").await, Err(DbError::NotFound(_))));
        }
    }
}
