//! What the `plateau` binary carries from its build, so that one file is the whole app:
//! the built site (the content-hashed browser assets `.ci/build` makes, precompressed, and
//! the favicon; `build.rs` picks them) and the commit it was built from.

use std::borrow::Cow;

#[derive(rust_embed::RustEmbed)]
#[folder = "$OUT_DIR/site"]
struct Site;

/// The commit the binary was built from (12 hex digits), or `unknown`.
pub const COMMIT: &str = env!("PLATEAU_COMMIT");

/// `plateau --version`: the version and the commit, e.g. `0.1.0 (commit 1a2b3c4d5e6f)`.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("PLATEAU_COMMIT"), ")");

/// One embedded file: its bytes and their SHA-256.
pub struct File {
    pub data: Cow<'static, [u8]>,
    pub sha256: [u8; 32],
}

/// The embedded file at `path` (relative to the site folder: `pkg/build-id`, `favicon.ico`).
pub fn get(path: &str) -> Option<File> {
    Site::get(path).map(|f| File { sha256: f.metadata.sha256_hash(), data: f.data })
}

/// The embedded build's output name (`plateau-<12 hex>`), when a built site was embedded.
pub fn build_id() -> Option<String> {
    let f = Site::get("pkg/build-id")?;
    let id = std::str::from_utf8(&f.data).ok()?.trim().to_owned();
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_build_id_names_embedded_files_or_nothing_is_embedded() {
        match super::build_id() {
            // Every asset a page names is in the binary.
            Some(id) => {
                for suffix in [".js", "_bg.wasm", ".css", ".echarts.js", ".ui.js", ".charts.js"] {
                    let name = format!("pkg/{id}{suffix}");
                    assert!(super::get(&name).is_some_and(|f| !f.data.is_empty()), "{name} is not embedded");
                    assert!(super::get(&format!("{name}.br")).is_some(), "{name}.br is not embedded");
                }
                // wasm-bindgen's snippets, which the glue imports by path, are.
                let glue = String::from_utf8(super::get(&format!("pkg/{id}.js")).unwrap().data.into_owned()).unwrap();
                for import in glue.split("from './snippets/").skip(1) {
                    let path = import.split('\'').next().unwrap_or_default();
                    assert!(super::get(&format!("pkg/snippets/{path}")).is_some(), "snippet {path} is not embedded");
                }
                // The unhashed development copies are not.
                assert!(super::get("pkg/plateau_bg.wasm").is_none());
            }
            None => assert!(super::get("pkg/plateau_bg.wasm").is_none()),
        }
        assert!(!super::COMMIT.is_empty());
    }
}
