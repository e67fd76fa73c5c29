//! A checklist field: lines to tick (an order's SKUs for per-line picking, the checks of
//! a KYC review). The lines come with the item (a JSON list in `params`, or text with
//! one line per `;` or line break as an import brings it), else from the field's fixed
//! lines (`--choices`). Stored as a list of `{"line", "done", "reason"?}`; each tick is a
//! holder's fenced write with a `field_changed` event (`line`, `from` → `to` as
//! [`LineState::as_text`] words them). Complete needs every line done or given a reason.

use serde_json::{Map, Value, json};

use super::FieldDef;
use super::rules::Problem;

/// Where a line stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineState {
    /// Not ticked yet.
    Todo,
    /// Ticked.
    Done,
    /// Not done, for a reason (out of stock, document missing).
    NotDone(String),
}

impl LineState {
    /// The state in the words of the history: `todo`, `done`, `not done: REASON`.
    pub fn as_text(&self) -> String {
        match self {
            LineState::Todo => "todo".into(),
            LineState::Done => "done".into(),
            LineState::NotDone(r) => format!("not done: {r}"),
        }
    }

    /// True when Complete accepts it.
    pub fn settled(&self) -> bool {
        !matches!(self, LineState::Todo)
    }
}

/// One line of a checklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub line: String,
    pub state: LineState,
}

/// A checklist's lines, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checklist {
    pub lines: Vec<Line>,
}

impl Checklist {
    /// The checklist a stored value holds (none: the field's fixed lines, all to do);
    /// `None` for a value that is no list of lines.
    pub fn of(def: &FieldDef, stored: Option<&Value>) -> Option<Checklist> {
        let todo = |l: &str| Line {
            line: l.trim().to_string(),
            state: LineState::Todo,
        };
        let lines = match stored {
            None | Some(Value::Null) => def.choices.iter().map(|c| todo(c)).collect(),
            Some(Value::String(s)) => Self::from_text(s)?.lines,
            Some(Value::Array(a)) => a.iter().map(line_of).collect::<Option<Vec<_>>>()?,
            Some(_) => return None,
        };
        Some(Checklist { lines })
    }

    /// Lines as an import gives them: a JSON list, or text split at `;` and line breaks.
    pub fn from_text(s: &str) -> Option<Checklist> {
        if s.trim_start().starts_with('[') {
            let v: Value = serde_json::from_str(s).ok()?;
            let Value::Array(a) = v else { return None };
            let lines = a.iter().map(line_of).collect::<Option<Vec<_>>>()?;
            return Some(Checklist { lines });
        }
        let lines = s
            .split([';', '\n'])
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| Line {
                line: l.to_string(),
                state: LineState::Todo,
            })
            .collect();
        Some(Checklist { lines })
    }

    /// The lines as stored in `params`.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.lines
                .iter()
                .map(|l| {
                    let mut m = Map::new();
                    m.insert("line".into(), json!(l.line));
                    m.insert("done".into(), json!(l.state == LineState::Done));
                    if let LineState::NotDone(r) = &l.state {
                        m.insert("reason".into(), json!(r));
                    }
                    Value::Object(m)
                })
                .collect(),
        )
    }

    /// The line named `line` (exactly, else ignoring case), by index.
    pub fn find(&self, line: &str) -> Option<usize> {
        let l = line.trim();
        (self.lines.iter().position(|x| x.line == l)).or_else(|| {
            self.lines
                .iter()
                .position(|x| x.line.eq_ignore_ascii_case(l))
        })
    }

    /// Complete's rule: every line done or given a reason (and a required list not empty).
    pub fn check(&self, required: bool) -> Result<(), Problem> {
        if required && self.lines.is_empty() {
            return Err(Problem::Required);
        }
        let open: Vec<String> = self
            .lines
            .iter()
            .filter(|l| !l.state.settled())
            .map(|l| l.line.clone())
            .collect();
        match open.is_empty() {
            true => Ok(()),
            false => Err(Problem::Unticked { lines: open }),
        }
    }

    /// How many lines are settled, of how many: "2/3 ticked".
    pub fn summary(&self) -> String {
        let n = self.lines.iter().filter(|l| l.state.settled()).count();
        format!("{n}/{} ticked", self.lines.len())
    }
}

/// One stored line: text (to do), or `{"line", "done", "reason"?}`.
fn line_of(v: &Value) -> Option<Line> {
    match v {
        Value::String(s) => Some(Line {
            line: s.trim().to_string(),
            state: LineState::Todo,
        }),
        Value::Object(m) => {
            let line = m.get("line").and_then(Value::as_str)?;
            let reason = m
                .get("reason")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|r| !r.is_empty());
            let state = match (m.get("done").and_then(Value::as_bool), reason) {
                (Some(true), _) => LineState::Done,
                (_, Some(r)) => LineState::NotDone(r.to_string()),
                _ => LineState::Todo,
            };
            Some(Line {
                line: line.trim().to_string(),
                state,
            })
        }
        _ => None,
    }
}
