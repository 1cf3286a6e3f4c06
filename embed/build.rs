//! Prepares what the `plateau` binary embeds (see `src/lib.rs`):
//!
//! - **The site**: from the built site folder (`target/site`, written by `.ci/build`; or
//!   `PLATEAU_SITE_DIR`), the content-hashed browser assets named in `pkg/build-id` with
//!   their `.br` / `.gz` copies, wasm-bindgen's `snippets`, `build-id` itself and
//!   `favicon.ico`, copied to
//!   `OUT_DIR/site` for `rust-embed`. The unhashed copies stay out (they serve development
//!   and `--site-root`). No built site embeds nothing, and the server says so at start.
//! - **The commit** it was built from: `PLATEAU_COMMIT`, else `git rev-parse`, else
//!   `unknown` (a source archive).
//!
//! Only paths that exist are watched: cargo reruns a build script whose watched file is
//! missing on every build, and this one would then relink every binary each time.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PLATEAU_SITE_DIR");
    println!("cargo:rerun-if-env-changed=PLATEAU_COMMIT");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let workspace = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("site");
    let site = std::env::var_os("PLATEAU_SITE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target").join("site"));
    if let Err(e) = copy_site(&site, &out) {
        println!("cargo:warning=embedding the site from {}: {e}", site.display());
    }
    println!("cargo:rustc-env=PLATEAU_COMMIT={}", commit(&workspace));
}

fn copy_site(site: &Path, out: &Path) -> std::io::Result<()> {
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    std::fs::create_dir_all(out.join("pkg"))?;
    // The folder is watched as a whole (cargo scans it): `.ci/build` replaces it, so its
    // files' times move on every build. It is created when missing so that there is
    // something to watch, dated in the past so that creating it is not itself a change.
    if !site.exists() {
        std::fs::create_dir_all(site)?;
        let _ = std::fs::File::open(site).and_then(|d| d.set_modified(std::time::UNIX_EPOCH));
    }
    println!("cargo:rerun-if-changed={}", site.display());
    let Ok(id) = std::fs::read_to_string(site.join("pkg").join("build-id")) else {
        return Ok(());
    };
    let id = id.trim();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Ok(());
    }
    for entry in std::fs::read_dir(site.join("pkg"))? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // `<id>.js`, `<id>_bg.wasm`, `<id>.css`, `<id>.echarts.js`, … and their .br/.gz.
        let hashed = name.strip_prefix(id).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('_'));
        if hashed || name == "build-id" {
            std::fs::copy(entry.path(), out.join("pkg").join(&*name))?;
        }
    }
    // wasm-bindgen's inline JS snippets, imported by the glue under their own paths.
    copy_tree(&site.join("pkg").join("snippets"), &out.join("pkg").join("snippets"))?;
    if site.join("favicon.ico").is_file() {
        std::fs::copy(site.join("favicon.ico"), out.join("favicon.ico"))?;
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    if !from.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

fn git(workspace: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(workspace).args(args).output().ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !s.is_empty()).then_some(s)
}

fn commit(workspace: &Path) -> String {
    if let Some(c) = std::env::var("PLATEAU_COMMIT").ok().filter(|c| !c.trim().is_empty()) {
        return c.trim().to_owned();
    }
    // Rebuild when HEAD moves: HEAD itself, the branch it names, and packed refs.
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            p
        } else {
            workspace.join(p)
        }
    };
    if let Some(dir) = git(workspace, &["rev-parse", "--git-dir"]).map(abs) {
        let common = git(workspace, &["rev-parse", "--git-common-dir"]).map(abs).unwrap_or_else(|| dir.clone());
        let mut watch = vec![dir.join("HEAD"), common.join("packed-refs")];
        if let Some(head) = git(workspace, &["symbolic-ref", "-q", "HEAD"]) {
            watch.push(common.join(head));
        }
        for p in watch.iter().filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    git(workspace, &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_owned())
}
