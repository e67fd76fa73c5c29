//! A test hook: a panic inside a write transaction, after all its statements ran and
//! before its commit (the tests show that nothing of it is committed, that the store
//! writes again afterwards, and that nobody else is kept waiting).

use std::cell::Cell;

thread_local! {
    static PANIC_IN_NEXT_WRITE: Cell<bool> = const { Cell::new(false) };
}

/// Makes the next write transaction run on this thread panic just before its commit.
pub fn panic_in_next_write() {
    PANIC_IN_NEXT_WRITE.with(|p| p.set(true));
}

/// Panics when the test asked for it (once).
pub(crate) fn panic_if_asked() {
    if PANIC_IN_NEXT_WRITE.with(|p| p.replace(false)) {
        panic!("a test asked this write to panic before its commit");
    }
}
