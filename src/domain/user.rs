//! Who is acting, and what they may do.

use serde::Serialize;

/// A user's role; users missing from the `users` table are staff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Staff,
    Supervisor,
    /// A supervisor for the queues they may take from only (issue 29 §3).
    Lead,
}

impl Role {
    /// The role's name as stored.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::Staff => "staff",
            Role::Supervisor => "supervisor",
            Role::Lead => "lead",
        }
    }

    /// True for a role with supervisor rights somewhere (a lead's in their queues).
    pub fn supervises(self) -> bool {
        self != Role::Staff
    }

    /// Parses a stored or typed role name.
    pub(crate) fn parse(s: &str) -> Option<Role> {
        match s {
            "staff" => Some(Role::Staff),
            "supervisor" => Some(Role::Supervisor),
            "lead" => Some(Role::Lead),
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
    /// The queues they may take from and review in, and whether they left.
    pub access: Access,
}

/// Some queues by name, or all of them (as JSON: `"all"`, or an array of names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queues {
    /// Every queue, those made later included.
    All,
    /// These only (none when empty), sorted.
    Only(Vec<String>),
}

impl Serialize for Queues {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Queues::All => s.serialize_str("all"),
            Queues::Only(names) => names.serialize(s),
        }
    }
}

impl Queues {
    /// Parses `all`, `none` or a comma-separated list of queue names (`a,b`).
    pub fn parse(s: &str) -> Result<Queues, String> {
        match s.trim() {
            "all" => return Ok(Queues::All),
            "none" => return Ok(Queues::Only(Vec::new())),
            _ => {}
        }
        let mut names = Vec::new();
        for part in s.split(',').map(str::trim) {
            super::queue::validate_queue_name(part).map_err(|e| format!("queue '{part}': {e}"))?;
            names.push(part.to_string());
        }
        names.sort();
        names.dedup();
        Ok(Queues::Only(names))
    }

    /// True when `queue` is among them.
    pub fn has(&self, queue: &str) -> bool {
        match self {
            Queues::All => true,
            Queues::Only(names) => names.iter().any(|n| n == queue),
        }
    }

    /// `all`, `none` or `a, b` (names as stored: sanitize before showing).
    pub fn words(&self) -> String {
        match self {
            Queues::All => "all".into(),
            Queues::Only(names) if names.is_empty() => "none".into(),
            Queues::Only(names) => names.join(", "),
        }
    }
}

/// Why someone may not work an item of a queue (issue 29 §2, §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Take it (take-next, by id, an assignment given to them).
    Take,
    /// Review it.
    Review,
}

impl Work {
    /// The name stored in `user_queues.kind`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Work::Take => "take",
            Work::Review => "review",
        }
    }
}

/// What a person may do and where: their role, the queues they may take from and review
/// in, and when they left (a leaver takes no work and is assigned none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Access {
    pub role: Role,
    pub takes: Queues,
    pub reviews: Queues,
    /// When they were marked as leaving, and why.
    pub left: Option<(super::time::Millis, String)>,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            role: Role::Staff,
            takes: Queues::All,
            reviews: Queues::All,
            left: None,
        }
    }
}

impl Access {
    /// Builds it from the stored facts: the `users` row's role, whether each list applies
    /// (`take_limited`, `review_limited`), when and why they left, and the `user_queues`
    /// rows (kind, queue).
    pub(crate) fn from_rows(
        role: Option<&str>,
        limited: (bool, bool),
        left: Option<(super::time::Millis, String)>,
        rows: &[(String, String)],
    ) -> Access {
        let list = |kind: Work, on: bool| match on {
            false => Queues::All,
            true => {
                let mut v: Vec<String> = (rows.iter())
                    .filter(|(k, _)| k == kind.as_str())
                    .map(|(_, q)| q.clone())
                    .collect();
                v.sort();
                Queues::Only(v)
            }
        };
        Access {
            role: role.and_then(Role::parse).unwrap_or(Role::Staff),
            takes: list(Work::Take, limited.0),
            reviews: list(Work::Review, limited.1),
            left,
        }
    }

    /// The queues of one kind of work.
    pub fn queues(&self, work: Work) -> &Queues {
        match work {
            Work::Take => &self.takes,
            Work::Review => &self.reviews,
        }
    }

    /// `Err` says why `name` may not do `work` in `queue`: they left, or the queue is not
    /// one of theirs (naming those that are).
    pub fn may(&self, name: &str, work: Work, queue: &str) -> Result<(), String> {
        if let Some((_, why)) = &self.left {
            return Err(format!("{name} has left ({why}) and takes no work"));
        }
        let qs = self.queues(work);
        if qs.has(queue) {
            return Ok(());
        }
        let verb = match work {
            Work::Take => "take from",
            Work::Review => "review in",
        };
        Err(format!(
            "{name} may not {verb} queue '{queue}' (theirs: {}; a supervisor changes it \
             with `caseload user set {name} --{}`)",
            qs.words(),
            match work {
                Work::Take => "queues",
                Work::Review => "reviews",
            }
        ))
    }

    /// True when they have supervisor rights in `queue`: a supervisor, or a lead of it
    /// (a lead leads the queues they may take from), and still here.
    pub fn supervises(&self, queue: Option<&str>) -> bool {
        if self.left.is_some() {
            return false;
        }
        match (self.role, queue) {
            (Role::Supervisor, _) => true,
            (Role::Lead, Some(q)) => self.takes.has(q) && self.takes != Queues::All,
            _ => false,
        }
    }
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
