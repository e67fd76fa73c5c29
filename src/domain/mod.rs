//! The domain: items, queues, locks, events, users, and the pure rules over them.
//!
//! Nothing here reads the clock or touches a database: `now` is always a parameter.

pub mod audit;
pub mod comment;
pub mod event;
pub mod figures;
pub mod item;
pub mod lock;
pub mod queue;
pub mod sanitize;
pub mod search;
pub mod time;
pub mod user;

pub use audit::{AuditEntry, AuditKind, AuditNote};
pub use comment::{Comment, ItemEdit};
pub use event::{Event, EventKind};
pub use item::{Cell, Item, ItemState, NewItem, Unreadable, ValidationError};
pub use lock::{Lock, LockLoss, LockStatus, NoLock, SeenLock};
pub use queue::{QueueSettings, QueueUpdate, Setting, SettingError, TakeOrder};
pub use time::Millis;
pub use user::{Actor, RealIdentity, Role, UserInfo};
