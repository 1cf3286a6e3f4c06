//! Users, sessions and API tokens as the CLI and the login page use them: validate,
//! hash, make one call into `app::db`. Secrets come in and (once, when created) go out
//! here; what is stored and compared is only their hash (see [`super::secret`]).

use super::{checker, secret};
use app::db::Db;
use app::db::{self, DbError};

/// How long a browser session lasts (not extended by use).
pub const SESSION_DAYS: i64 = 30;

/// What can go wrong managing users and tokens.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("user names are 1 to 64 characters without spaces, control or bidirectional control characters")]
    BadName,
    #[error("a user named {0:?} already exists")]
    NameTaken(String),
    #[error("passwords need at least {} characters", secret::MIN_PASSWORD_CHARS)]
    WeakPassword,
    #[error("passwords are at most {} bytes", secret::MAX_PASSWORD_BYTES)]
    LongPassword,
    #[error("there is no user named {0:?}")]
    NoSuchUser(String),
    #[error("there is no token with id {0:?}")]
    NoSuchToken(String),
    #[error("password hashing failed: {0}")]
    Hash(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

fn check_name(name: &str) -> Result<(), AuthError> {
    use app::domain::model::text::{is_bidi_control, MAX_USER_NAME_CHARS};
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_USER_NAME_CHARS
        && !name.chars().any(|c| c.is_whitespace() || c.is_control() || is_bidi_control(c));
    if ok {
        Ok(())
    } else {
        Err(AuthError::BadName)
    }
}

fn check_password(password: &str) -> Result<(), AuthError> {
    if password.chars().count() < secret::MIN_PASSWORD_CHARS {
        return Err(AuthError::WeakPassword);
    }
    if password.len() > secret::MAX_PASSWORD_BYTES {
        return Err(AuthError::LongPassword);
    }
    Ok(())
}

/// Adds a user with a password (stored as argon2id).
pub async fn add_user(pool: &Db, name: &str, password: &str) -> Result<(), AuthError> {
    check_name(name)?;
    check_password(password)?;
    let hash = secret::hash_password(password).map_err(AuthError::Hash)?;
    if !db::create_user(pool, name, &hash).await? {
        return Err(AuthError::NameTaken(name.to_owned()));
    }
    Ok(())
}

/// Sets a new password for a user and signs them out everywhere.
pub async fn set_password(pool: &Db, name: &str, password: &str) -> Result<(), AuthError> {
    check_password(password)?;
    let hash = secret::hash_password(password).map_err(AuthError::Hash)?;
    db::set_user_password(pool, name, &hash).await.map_err(|e| match e {
        DbError::NotFound(_) => AuthError::NoSuchUser(name.to_owned()),
        other => other.into(),
    })
}

/// Checks a name and password; on success starts a session and returns the cookie value
/// (the only copy of it: the database keeps its hash). `None`: wrong name or password.
pub async fn log_in(pool: &Db, name: &str, password: &str) -> Result<Option<String>, AuthError> {
    let stored = db::user_credentials(pool, name).await?;
    // An unknown name costs a full argon2 check too, so timing does not tell which names exist.
    let phc = stored.as_ref().map(|c| c.password_hash.clone()).unwrap_or_else(|| DUMMY_HASH.to_owned());
    let password = password.to_owned();
    let matches = checker::verify(password, phc).await;
    let Some(user) = stored.filter(|_| matches) else { return Ok(None) };
    let token = secret::new_session_token();
    db::create_session(pool, &user.name, &secret::stored_hash(&token), chrono::Duration::days(SESSION_DAYS)).await?;
    Ok(Some(token))
}

/// An argon2id hash of a random string nobody knows, checked when the name is unknown.
const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc";

/// Ends the session whose cookie value this is.
pub async fn log_out(pool: &Db, session_token: &str) -> Result<(), AuthError> {
    db::delete_session(pool, &secret::stored_hash(session_token)).await?;
    Ok(())
}

/// The user signed in with this cookie value, if the session is live.
pub async fn session_user(pool: &Db, session_token: &str) -> Result<Option<String>, AuthError> {
    if !secret::is_session_token(session_token) {
        return Ok(None);
    }
    Ok(db::session_user(pool, &secret::stored_hash(session_token)).await?)
}

/// The user an API token acts for, if it is live (records its use).
pub async fn token_user(pool: &Db, token: &str) -> Result<Option<String>, AuthError> {
    if !secret::is_api_token(token) {
        return Ok(None);
    }
    Ok(db::api_token_user(pool, &secret::stored_hash(token)).await?)
}

/// A token just created: the only time the secret itself is seen.
#[derive(Debug)]
pub struct NewToken {
    pub public_id: String,
    /// `plt_…`: show it once, never store or log it.
    pub token: String,
}

/// Creates an API token acting for `user`.
pub async fn create_token(pool: &Db, user: &str, label: &str) -> Result<NewToken, AuthError> {
    let token = secret::new_api_token();
    let public_id = secret::new_public_id();
    db::create_api_token(pool, user, &public_id, label, &secret::stored_hash(&token)).await.map_err(|e| match e {
        DbError::NotFound(_) => AuthError::NoSuchUser(user.to_owned()),
        other => other.into(),
    })?;
    Ok(NewToken { public_id, token })
}

/// Revokes a token by its public id; it stops working with the next request.
pub async fn revoke_token(pool: &Db, public_id: &str) -> Result<(), AuthError> {
    db::revoke_api_token(pool, public_id).await.map_err(|e| match e {
        DbError::NotFound(_) => AuthError::NoSuchToken(public_id.to_owned()),
        other => other.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh database of each backend (SQLite; PostgreSQL with `PLATEAU_TEST_PG`).
    async fn temp_dbs() -> Vec<db::testing::TestDb> {
        db::testing::backends().await
    }

    #[test]
    fn the_dummy_hash_is_a_valid_phc_string() {
        // Otherwise unknown names would fail fast and be told apart by timing.
        use argon2::password_hash::phc::PasswordHash;
        assert!(PasswordHash::new(DUMMY_HASH).is_ok());
        assert!(!secret::verify_password("", DUMMY_HASH));
    }

    #[test]
    fn names_and_passwords_are_checked() {
        assert!(check_name("ada").is_ok());
        assert!(check_name("ada.lovelace@example").is_ok());
        for bad in ["", "a b", "tab\t", &"x".repeat(65), "ada\u{202e}"] {
            assert!(matches!(check_name(bad), Err(AuthError::BadName)), "{bad:?}");
        }
        assert!(matches!(check_password("short"), Err(AuthError::WeakPassword)));
        assert!(check_password("long enough").is_ok());
    }

    #[tokio::test]
    async fn log_in_and_out() {
        for store in temp_dbs().await {
            let pool = store.db.clone();
            add_user(&pool, "ada", "correct horse").await.unwrap();
            assert!(matches!(add_user(&pool, "ada", "another one").await, Err(AuthError::NameTaken(_))));
            assert_eq!(log_in(&pool, "ada", "wrong horse").await.unwrap(), None);
            assert_eq!(log_in(&pool, "bob", "correct horse").await.unwrap(), None);
            let cookie = log_in(&pool, "ada", "correct horse").await.unwrap().unwrap();
            assert_eq!(session_user(&pool, &cookie).await.unwrap().as_deref(), Some("ada"));
            assert_eq!(session_user(&pool, "garbage").await.unwrap(), None);
            log_out(&pool, &cookie).await.unwrap();
            assert_eq!(session_user(&pool, &cookie).await.unwrap(), None);
            set_password(&pool, "ada", "battery staple").await.unwrap();
            assert!(log_in(&pool, "ada", "battery staple").await.unwrap().is_some());
            assert!(matches!(set_password(&pool, "bob", "battery staple").await, Err(AuthError::NoSuchUser(_))));
        }
    }

    #[tokio::test]
    async fn tokens_act_for_their_user_until_revoked() {
        for store in temp_dbs().await {
            let pool = store.db.clone();
            add_user(&pool, "ada", "correct horse").await.unwrap();
            assert!(matches!(create_token(&pool, "bob", "").await, Err(AuthError::NoSuchUser(_))));
            let t = create_token(&pool, "ada", "ci").await.unwrap();
            assert_eq!(token_user(&pool, &t.token).await.unwrap().as_deref(), Some("ada"));
            assert_eq!(token_user(&pool, "plt_nope").await.unwrap(), None);
            revoke_token(&pool, &t.public_id).await.unwrap();
            assert_eq!(token_user(&pool, &t.token).await.unwrap(), None);
            assert!(matches!(revoke_token(&pool, "nope").await, Err(AuthError::NoSuchToken(_))));
        }
    }
}
