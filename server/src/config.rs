//! Defaults and their overrides: the built-in defaults, the config file of `plateau serve`
//! (`--config`, TOML), environment variables and flags — later ones win: flag, then
//! environment, then file, then default. And the reference of every option
//! (docs/configuration.md), generated from the command line's own definition so the two
//! cannot drift.
//!
//! The config file holds no settings of its own: each key is the long name of a
//! `plateau serve` option (`addr`, `allowed-host`, `max-upload-mib` …) or a global one
//! (`db`, `log-format`), and its value becomes that option's default before the command
//! line is read, checked by the option's own parser. So a key means exactly what its flag
//! means, and a new flag is a new key with nothing else to write.

use clap::error::ErrorKind;
use clap::{ArgAction, CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

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

/// A config file larger than this is refused: a real one is a few hundred bytes.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Options of the root command a config file may set (besides every `serve` option).
const GLOBAL_KEYS: [&str; 2] = ["db", "log-format"];

/// Parses a command line, reading `serve --config FILE` (or `PLATEAU_CONFIG`) first when
/// given. Errors are clap's, printed and exited on like any other usage error (status 2).
pub fn parse_args<I, T>(args: I) -> Result<crate::cli::args::Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cmd = crate::cli::args::Cli::command();
    let first = cmd.clone().try_get_matches_from(&args)?;
    let file = match first.subcommand() {
        Some(("serve", serve)) => serve.get_one::<PathBuf>("config").cloned(),
        _ => None,
    };
    let Some(file) = file else { return crate::cli::args::Cli::from_arg_matches(&first) };
    let cmd = with_file_defaults(cmd, &file)?;
    let matches = cmd.try_get_matches_from(&args)?;
    crate::cli::args::Cli::from_arg_matches(&matches)
}

/// The command with the config file's values as the defaults of their options.
pub fn with_file_defaults(cmd: clap::Command, file: &Path) -> Result<clap::Command, clap::Error> {
    let mut cmd = cmd;
    let fail = |cmd: &mut clap::Command, msg: String| cmd.error(ErrorKind::InvalidValue, msg);
    let text = match read_capped(file) {
        Ok(t) => t,
        Err(msg) => return Err(fail(&mut cmd, format!("config file {}: {msg}", file.display()))),
    };
    let entries = match file_entries(&cmd, &text) {
        Ok(e) => e,
        Err(msg) => return Err(fail(&mut cmd, format!("config file {}: {msg}", file.display()))),
    };
    if let Some(warning) = exposure(file, &cmd, &entries) {
        // Before logging is set up (the file may say how to log): straight to stderr.
        eprintln!("warning: {warning}");
    }
    for entry in entries {
        let values: Vec<clap::builder::OsStr> = entry.values.into_iter().map(Into::into).collect();
        let set = |a: clap::Arg| {
            if values.len() == 1 {
                a.default_value(values[0].clone())
            } else {
                a.default_values(values.clone())
            }
        };
        cmd = if entry.global {
            cmd.mut_arg(entry.id.as_str(), set)
        } else {
            cmd.mut_subcommand("serve", |sc| sc.mut_arg(entry.id.as_str(), set))
        };
    }
    Ok(cmd)
}

/// Whether the file lets other users of the machine change the server's settings (world-
/// writable), or read a secret it holds (world-readable, with a webhook, a token, an API
/// key or a database URL with a password): the warning, naming the fix.
fn exposure(file: &Path, cmd: &clap::Command, entries: &[Entry]) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).ok()?.permissions().mode() & 0o777;
        let serve = cmd.find_subcommand("serve")?;
        let secret = entries.iter().find(|e| {
            let of = if e.global { cmd } else { serve };
            let arg = of.get_arguments().find(|a| a.get_id() == e.id.as_str());
            arg.is_some_and(clap::Arg::is_hide_env_values_set)
                || (e.id == "db" && e.values.iter().any(|v| v.contains('@')))
        });
        let fix = format!("chmod 600 {}", file.display());
        if mode & 0o002 != 0 {
            return Some(format!(
                "config file {} is writable by every user of this machine (mode {mode:o}): anyone can change this server's settings; {fix}",
                file.display()
            ));
        }
        if mode & 0o004 != 0 {
            if let Some(e) = secret {
                let of = if e.global { cmd } else { serve };
                let key = of.get_arguments().find(|a| a.get_id() == e.id.as_str())?.get_long()?.to_owned();
                return Some(format!(
                    "config file {} is readable by every user of this machine (mode {mode:o}) and holds a secret (`{key}`); {fix}",
                    file.display()
                ));
            }
        }
        None
    }
    #[cfg(not(unix))]
    {
        let _ = (file, cmd, entries);
        None
    }
}

fn read_capped(file: &Path) -> Result<String, String> {
    use std::io::Read;
    let f = std::fs::File::open(file).map_err(|e| e.to_string())?;
    let mut text = String::new();
    f.take(MAX_CONFIG_BYTES + 1).read_to_string(&mut text).map_err(|e| e.to_string())?;
    if u64::try_from(text.len()).unwrap_or(u64::MAX) > MAX_CONFIG_BYTES {
        return Err(format!("larger than {} KiB", MAX_CONFIG_BYTES / 1024));
    }
    Ok(text)
}

/// One key of a config file: the option it sets and its values as the command line
/// would spell them.
#[derive(Debug)]
struct Entry {
    id: String,
    global: bool,
    values: Vec<String>,
}

/// The keys of a config file, each checked against its option: known, of a fitting type,
/// and accepted by the option's parser. The message names the line at fault.
fn file_entries(cmd: &clap::Command, text: &str) -> Result<Vec<Entry>, String> {
    let line = |at: usize| text.as_bytes().iter().take(at).filter(|&&b| b == b'\n').count() + 1;
    // The line's number and what is wrong, never the line itself: it may hold a password.
    let doc = toml::de::DeTable::parse(text).map_err(|e| match e.span() {
        Some(span) => format!("line {}: {}", line(span.start), e.message().trim_end()),
        None => e.message().trim_end().to_owned(),
    })?;
    let serve = cmd.find_subcommand("serve").ok_or("no serve command")?;
    let mut out = Vec::new();
    for (key, value) in doc.get_ref() {
        let name: &str = key.get_ref();
        let at = line(key.span().start);
        let (arg, global) = match file_key(cmd, serve, name) {
            Some(found) => found,
            None => {
                return Err(format!("line {at}: unknown key `{name}`; the keys are {}", key_list(serve)));
            }
        };
        let values = scalars(value.get_ref(), arg).map_err(|msg| format!("line {at}: `{name}` {msg}"))?;
        for v in &values {
            check_value(arg, v).map_err(|why| format!("line {at}: `{name}`: {why}"))?;
        }
        out.push(Entry { id: arg.get_id().to_string(), global, values });
    }
    Ok(out)
}

/// Whether the option's own parser takes `value`, as it would from the command line
/// (through a command of that option alone: its default, environment variable and
/// relations to other options play no part). The message is clap's, without the usage.
fn check_value(arg: &clap::Arg, value: &str) -> Result<(), String> {
    if matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse) {
        return Ok(()); // `scalars` took only a boolean
    }
    let Some(long) = arg.get_long() else { return Err("not an option".into()) };
    let mut probe = clap::Arg::new(arg.get_id().clone())
        .long(long.to_owned())
        .action(ArgAction::Set)
        .value_parser(arg.get_value_parser().clone());
    if let Some(names) = arg.get_value_names() {
        probe = probe.value_names(names.to_vec());
    }
    let cmd = clap::Command::new("plateau").no_binary_name(true).arg(probe);
    match cmd.try_get_matches_from([format!("--{long}"), value.to_owned()]) {
        Ok(_) => Ok(()),
        Err(e) => {
            let text = e.to_string();
            let why: Vec<&str> = text.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
            Err(why.join(" ").trim_start_matches("error: ").to_owned())
        }
    }
}

/// The option a key names: a `serve` option or a global one, by its long name.
fn file_key<'c>(root: &'c clap::Command, serve: &'c clap::Command, key: &str) -> Option<(&'c clap::Arg, bool)> {
    if GLOBAL_KEYS.contains(&key) {
        return root.get_arguments().find(|a| a.get_long() == Some(key)).map(|a| (a, true));
    }
    serve.get_arguments().find(|a| a.get_long() == Some(key) && settable(a)).map(|a| (a, false))
}

/// Options a file may set: not `--help`, `--version` or `--config` itself.
fn settable(a: &clap::Arg) -> bool {
    !help_or_version(a) && a.get_long() != Some("config") && !a.is_global_set()
}

fn key_list(serve: &clap::Command) -> String {
    let mut keys: Vec<&str> = GLOBAL_KEYS.to_vec();
    keys.extend(serve.get_arguments().filter(|a| settable(a)).filter_map(clap::Arg::get_long));
    keys.join(", ")
}

/// A TOML value as the option's command-line values: a string, number or boolean is one;
/// an array is several, for an option that takes several.
fn scalars(v: &toml::de::DeValue<'_>, arg: &clap::Arg) -> Result<Vec<String>, String> {
    use toml::de::DeValue;
    let flag = matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse);
    let one = |v: &DeValue<'_>| -> Result<String, String> {
        match v {
            DeValue::Boolean(b) if flag => Ok(b.to_string()),
            _ if flag => Err(format!("is a switch: true or false, not {}", v.type_str())),
            DeValue::String(s) => Ok(s.to_string()),
            DeValue::Integer(i) if i.radix() == 10 => Ok(i.as_str().to_owned()),
            DeValue::Integer(_) => Err("must be a decimal number".into()),
            DeValue::Float(f) => Ok(f.as_str().to_owned()),
            DeValue::Boolean(b) => Ok(b.to_string()),
            other => Err(format!("must be a string, number or boolean, not {}", other.type_str())),
        }
    };
    match v {
        DeValue::Array(items) => {
            let many = matches!(arg.get_action(), ArgAction::Append) || arg.get_value_delimiter().is_some();
            if !many {
                return Err("takes one value, not an array".into());
            }
            items.iter().map(|i| one(i.get_ref())).collect()
        }
        other => Ok(vec![one(other)?]),
    }
}

/// The reference of every command's options, as Markdown: what docs/configuration.md
/// holds between its `generated` markers.
pub fn reference_markdown() -> String {
    let root = crate::cli::args::Cli::command();
    let mut out = String::new();
    out.push_str("### Every command\n\nBefore or after the command: `plateau --db x.db import …` or `plateau import --db x.db …`.\n\n");
    out.push_str(&options_table(&root, true));
    for sc in root.get_subcommands().filter(|s| !s.is_hide_set()) {
        command_tables(sc, &format!("plateau {}", sc.get_name()), &mut out);
    }
    out
}

fn command_tables(cmd: &clap::Command, path: &str, out: &mut String) {
    let subs: Vec<&clap::Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    if subs.is_empty() || cmd.get_arguments().any(|a| !a.is_global_set() && documented(a)) {
        out.push_str(&format!("### `{path}`\n\n"));
        if let Some(about) = cmd.get_about() {
            out.push_str(&format!("{}\n\n", cell(&about.to_string())));
        }
        out.push_str(&options_table(cmd, false));
    }
    for sc in subs {
        command_tables(sc, &format!("{path} {}", sc.get_name()), out);
    }
}

fn documented(a: &clap::Arg) -> bool {
    !a.is_hide_set() && !help_or_version(a)
}

/// `--help` and `--version`: clap's own, neither a setting nor worth a row.
fn help_or_version(a: &clap::Arg) -> bool {
    matches!(a.get_action(), ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version)
}

fn options_table(cmd: &clap::Command, globals: bool) -> String {
    let args: Vec<&clap::Arg> = cmd.get_arguments().filter(|a| documented(a) && a.is_global_set() == globals).collect();
    if args.is_empty() {
        return "No options.\n\n".into();
    }
    let mut t = String::from("| option | environment | default | what it does |\n|---|---|---|---|\n");
    for a in args {
        let name = match a.get_long() {
            Some(long) => match a.get_value_names() {
                _ if matches!(a.get_action(), ArgAction::SetTrue | ArgAction::SetFalse) => format!("`--{long}`"),
                Some(names) => {
                    format!("`--{long} {}`", names.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "))
                }
                None => format!("`--{long} {}`", a.get_id().as_str().to_uppercase()),
            },
            None => format!(
                "`{}`",
                a.get_value_names().map_or_else(
                    || a.get_id().as_str().to_uppercase(),
                    |n| n.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ")
                )
            ),
        };
        let env = a.get_env().map_or_else(String::new, |e| format!("`{}`", e.to_string_lossy()));
        let default = if matches!(a.get_action(), ArgAction::SetTrue) {
            String::new()
        } else {
            let d: Vec<String> = a.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
            if d.is_empty() {
                String::new()
            } else {
                format!("`{}`", d.join(","))
            }
        };
        let mut what = a.get_long_help().or_else(|| a.get_help()).map_or_else(String::new, |h| cell(&h.to_string()));
        let values: Vec<String> = a
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| match v.get_help() {
                Some(h) => format!("`{}`: {}", v.get_name(), cell(&h.to_string())),
                None => format!("`{}`", v.get_name()),
            })
            .collect();
        if !values.is_empty() && !matches!(a.get_action(), ArgAction::SetTrue | ArgAction::SetFalse) {
            let sep = if what.is_empty() || what.ends_with('.') { " " } else { ". " };
            what.push_str(&format!("{sep}Values: {}.", values.join("; ")));
        }
        t.push_str(&format!("| {name} | {env} | {default} | {} |\n", what.trim()));
    }
    t.push('\n');
    t
}

/// Text fit for one table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "tests fail loudly")]
    use super::*;
    use std::io::Write;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    fn serve(args: &[&str]) -> Result<crate::cli::args::ServeArgs, clap::Error> {
        let mut all = vec!["plateau", "serve"];
        all.extend_from_slice(args);
        match parse_args(all)?.command {
            crate::cli::args::Command::Serve(a) => Ok(a),
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn a_file_sets_defaults_and_flags_still_win() {
        let f = file("addr = \"0.0.0.0:3100\"\nauth = \"on\"\nallowed-host = [\"plateau.example\", \"plateau\"]\nmax-upload-mib = 16\ndemo = true\ndb = \"team.db\"\n");
        let path = f.path().to_str().unwrap();
        let cli = parse_args(["plateau", "serve", "--config", path]).unwrap();
        assert_eq!(cli.db.as_deref(), Some(Path::new("team.db")));
        let crate::cli::args::Command::Serve(a) = cli.command else { panic!("serve") };
        assert_eq!(a.addr.to_string(), "0.0.0.0:3100");
        assert_eq!(a.auth, crate::cli::args::AuthSwitch::On);
        assert_eq!(a.allowed_hosts, ["plateau.example", "plateau"]);
        assert_eq!(a.max_upload_mib, 16);
        assert!(a.demo);
        let a = serve(&["--config", path, "--addr", "127.0.0.1:3200", "--max-upload-mib", "8"]).unwrap();
        assert_eq!(a.addr.to_string(), "127.0.0.1:3200", "a flag wins over the file");
        assert_eq!(a.max_upload_mib, 8);
        assert_eq!(a.auth, crate::cli::args::AuthSwitch::On, "what the flags leave alone comes from the file");
    }

    #[test]
    fn an_unknown_key_is_refused_with_its_line_and_the_known_keys() {
        let f = file("addr = \"127.0.0.1:3000\"\n\n# typo\nmax-upload = 5\n");
        let e = serve(&["--config", f.path().to_str().unwrap()]).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        assert!(msg.contains("line 4: unknown key `max-upload`"), "{msg}");
        assert!(msg.contains("max-upload-mib") && msg.contains("log-format"), "lists the keys: {msg}");
    }

    #[test]
    fn a_wrong_value_is_refused_by_the_options_own_parser() {
        for (text, want) in [
            ("addr = \"nowhere\"\n", "line 1: `addr`"),
            ("\nauth = \"maybe\"\n", "line 2: `auth`"),
            ("max-upload-mib = -3\n", "line 1: `max-upload-mib`"),
            ("demo = \"yes\"\n", "line 1: `demo` is a switch"),
            ("addr = [\"127.0.0.1:1\", \"127.0.0.1:2\"]\n", "takes one value"),
            ("[serve]\naddr = \"127.0.0.1:1\"\n", "unknown key `serve`"),
            ("config = \"other.toml\"\n", "unknown key `config`"),
            ("addr = \"127.0.0.1:1\n", "line 1"),
        ] {
            let f = file(text);
            let msg = serve(&["--config", f.path().to_str().unwrap()]).unwrap_err().to_string();
            assert!(msg.contains(want), "{text:?}: {msg}");
        }
    }

    #[test]
    fn a_missing_or_huge_file_is_refused() {
        let msg = serve(&["--config", "/nonexistent/plateau.toml"]).unwrap_err().to_string();
        assert!(msg.contains("/nonexistent/plateau.toml"), "{msg}");
        let big = file(&format!("# {}\n", "x".repeat(usize::try_from(MAX_CONFIG_BYTES).unwrap())));
        let msg = serve(&["--config", big.path().to_str().unwrap()]).unwrap_err().to_string();
        assert!(msg.contains("larger than 1024 KiB"), "{msg}");
    }

    #[test]
    fn every_serve_option_is_a_key() {
        let root = crate::cli::args::Cli::command();
        let serve = root.find_subcommand("serve").unwrap();
        let keys = key_list(serve);
        for a in serve.get_arguments().filter(|a| documented(a)) {
            let long = a.get_long().unwrap();
            assert!(long == "config" || keys.split(", ").any(|k| k == long), "--{long} has no key");
        }
    }

    /// A syntax error names its line and never prints it (it may hold a password); a file
    /// others may read that holds a secret, or that others may write, is warned about.
    #[test]
    fn errors_quote_no_line_and_exposed_files_are_warned_about() {
        let f = file("db = \"postgres://plateau:hunter2@db.internal/plateau\"\naddr = [oops\n");
        let e = serve(&["--config", f.path().to_str().unwrap()]).unwrap_err().to_string();
        assert!(!e.contains("hunter2"), "{e}");
        assert!(e.contains("line 2"), "{e}");
        use std::os::unix::fs::PermissionsExt;
        let cmd = crate::cli::args::Cli::command();
        let check = |text: &str, mode: u32| {
            let f = file(text);
            std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(mode)).unwrap();
            exposure(f.path(), &cmd, &file_entries(&cmd, text).unwrap())
        };
        let hook = "alert-webhook = \"http://127.0.0.1:9/hooks/secret\"\n";
        let w = check(hook, 0o644).unwrap();
        assert!(
            w.contains("readable by every user") && w.contains("`alert-webhook`") && w.contains("chmod 600"),
            "{w}"
        );
        assert!(!w.contains("hooks/secret"), "the warning names the key, not the value: {w}");
        assert_eq!(check(hook, 0o600), None);
        let w = check("db = \"postgres://u:pw@h/d\"\n", 0o604).unwrap();
        assert!(w.contains("`db`"), "{w}");
        assert_eq!(check("db = \"team.db\"\n", 0o644), None, "nothing secret, nothing to say");
        assert!(check("db = \"team.db\"\n", 0o666).unwrap().contains("writable by every user"));
    }

    /// The example config of the release package is a valid file.
    #[test]
    fn the_packaged_example_config_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("package/plateau.toml");
        let a = serve(&["--config", path.to_str().unwrap()]).unwrap();
        assert_eq!(a.auth, crate::cli::args::AuthSwitch::On);
    }

    /// docs/configuration.md holds the reference generated from the command line.
    /// `PLATEAU_BLESS=1 cargo test -p server --lib config` rewrites it.
    #[test]
    fn the_configuration_page_is_generated_from_the_command_line() {
        const BEGIN: &str = "<!-- BEGIN reference: generated from `plateau --help` by server/src/config.rs -->\n";
        const END: &str = "<!-- END reference -->";
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md");
        let page = std::fs::read_to_string(&path).unwrap();
        let (head, rest) = page.split_once(BEGIN).expect("the page has the BEGIN marker");
        let (now, tail) = rest.split_once(END).expect("the page has the END marker");
        let want = reference_markdown();
        if now != want {
            if std::env::var_os("PLATEAU_BLESS").is_some() {
                std::fs::write(&path, format!("{head}{BEGIN}{want}{END}{tail}")).unwrap();
            } else {
                panic!("docs/configuration.md is out of date: run `PLATEAU_BLESS=1 cargo test -p server --lib config`");
            }
        }
    }

    /// The example on docs/configuration.md is a file the server accepts.
    #[test]
    fn the_documented_example_is_valid() {
        let page =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md")).unwrap();
        let example = page.split("```toml\n").nth(1).and_then(|b| b.split("```").next()).expect("a toml block");
        let f = file(example);
        let a = serve(&["--config", f.path().to_str().unwrap()]).unwrap();
        assert_eq!(a.metrics, crate::observability::metrics::MetricsSwitch::On);
        assert!(!a.allowed_hosts.is_empty());
    }

    #[test]
    fn the_reference_names_every_option_with_its_environment_variable() {
        let md = reference_markdown();
        for want in [
            "| `--db DB` | `PLATEAU_DB`",
            "`--config CONFIG` | `PLATEAU_CONFIG`",
            "`--metrics METRICS` | `PLATEAU_METRICS` | `off`",
            "### `plateau sweep`",
            "### `plateau db copy`",
            "`--concurrency CONCURRENCY`",
        ] {
            assert!(md.contains(want), "{want} missing from:\n{md}");
        }
        assert!(!md.contains("--help"), "help is not an option worth a row");
    }
}
