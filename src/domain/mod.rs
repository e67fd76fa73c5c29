//! The domain: items, queues, locks, events, users, and the pure rules over them.
//!
//! Nothing here reads the clock or touches a database: `now` is always a parameter.

pub(crate) mod audit;
pub(crate) mod comment;
pub mod corrections;
pub mod duplicates;
pub(crate) mod event;
pub mod fields;
pub mod figures;
mod fold_tables;
pub(crate) mod item;
pub mod lock;
pub mod park;
pub(crate) mod queue;
pub mod queue_fields;
pub(crate) mod review;
pub mod sanitize;
pub mod search;
pub mod sla;
pub mod texts;
pub mod time;
pub(crate) mod user;
pub mod when;

pub use audit::{AuditEntry, AuditKind, AuditNote};
pub use comment::{Comment, ItemEdit};
pub use event::{Event, EventKind};
pub use fields::FieldError;
pub use item::{Cell, Item, ItemState, NewItem, Unreadable};
pub use lock::{Lock, LockLoss, LockStatus, NoLock, SeenLock};
pub use queue::{QueueSettings, QueueUpdate, Setting, SettingError, TakeOrder};
pub(crate) use time::Millis;
pub use user::{Access, Actor, Queues, RealIdentity, Role, UserInfo, Work};
