//! Where the database is: `--db`, else `CASELOAD_DB`, else `db =` from the config files
//! (read by `crate::config`; the user's over `/etc/caseload/config.toml`), else
//! `<user data dir>/caseload.db`. Also the network-filesystem guard.

use std::path::{Path, PathBuf};

/// Where a database location came from, for messages and `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--db`.
    Flag,
    /// `CASELOAD_DB`.
    Env,
    /// `db =` in the user's config file.
    UserConfig(PathBuf),
    /// `db =` in the system config file (`/etc/caseload/config.toml`).
    SystemConfig(PathBuf),
    /// `<user data dir>/caseload.db`.
    Default,
}

impl Source {
    /// Where the location came from, in words: "--db", "/etc/caseload/config.toml", ...
    pub fn describe(&self) -> String {
        match self {
            Source::Flag => "--db".into(),
            Source::Env => "CASELOAD_DB".into(),
            Source::UserConfig(p) | Source::SystemConfig(p) => p.display().to_string(),
            Source::Default => "the default location".into(),
        }
    }
}

/// A resolved database location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    File(PathBuf),
    Postgres(String),
}

impl Location {
    /// Parses a `--db` value.
    pub(crate) fn parse(s: &str) -> Location {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            Location::Postgres(s.to_string())
        } else {
            Location::File(PathBuf::from(s))
        }
    }

    /// The location as shown to users: file path, or the URL without its password.
    pub(crate) fn display(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Postgres(url) => redact_url(url),
        }
    }
}

/// Removes every password from a `postgres://` URL, read the way the postgres crate reads
/// it: the credentials are everything before the first `@` (so a `/`, `?` or `#` in a
/// password stays in the password), and a `password` parameter counts whatever its
/// percent-encoding. The result is checked with the crate's own parser: if that still
/// finds a password in it, nothing but the scheme is shown.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (creds, after) = match rest.split_once('@') {
        Some((c, a)) => (Some(c), a),
        None => (None, rest),
    };
    let mut out = format!("{scheme}://");
    if let Some(creds) = creds {
        match creds.split_once(':') {
            Some((user, _)) => out.push_str(&format!("{user}:***@")),
            None => out.push_str(&format!("{creds}@")),
        }
    }
    match after.split_once('?') {
        Some((base, query)) => {
            out.push_str(base);
            out.push('?');
            let params: Vec<String> = query
                .split('&')
                .map(|kv| {
                    let key = kv.split_once('=').map_or(kv, |(k, _)| k);
                    if percent_decode(key).eq_ignore_ascii_case("password") {
                        format!("{key}=***")
                    } else {
                        kv.to_string()
                    }
                })
                .collect();
            out.push_str(&params.join("&"));
        }
        None => out.push_str(after),
    }
    if password_of(&out).is_some_and(|p| p != b"***") {
        return format!("{scheme}://***");
    }
    out
}

/// The password a `postgres://` URL carries, as the postgres crate reads it (`None` when
/// it has none or is not a URL the crate accepts).
pub(crate) fn password_of(url: &str) -> Option<Vec<u8>> {
    let config: postgres::Config = url.parse().ok()?;
    config.get_password().map(|p| p.to_vec())
}

/// True when `url` holds a password, by the crate's parser or by its shape (a
/// `user:password@` part, a `password=` parameter), so that a config file holding one is
/// never accepted as readable by others even when the URL does not parse.
pub(crate) fn url_has_password(url: &str) -> bool {
    password_of(url).is_some() || redact_url(url) != url
}

/// Decodes `%XX` escapes (invalid ones stay as they are).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Resolves the database location from the flag, the environment, `db` from the config
/// files (with the file that set it) and the default, in that order.
pub(crate) fn resolve(
    flag: Option<&str>,
    env: Option<&str>,
    config_db: Option<(String, Source)>,
) -> Result<(Location, Source), String> {
    // An empty value is a mistake (an unset shell variable), not a request for the
    // default: falling back would quietly create a new database somewhere else.
    if let Some(f) = flag {
        if f.is_empty() {
            return Err("--db is empty; give a file path or a postgres:// URL".into());
        }
        return Ok((Location::parse(f), Source::Flag));
    }
    if let Some(e) = env {
        if e.is_empty() {
            return Err(
                "CASELOAD_DB is set but empty; give a file path or a postgres:// URL, or \
                 unset it"
                    .into(),
            );
        }
        return Ok((Location::parse(e), Source::Env));
    }
    if let Some((db, source)) = config_db {
        return Ok((Location::parse(&db), source));
    }
    let dirs = project_dirs().ok_or("cannot find a home directory; give --db or CASELOAD_DB")?;
    Ok((
        Location::File(dirs.data_dir().join("caseload.db")),
        Source::Default,
    ))
}

/// caseload's per-user directories.
pub(crate) fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "caseload")
}

/// Filesystem types on which SQLite's locking cannot be trusted.
pub(crate) fn network_fs_name(magic: i64) -> Option<&'static str> {
    Some(match magic {
        0x6969 => "NFS",
        0x517B => "SMB",
        0xFF53_4D42 => "CIFS",
        0xFE53_4D42 => "SMB2",
        0x6573_5546 => "FUSE",
        0x0102_1997 => "9p",
        0x0000_5346_414F => "AFS",
        0x00C3_6400 => "Ceph",
        0x0BD0_0BD0 => "Lustre",
        0x4750_4653 => "GPFS",
        _ => return None,
    })
}

/// Refuses a database directory on a network filesystem.
pub(crate) fn check_local_fs(dir: &Path) -> Result<(), String> {
    local_fs_verdict(dir, fs_magic(dir))
}

/// The verdict on `dir`, whose filesystem type is `magic` (`None`: not known, as on
/// systems other than Linux, where nothing is refused).
pub(crate) fn local_fs_verdict(dir: &Path, magic: Option<i64>) -> Result<(), String> {
    let Some(magic) = magic else {
        return Ok(());
    };
    match network_fs_name(magic) {
        Some(name) => Err(format!(
            "{} is on a network filesystem ({name}); SQLite's locking is not reliable there and \
             two people could take the same item. Put the database on a local disk, use \
             PostgreSQL, or pass --allow-network-fs (or set CASELOAD_ALLOW_NETWORK_FS=1) if you are sure",
            dir.display()
        )),
        None => Ok(()),
    }
}

fn fs_magic(dir: &Path) -> Option<i64> {
    crate::sys::fs_magic(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact_url("postgres://bob:s3cret@db.example:5432/queue"),
            "postgres://bob:***@db.example:5432/queue"
        );
        assert_eq!(
            redact_url("postgres://bob@host/q?sslmode=require&password=x"),
            "postgres://bob@host/q?sslmode=require&password=***"
        );
        assert_eq!(redact_url("postgres://host/q"), "postgres://host/q");
    }

    /// Every shape a password can take in a URL: none of them may show.
    #[test]
    fn passwords_never_show_in_any_url_shape() {
        let cases = [
            ("postgres://u:se/cret@host/db", "postgres://u:***@host/db"),
            ("postgres://u:se?cret@host/db", "postgres://u:***@host/db"),
            ("postgres://u:se#cret@host/db", "postgres://u:***@host/db"),
            ("postgres://u:se%40cret@host/db", "postgres://u:***@host/db"),
            (
                "postgres://u:se%2Fcret@host:5433/db",
                "postgres://u:***@host:5433/db",
            ),
            ("postgresql://u:a:b@host/db", "postgresql://u:***@host/db"),
            ("postgres://u:@host/db", "postgres://u:***@host/db"),
            (
                "postgres://host/db?password=secret",
                "postgres://host/db?password=***",
            ),
            (
                "postgres://host/db?PASSWORD=secret",
                "postgres://host/db?PASSWORD=***",
            ),
            (
                "postgres://host/db?pass%77ord=secret",
                "postgres://host/db?pass%77ord=***",
            ),
            (
                "postgres://u@host/db?sslmode=disable&password=se/c@ret&x=1",
                "postgres://u@host/db?sslmode=disable&password=***&x=1",
            ),
            (
                "postgres://host/db?password=a&password=b",
                "postgres://host/db?password=***&password=***",
            ),
            (
                "postgres://u@host/db#password=frag",
                "postgres://u@host/db#password=frag",
            ),
        ];
        for (url, shown) in cases {
            let got = redact_url(url);
            assert_eq!(got, shown, "{url}");
            for secret in [
                "secret",
                "se/cret",
                "se?cret",
                "se#cret",
                "se%40cret",
                "se/c",
            ] {
                if url.contains(secret) {
                    assert!(!got.contains(secret), "{url} shows {got}");
                }
            }
            if let Some(pw) = password_of(url) {
                assert!(url_has_password(url), "{url}");
                assert!(
                    password_of(&got).is_none_or(|p| p == b"***"),
                    "{url}: {got} still holds {pw:?}"
                );
            }
        }
        assert!(!url_has_password("postgres://u@host/db"));
        assert!(url_has_password("postgres://u:se/cret@host/db"));
        assert!(url_has_password("postgres://host/db?password=x"));
    }

    #[test]
    fn flag_then_env_then_config_then_default() {
        let cfg = Some((
            "/srv/q.db".to_string(),
            Source::UserConfig("/u.toml".into()),
        ));
        let (l, s) = resolve(Some("/a.db"), Some("/b.db"), cfg.clone()).unwrap();
        assert_eq!((l, s), (Location::File("/a.db".into()), Source::Flag));
        let (l, s) = resolve(None, Some("/b.db"), cfg.clone()).unwrap();
        assert_eq!((l, s), (Location::File("/b.db".into()), Source::Env));
        let (l, s) = resolve(None, None, cfg.clone()).unwrap();
        assert_eq!(l, Location::File("/srv/q.db".into()));
        assert_eq!(s, Source::UserConfig("/u.toml".into()));
        assert!(
            resolve(Some(""), None, cfg.clone())
                .unwrap_err()
                .contains("--db")
        );
        assert!(
            resolve(None, Some(""), cfg)
                .unwrap_err()
                .contains("CASELOAD_DB")
        );
    }

    #[test]
    fn network_filesystems_are_named() {
        assert_eq!(network_fs_name(0x6969), Some("NFS"));
        assert_eq!(network_fs_name(0xFF53_4D42), Some("CIFS"));
        assert_eq!(network_fs_name(0x6573_5546), Some("FUSE"));
        assert_eq!(network_fs_name(0x0102_1997), Some("9p"));
        assert_eq!(network_fs_name(0xEF53), None, "ext4 is local");
        assert!(check_local_fs(&std::env::temp_dir()).is_ok());
    }

    #[test]
    fn postgres_urls_are_recognised() {
        assert!(matches!(
            Location::parse("postgresql://h/db"),
            Location::Postgres(_)
        ));
        assert!(matches!(Location::parse("./q.db"), Location::File(_)));
    }
}
