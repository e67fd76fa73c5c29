//! The demo's ready-made texts: a few per queue, kept by the supervisor when the queues
//! appear, and the reasons the pretend people give with them (chosen by item id, so the
//! demo's random sequence, and every figure drawn from it, stays as it was).

use crate::domain::texts::{Purpose, Said};
use crate::store::Store;

/// (queue, kind, code, text).
const TEXTS: &[(&str, Purpose, &str, &str)] = &[
    (
        "helpdesk",
        Purpose::Result,
        "reset",
        "Password reset, user informed",
    ),
    (
        "helpdesk",
        Purpose::Fail,
        "no-answer",
        "No answer after 3 calls",
    ),
    (
        "helpdesk",
        Purpose::Fail,
        "wrong-team",
        "Belongs to another team",
    ),
    (
        "helpdesk",
        Purpose::Skip,
        "needs-admin",
        "Needs an administrator's rights",
    ),
    (
        "helpdesk",
        Purpose::Release,
        "waiting-user",
        "Waiting for the user's reply",
    ),
    (
        "verification",
        Purpose::Result,
        "verified",
        "All fields verified",
    ),
    (
        "verification",
        Purpose::Fail,
        "no-answer",
        "Supplier unreachable after 3 calls",
    ),
    (
        "verification",
        Purpose::Skip,
        "spanish",
        "Needs a Spanish speaker",
    ),
    (
        "verification",
        Purpose::Skip,
        "docs",
        "Waiting for documents",
    ),
    (
        "verification",
        Purpose::Release,
        "call-back",
        "Supplier asked for a call-back",
    ),
    (
        "verification",
        Purpose::Park,
        "as-agreed",
        "Call back as agreed",
    ),
    ("fulfilment", Purpose::Result, "shipped", "Shipped"),
    ("fulfilment", Purpose::Fail, "out-of-stock", "Out of stock"),
    (
        "fulfilment",
        Purpose::Skip,
        "heavy",
        "Needs two people to lift",
    ),
    (
        "fulfilment",
        Purpose::Release,
        "stock-check",
        "Waiting for a stock check",
    ),
    (
        "fulfilment",
        Purpose::Comment,
        "address",
        "Address confirmed with the customer",
    ),
];

/// The reasons a reviewer of identity checks rejects with, and a result for them.
const REVIEW_TEXTS: &[(&str, Purpose, &str, &str)] = &[
    (
        "kyc",
        Purpose::Result,
        "match",
        "Document and address match",
    ),
    (
        "kyc",
        Purpose::Reject,
        "expired",
        "The document has expired",
    ),
    (
        "kyc",
        Purpose::Reject,
        "name",
        "The name does not match the document",
    ),
    (
        "kyc",
        Purpose::Reject,
        "address",
        "The address is not proven by a document",
    ),
];

/// Keeps the reviewed queue's texts (once it exists).
pub(super) fn keep_review(boss: &mut dyn Store) -> anyhow::Result<()> {
    for (queue, purpose, code, text) in REVIEW_TEXTS {
        boss.add_text(queue, *purpose, text, Some(code))?;
    }
    Ok(())
}

/// Gives the helpdesk an SLA of 4 working hours, Monday to Friday 08:00 to 17:00 UTC
/// (the same demo on every machine): items added from now on without a due time get one,
/// and the rows show the working time left.
pub(super) fn sla(boss: &mut dyn Store) -> anyhow::Result<()> {
    let update = crate::domain::sla::SlaUpdate {
        ms: Some(Some(4 * 3_600_000)),
        hours: Some(
            crate::domain::sla::Hours::parse(crate::domain::sla::DEFAULT_HOURS)
                .map_err(|e| anyhow::anyhow!(e))?,
        ),
        zone: Some(chrono_tz::Tz::UTC),
        ..Default::default()
    };
    boss.set_sla("helpdesk", &update)?;
    Ok(())
}

/// Keeps the demo's texts (the queues exist by now).
pub(super) fn keep(boss: &mut dyn Store) -> anyhow::Result<()> {
    for (queue, purpose, code, text) in TEXTS {
        boss.add_text(queue, *purpose, text, Some(code))?;
    }
    Ok(())
}

/// What a pretend person says for item `id`: one of the queue's texts of that kind by
/// the item's id, or now and then something of their own (a free text, or for a release
/// or skip nothing at all).
pub(super) fn pick(queue: &str, purpose: Purpose, id: i64) -> Said<'static> {
    let of: Vec<_> = TEXTS
        .iter()
        .filter(|t| t.0 == queue && t.1 == purpose)
        .collect();
    match of.get(id.rem_euclid(of.len() as i64 + 1) as usize) {
        Some(t) => Said::NOTHING.coded(Some(t.2)),
        None if purpose == Purpose::Fail => Said::text(Some("cannot be done as asked")),
        None => Said::NOTHING,
    }
}
