//! The TUI's state and logic, Elm style: [`update`] takes the state and a [`Msg`] and
//! returns [`Effect`]s for the loop (`tui/`) to run against the Store; their results
//! come back as messages. Nothing here touches the store or reads the clock.
//!
//! Here: the [`State`] and what it is made of; `msg` (messages and effects), `dialog`
//! (the one dialog mechanism), `filter` (the list filters), `keymap` (the one key table),
//! `detail` (the detail pane's text; `review` its lines for reviewing and the maker's
//! rejection banner), `layout`, `lost`, `textinput` (text entry over
//! ratatui-textarea); and `update/`, one short function per message (`keys`, `modes`,
//! `results`, `supervise`, and `preview` and `assign` for looking before taking, comments
//! and work given to people).

mod detail;
mod dialog;
pub mod field_admin;
mod filter;
pub mod form;
pub(crate) mod hints;
pub mod keymap;
pub mod layout;
pub mod lost;
mod msg;
pub(crate) mod notify;
pub mod review;
pub(crate) mod textinput;
pub(crate) mod typing;
mod update;

use std::collections::BTreeMap;

use crate::domain::figures::PeriodKind;
use crate::domain::time::Zone;
use crate::domain::{Comment, Event, Item, LockStatus, Millis, QueueSettings, Role};
use crate::store::{LostLock, Report as FiguresReport, Stats};
pub use dialog::{Dialog, Field, FieldSpec, Menu, Offer, Pending};
pub(crate) use filter::{Filter, list_filter, locks_filter};
pub use msg::{
    Call, Effect, FieldWrite, Finish, LockCheck, Msg, RefreshRequest, Resume, Snapshot,
    SupervisorOp,
};
pub use notify::{Alerting, Signal};
pub use textinput::TextInput;
pub use typing::Typing;
pub use update::update;

/// How often the loop ticks when no key arrives (countdowns, live refresh).
pub(crate) const TICK_MS: u64 = 500;

/// The views: four always, and Review (`5`) where queues are reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Queue,
    Mine,
    Locks,
    Stats,
    /// Items waiting for review that the user may review (not their own work).
    Review,
}

impl View {
    pub(crate) const ALL: [View; 5] = [
        View::Queue,
        View::Mine,
        View::Locks,
        View::Stats,
        View::Review,
    ];

    pub(crate) fn title(self) -> &'static str {
        match self {
            View::Queue => "Queue",
            View::Mine => "Mine",
            View::Locks => "Locks",
            View::Stats => "Stats",
            View::Review => "Review",
        }
    }
}

/// The list views' windows, one each, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Panes {
    pub queue: ListPane,
    pub mine: ListPane,
    pub locks: ListPane,
    pub review: ListPane,
}

impl Panes {
    /// The window of a list view (Stats has none).
    pub(crate) fn of(&self, view: View) -> Option<&ListPane> {
        match view {
            View::Queue => Some(&self.queue),
            View::Mine => Some(&self.mine),
            View::Locks => Some(&self.locks),
            View::Review => Some(&self.review),
            View::Stats => None,
        }
    }

    fn of_mut(&mut self, view: View) -> Option<&mut ListPane> {
        match view {
            View::Queue => Some(&mut self.queue),
            View::Mine => Some(&mut self.mine),
            View::Locks => Some(&mut self.locks),
            View::Review => Some(&mut self.review),
            View::Stats => None,
        }
    }
}

/// A window onto a list: the rows loaded, where the window on screen starts and which
/// position is selected. The window moves at once on a key; its rows follow when the
/// store answers (at once, or after a call that waits for the database), and until then
/// positions not loaded show as not loaded rather than as their neighbours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListPane {
    pub rows: Vec<Item>,
    /// How many items match in all.
    pub total: u64,
    /// Position of the window's first row in the whole list.
    pub offset: usize,
    /// Position of `rows[0]` in the whole list.
    pub rows_at: usize,
    /// Selected position in the whole list.
    pub selected: usize,
    /// The filter its rows answer to (the view's filter may be newer: a search on its
    /// way shows these, marked as older).
    pub filter: Filter,
}

impl ListPane {
    /// The item at a position of the whole list, if it is loaded.
    pub(crate) fn item_at(&self, position: usize) -> Option<&Item> {
        position
            .checked_sub(self.rows_at)
            .and_then(|i| self.rows.get(i))
    }

    /// The selected item, if it is loaded.
    pub fn selected_item(&self) -> Option<&Item> {
        self.item_at(self.selected)
    }

    /// The window of `n` rows: each position with its item, `None` while not loaded.
    pub fn window(&self, n: usize) -> impl Iterator<Item = (usize, Option<&Item>)> {
        let end = (self.offset + n).min(self.total as usize);
        (self.offset..end).map(|p| (p, self.item_at(p)))
    }
}

/// A lock the TUI believes the user holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub id: i64,
    pub token: i64,
    /// When the lock was taken (an assignment: `domain::lock::ASSIGNED` until opened).
    pub lock_time: Millis,
    /// When it expires (set at the take and at each renewal).
    pub lock_expires_at: Millis,
    pub queue: String,
    pub title: String,
    /// When it arrived and is due (for its SLA's warning).
    pub created_at: Millis,
    pub due_at: Option<Millis>,
}

impl Held {
    pub fn of(item: &Item) -> Held {
        Held {
            id: item.id,
            token: item.lock_token,
            lock_time: item.lock_time.unwrap_or(0),
            lock_expires_at: item.lock_expires_at.or(item.lock_time).unwrap_or(0),
            queue: item.queue.clone(),
            title: item.title.clone(),
            created_at: item.created_at,
            due_at: item.due_at,
        }
    }

    pub(crate) fn lock(&self, user: &str) -> crate::domain::Lock {
        crate::domain::Lock {
            user: user.to_string(),
            time: self.lock_time,
            expires: self.lock_expires_at,
            token: self.token,
        }
    }
}

/// A line of the detail pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailLine {
    pub kind: LineKind,
    /// Already sanitized.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Heading,
    Text,
    Dim,
    /// The form's row of this slot (drawn from the state: `app::form`).
    Field(usize),
    /// Candidate `0` of the "Possibly the same" box (highlighted when selected).
    Candidate(usize),
}

/// The candidates of the item open in the detail pane (`domain::duplicates`).
#[derive(Debug, Clone, PartialEq)]
pub struct SimilarBox {
    pub item_id: i64,
    pub candidates: Vec<crate::domain::duplicates::Candidate>,
    /// The selected candidate, while the box has the focus (`D`).
    pub focus: Option<usize>,
}

/// The item open in the detail pane.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    pub item: Item,
    pub history: Vec<Event>,
    /// The item's comment thread (arrives just after the item).
    pub comments: Vec<Comment>,
    pub lines: Vec<DetailLine>,
    pub scroll: usize,
}

/// A lock the user lost, as told to them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub item_id: i64,
    pub message: String,
    pub at: Millis,
}

/// A read-only text pane over the list: what a user did today.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub title: String,
    pub lines: Vec<DetailLine>,
    pub scroll: usize,
}

/// The notes editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Editor {
    pub item_id: i64,
    pub buf: TextInput,
    /// The notes as saved, to tell whether anything is unsaved.
    pub original: String,
    pub saving: bool,
}

/// A change the user asked for that has not been answered yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doing {
    /// "completing #42".
    pub what: String,
    /// The dialog it was confirmed in, as typed: shown again when the change fails for a
    /// reason worth trying again, so nothing typed is lost.
    pub dialog: Option<Dialog>,
}

/// The `/` prompt searches as you type, this long after the last key.
pub(crate) const FILTER_DEBOUNCE_MS: Millis = 250;

/// A second `n` within this long of one that took an item takes nothing (it says so).
pub(crate) const DOUBLE_TAKE_MS: i64 = 1500;

/// How long an information line stays in the status bar; errors stay three times as long.
pub(crate) const STATUS_FADE_MS: i64 = 10_000;

/// How long a store call runs before the status bar says what it is waiting for.
pub(crate) const WAIT_NOTICE_MS: i64 = 1000;

/// A one-line message at the bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
    /// When it was said (it fades after [`STATUS_FADE_MS`]).
    pub at: Millis,
}

/// Everything the screen shows and the keys act on.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub me: String,
    pub role: Role,
    /// False until the store told the role (till then `role` is staff, and supervisor
    /// keys say why they are refused).
    pub role_known: bool,
    pub now: Millis,
    /// The zone times are shown in (the TUI sets the local zone; UTC in tests).
    pub zone: Zone,
    pub width: u16,
    pub height: u16,
    /// False under NO_COLOR.
    pub color: bool,
    /// The colours chosen in the config file (`theme`).
    pub palette: crate::config::Palette,
    pub view: View,
    /// Queue, Mine and Locks windows.
    pub panes: Panes,
    pub filter: Filter,
    /// The Locks view's filter (`holder:bob queue:helpdesk state:expired`).
    pub locks_filter: Filter,
    /// The `/` prompt while typing.
    pub filter_prompt: Option<TextInput>,
    /// The view's filter when `/` was pressed: Esc puts it back.
    pub filter_before: Option<Filter>,
    /// When the prompt's text last changed and was not searched yet: the search starts
    /// [`FILTER_DEBOUNCE_MS`] after the last key.
    pub filter_typed: Option<Millis>,
    /// The `:` (or `#`) prompt while typing an item's id.
    pub goto_prompt: Option<TextInput>,
    /// Known users' names, for completing names in the reassign and assign dialogs.
    pub users: Vec<String>,
    /// Every queue's ready-made texts, offered with Tab in the dialogs that take one.
    pub texts: Vec<crate::domain::texts::CannedText>,
    pub queues: BTreeMap<String, QueueSettings>,
    pub held: BTreeMap<i64, Held>,
    /// The user's parked items (a call-back), as the last refresh read them.
    pub parked: Vec<crate::domain::Item>,
    /// Parked items whose wake the user was told of (once each).
    pub woke: std::collections::BTreeSet<i64>,
    /// The user's last complete, fail, release, skip or park, which `u` may undo within
    /// its queue's undo window.
    pub undo: Option<UndoOffer>,
    pub detail: Option<Detail>,
    pub editor: Option<Editor>,
    /// Each queue's field definitions, in their order (for the detail's form).
    pub fields: BTreeMap<String, Vec<crate::domain::queue_fields::FieldDef>>,
    /// The detail's form: its focus, a field being edited or saved.
    pub form: Option<form::Form>,
    /// The open item's "Possibly the same" box (issue 27): its candidates, read by the
    /// store worker after the item opened, and the one selected when the box has focus.
    pub similar: Option<SimilarBox>,
    /// A queue's field definitions, listed over the Stats view (supervisors).
    pub field_admin: Option<field_admin::FieldAdmin>,
    /// Notes typed but not saved, by item.
    pub drafts: BTreeMap<i64, String>,
    pub dialog: Option<Dialog>,
    /// A notice over the screen that lets keys through ("Work for you", "Lock lost");
    /// Enter or Esc closes it (Enter does what it offers).
    pub notice: Option<Dialog>,
    /// Text typed for an item whose lock was lost before it could be used (a result or a
    /// reason, in a dialog or sent): offered as a comment with its unsaved notes.
    pub kept: BTreeMap<i64, String>,
    /// The help screen, scrolled this many lines.
    pub help: Option<u16>,
    pub status: Option<Status>,
    /// Lost-lock notices of this session, newest first.
    pub notices: Vec<Notice>,
    /// Locks lost since the last visit (from startup).
    pub lost_since: Vec<LostLock>,
    /// "You have N unfinished items" at startup.
    pub resume_line: Option<String>,
    /// Items skipped or released this session: `n` offers them again only when nothing
    /// else is left.
    pub skipped: Vec<i64>,
    /// A take-next asked for with `n` is on its way (when it finds nothing but skipped
    /// items, those are offered again).
    pub next_by_key: bool,
    /// A skip of this item is on its way: the take-next that follows it offers the items
    /// skipped before again when nothing else is left, but never this one.
    pub skipping: Option<i64>,
    /// The take-next on its way offers skipped items again: how many were skipped.
    pub reoffered: Option<usize>,
    pub stats: Option<Stats>,
    /// The SLA figures shown with the Stats view's.
    pub sla_watch: Option<crate::domain::sla::SlaWatch>,
    /// Every queue's SLA, by queue (rows show working time left).
    pub slas: BTreeMap<String, crate::domain::sla::Sla>,
    /// Held items whose holder was warned that 75 % of their SLA is spent.
    pub sla_warned: std::collections::BTreeSet<i64>,
    /// The selected queue of the Stats view (an index into `stats.by_queue`).
    pub stats_selected: usize,
    /// The Stats view's figures page and its period (`p`); `None` shows the overview.
    pub figures_period: Option<PeriodKind>,
    /// The figures of `figures_period`, once loaded.
    pub figures: Option<(PeriodKind, FiguresReport)>,
    /// The corrections of `figures_period` (by field, by source), once loaded.
    pub corrections: Option<(PeriodKind, Corrections)>,
    /// The order of the figures page's people table (`o`).
    pub figures_sort: PeopleSort,
    /// A user's activity, shown over the list (Esc closes).
    pub report: Option<Report>,
    /// The last seen change marker.
    pub marker: Option<u64>,
    /// A renewal is on its way (one at a time).
    pub renewing: Option<i64>,
    /// The database server cannot be reached; every tick tries again.
    pub offline: bool,
    /// Why every change is refused (a standby in recovery, a read-only file): the screen
    /// lists read-only under a banner. Learnt with every good refresh.
    pub read_only: Option<String>,
    /// The change under way (one at a time).
    pub doing: Option<Doing>,
    /// The store call the loop's worker is running, if any.
    pub call: Option<Call>,
    /// Told when work arrives: the `notify` setting, what the alerts have seen, and the
    /// signals (bell, desktop notice, title) for the loop to write.
    pub alerting: Alerting,
    pub quit: bool,
    /// Ctrl-Z: the loop hands the terminal back to the shell, then resumes.
    pub suspend: bool,
    /// When `n` last asked for the next item (a second `n` right after takes nothing).
    pub last_take_next: Option<Millis>,
    /// The item whose draft notes go with the change under way (release, skip, complete,
    /// fail), so the user is told they were saved.
    pub finish_notes: Option<i64>,
    /// The typing guard: keys typed by mistake into the lists change nothing.
    pub typing: Typing,
}

/// A change of the user's that `u` may take back: which item, when, what it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoOffer {
    pub id: i64,
    pub at: Millis,
    /// "Completed", "Parked", …
    pub verb: &'static str,
    /// How long it is offered (its queue's undo window).
    pub window_ms: i64,
}

/// Which data was dirty over a period: the records completed in it, corrections by field
/// and by source (as `caseload report --by field|source` gives them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Corrections {
    pub records: usize,
    pub fields: Vec<crate::domain::corrections::FieldFigure>,
    pub sources: Vec<crate::domain::corrections::SourceFigure>,
}

/// The order of the Stats figures page's people table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PeopleSort {
    /// Most completions first.
    #[default]
    Done,
    /// Shortest median handle time first (people without one last).
    Median,
    /// Most locks lost first.
    Lost,
}

impl PeopleSort {
    pub(crate) fn label(self) -> &'static str {
        match self {
            PeopleSort::Done => "done",
            PeopleSort::Median => "median handle time",
            PeopleSort::Lost => "locks lost",
        }
    }

    pub(crate) fn next(self) -> PeopleSort {
        match self {
            PeopleSort::Done => PeopleSort::Median,
            PeopleSort::Median => PeopleSort::Lost,
            PeopleSort::Lost => PeopleSort::Done,
        }
    }

    /// Sorts the people of a report in this order (names break ties).
    pub(crate) fn sort(self, people: &mut [&crate::store::Figures]) {
        people.sort_by(|a, b| {
            let key = match self {
                PeopleSort::Done => b.completed.cmp(&a.completed),
                PeopleSort::Median => match (a.handle_median_ms, b.handle_median_ms) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                },
                PeopleSort::Lost => b.lost.cmp(&a.lost),
            };
            key.then(a.name.cmp(&b.name))
        });
    }
}

impl State {
    /// The state before anything is loaded.
    pub fn new(me: &str, now: Millis, width: u16, height: u16, color: bool) -> State {
        State {
            me: me.to_string(),
            role: Role::Staff,
            role_known: false,
            now,
            zone: Zone::Utc,
            width,
            height,
            color,
            palette: crate::config::Palette::Any,
            view: View::Queue,
            panes: Default::default(),
            filter: Filter::default(),
            locks_filter: Filter::default(),
            filter_prompt: None,
            filter_before: None,
            filter_typed: None,
            goto_prompt: None,
            users: Vec::new(),
            texts: Vec::new(),
            queues: BTreeMap::new(),
            undo: None,
            parked: Vec::new(),
            woke: Default::default(),
            held: BTreeMap::new(),
            detail: None,
            editor: None,
            fields: BTreeMap::new(),
            form: None,
            similar: None,
            field_admin: None,
            drafts: BTreeMap::new(),
            dialog: None,
            notice: None,
            kept: BTreeMap::new(),
            help: None,
            status: None,
            notices: Vec::new(),
            lost_since: Vec::new(),
            resume_line: None,
            skipped: Vec::new(),
            next_by_key: false,
            skipping: None,
            reoffered: None,
            stats: None,
            sla_watch: None,
            slas: BTreeMap::new(),
            sla_warned: Default::default(),
            stats_selected: 0,
            figures_period: None,
            figures: None,
            corrections: None,
            figures_sort: PeopleSort::Done,
            report: None,
            marker: None,
            renewing: None,
            offline: false,
            read_only: None,
            doing: None,
            call: None,
            alerting: Alerting::default(),
            quit: false,
            suspend: false,
            last_take_next: None,
            finish_notes: None,
            typing: Typing::default(),
        }
    }

    /// The views the tab bar shows and Tab cycles through: Review only where a queue
    /// is reviewed (`5` opens it anyway).
    pub(crate) fn views(&self) -> Vec<View> {
        let reviewed = self.view == View::Review
            || self
                .queues
                .values()
                .any(|q| q.review_percent > 0 || q.review_new > 0);
        View::ALL
            .into_iter()
            .filter(|v| *v != View::Review || reviewed)
            .collect()
    }

    /// The settings of `queue` (defaults until loaded).
    pub(crate) fn queue(&self, queue: &str) -> QueueSettings {
        self.queues
            .get(queue)
            .cloned()
            .unwrap_or_else(|| QueueSettings::new(queue))
    }

    /// An item's lock as shown at `now`.
    pub fn lock_status(&self, item: &Item) -> LockStatus {
        crate::domain::lock::status_of(item.lock().as_ref(), self.now)
    }

    /// What would be added as a comment for an item whose lock is gone: its unsaved notes
    /// and any result or reason typed for it, if there is any.
    pub fn unsent(&self, id: i64) -> Option<String> {
        let parts: Vec<&str> = [self.drafts.get(&id), self.kept.get(&id)]
            .into_iter()
            .flatten()
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    /// When the loop must come back without a key: a key the typing guard held back, a
    /// search typed at `/` to start.
    pub fn wake_at(&self) -> Option<Millis> {
        let search = self.filter_typed.map(|at| at + FILTER_DEBOUNCE_MS);
        [self.typing.wake_at(), search].into_iter().flatten().min()
    }

    /// The view's filter as asked, and true when its rows answer an older one (a search
    /// on its way).
    pub(crate) fn filter_of(&self, view: View) -> Option<(&Filter, bool)> {
        let (asked, pane) = match view {
            View::Queue => (&self.filter, &self.panes.queue),
            View::Locks => (&self.locks_filter, &self.panes.locks),
            _ => return None,
        };
        Some((asked, *asked != pane.filter))
    }

    /// The pane of a list view.
    pub(crate) fn pane(&self, view: View) -> Option<&ListPane> {
        self.panes.of(view)
    }

    fn pane_mut(&mut self, view: View) -> Option<&mut ListPane> {
        self.panes.of_mut(view)
    }

    /// The waiting line, once a store call has run for [`WAIT_NOTICE_MS`]: what waits, on
    /// what, and for how long ("Completing #42: waiting for the database — another
    /// program holds it (12 s)").
    pub fn waiting(&self) -> Option<String> {
        let call = self.call.as_ref()?;
        let ms = self.now.saturating_sub(call.since);
        if ms < WAIT_NOTICE_MS {
            return None;
        }
        let what = self.doing.as_ref().map_or(&call.what, |d| &d.what);
        let mut what_cap = what.clone();
        if let Some(first) = what_cap.get_mut(..1) {
            first.make_ascii_uppercase();
        }
        let holder = if call.writes {
            " — another program holds it"
        } else {
            ""
        };
        Some(format!(
            "{what_cap}: waiting for the database{holder} ({} s)",
            ms / 1000
        ))
    }

    /// Alerts about held locks: (id, text, expired). Expired first, then warnings.
    pub fn lock_alerts(&self) -> Vec<LockAlert> {
        let mut out = Vec::new();
        for h in self.held.values() {
            let q = self.queue(&h.queue);
            let lock = h.lock(&self.me);
            match lock.status(self.now) {
                LockStatus::Expired { overrun, .. } => out.push(LockAlert {
                    id: h.id,
                    expired: true,
                    ms: overrun,
                }),
                LockStatus::Held { remaining, .. } if lock.in_warning(&q, self.now) => {
                    out.push(LockAlert {
                        id: h.id,
                        expired: false,
                        ms: remaining,
                    })
                }
                _ => {}
            }
        }
        out.sort_by_key(|a| (!a.expired, a.ms));
        out
    }
}

/// A held lock near or past expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockAlert {
    pub id: i64,
    pub expired: bool,
    /// Time left (warning) or overrun (expired).
    pub ms: i64,
}
