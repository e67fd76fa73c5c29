//! Who is acting, and what they may do.

use serde::Serialize;

/// A user's role; users missing from the `users` table are staff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Staff,
    Supervisor,
}

impl Role {
    /// The role's name as stored.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::Staff => "staff",
            Role::Supervisor => "supervisor",
        }
    }

    /// Parses a stored or typed role name.
    pub(crate) fn parse(s: &str) -> Option<Role> {
        match s {
            "staff" => Some(Role::Staff),
            "supervisor" => Some(Role::Supervisor),
            _ => None,
        }
    }
}

/// The person acting: the name caseload knows them by and their OS login (both audited).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub name: String,
    pub os_user: String,
}

impl Actor {
    pub fn new(name: impl Into<String>, os_user: impl Into<String>) -> Self {
        Actor {
            name: name.into(),
            os_user: os_user.into(),
        }
    }
}

/// A known user, as `caseload user list` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserInfo {
    pub name: String,
    pub role: Role,
    /// The OS login the name is bound to, where the database records one.
    pub login: Option<String>,
    /// When they last opened caseload's screen.
    pub last_seen: Option<super::time::Millis>,
}

/// Who is really at the keyboard, as the backend knows it (never taken from a flag or
/// the environment): the OS login of the process on SQLite, the database role of the
/// session (`session_user`) on PostgreSQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealIdentity {
    pub login: String,
    /// True when this identity can change the database directly anyway, so refusing it a
    /// name would protect nothing: root on SQLite; a superuser or the owner of the tables
    /// on PostgreSQL.
    pub privileged: bool,
}

/// May `real` act under the caseload name `name`? Yes when it is its own name, when a
/// supervisor bound the name to it (`bound`: the name's `users.login`), or when `real`
/// is privileged. `Err` says why not and how to fix it.
pub(crate) fn may_act_as(
    name: &str,
    real: &RealIdentity,
    bound: Option<&str>,
) -> Result<(), String> {
    if real.privileged || name == real.login || bound == Some(real.login.as_str()) {
        return Ok(());
    }
    let whose = match bound {
        Some(_) => "it is bound to another login".to_string(),
        None => "it is not bound to your login".to_string(),
    };
    Err(format!(
        "{} may not act as {name}: {whose}; use your own name, or ask a supervisor to run \
         `caseload user set {name} --login {}`",
        real.login, real.login
    ))
}

/// Checks a user name given on the command line or in the environment; the problem names
/// it "name" ("name is empty"), so that each caller says whose (`--to: …`, `user …`).
pub(crate) fn validate_user_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("name is empty".into());
    }
    if name.chars().count() > 100 {
        return Err("name is longer than 100 characters".into());
    }
    if name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("name contains spaces or control characters".into());
    }
    if let Some(c) = name
        .chars()
        .find(|&c| super::sanitize::is_invisible_format(c))
    {
        return Err(format!(
            "name contains the invisible character U+{:04X} (bidi or zero-width); a \
             name must look like what it is",
            c as u32
        ));
    }
    Ok(())
}

/// The name of `known` closest to a mistyped `name` (at most two edits away, or one for
/// short names), for "did you mean …?".
pub(crate) fn closest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    let limit = if name.chars().count() <= 4 { 1 } else { 2 };
    known
        .iter()
        .map(|k| (edits(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.as_str())
}

/// Levenshtein distance, by characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_the_name_meant() {
        let known = vec!["alice".to_string(), "bob".to_string()];
        assert_eq!(closest("alcie", &known), Some("alice"));
        assert_eq!(
            closest("bbo", &known),
            None,
            "two edits is too far for 3 letters"
        );
        assert_eq!(closest("bo", &known), Some("bob"));
        assert_eq!(closest("nobody-such", &known), None);
    }

    #[test]
    fn user_names_are_checked() {
        assert!(validate_user_name("alice").is_ok());
        assert!(validate_user_name("").is_err());
        assert!(validate_user_name("a b").is_err());
        assert!(validate_user_name("a\u{1b}[2J").is_err());
        assert!(validate_user_name("b\u{200B}ob").is_err());
        assert!(validate_user_name("bob\u{202E}").is_err());
        assert!(validate_user_name("b\u{FEFF}ob").is_err());
        assert_eq!(Role::parse("supervisor"), Some(Role::Supervisor));
        assert_eq!(Role::parse("boss"), None);
    }

    #[test]
    fn a_name_is_used_only_by_its_login_or_the_login_bound_to_it() {
        let bob = RealIdentity {
            login: "bob".into(),
            privileged: false,
        };
        assert!(may_act_as("bob", &bob, None).is_ok());
        assert!(may_act_as("importer", &bob, Some("bob")).is_ok());
        let e = may_act_as("alice", &bob, None).unwrap_err();
        assert!(
            e.contains("bob may not act as alice") && e.contains("--login bob"),
            "{e}"
        );
        assert!(may_act_as("alice", &bob, Some("alice")).is_err());
        let root = RealIdentity {
            login: "root".into(),
            privileged: true,
        };
        assert!(may_act_as("alice", &root, None).is_ok());
    }
}
