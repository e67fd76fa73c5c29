//! Passwords like libpq: `PGPASSWORD`, else the password file (`PGPASSFILE` or `~/.pgpass`),
//! which is ignored unless only its owner can read it.

/// Like libpq: a URL without a password takes one from `PGPASSWORD`, else from the
/// password file (`PGPASSFILE`, else `~/.pgpass`), which is ignored unless only its owner
/// can read it.
pub(super) fn fill_password(config: &mut postgres::Config) {
    if config.get_password().is_some() {
        return;
    }
    if let Some(p) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
        config.password(p.as_encoded_bytes());
        return;
    }
    let path = match std::env::var_os("PGPASSFILE") {
        Some(p) => std::path::PathBuf::from(p),
        None => match directories::BaseDirs::new() {
            Some(d) => d.home_dir().join(".pgpass"),
            None => return,
        },
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return;
    };
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(file = %path.display(), "password file ignored: readable by others (chmod 600 it)");
            return;
        }
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    if let Some(p) = pgpass_lookup(&text, [&host, &port, &db, &user]) {
        config.password(p);
    }
}

/// The password of the first `.pgpass` line matching host, port, database and user
/// (`*` matches anything; `\:` and `\\` are escapes).
fn pgpass_lookup(text: &str, want: [&str; 4]) -> Option<String> {
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::with_capacity(5);
        let mut cur = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => cur.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        fields.push(cur);
        if fields.len() != 5 {
            continue;
        }
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_lines_match_like_libpq() {
        let text = "# comment\ndb.example:5432:work:bob:s3cret\n*:*:*:carol:pa\\:ss\n";
        let want = |h, d, u| pgpass_lookup(text, [h, "5432", d, u]);
        assert_eq!(want("db.example", "work", "bob").as_deref(), Some("s3cret"));
        assert_eq!(want("other", "work", "bob"), None);
        assert_eq!(want("any", "x", "carol").as_deref(), Some("pa:ss"));
    }
}
