//! Where password checks run: [`CHECKER_THREADS`] threads of their own, fed by a queue.
//!
//! An argon2id check fills about 19 MiB. Allocated afresh for every check (as
//! `argon2::PasswordVerifier` does), that memory was kept by the allocator rather than
//! returned (glibc raises its mmap threshold after the first free): forty sign-ins one
//! after another took the server from 18 MB to 176 MB, 120 parallel ones to over 2 GB
//! before checks were limited. So each checker thread keeps one block of memory and checks
//! every password in it ([`verify_in`]): two threads, two blocks, whatever the traffic.
//! How many checks may wait is the sign-in throttle's business (`super::throttle`).

use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::oneshot;

/// Threads that check passwords (the throttle lets as many checks run at once).
pub const CHECKER_THREADS: usize = super::throttle::PARALLEL_PASSWORD_CHECKS;

type Job = Box<dyn FnOnce() + Send>;

fn queue() -> Option<&'static Mutex<mpsc::Sender<Job>>> {
    static QUEUE: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let rx = Arc::new(Mutex::new(rx));
            for i in 0..CHECKER_THREADS {
                let rx = rx.clone();
                let started = std::thread::Builder::new().name(format!("plateau-password-{i}")).spawn(move || loop {
                    let job = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv();
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                });
                if let Err(e) = started {
                    tracing::error!(error = %e, "no password-check thread; checks run on the blocking pool");
                    return None;
                }
            }
            Some(Mutex::new(tx))
        })
        .as_ref()
}

/// Largest argon2 memory a stored hash may ask for, in 1 KiB blocks (64 MiB; Plateau's
/// own hashes use 19 MiB). A hash asking for more is no match rather than an allocation.
pub const MAX_BLOCKS: usize = 64 * 1024;

thread_local! {
    /// This thread's argon2 memory, reused by every check it runs.
    static BLOCKS: std::cell::RefCell<Vec<argon2::Block>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether `password` matches the PHC string `phc` (argon2id, argon2i or argon2d with the
/// parameters the string names), computed in this thread's reused memory. What
/// `argon2::PasswordVerifier` does, without a fresh allocation per check; the outputs are
/// compared in constant time (`Output`'s `PartialEq`).
pub fn verify_in(password: &str, phc: &str) -> bool {
    use argon2::password_hash::phc::Output;
    use argon2::{Algorithm, Argon2, Params, PasswordHash, Version};
    let Ok(hash) = PasswordHash::new(phc) else { return false };
    let (Some(salt), Some(expected)) = (&hash.salt, &hash.hash) else { return false };
    let Ok(algorithm) = Algorithm::try_from(hash.algorithm.as_str()) else { return false };
    let version = match hash.version.map(Version::try_from) {
        None => Version::default(),
        Some(Ok(v)) => v,
        Some(Err(_)) => return false,
    };
    let Ok(params) = Params::try_from(&hash) else { return false };
    let blocks_needed = params.block_count();
    if blocks_needed > MAX_BLOCKS {
        return false;
    }
    let argon = Argon2::new(algorithm, version, params);
    let mut out = vec![0u8; expected.len()];
    let hashed = BLOCKS.with_borrow_mut(|blocks| {
        if blocks.len() < blocks_needed {
            blocks.resize(blocks_needed, argon2::Block::default());
        }
        argon.hash_password_into_with_memory(password.as_bytes(), salt, &mut out, &mut blocks[..]).is_ok()
    });
    hashed && Output::new(&out).is_ok_and(|computed| &computed == expected)
}

/// Whether `password` matches the argon2id `phc` string, checked on a checker thread.
/// A check that cannot be run (no thread could be started, a panic) is a mismatch.
pub async fn verify(password: String, phc: String) -> bool {
    let check = move || verify_in(&password, &phc);
    let Some(queue) = queue() else {
        return tokio::task::spawn_blocking(check).await.unwrap_or(false);
    };
    let (tx, rx) = oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(check());
    });
    if queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).send(job).is_err() {
        return false;
    }
    rx.await.unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reused_memory_check_agrees_with_argon2s_own() {
        let phc = super::super::secret::hash_password("correct horse").unwrap();
        for guess in ["correct horse", "correct hors", "Correct horse", ""] {
            assert_eq!(verify_in(guess, &phc), super::super::secret::verify_password(guess, &phc), "{guess:?}");
        }
        // A second check in the same thread reuses the memory and still answers right.
        assert!(verify_in("correct horse", &phc));
        let other = super::super::secret::hash_password("other").unwrap();
        assert!(verify_in("other", &other) && !verify_in("correct horse", &other));
        // Hashes Plateau did not write: another variant, junk, absurd memory.
        let argon2i = "$argon2i$v=19$m=4096,t=1,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA";
        assert!(!verify_in("password", argon2i));
        assert!(!verify_in("x", "not a phc string"));
        assert!(!verify_in(
            "x",
            "$argon2id$v=19$m=4194304,t=1,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA"
        ));
    }

    #[tokio::test]
    async fn checks_run_on_the_checker_threads_and_answer_right() {
        let phc = super::super::secret::hash_password("correct horse").unwrap();
        let checks: Vec<_> = (0..6)
            .map(|i| {
                let guess = if i % 2 == 0 { "correct horse" } else { "wrong horse" };
                verify(guess.to_owned(), phc.clone())
            })
            .collect();
        let answers = futures_util::future::join_all(checks).await;
        assert_eq!(answers, [true, false, true, false, true, false]);
        assert!(!verify("x".into(), "not a phc string".into()).await);
    }
}
