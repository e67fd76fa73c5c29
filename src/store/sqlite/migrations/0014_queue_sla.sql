-- SQLite schema version 14. Never edit: append a new step instead.
-- Service levels on business hours: a queue's SLA (working time, in milliseconds), its
-- working hours ('Mon-Fri 08:00-17:00'), time zone (an IANA name) and holidays (dates,
-- one per line). A new item without a due time is due when that much working time has
-- passed (domain::sla). Written by supervisors with an audit record ('queue', its
-- `sla` before and after).

CREATE TABLE queue_sla (
    queue     TEXT PRIMARY KEY REFERENCES queues(name),
    sla_ms    INTEGER NOT NULL CHECK (sla_ms > 0),
    hours     TEXT NOT NULL,
    tz        TEXT NOT NULL,
    holidays  TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
