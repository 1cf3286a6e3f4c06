//! The secrets of auth and how they are kept: random API tokens (`plt_` + 64 hex digits)
//! and session cookies (64 hex digits) from the OS random source, stored as their SHA-256;
//! passwords stored as argon2id PHC strings. Pure functions, no IO besides the OS RNG.
//!
//! Tokens carry 256 random bits, so an unsalted fast hash is enough to keep the database
//! useless to a thief; passwords are chosen by people, hence the slow, salted argon2id.

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::Argon2;
use rand::RngCore;

/// What every API token starts with, so it is recognisable in a config file or a leak scan.
pub const TOKEN_PREFIX: &str = "plt_";
/// Random bytes in an API token and in a session cookie.
const SECRET_BYTES: usize = 32;
/// Shortest password `plateau user add` accepts.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Longest password (and sign-in name) accepted, in bytes: hashing is linear in its length.
pub const MAX_PASSWORD_BYTES: usize = 1024;

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    crate::digest::hex(&buf)
}

/// A new API token: `plt_` and 64 lowercase hex digits.
pub fn new_api_token() -> String {
    format!("{TOKEN_PREFIX}{}", random_hex(SECRET_BYTES))
}

/// Whether `s` has the shape of an API token (checked before any database lookup).
pub fn is_api_token(s: &str) -> bool {
    s.strip_prefix(TOKEN_PREFIX).is_some_and(|rest| {
        rest.len() == SECRET_BYTES * 2 && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// A new session cookie value: 64 lowercase hex digits.
pub fn new_session_token() -> String {
    random_hex(SECRET_BYTES)
}

/// Whether `s` has the shape of a session cookie value.
pub fn is_session_token(s: &str) -> bool {
    s.len() == SECRET_BYTES * 2 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The public id of an API token (what `plateau token list` shows and `revoke` takes):
/// 8 characters `[a-z0-9]`, unrelated to the secret.
pub fn new_public_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut buf = [0u8; 8];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    // 256 is not a multiple of 36: the slight bias does not matter for an identifier.
    buf.iter().map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()])).collect()
}

/// What is stored for a token or a session cookie: its SHA-256, in hex.
pub fn stored_hash(secret: &str) -> String {
    crate::digest::sha256_hex(secret.as_bytes())
}

/// Hashes a password into an argon2id PHC string (random salt, default parameters).
pub fn hash_password(password: &str) -> Result<String, String> {
    Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|e| e.to_string())
}

/// Whether `password` matches a stored PHC string (false for a malformed one).
pub fn verify_password(password: &str, phc: &str) -> bool {
    Argon2::default().verify_password(password.as_bytes(), phc).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_their_format_and_differ() {
        let a = new_api_token();
        let b = new_api_token();
        assert_ne!(a, b);
        assert!(a.starts_with("plt_") && a.len() == 68, "{a}");
        assert!(is_api_token(&a));
        assert!(!is_api_token(&a[..67]), "too short");
        assert!(!is_api_token(&a.to_uppercase()), "prefix and digits are lower case");
        assert!(!is_api_token(&format!("xyz_{}", &a[4..])), "wrong prefix");
        assert!(!is_api_token(&format!("plt_{}", "g".repeat(64))), "not hex");
        let s = new_session_token();
        assert!(is_session_token(&s) && !is_api_token(&s));
        assert!(!is_session_token("abc"));
        let id = new_public_id();
        assert_eq!(id.len(), 8);
        assert!(id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    }

    #[test]
    fn stored_hashes_are_sha256_hex() {
        assert_eq!(stored_hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn passwords_hash_with_a_salt_and_verify() {
        let h1 = hash_password("correct horse").unwrap();
        let h2 = hash_password("correct horse").unwrap();
        assert!(h1.starts_with("$argon2id$"), "{h1}");
        assert_ne!(h1, h2, "salted");
        assert!(!h1.contains("correct horse"));
        assert!(verify_password("correct horse", &h1));
        assert!(!verify_password("correct horsE", &h1));
        assert!(!verify_password("correct horse", "not a hash"));
    }
}
