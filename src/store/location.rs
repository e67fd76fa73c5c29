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
    pub fn parse(s: &str) -> Location {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            Location::Postgres(s.to_string())
        } else {
            Location::File(PathBuf::from(s))
        }
    }

    /// The location as shown to users: file path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Postgres(url) => redact_url(url),
        }
    }
}

/// Removes the password from a `postgres://user:pass@host/db` URL.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let Some(at) = authority.rfind('@') else {
        return redact_query_password(url);
    };
    let userinfo = &authority[..at];
    let host = &authority[at + 1..];
    let user = userinfo.split(':').next().unwrap_or("");
    let shown = if userinfo.contains(':') {
        format!("{user}:***")
    } else {
        user.to_string()
    };
    redact_query_password(&format!("{scheme}://{shown}@{host}{tail}"))
}

fn redact_query_password(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|kv| {
            if kv.to_ascii_lowercase().starts_with("password=") {
                "password=***".to_string()
            } else {
                kv.to_string()
            }
        })
        .collect();
    format!("{base}?{}", parts.join("&"))
}

/// Resolves the database location from the flag, the environment, `db` from the config
/// files (with the file that set it) and the default, in that order.
pub fn resolve(
    flag: Option<&str>,
    env: Option<&str>,
    config_db: Option<(String, Source)>,
) -> Result<(Location, Source), String> {
    if let Some(f) = flag.filter(|f| !f.is_empty()) {
        return Ok((Location::parse(f), Source::Flag));
    }
    if let Some(e) = env.filter(|e| !e.is_empty()) {
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
pub fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "caseload")
}

/// Filesystem types on which SQLite's locking cannot be trusted.
pub fn network_fs_name(magic: i64) -> Option<&'static str> {
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
pub fn check_local_fs(dir: &Path) -> Result<(), String> {
    let Some(magic) = fs_magic(dir) else {
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
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs writes into the zeroed struct we own; c is NUL-terminated.
    unsafe {
        let mut s: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut s) == 0 {
            #[allow(clippy::unnecessary_cast)]
            Some(s.f_type as i64)
        } else {
            None
        }
    }
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
        let (l, s) = resolve(Some(""), None, cfg).unwrap();
        assert_eq!(l, Location::File("/srv/q.db".into()));
        assert_eq!(s, Source::UserConfig("/u.toml".into()));
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
