//! Defaults and their overrides. Every default can be changed by a flag or an
//! environment variable (flags win), so the binary runs anywhere with no config file.

use std::path::PathBuf;

/// Where the database lives unless `--db` / `PLATEAU_DB` says otherwise:
/// `$XDG_DATA_HOME/plateau/plateau.db`, else `~/.local/share/plateau/plateau.db`,
/// else `./plateau.db`. The directory is created on first run.
pub fn default_db_path() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    match base {
        Some(dir) => dir.join("plateau").join("plateau.db"),
        None => PathBuf::from("plateau.db"),
    }
}
