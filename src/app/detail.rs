//! The detail pane's text, built once when an item is opened (wrapped to the screen's
//! width, sanitized), so drawing only slices a screenful of short lines.

use super::{Detail, DetailLine, LineKind, State};
use crate::domain::fields::{Col, FIELDS, Kind, Pane};
use crate::domain::figures::ItemFigures;
use crate::domain::sanitize;
use crate::domain::time::date_hm_in;
use crate::domain::{Cell, Comment, Event, Item};

/// JSON text pretty-printed (as it is when it is not JSON).
fn pretty_json(t: &str) -> String {
    serde_json::from_str::<serde_json::Value>(t)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| t.to_string())
}

pub(super) fn rebuild_detail(s: &mut State) {
    if let Some(d) = s.detail.take() {
        let scroll = d.scroll;
        let mut nd = build_detail_with(s, d.item, d.history, d.comments);
        nd.scroll = scroll.min(nd.lines.len().saturating_sub(1));
        s.detail = Some(nd);
    }
}

/// Wraps text to `width` characters at spaces (hard-splitting longer words), once, when
/// the detail is built: drawing then only handles a screenful of short lines, so a 1 MiB
/// one-line body scrolls as fast as a short one.
pub(super) fn push_text(lines: &mut Vec<DetailLine>, width: usize, text: &str, kind: LineKind) {
    let clean = sanitize::text(text);
    for l in clean.split('\n') {
        if l.len() <= width {
            lines.push(DetailLine {
                kind,
                text: l.to_string(),
            });
            continue;
        }
        let mut cur = String::new();
        let mut cur_n = 0;
        for word in l.split_inclusive(' ') {
            let n = word.chars().count();
            if cur_n + n > width && cur_n > 0 {
                lines.push(DetailLine {
                    kind,
                    text: std::mem::take(&mut cur),
                });
                cur_n = 0;
            }
            if n > width {
                let chars: Vec<char> = word.chars().collect();
                let mut chunks = chars.chunks(width).peekable();
                while let Some(c) = chunks.next() {
                    if chunks.peek().is_some() {
                        lines.push(DetailLine {
                            kind,
                            text: c.iter().collect(),
                        });
                    } else {
                        cur = c.iter().collect();
                        cur_n = c.len();
                    }
                }
            } else {
                cur.push_str(word);
                cur_n += n;
            }
        }
        if cur_n > 0 {
            lines.push(DetailLine { kind, text: cur });
        }
    }
}

pub(super) fn heading(lines: &mut Vec<DetailLine>, text: &str) {
    if !lines.is_empty() {
        lines.push(DetailLine {
            kind: LineKind::Text,
            text: String::new(),
        });
    }
    lines.push(DetailLine {
        kind: LineKind::Heading,
        text: text.to_string(),
    });
}

/// The detail pane's text: body, params, notes (and any unsaved draft), history.
pub(super) fn build_detail(s: &State, item: Item, history: Vec<Event>) -> Detail {
    build_detail_with(s, item, history, Vec::new())
}

/// The detail pane's text with the item's comment thread: a title too long for the
/// header line in full, body, params, notes (and any unsaved draft), comments, history.
pub(super) fn build_detail_with(
    s: &State,
    item: Item,
    history: Vec<Event>,
    comments: Vec<Comment>,
) -> Detail {
    let w = (s.width as usize).max(20);
    let mut lines = Vec::new();
    super::review::push_banner(&mut lines, w, &item, &history);
    let when = |t| date_hm_in(t, s.zone);
    // The first line: who created it and when, then the table's `Meta` columns.
    let mut meta = format!("created {} by {}", when(item.created_at), item.created_by);
    for f in FIELDS.iter() {
        let Pane::Meta(word) = f.pane else { continue };
        match item.cell(f.col) {
            Cell::Number(n) => meta.push_str(&format!(" · {word} {n}")),
            Cell::Time(t) => {
                let t = t.map_or_else(|| "none".to_string(), when);
                meta.push_str(&format!(" · {word} {t}"));
            }
            Cell::Text(Some(t)) => meta.push_str(&format!(" · {word} {t}")),
            Cell::Id(Some(id)) => meta.push_str(&format!(" · {word} #{id}")),
            Cell::Text(None) | Cell::Id(None) => {}
        }
    }
    push_text(&mut lines, w, &sanitize::line(&meta), LineKind::Dim);
    let figures = ItemFigures::of(&item, &history, s.now).sentence();
    push_text(&mut lines, w, &sanitize::line(&figures), LineKind::Dim);
    super::review::push_review(&mut lines, w, s, &item, &history);
    if let Some(why) = item.unreadable_summary() {
        let note = format!("unreadable: {why} (bad bytes shown as \u{FFFD})");
        push_text(&mut lines, w, &note, LineKind::Heading);
    }
    // The header line shows what fits of the title beside the lock; a longer one is
    // shown here in full.
    let head = format!("#{} [{} · pri {}] ", item.id, item.queue, item.priority);
    if head.chars().count() + item.title.chars().count() + 50 > w {
        heading(&mut lines, "Title");
        push_text(&mut lines, w, &item.title, LineKind::Text);
    }
    push_sections(&mut lines, w, s, &item);
    push_thread(&mut lines, w, s, &comments);
    push_history(&mut lines, w, s, &history);
    Detail {
        item,
        history,
        comments,
        lines,
        scroll: 0,
    }
}

/// The sections of the columns the field table gives one (`Pane::Section`), in its
/// order, with what was typed but not saved after the notes.
fn push_sections(lines: &mut Vec<DetailLine>, w: usize, s: &State, item: &Item) {
    for f in FIELDS.iter() {
        let Pane::Section { empty } = f.pane else {
            continue;
        };
        if f.col == Col::Params {
            super::form::push_lines(lines, s, item);
        }
        let text = match item.cell(f.col) {
            _ if f.col == Col::Params && super::form::other_params(s, item).is_some() => {
                super::form::other_params(s, item).flatten()
            }
            Cell::Text(Some(t)) if f.kind == Kind::Json => Some(pretty_json(t)),
            Cell::Text(Some(t)) if !t.is_empty() => Some(t.to_string()),
            Cell::Number(n) => Some(n.to_string()),
            Cell::Time(Some(t)) => Some(date_hm_in(t, s.zone)),
            Cell::Id(Some(id)) => Some(format!("#{id}")),
            _ => None,
        };
        match (text, empty) {
            (Some(t), _) => {
                heading(lines, f.label);
                push_text(lines, w, &t, LineKind::Text);
            }
            (None, Some(e)) => {
                heading(lines, f.label);
                push_text(lines, w, e, LineKind::Dim);
            }
            (None, None) => {}
        }
        if f.col == Col::Params {
            push_similar(lines, w, s, item);
        }
        if f.col != Col::Notes {
            continue;
        }
        if let Some(d) = s.drafts.get(&item.id) {
            heading(lines, "Unsaved notes (kept; e edits, Ctrl-S saves)");
            push_text(lines, w, d, LineKind::Text);
        }
        if let Some(k) = s.kept.get(&item.id) {
            heading(
                lines,
                "Typed when the lock was lost (kept; offered as a comment)",
            );
            push_text(lines, w, k, LineKind::Text);
        }
    }
}

/// The "Possibly the same (N)" box under the fields, when the item has candidates: one
/// line each, `#id  state (by who)  title  (why)`.
fn push_similar(lines: &mut Vec<DetailLine>, w: usize, s: &State, item: &Item) {
    let Some(b) = s.similar.as_ref().filter(|b| b.item_id == item.id) else {
        return;
    };
    if b.candidates.is_empty() {
        return;
    }
    let keys = match b.focus {
        Some(_) => "Space look · M merge into · N not the same · Esc out",
        None => "D to choose one",
    };
    heading(
        lines,
        &format!("Possibly the same ({})  {keys}", b.candidates.len()),
    );
    for (i, c) in b.candidates.iter().enumerate() {
        let by = c
            .finished_by
            .as_ref()
            .map_or_else(String::new, |b| format!(" by {b}"));
        let text = format!(
            "#{}  {}{by}  {}  ({})",
            c.id,
            c.state.as_str(),
            c.title,
            c.why()
        );
        let mut line: String = sanitize::line(&text).chars().take(w).collect();
        line.insert_str(0, "  ");
        lines.push(DetailLine {
            kind: LineKind::Candidate(i),
            text: line,
        });
    }
}

/// The comment thread, oldest first: author and time, then the text.
fn push_thread(lines: &mut Vec<DetailLine>, w: usize, s: &State, comments: &[Comment]) {
    if comments.is_empty() {
        return;
    }
    heading(lines, &format!("Comments ({})", comments.len()));
    for c in comments {
        let head = format!("{}  {}", date_hm_in(c.at, s.zone), c.author);
        push_text(lines, w, &sanitize::line(&head), LineKind::Dim);
        push_text(lines, w, &c.text, LineKind::Text);
    }
}

/// The history: one line per event, with what its detail says.
fn push_history(lines: &mut Vec<DetailLine>, w: usize, s: &State, history: &[Event]) {
    heading(lines, "History");
    for e in history {
        let extra = match e.kind {
            crate::domain::EventKind::FieldChanged => {
                crate::domain::queue_fields::change_text(&e.detail)
            }
            _ => extras(&e.detail),
        };
        let line = format!(
            "{}  {:<10} {}{}",
            date_hm_in(e.at, s.zone),
            e.kind.as_str(),
            crate::domain::audit::acting(&e.actor, &e.os_user),
            if extra.is_empty() {
                String::new()
            } else {
                format!("  ({extra})")
            }
        );
        push_text(lines, w, &sanitize::line(&line), LineKind::Dim);
    }
}

/// What an event's detail adds to its history line: its reason, result, field …
fn extras(detail: &serde_json::Value) -> String {
    ["field", "result", "reason", "comment", "to", "from", "was"]
        .iter()
        .filter_map(|k| match detail.get(k)? {
            serde_json::Value::String(v) => Some(format!("{k}: {v}")),
            serde_json::Value::Number(n) => Some(format!("{k}: {n}")),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(", ")
}
