//! Who is running caseload: `--user`, else `CASELOAD_USER`, else the OS login name looked
//! up from the OS (the passwd entry of the real user id, not `$USER`); and the real OS
//! user behind it, against which the store checks that the name may be used
//! ([`crate::domain::user::may_act_as`]).

use crate::domain::user::validate_user_name;
use crate::domain::{Actor, RealIdentity};

/// The OS login name of the real user id, or `uid<N>` when the system has no entry.
pub(crate) fn os_login() -> String {
    let uid = crate::sys::uid();
    crate::sys::user_name(uid)
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| format!("uid{uid}"))
}

/// The OS user running this process, as SQLite's binding rules see it: its login, and
/// whether it is root (who can rewrite any file, so refusing it a name protects nothing).
pub(crate) fn real_os_user() -> RealIdentity {
    let uid = crate::sys::uid();
    RealIdentity {
        login: os_login(),
        privileged: uid == 0,
    }
}

/// Resolves the acting user from the flag, the environment and the OS, in that order.
pub(crate) fn resolve(flag: Option<&str>, env: Option<&str>) -> Result<Actor, String> {
    let os = os_login();
    let (name, source) = match (flag, env) {
        (Some(f), _) => (f.to_string(), "--user"),
        (None, Some(e)) if !e.is_empty() => (e.to_string(), "CASELOAD_USER"),
        _ => (os.clone(), "the OS login"),
    };
    validate_user_name(&name).map_err(|m| format!("user {m} (from {source})"))?;
    Ok(Actor::new(name, os))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_beats_environment_beats_os() {
        assert_eq!(resolve(Some("a"), Some("b")).unwrap().name, "a");
        assert_eq!(resolve(None, Some("b")).unwrap().name, "b");
        assert_eq!(resolve(None, None).unwrap().name, os_login());
        assert!(
            resolve(Some("bad name"), None)
                .unwrap_err()
                .contains("--user")
        );
    }
}
