//! Ready-made texts and the reasons people give: a queue's supervisors keep texts for
//! each dialog that takes one (a result, a fail, skip, release or park reason, a
//! comment), each under a short code; what a holder says when finishing is a [`Said`]:
//! the text and, when it came from a ready-made one, its code, which the event keeps so
//! that `report --by reason` can count it.

use serde::Serialize;

/// Longest ready-made text, in characters (one line in a dialog).
pub const MAX_TEXT_CHARS: usize = 200;
/// Longest code, in characters.
pub const MAX_CODE_CHARS: usize = 32;

/// Which dialog a ready-made text is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Purpose {
    /// A completion's result.
    Result,
    /// Why an item failed.
    Fail,
    /// Why it was skipped.
    Skip,
    /// Why it was released.
    Release,
    /// Why it was parked.
    Park,
    /// A comment on the item's thread.
    Comment,
    /// Why a reviewer rejected an item back to its maker.
    Reject,
}

impl Purpose {
    /// Every purpose, in the order `text list` shows them.
    pub const ALL: [Purpose; 7] = [
        Purpose::Result,
        Purpose::Fail,
        Purpose::Skip,
        Purpose::Release,
        Purpose::Park,
        Purpose::Comment,
        Purpose::Reject,
    ];

    /// Its name as stored and typed (`--for`).
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Result => "result",
            Purpose::Fail => "fail",
            Purpose::Skip => "skip",
            Purpose::Release => "release",
            Purpose::Park => "park",
            Purpose::Comment => "comment",
            Purpose::Reject => "reject",
        }
    }

    /// Parses a purpose's name; the error names the ones there are.
    pub fn parse(s: &str) -> Result<Purpose, String> {
        let t = s.trim().to_ascii_lowercase();
        Purpose::ALL
            .into_iter()
            .find(|p| p.as_str() == t)
            .ok_or_else(|| {
                format!(
                    "'{}' is not a kind of text (one of: {})",
                    crate::domain::sanitize::line(s),
                    Purpose::ALL.map(|p| p.as_str()).join(", ")
                )
            })
    }
}

/// One ready-made text of a queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CannedText {
    pub queue: String,
    /// The dialog it is offered in (`for` in JSON).
    #[serde(rename = "for")]
    pub purpose: Purpose,
    /// Unique within the queue; what the event keeps.
    pub code: String,
    pub text: String,
}

/// What a holder says when finishing: the text typed (or chosen and edited) and the
/// code of the ready-made text chosen, if one was. With a code and no text, the
/// ready-made text itself is used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Said<'a> {
    pub text: Option<&'a str>,
    pub code: Option<&'a str>,
}

impl<'a> Said<'a> {
    /// Nothing said.
    pub const NOTHING: Said<'static> = Said {
        text: None,
        code: None,
    };

    /// A free text (none when empty or blank).
    pub fn text(text: Option<&'a str>) -> Said<'a> {
        Said {
            text: text.map(str::trim).filter(|t| !t.is_empty()),
            code: None,
        }
    }

    /// The same, with the code of the ready-made text chosen (none when blank).
    pub fn coded(self, code: Option<&'a str>) -> Said<'a> {
        Said {
            code: code.map(str::trim).filter(|c| !c.is_empty()),
            ..self
        }
    }
}

/// What a holder said, owned (as the TUI carries it to the worker): see [`Said`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Saying {
    pub text: Option<String>,
    pub code: Option<String>,
}

impl Saying {
    /// A typed text, with the code of the ready-made text it came from (blanks are none).
    pub fn of(text: &str, code: Option<&str>) -> Saying {
        let said = Said::text(Some(text)).coded(code);
        Saying {
            text: said.text.map(str::to_string),
            code: said.code.map(str::to_string),
        }
    }

    /// Borrowed, for the store.
    pub fn said(&self) -> Said<'_> {
        Said {
            text: self.text.as_deref(),
            code: self.code.as_deref(),
        }
    }
}

/// Checks a code: 1 to 32 of a-z, 0-9, `-`, `_` (what people type in a report filter and
/// a script, with no quoting).
pub fn validate_code(code: &str) -> Result<(), String> {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
    if code.is_empty() || code.chars().count() > MAX_CODE_CHARS || !code.chars().all(ok) {
        return Err(format!(
            "code '{}' must be 1 to {MAX_CODE_CHARS} of a-z, 0-9, '-' and '_'",
            crate::domain::sanitize::line(code)
        ));
    }
    Ok(())
}

/// Checks a ready-made text: one line, not blank, at most 200 characters; returns it
/// trimmed.
pub fn check_canned(text: &str) -> Result<&str, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("the text is empty".into());
    }
    if t.chars().any(char::is_control) {
        return Err("a ready-made text is one line, without control characters".into());
    }
    if t.chars().count() > MAX_TEXT_CHARS {
        return Err(format!(
            "the text is {} characters; a ready-made text has at most {MAX_TEXT_CHARS}",
            t.chars().count()
        ));
    }
    Ok(t)
}

/// The code a text gets when none is given: its first words, lower case, joined by `-`
/// ("Needs a Spanish speaker" → `needs-a-spanish-speaker`), at most 32 characters; `text`
/// when nothing is left of it.
pub fn code_for(text: &str) -> String {
    let mut code = String::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w: String = word
            .chars()
            .flat_map(char::to_lowercase)
            .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            .collect();
        if w.is_empty() {
            continue;
        }
        let extra = usize::from(!code.is_empty()) + w.len();
        if code.len() + extra > MAX_CODE_CHARS {
            break;
        }
        if !code.is_empty() {
            code.push('-');
        }
        code.push_str(&w);
    }
    if code.is_empty() {
        code.push_str("text");
    }
    code
}

/// The texts of `purpose` that match what is typed so far, best first: those whose code
/// or text starts with it, then those that contain it (case-insensitive); all of them
/// when nothing is typed.
pub fn matching<'t>(texts: &'t [CannedText], purpose: Purpose, typed: &str) -> Vec<&'t CannedText> {
    let typed = typed.trim().to_lowercase();
    let mut starts = Vec::new();
    let mut contains = Vec::new();
    for t in texts.iter().filter(|t| t.purpose == purpose) {
        let text = t.text.to_lowercase();
        if text.starts_with(&typed) || t.code.starts_with(&typed) {
            starts.push(t);
        } else if text.contains(&typed) || t.code.contains(&typed) {
            contains.push(t);
        }
    }
    starts.extend(contains);
    starts
}

/// How a reason is counted in `report --by reason`: its code, else `other` for a free
/// text, else `(none)` when nothing was said.
pub fn reason_group(code: Option<&str>, text: Option<&str>) -> String {
    match (code, text.map(str::trim).filter(|t| !t.is_empty())) {
        (Some(c), _) if !c.is_empty() => c.to_string(),
        (_, Some(_)) => "other".to_string(),
        _ => "(none)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(purpose: Purpose, code: &str, text: &str) -> CannedText {
        CannedText {
            queue: "q".into(),
            purpose,
            code: code.into(),
            text: text.into(),
        }
    }

    #[test]
    fn purposes_parse_and_name_the_others() {
        for p in Purpose::ALL {
            assert_eq!(Purpose::parse(p.as_str()), Ok(p));
        }
        assert_eq!(Purpose::parse(" FAIL "), Ok(Purpose::Fail));
        let e = Purpose::parse("fial").unwrap_err();
        assert!(
            e.contains("result, fail, skip, release, park, comment"),
            "{e}"
        );
    }

    #[test]
    fn codes_are_checked_and_derived() {
        assert!(validate_code("no-answer_2").is_ok());
        assert!(validate_code("").is_err());
        assert!(validate_code("No").is_err());
        assert!(validate_code("a b").is_err());
        assert!(validate_code(&"x".repeat(33)).is_err());
        assert_eq!(
            code_for("Needs a Spanish speaker!"),
            "needs-a-spanish-speaker"
        );
        assert_eq!(code_for("Ügyfél nem válaszol"), "gyfl-nem-vlaszol");
        assert_eq!(code_for("—"), "text");
        let long = code_for("customer asked us to call back after the holidays are over");
        assert!(
            long.len() <= MAX_CODE_CHARS && validate_code(&long).is_ok(),
            "{long}"
        );
    }

    #[test]
    fn canned_texts_are_one_line() {
        assert_eq!(check_canned("  no answer "), Ok("no answer"));
        assert!(check_canned(" ").is_err());
        assert!(check_canned("a\nb").is_err());
        assert!(check_canned(&"x".repeat(201)).is_err());
    }

    #[test]
    fn matching_prefers_starts_and_keeps_the_purpose() {
        let all = [
            t(Purpose::Skip, "spanish", "needs a Spanish speaker"),
            t(Purpose::Skip, "docs", "waiting for documents"),
            t(Purpose::Fail, "no-answer", "no answer"),
            t(Purpose::Skip, "na", "no answer twice"),
        ];
        let codes = |typed| -> Vec<&str> {
            matching(&all, Purpose::Skip, typed)
                .iter()
                .map(|t| t.code.as_str())
                .collect()
        };
        assert_eq!(codes(""), ["spanish", "docs", "na"]);
        assert_eq!(codes("NO"), ["na"]);
        assert_eq!(codes("doc"), ["docs"]);
        assert_eq!(codes("speaker"), ["spanish"]);
        assert!(codes("zzz").is_empty());
    }

    #[test]
    fn said_drops_blanks_and_reasons_group() {
        assert_eq!(Said::text(Some("  ")), Said::NOTHING);
        assert_eq!(Said::text(Some(" x ")).coded(Some(" ")).text, Some("x"));
        assert_eq!(reason_group(Some("docs"), Some("w")), "docs");
        assert_eq!(reason_group(None, Some("w")), "other");
        assert_eq!(reason_group(None, Some(" ")), "(none)");
        assert_eq!(reason_group(None, None), "(none)");
    }
}
