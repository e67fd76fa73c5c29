//! Who is running caseload: `--user`, else `CASELOAD_USER`, else the OS login name looked
//! up from the OS (the passwd entry of the real user id, not `$USER`); and the real OS
//! user behind it, against which the store checks that the name may be used
//! ([`crate::domain::user::may_act_as`]).

use crate::domain::user::validate_user_name;
use crate::domain::{Actor, RealIdentity};

/// The OS login name of the real user id, or `uid<N>` when the system has no entry.
pub fn os_login() -> String {
    // SAFETY: getuid has no failure mode; getpwuid_r writes only into the buffer we own.
    unsafe {
        let uid = libc::getuid();
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 4096];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc == 0 && !result.is_null() && !pwd.pw_name.is_null() {
            let name = std::ffi::CStr::from_ptr(pwd.pw_name).to_string_lossy();
            if !name.is_empty() {
                return name.into_owned();
            }
        }
        format!("uid{uid}")
    }
}

/// The OS user running this process, as SQLite's binding rules see it: its login, and
/// whether it is root (who can rewrite any file, so refusing it a name protects nothing).
pub fn real_os_user() -> RealIdentity {
    // SAFETY: getuid has no failure mode.
    let uid = unsafe { libc::getuid() };
    RealIdentity {
        login: os_login(),
        privileged: uid == 0,
    }
}

/// Resolves the acting user from the flag, the environment and the OS, in that order.
pub fn resolve(flag: Option<&str>, env: Option<&str>) -> Result<Actor, String> {
    let os = os_login();
    let (name, source) = match (flag, env) {
        (Some(f), _) => (f.to_string(), "--user"),
        (None, Some(e)) if !e.is_empty() => (e.to_string(), "CASELOAD_USER"),
        _ => (os.clone(), "the OS login"),
    };
    validate_user_name(&name).map_err(|m| format!("{m} (from {source})"))?;
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
