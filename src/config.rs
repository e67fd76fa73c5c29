//! The configuration file: `/etc/caseload/config.toml` for everyone, then the user's
//! `config.toml` (`~/.config/caseload/config.toml` on Linux), both optional, read with the
//! `toml` crate into one [`Config`]. A key set in the user's file wins over the system
//! file's. An unknown key or a bad value is an error naming the file, the line and the
//! known keys; a file holding a database password that others can read is refused, and so
//! is a file that anyone but its owner and root could change (see `trust`).
//! `assets/config.toml` is the commented example, every key with its default.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::store::location::{self, Location, Source};

/// The system-wide config file.
pub(crate) const SYSTEM_CONFIG: &str = "/etc/caseload/config.toml";

/// A config file is a few lines; anything bigger is the wrong file.
const MAX_BYTES: u64 = 1 << 20;

/// Every key a config file may hold, with what it takes (for error messages and docs).
pub const KEYS: &[(&str, &str)] = &[
    ("db", "a database file path or postgres:// URL"),
    ("notify", "bell, desktop, both or off"),
    ("theme", "auto, dark or light"),
    (
        "pg_pool",
        "transaction (PostgreSQL through a pooler in transaction mode) or direct",
    ),
];

/// How caseload reaches a PostgreSQL server (`pg_pool = ...`; `CASELOAD_PG_POOL` wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
pub struct PgPool(pub crate::store::postgres::Pooling);

impl TryFrom<String> for PgPool {
    type Error = String;

    fn try_from(s: String) -> Result<PgPool, String> {
        crate::store::postgres::Pooling::parse(&s).map(PgPool)
    }
}

/// How the TUI tells a user that work arrived in an empty view (`notify = ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
pub enum Notify {
    /// The terminal bell (the default).
    #[default]
    Bell,
    /// A desktop notification where the terminal offers one.
    Desktop,
    /// Bell and desktop notification.
    Both,
    /// Only the status line.
    Off,
}

impl Notify {}

impl TryFrom<String> for Notify {
    type Error = String;

    fn try_from(s: String) -> Result<Notify, String> {
        Ok(match s.as_str() {
            "bell" => Notify::Bell,
            "desktop" => Notify::Desktop,
            "both" => Notify::Both,
            "off" => Notify::Off,
            _ => {
                return Err(format!(
                    "notify = \"{s}\" is not one of \"bell\", \"desktop\", \"both\", \"off\""
                ));
            }
        })
    }
}

/// The TUI's colours (`theme = ...`): readable everywhere by default, or tuned for a dark
/// or a light terminal background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
pub enum Palette {
    /// Colours readable on dark and light backgrounds alike (the default).
    #[default]
    Any,
    /// More colours, for a dark background.
    Dark,
    /// Colours for a light background.
    Light,
}

impl Palette {}

impl TryFrom<String> for Palette {
    type Error = String;

    fn try_from(s: String) -> Result<Palette, String> {
        Ok(match s.as_str() {
            "auto" => Palette::Any,
            "dark" => Palette::Dark,
            "light" => Palette::Light,
            _ => {
                return Err(format!(
                    "theme = \"{s}\" is not one of \"auto\", \"dark\", \"light\""
                ));
            }
        })
    }
}

/// The settings from both config files, user over system, defaults for the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `db`: the database path or URL, and which file set it
    /// ([`Source::UserConfig`] or [`Source::SystemConfig`]).
    pub db: Option<(String, Source)>,
    /// `notify`: how to tell the user that work arrived (default `bell`).
    pub notify: Notify,
    /// `theme`: the TUI's colours (default `auto`).
    pub theme: Palette,
    /// `pg_pool`: direct (the default) or through a pooler in transaction mode.
    pub pg_pool: PgPool,
}

/// A config file that cannot be used: which file, which line (when known), why, and
/// the fix when it is a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
    /// The command that fixes it (`chmod go-w …`), where there is one.
    pub fix: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message)?,
            None => write!(f, "{}: {}", self.path.display(), self.message)?,
        }
        match &self.fix {
            Some(fix) => write!(f, "; run `{fix}`"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for ConfigError {}

/// One file's keys, each with where it stands in the file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    db: Option<Spanned<String>>,
    notify: Option<Spanned<Notify>>,
    theme: Option<Spanned<Palette>>,
    pg_pool: Option<Spanned<PgPool>>,
}

impl Config {
    /// Reads `/etc/caseload/config.toml`, then the user's config file.
    pub(crate) fn load() -> Result<Config, ConfigError> {
        Config::load_files(Path::new(SYSTEM_CONFIG), user_config_path().as_deref())
    }

    /// Reads the system file, then the user file (if any); a missing file is not an error.
    pub fn load_files(system: &Path, user: Option<&Path>) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        config.apply(system, Source::SystemConfig(system.to_path_buf()))?;
        if let Some(user) = user {
            config.apply(user, Source::UserConfig(user.to_path_buf()))?;
        }
        Ok(config)
    }

    /// As [`Config::load`], but a file that cannot be used is left out (its error
    /// returned beside the settings of the others): `caseload doctor` reports it rather
    /// than stop at it.
    pub(crate) fn load_leaving_out_bad_files() -> (Config, Vec<ConfigError>) {
        let mut config = Config::default();
        let mut bad = Vec::new();
        let user = user_config_path();
        let system = Path::new(SYSTEM_CONFIG);
        let files = [Some((system, Source::SystemConfig(system.to_path_buf())))]
            .into_iter()
            .chain([user
                .as_deref()
                .map(|u| (u, Source::UserConfig(u.to_path_buf())))]);
        for (path, source) in files.flatten() {
            if let Err(e) = config.apply(path, source) {
                bad.push(e);
            }
        }
        (config, bad)
    }

    /// Lays one file's keys over what is set so far.
    fn apply(&mut self, path: &Path, source: Source) -> Result<(), ConfigError> {
        let Some(file) = read_file(path)? else {
            return Ok(());
        };
        if let Some(db) = file.db {
            self.db = Some((db.into_inner(), source));
        }
        if let Some(notify) = file.notify {
            self.notify = notify.into_inner();
        }
        if let Some(theme) = file.theme {
            self.theme = theme.into_inner();
        }
        if let Some(pool) = file.pg_pool {
            self.pg_pool = pool.into_inner();
        }
        Ok(())
    }

    /// Where the database is: `--db`, else `CASELOAD_DB`, else `db` from the config files
    /// (user over system), else `<user data dir>/caseload.db`; and where that came from.
    pub fn resolve_db(
        &self,
        flag: Option<&str>,
        env: Option<&str>,
    ) -> Result<(Location, Source), String> {
        location::resolve(flag, env, self.db.clone())
    }
}

/// The user's config file, `<user config dir>/config.toml`.
pub(crate) fn user_config_path() -> Option<PathBuf> {
    location::project_dirs().map(|d| d.config_dir().join("config.toml"))
}

/// The config files there are (system, then user), each with its owner and mode
/// (`root:root 0644`) or why it cannot be used: `caseload doctor`'s config check.
pub(crate) fn examine_files() -> Vec<(PathBuf, Result<String, ConfigError>)> {
    let mut paths = vec![PathBuf::from(SYSTEM_CONFIG)];
    paths.extend(user_config_path());
    paths
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .map(|p| {
            let found = read_file(&p).map(|_| {
                std::fs::metadata(&p)
                    .map(|m| crate::store::fsfacts::describe_owner(&m))
                    .unwrap_or_default()
            });
            (p, found)
        })
        .collect()
}

/// Reads and checks one config file; `None` when it does not exist.
fn read_file(path: &Path) -> Result<Option<FileConfig>, ConfigError> {
    let err = |line: Option<usize>, message: String| ConfigError {
        path: path.to_path_buf(),
        line,
        message,
        fix: None,
    };
    // A FIFO or device would block or never end: only regular files are read.
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(err(None, "is not a regular file".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(None, format!("cannot read config: {e}"))),
    }
    let cannot = |e: std::io::Error| err(None, format!("cannot read config: {e}"));
    let file = std::fs::File::open(path).map_err(cannot)?;
    // The mode of the file we read, not of whatever the path names a moment later.
    let mode = file.metadata().map_err(cannot)?;
    // Whoever may change the file may point `db` at a database of their choosing.
    trust::check(path, &mode)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(err(
            None,
            "is larger than 1 MiB; is it the right file?".into(),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let line = line_of_bytes(e.as_bytes(), e.utf8_error().valid_up_to());
        err(Some(line), "is not valid UTF-8".into())
    })?;
    let parsed = parse(&text).map_err(|(line, m)| err(line, m))?;
    if let Some(db) = &parsed.db {
        let line = Some(line_of(&text, db.span().start));
        let value = db.get_ref();
        if value.trim().is_empty() {
            return Err(err(line, format!("db must not be empty; {}", known_keys())));
        }
        // A relative path would name a different file in every working directory.
        if let Location::File(p) = Location::parse(value)
            && !p.is_absolute()
        {
            return Err(err(
                line,
                format!(
                    "db = \"{value}\" is not an absolute path or a postgres:// URL; {}",
                    known_keys()
                ),
            ));
        }
        use std::os::unix::fs::PermissionsExt;
        if location::url_has_password(db.get_ref()) && mode.permissions().mode() & 0o077 != 0 {
            return Err(err(
                line,
                format!(
                    "holds a database password but others can read it; run `chmod 600 {}` \
                     or keep the password in ~/.pgpass",
                    path.display()
                ),
            ));
        }
    }
    Ok(Some(parsed))
}

/// Who may change a config file: only its owner and root, and its owner is root or the
/// user running caseload; the same for the directory holding it (which could replace it).
mod trust {
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use super::ConfigError;
    use crate::store::fsfacts;

    /// A file's or directory's owner, group and mode, as the rule reads them.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Facts {
        pub owner: u32,
        pub group: u32,
        pub mode: u32,
        /// The group is its owner's private group (nobody else in it).
        pub private_group: bool,
    }

    impl Facts {
        fn of(m: &std::fs::Metadata) -> Facts {
            Facts {
                owner: m.uid(),
                group: m.gid(),
                mode: m.mode() & 0o7777,
                private_group: m.mode() & 0o020 != 0 && fsfacts::is_private_group(m.gid(), m.uid()),
            }
        }
    }

    /// Who, besides `me` and root, could change it: `None` when nobody.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) enum Others {
        Everyone,
        Group,
        Owner,
    }

    /// The rule, on the facts alone.
    pub(super) fn others(f: &Facts, me: u32) -> Option<Others> {
        if f.mode & 0o002 != 0 {
            Some(Others::Everyone)
        } else if f.mode & 0o020 != 0 && !f.private_group {
            Some(Others::Group)
        } else if f.owner != 0 && f.owner != me {
            Some(Others::Owner)
        } else {
            None
        }
    }

    /// Refuses `path` (whose open file's metadata is `meta`) when someone other than its
    /// owner and root could change it or the directory it lies in, naming who and the fix.
    pub(super) fn check(path: &Path, meta: &std::fs::Metadata) -> Result<(), ConfigError> {
        let me = fsfacts::euid();
        refuse(path, path, &Facts::of(meta), me, "it")?;
        let mut dirs = vec![fsfacts::parent_dir(path)];
        if let Ok(real) = std::fs::canonicalize(path) {
            dirs.push(fsfacts::parent_dir(&real));
        }
        dirs.dedup();
        for dir in dirs {
            if let Ok(m) = std::fs::metadata(&dir) {
                let what = format!("its directory {}", dir.display());
                refuse(path, &dir, &Facts::of(&m), me, &what)?;
            }
        }
        Ok(())
    }

    fn refuse(
        path: &Path,
        which: &Path,
        f: &Facts,
        me: u32,
        what: &str,
    ) -> Result<(), ConfigError> {
        let Some(who) = others(f, me) else {
            return Ok(());
        };
        let shown = which.display();
        let (why, fix) = match who {
            Others::Everyone => (
                format!("{what} is writable by everyone (mode {:04o})", f.mode),
                format!("chmod o-w {shown}"),
            ),
            Others::Group => (
                format!(
                    "{what} is writable by group {} (mode {:04o})",
                    fsfacts::group_name(f.group),
                    f.mode
                ),
                format!("chmod g-w {shown}"),
            ),
            Others::Owner => (
                format!(
                    "{what} belongs to {}, who is neither you nor root",
                    fsfacts::user_name(f.owner)
                ),
                format!("sudo chown root {shown}"),
            ),
        };
        Err(ConfigError {
            path: path.to_path_buf(),
            line: None,
            message: format!(
                "{why}: whoever may change it could point caseload at a database of their \
                 choosing, so it is not used"
            ),
            fix: Some(fix),
        })
    }
}

/// Parses one file's text; an error carries the line (when known) and the message.
fn parse(text: &str) -> Result<FileConfig, (Option<usize>, String)> {
    toml::from_str::<FileConfig>(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let message = e.message().trim_end();
        let message = match message.strip_prefix("unknown field ") {
            Some(rest) => {
                let key = rest.split(", expected").next().unwrap_or(rest);
                format!("unknown key {key}")
            }
            // serde names the wrong type but not the key; the key opens its line.
            None if message.starts_with("invalid type") => {
                let key = line
                    .and_then(|l| text.lines().nth(l - 1))
                    .and_then(|l| l.split_once('='))
                    .map(|(k, _)| k.trim())
                    .filter(|k| KEYS.iter().any(|(known, _)| known == k));
                match key {
                    Some(k) => format!("{k}: {message}"),
                    None => message.to_string(),
                }
            }
            None => message.to_string(),
        };
        (line, format!("{message}; {}", known_keys()))
    })
}

/// "known keys: db (…), notify (…)".
fn known_keys() -> String {
    let keys: Vec<String> = KEYS
        .iter()
        .map(|(k, what)| format!("{k} ({what})"))
        .collect();
    format!("known keys: {}", keys.join(", "))
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    line_of_bytes(text.as_bytes(), offset)
}

fn line_of_bytes(bytes: &[u8], offset: usize) -> usize {
    let end = offset.min(bytes.len());
    bytes[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> FileConfig {
        parse(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"))
    }

    #[test]
    fn keys_and_comments_parse() {
        let c = parse_ok("# shared\ndb = \"/srv/q.db\" # the queue\nnotify = \"both\"\n");
        assert_eq!(c.db.unwrap().into_inner(), "/srv/q.db");
        assert_eq!(c.notify.unwrap().into_inner(), Notify::Both);
        let c = parse_ok("");
        assert!(c.db.is_none() && c.notify.is_none());
    }

    #[test]
    fn theme_takes_auto_dark_or_light() {
        assert_eq!(
            parse_ok("theme = \"light\"\n").theme.unwrap().into_inner(),
            Palette::Light
        );
        assert_eq!(
            parse_ok("theme = \"dark\"").theme.unwrap().into_inner(),
            Palette::Dark
        );
        assert_eq!(
            parse_ok("theme = \"auto\"").theme.unwrap().into_inner(),
            Palette::Any
        );
        let (line, m) = parse("db = \"/q.db\"\ntheme = \"solarized\"\n").unwrap_err();
        assert_eq!(line, Some(2), "{m}");
        assert!(
            m.contains("\"solarized\"") && m.contains("\"light\""),
            "{m}"
        );
    }

    #[test]
    fn unknown_key_names_line_and_known_keys() {
        let (line, m) = parse("db = \"/q.db\"\n\nnotfy = \"bell\"\n").unwrap_err();
        assert_eq!(line, Some(3));
        assert!(m.starts_with("unknown key `notfy`"), "{m}");
        assert!(
            m.contains("known keys: db (") && m.contains("notify ("),
            "{m}"
        );
    }

    #[test]
    fn bad_values_name_their_line() {
        let (line, m) = parse("\nnotify = \"loud\"\n").unwrap_err();
        assert_eq!(line, Some(2), "{m}");
        assert!(m.contains("\"loud\"") && m.contains("known keys"), "{m}");
        let (line, m) = parse("db = 5\n").unwrap_err();
        assert_eq!(line, Some(1), "{m}");
        assert!(m.starts_with("db: invalid type"), "{m}");
        let (line, _) = parse("db = \"unclosed\n").unwrap_err();
        assert_eq!(line, Some(1));
        let (line, m) = parse("[tui]\nnotify = \"off\"\n").unwrap_err();
        assert!(line.is_some() && m.contains("unknown key `tui`"), "{m}");
    }

    #[test]
    fn only_the_owner_and_root_may_write_a_config_file() {
        use trust::{Facts, Others, others};
        let f = |owner, mode, private_group| Facts {
            owner,
            group: 100,
            mode,
            private_group,
        };
        let me = 1000;
        assert_eq!(others(&f(me, 0o644, false), me), None);
        assert_eq!(others(&f(0, 0o644, false), me), None, "root's file");
        assert_eq!(others(&f(0, 0o755, false), me), None, "root's directory");
        assert_eq!(others(&f(me, 0o666, false), me), Some(Others::Everyone));
        assert_eq!(others(&f(me, 0o1777, false), me), Some(Others::Everyone));
        assert_eq!(others(&f(me, 0o664, false), me), Some(Others::Group));
        assert_eq!(
            others(&f(me, 0o664, true), me),
            None,
            "umask 002 with a group of one's own"
        );
        assert_eq!(others(&f(1001, 0o644, false), me), Some(Others::Owner));
        assert_eq!(others(&f(1001, 0o600, false), 0), Some(Others::Owner));
    }

    #[test]
    fn line_of_counts_newlines_before_the_offset() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }
}
