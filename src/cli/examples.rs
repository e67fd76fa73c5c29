//! The examples that end every subcommand's `--help` (and its man page): one table, so
//! each is written once and a test can parse them all.

/// Examples per subcommand (space-separated path below `caseload`; "" is `caseload`
/// itself): the command line and what it does.
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "",
        &[
            ("caseload", "open the work queue in the terminal"),
            (
                "caseload claim --queue helpdesk --json",
                "take the next helpdesk item",
            ),
            ("caseload queue set --help", "every command explains itself"),
        ],
    ),
    (
        "init",
        &[
            (
                "caseload init",
                "create your own database and print where it is",
            ),
            (
                "caseload --db /srv/caseload/queue.db init",
                "create a shared one",
            ),
        ],
    ),
    (
        "demo",
        &[
            (
                "caseload demo",
                "344 sample items in a fresh demo database, opened at once",
            ),
            (
                "caseload --db /tmp/demo.db demo",
                "the demo in a file of your choice",
            ),
        ],
    ),
    (
        "add",
        &[
            (
                "caseload add --title 'Reset password for j.doe'",
                "add to the default queue",
            ),
            (
                "caseload add --title 'Order A-69529' --queue fulfilment --priority 5 --request-id shop-69529",
                "urgent, and added once however often it is sent",
            ),
            (
                "caseload add --title 'Call back Mrs Novak' --due '2026-12-01 17:00'",
                "due at five, local time (also: --due 2h, --due tomorrow)",
            ),
        ],
    ),
    (
        "import",
        &[
            (
                "caseload import tickets.csv",
                "CSV with a header row: title,queue,body,...",
            ),
            (
                "caseload import orders.jsonl --queue fulfilment",
                "JSON Lines, default queue",
            ),
            (
                "caseload import all.jsonl --keep-ids",
                "an export read back with the ids it had",
            ),
            (
                "caseload import suppliers.csv --queue verification --define-fields",
                "a column per field: unknown columns become text fields",
            ),
        ],
    ),
    (
        "list",
        &[
            (
                "caseload list --queue helpdesk --limit 20",
                "the next 20 in take order",
            ),
            (
                "caseload list --state expired --json",
                "expired locks as JSON",
            ),
            (
                "caseload list --state all --search 'jose 69529'",
                "every item mentioning both, finished ones too",
            ),
        ],
    ),
    (
        "show",
        &[
            ("caseload show 42", "item #42 with its history"),
            ("caseload show 42 --json", "the same as one JSON object"),
        ],
    ),
    (
        "claim",
        &[
            (
                "caseload claim --queue helpdesk",
                "take the next helpdesk item",
            ),
            (
                "caseload claim --create --db new.db",
                "--create: make the file if it is missing (else only init does)",
            ),
            (
                "caseload claim --id 42 --json",
                "take #42; the JSON has its lock_token",
            ),
            (
                "caseload claim --queue helpdesk --wait --timeout 600 --json",
                "wait up to 10 minutes for work, then take it",
            ),
            (
                "caseload claim --review --queue kyc",
                "take the oldest kyc item waiting for review (never your own work)",
            ),
        ],
    ),
    (
        "accept",
        &[
            ("caseload accept 42", "the #42 you review is done"),
            (
                "caseload accept 42 --comment 'address checked by phone'",
                "with a comment kept in its history",
            ),
        ],
    ),
    (
        "reject",
        &[(
            "caseload reject 42 --reason 'passport expired'",
            "back to whoever completed it, assigned to them",
        )],
    ),
    (
        "renew",
        &[
            (
                "caseload renew 42",
                "restart the lock age of your lock on #42",
            ),
            (
                "caseload renew 42 --token 7",
                "only if the lock is still the one with token 7",
            ),
        ],
    ),
    (
        "release",
        &[
            ("caseload release 42", "give #42 back to the pool"),
            (
                "caseload release 42 --token 7",
                "only if your lock still has token 7",
            ),
            (
                "caseload release 42 --reason 'waiting for documents from the customer'",
                "with a reason, kept in the event",
            ),
            (
                "caseload release 42 --code docs",
                "with the queue's ready-made release text 'docs'",
            ),
        ],
    ),
    (
        "skip",
        &[
            (
                "caseload skip 42 --reason 'needs a Spanish speaker'",
                "give #42 back, recorded as skipped, with why",
            ),
            (
                "caseload skip 42 --code spanish",
                "the ready-made skip text 'spanish' (counted by report --by reason)",
            ),
        ],
    ),
    (
        "complete",
        &[
            (
                "caseload complete 42 --result 'Password reset, user informed'",
                "finish #42",
            ),
            (
                "caseload complete 42 --token 7 --json",
                "fenced by the token from claim --json; prints the item as it is now",
            ),
            (
                "caseload complete 42 --next --queue helpdesk --json",
                "finish #42 and take the next helpdesk item in one step",
            ),
            (
                "caseload complete 42 --override 'VAT confirmed by phone with the supplier'",
                "supervisors: complete although a field breaks its rule",
            ),
            (
                "caseload complete 42 --code reset",
                "the queue's ready-made result 'reset' is the result; the event keeps the code",
            ),
        ],
    ),
    (
        "set",
        &[
            (
                "caseload set 42 vat=HU11816602",
                "correct a field of the item you hold (checked, audited old → new)",
            ),
            (
                "caseload set 42 email=anna.berg@example.com phone='030 901820' --json",
                "several fields in one write; the phone is stored as +4930901820",
            ),
            ("caseload set 42 fax=", "clear an optional field"),
        ],
    ),
    (
        "tick",
        &[
            ("caseload tick 42 skus NB-A5-DOT", "this line is picked"),
            (
                "caseload tick 42 skus PEN-BLK --not-done 'out of stock'",
                "not picked, for a reason Complete accepts",
            ),
            ("caseload tick 42 skus PEN-BLK --undo", "back to do"),
        ],
    ),
    (
        "similar",
        &[
            (
                "caseload similar 42",
                "items of its queue that are possibly the same record, with why",
            ),
            (
                "caseload similar 42 --all --json",
                "as JSON, with the pairs already merged or marked not the same",
            ),
        ],
    ),
    (
        "merge",
        &[
            (
                "caseload merge 42 --into 17 --reason 'same VAT number'",
                "cancel #42 as #17's duplicate (you hold #42, or you are a supervisor)",
            ),
            (
                "caseload merge 42 --into 17 --token 5",
                "fenced by your lock token",
            ),
        ],
    ),
    (
        "not-duplicate",
        &[(
            "caseload not-duplicate 42 17",
            "never offer #42 and #17 as possibly the same again",
        )],
    ),
    (
        "fail",
        &[
            (
                "caseload fail 42 --reason 'Customer unreachable'",
                "finish #42 as failed",
            ),
            (
                "caseload fail 42 --code no-answer",
                "with the queue's ready-made fail text 'no-answer'",
            ),
            (
                "caseload fail 42 --code no-answer --reason 'no answer; mailbox full'",
                "the ready-made code, the text edited",
            ),
        ],
    ),
    (
        "park",
        &[
            (
                "caseload park 42 --until 14:00 --reason 'call back Mei Brandt'",
                "nobody else takes it; at two it wakes for you",
            ),
            (
                "caseload park 42 --until 'tomorrow 09:00' --reason 'waiting for the bank'",
                "first thing tomorrow",
            ),
        ],
    ),
    (
        "wake",
        &[
            ("caseload wake 42", "your parked #42, locked to you now"),
            (
                "caseload wake 42 --json",
                "a supervisor: #42 back in the pool, as JSON",
            ),
        ],
    ),
    (
        "undo",
        &[(
            "caseload undo 42",
            "a complete (fail, release, skip, park) of #42 taken back within the queue's undo window",
        )],
    ),
    (
        "reap",
        &[(
            "caseload reap",
            "release every expired lock (e.g. from cron)",
        )],
    ),
    (
        "unlock",
        &[
            (
                "caseload unlock 42 --reason 'bob is off sick'",
                "return #42 to the pool",
            ),
            (
                "caseload unlock --expired --holder bob --reason 'stale'",
                "every expired lock of bob",
            ),
        ],
    ),
    (
        "history",
        &[
            ("caseload history", "what you did today"),
            (
                "caseload history --of bob --since yesterday --json",
                "what bob did since yesterday's midnight (local time)",
            ),
        ],
    ),
    (
        "reassign",
        &[(
            "caseload reassign 42 --to carol --reason 'bob is off sick'",
            "carol holds #42 now",
        )],
    ),
    (
        "assign",
        &[(
            "caseload assign 42 --to bob --reason 'alice is off sick'",
            "#42 waits in bob's Mine; its clock starts when he opens it",
        )],
    ),
    (
        "reopen",
        &[(
            "caseload reopen 42 --reason 'customer wrote back'",
            "done item #42 is open again",
        )],
    ),
    (
        "edit",
        &[
            (
                "caseload edit 42 --priority 5 --due 3d",
                "raise #42 and make it due in three days",
            ),
            (
                "caseload edit 42 --queue billing --due none",
                "move #42 to billing, no due time",
            ),
        ],
    ),
    (
        "comment",
        &[
            (
                "caseload comment 42 'Called the customer, no answer'",
                "add to #42's thread",
            ),
            (
                "caseload comment 42 --file findings.txt",
                "a longer comment from a file",
            ),
            (
                "caseload comment 42 -",
                "the comment from standard input (a pipe or a file)",
            ),
        ],
    ),
    (
        "requeue",
        &[("caseload requeue 42", "reopen failed item #42")],
    ),
    (
        "cancel",
        &[(
            "caseload cancel 42 --reason 'Duplicate of #41'",
            "#42 will not be done",
        )],
    ),
    (
        "queue",
        &[
            ("caseload queue list", "every queue and its settings"),
            (
                "caseload queue set helpdesk --lock-seconds 900",
                "15-minute locks",
            ),
        ],
    ),
    (
        "queue set",
        &[
            (
                "caseload queue set helpdesk --lock-seconds 900 --warn-seconds 60",
                "15-minute locks, warned a minute before",
            ),
            (
                "caseload queue set returns --create --max-per-user 2 --paused true",
                "a new queue, closed for now",
            ),
            (
                "caseload queue set shipping --order due",
                "overdue and soonest-due items are taken first",
            ),
            (
                "caseload queue set kyc --review 20% --review-new 5",
                "a fifth of the completions, and each person's first five, wait for review",
            ),
        ],
    ),
    (
        "field",
        &[
            (
                "caseload field set verification vat --type text --required --pattern '^[A-Z]{2}[0-9A-Z]{8,12}$'",
                "define a checked field of a queue",
            ),
            ("caseload field list verification", "its fields, in order"),
        ],
    ),
    (
        "field set",
        &[
            (
                "caseload field set verification vat --type text --required --pattern '^[A-Z]{2}[0-9A-Z]{8,12}$' --label 'VAT number'",
                "a required VAT number of a given shape",
            ),
            (
                "caseload field set verification phone --type phone --country DE --after email",
                "phone numbers stored in E.164, shown after the e-mail",
            ),
            (
                "caseload field set fulfilment skus --type checklist",
                "lines to tick, one per SKU the item brings",
            ),
            (
                "caseload field set verification vat --required false",
                "change one rule, keep the rest",
            ),
        ],
    ),
    (
        "field list",
        &[
            (
                "caseload field list verification",
                "the queue's fields and their rules",
            ),
            (
                "caseload field list verification --json",
                "the same as JSON",
            ),
        ],
    ),
    (
        "text",
        &[
            (
                "caseload text add verification --for fail 'No answer after 3 calls' --code no-answer",
                "a ready-made fail reason, offered with Tab in the TUI",
            ),
            (
                "caseload text list verification",
                "the queue's texts, by kind",
            ),
        ],
    ),
    (
        "text add",
        &[
            (
                "caseload text add verification --for skip 'Needs a Spanish speaker' --code spanish",
                "a ready-made skip reason",
            ),
            (
                "caseload text add helpdesk --for result 'Password reset, user informed'",
                "the code is made from the text: password-reset-user-informed",
            ),
        ],
    ),
    (
        "text list",
        &[
            (
                "caseload text list verification",
                "kind, code and text of each",
            ),
            (
                "caseload text list verification --json",
                "one JSON array: queue, for, code, text",
            ),
        ],
    ),
    (
        "text delete",
        &[
            ("caseload text delete verification spanish", "by code"),
            (
                "caseload text delete verification 'Needs a Spanish speaker'",
                "by text; events keep the code they were given",
            ),
        ],
    ),
    (
        "field delete",
        &[(
            "caseload field delete verification fax",
            "the field goes; items keep their values in params",
        )],
    ),
    (
        "queue rename",
        &[(
            "caseload queue rename helpdsk helpdesk",
            "fix a mistyped queue name; its items move with it",
        )],
    ),
    (
        "queue delete",
        &[(
            "caseload queue delete returns",
            "remove a queue that holds no items",
        )],
    ),
    (
        "queue list",
        &[(
            "caseload queue list --json",
            "every queue's settings as JSON",
        )],
    ),
    (
        "user",
        &[
            (
                "caseload user set alice --role supervisor",
                "alice may unlock and reassign",
            ),
            ("caseload user list", "who is known, their roles, last seen"),
        ],
    ),
    (
        "user list",
        &[
            ("caseload user list", "name, role, login binding, last seen"),
            ("caseload user list --json", "the same as one JSON array"),
        ],
    ),
    (
        "user set",
        &[
            (
                "caseload user set alice --role supervisor",
                "alice may unlock and reassign",
            ),
            ("caseload user set bob --role staff", "bob works items only"),
            (
                "caseload user set importer --login svc-import",
                "OS login svc-import may act as importer",
            ),
            (
                "caseload user set importer --no-login",
                "only importer's own login may",
            ),
        ],
    ),
    (
        "stats",
        &[
            ("caseload stats", "counts, throughput and lock ages"),
            ("caseload stats --json", "the same as one JSON object"),
        ],
    ),
    (
        "report",
        &[
            (
                "caseload report --by person",
                "who did what today: done, failed, lost locks, handle times",
            ),
            (
                "caseload report --by queue --since 30d",
                "each queue over 30 days, with its due-date health",
            ),
            (
                "caseload report --by person --since 2026-11-01 --until 2026-12-01 --format csv",
                "November, for a spreadsheet",
            ),
            (
                "caseload report --by queue --queue billing --since 7d --format json",
                "one queue's week as JSON",
            ),
            (
                "caseload report --by reason --queue verification --since 7d",
                "why items were failed, skipped and released, by ready-made code",
            ),
            (
                "caseload report --by field --queue verification --since 30d",
                "how often each field of the completed records needed a correction",
            ),
            (
                "caseload report --by source --since 30d --format csv",
                "which feed sends the dirtiest records",
            ),
        ],
    ),
    (
        "events",
        &[
            (
                "caseload events --kind completed,failed",
                "every completion and failure so far, as JSON Lines",
            ),
            (
                "caseload events --follow --checkpoint /var/lib/caseload/feed.id",
                "keep following; a restart resumes after the last line written",
            ),
            (
                "caseload events --follow --kind completed --exec /usr/local/bin/mail-customer --checkpoint mail.id",
                "a hook: run a command per completion, the event's JSON on its stdin",
            ),
            (
                "caseload events --since-id 4100 --format table",
                "the trail after event 4100, for people",
            ),
        ],
    ),
    (
        "work",
        &[
            (
                "caseload work --queue geocode --exec /usr/local/bin/geocode",
                "run geocode per item (its JSON on stdin); exit 0 completes with its output",
            ),
            (
                "caseload work --concurrency 4 --idle-exit 60 --exec 'jq -r .title | ./check'",
                "four items at once, each slot on its own connection; stop after a minute idle",
            ),
            (
                "caseload work --review --max-items 10 --exec ./second-look",
                "review ten items: exit 0 accepts, any other rejects with its last stderr line",
            ),
        ],
    ),
    (
        "metrics",
        &[
            (
                "caseload metrics",
                "each queue's figures in OpenMetrics text",
            ),
            (
                "caseload metrics --format prometheus > /var/lib/node_exporter/caseload.prom.$$ && mv /var/lib/node_exporter/caseload.prom.$$ /var/lib/node_exporter/caseload.prom",
                "for node_exporter's textfile collector (written whole, then renamed)",
            ),
            (
                "caseload metrics --format json",
                "the same figures as one JSON object",
            ),
        ],
    ),
    (
        "export",
        &[
            (
                "caseload export --state done > done.csv",
                "finished items as CSV",
            ),
            (
                "caseload export --format jsonl > all.jsonl",
                "everything as JSON Lines (`caseload import all.jsonl` reads it back)",
            ),
            (
                "caseload export --events --since 2026-11-01T00:00:00Z > audit.csv",
                "the audit trail since November",
            ),
        ],
    ),
    (
        "check",
        &[("caseload check", "prints ok, or one line per problem")],
    ),
    (
        "backup",
        &[(
            "caseload backup /var/backups/queue-2026-11-23.db",
            "a consistent copy, while people work",
        )],
    ),
    (
        "doctor",
        &[
            (
                "caseload doctor",
                "one line per check (✔ or ✘ with the fix); exit 1 if any fails",
            ),
            (
                "caseload --db postgres://caseload@db.example.com/work doctor --json",
                "the server's checks, as JSON",
            ),
        ],
    ),
    (
        "migrate-to",
        &[(
            "caseload --db /srv/caseload/queue.db migrate-to postgres://caseload@db.example.com/work",
            "copy everything to PostgreSQL",
        )],
    ),
    (
        "completions",
        &[
            (
                "caseload completions bash > ~/.local/share/bash-completion/completions/caseload",
                "bash, for you",
            ),
            (
                "caseload completions fish > ~/.config/fish/completions/caseload.fish",
                "fish",
            ),
        ],
    ),
    (
        "man",
        &[(
            "caseload man ~/.local/share/man/man1",
            "then `man caseload`, `man caseload-claim`",
        )],
    ),
];
