//! Where the database is: `--db`, else `CASELOAD_DB`, else `db =` in the config file
//! (`/etc/caseload/config.toml`, then the user's config dir), else
//! `<user data dir>/caseload.db`. Also the network-filesystem guard.

use std::path::{Path, PathBuf};

/// The system-wide config file.
pub const SYSTEM_CONFIG: &str = "/etc/caseload/config.toml";

/// Where a database location came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Flag,
    Env,
    Config(PathBuf),
    Default,
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

/// Resolves the database location from the flag, the environment, the config files and
/// the default, in that order.
pub fn resolve(flag: Option<&str>, env: Option<&str>) -> Result<(Location, Source), String> {
    if let Some(f) = flag.filter(|f| !f.is_empty()) {
        return Ok((Location::parse(f), Source::Flag));
    }
    if let Some(e) = env.filter(|e| !e.is_empty()) {
        return Ok((Location::parse(e), Source::Env));
    }
    let mut configs = vec![PathBuf::from(SYSTEM_CONFIG)];
    if let Some(dirs) = project_dirs() {
        configs.push(dirs.config_dir().join("config.toml"));
    }
    for path in configs {
        if let Some(db) = read_config_db(&path)? {
            return Ok((Location::parse(&db), Source::Config(path)));
        }
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

/// Reads `db = "..."` from a config file; a missing file is not an error.
pub fn read_config_db(path: &Path) -> Result<Option<String>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read config: {e}", path.display())),
    };
    let db =
        parse_config_db(&text).map_err(|(line, m)| format!("{}:{line}: {m}", path.display()))?;
    if let Some(url) = &db
        && redact_url(url) != *url
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode())
            .unwrap_or(0);
        if mode & 0o077 != 0 {
            return Err(format!(
                "{}: holds a database password but others can read it; run `chmod 600 {}` \
                 or keep the password in ~/.pgpass",
                path.display(),
                path.display()
            ));
        }
    }
    Ok(db)
}

/// The tiny subset of TOML caseload reads: `key = "string"` lines and comments.
pub fn parse_config_db(text: &str) -> Result<Option<String>, (usize, String)> {
    let mut db = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err((i + 1, "expected key = \"value\"".into()));
        };
        if key.trim() != "db" {
            continue;
        }
        let v = value.trim();
        let v = v.split(" #").next().unwrap_or(v).trim();
        let unquoted = v
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')));
        match unquoted {
            Some(s) if !s.is_empty() => db = Some(s.to_string()),
            _ => return Err((i + 1, "db must be a quoted, non-empty string".into())),
        }
    }
    Ok(db)
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
    fn a_password_in_a_readable_config_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("caseload-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = dir.join("config.toml");
        std::fs::write(&cfg, "db = \"postgres://bob:s3cret@h/q\"\n").unwrap();
        std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = read_config_db(&cfg).unwrap_err();
        assert!(
            err.contains("chmod 600") && !err.contains("s3cret"),
            "{err}"
        );
        std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            read_config_db(&cfg).unwrap().as_deref(),
            Some("postgres://bob:s3cret@h/q")
        );
        std::fs::write(&cfg, "db = \"postgres://bob@h/q\"\n").unwrap();
        std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            read_config_db(&cfg).is_ok(),
            "no password, no secret to keep"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn config_reads_db_line() {
        assert_eq!(
            parse_config_db("# shared queue\ndb = \"/srv/q.db\"\n").unwrap(),
            Some("/srv/q.db".into())
        );
        assert_eq!(parse_config_db("other = 'x'\n").unwrap(), None);
        assert_eq!(parse_config_db("db = \n").unwrap_err().0, 1);
        assert_eq!(parse_config_db("\n\nnonsense\n").unwrap_err().0, 3);
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
