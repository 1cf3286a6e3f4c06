//! Set-up shared by the integration tests.

use std::path::PathBuf;

/// The shared fixture files: `PLATEAU_FIXTURES`, else `../shared/fixtures` beside the checkout.
pub fn fixtures() -> PathBuf {
    PathBuf::from(
        std::env::var("PLATEAU_FIXTURES")
            .unwrap_or_else(|_| format!("{}/../../shared/fixtures", env!("CARGO_MANIFEST_DIR"))),
    )
}
