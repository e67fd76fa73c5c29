//! The database under test: a fresh SQLite file or a fresh PostgreSQL database, set up
//! through the real binary, and read back with plain SQL (not through caseload) for the
//! analysis.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// Which backend a run tortures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Kind {
    Sqlite,
    Postgres,
}

/// A value read back: the queries below cast every column to BIGINT or TEXT.
#[derive(Debug, Clone)]
enum Val {
    Int(i64),
    Text(String),
    Null,
}

impl Val {
    fn int(&self) -> i64 {
        match self {
            Val::Int(i) => *i,
            _ => 0,
        }
    }
    fn text(&self) -> String {
        match self {
            Val::Text(s) => s.clone(),
            _ => String::new(),
        }
    }
    fn opt_text(&self) -> Option<String> {
        match self {
            Val::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

/// One event row.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) id: i64,
    pub(crate) item: i64,
    pub(crate) at: i64,
    pub(crate) actor: String,
    pub(crate) kind: String,
    /// The detail's `token`: the lock an event takes, renews or ends.
    pub(crate) token: Option<i64>,
    /// The whole detail (`woke`'s `by`, `undone`'s `undid` and `event`, `parked`'s
    /// `until`, a release's `undo_of`).
    pub(crate) detail: serde_json::Value,
}

/// One item row (what the analysis needs of it).
#[derive(Debug, Clone)]
pub(crate) struct ItemRow {
    pub(crate) id: i64,
    pub(crate) queue: String,
    pub(crate) state: String,
    pub(crate) lock_user: Option<String>,
    pub(crate) created_at: i64,
    pub(crate) created_by: String,
    pub(crate) title: String,
}

/// A row written by someone at some time that is not an event: a comment, an audit row.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) at: i64,
    pub(crate) actor: String,
    pub(crate) what: String,
    pub(crate) item: i64,
}

/// Everything the analysis reads from the database at the end.
pub(crate) struct Facts {
    pub(crate) events: Vec<Event>,
    pub(crate) items: Vec<ItemRow>,
    pub(crate) rows: Vec<Row>,
}

/// The database of one run.
pub(crate) struct Backend {
    pub(crate) kind: Kind,
    /// What `--db` is given: the file's path or the database's URL.
    pub(crate) db: String,
    /// The OS login (SQLite) or database role (PostgreSQL) the run's names are bound to.
    pub(crate) login: String,
    admin: Option<String>,
    dbname: String,
}

impl Backend {
    /// A fresh database: a file in `dir`, or a new PostgreSQL database named `soak_TAG`
    /// made through `admin_url`.
    pub(crate) fn create(kind: Kind, dir: &Path, admin_url: &str, tag: &str) -> Result<Backend> {
        match kind {
            Kind::Sqlite => {
                let out = std::process::Command::new("id").arg("-un").output()?;
                Ok(Backend {
                    kind,
                    db: dir.join("soak.db").display().to_string(),
                    login: String::from_utf8_lossy(&out.stdout).trim().to_string(),
                    admin: None,
                    dbname: String::new(),
                })
            }
            Kind::Postgres => {
                let dbname = format!("soak_{tag}");
                let mut admin = postgres::Client::connect(admin_url, postgres::NoTls)
                    .with_context(|| format!("connecting to {admin_url}"))?;
                admin.batch_execute(&format!("CREATE DATABASE {dbname}"))?;
                let db = with_database(admin_url, &dbname)?;
                let mut c = postgres::Client::connect(&db, postgres::NoTls)?;
                let login: String = c.query_one("SELECT session_user::text", &[])?.get(0);
                Ok(Backend {
                    kind,
                    db,
                    login,
                    admin: Some(admin_url.to_string()),
                    dbname,
                })
            }
        }
    }

    /// A client of the run's PostgreSQL database (for terminating its backends).
    pub(crate) fn pg_client(&self) -> Result<postgres::Client> {
        Ok(postgres::Client::connect(&self.db, postgres::NoTls)?)
    }

    /// Drops the PostgreSQL database (the SQLite file goes with the run's directory).
    pub(crate) fn drop_database(&self) -> Result<()> {
        if let Some(admin) = &self.admin {
            let mut c = postgres::Client::connect(admin, postgres::NoTls)?;
            c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.dbname
            ))?;
        }
        Ok(())
    }

    fn query(&self, sql: &str, cols: &str) -> Result<Vec<Vec<Val>>> {
        let mut out = Vec::new();
        match self.kind {
            Kind::Sqlite => {
                let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
                let c = rusqlite::Connection::open_with_flags(&self.db, flags)?;
                let mut st = c.prepare(sql)?;
                let mut rows = st.query([])?;
                while let Some(r) = rows.next()? {
                    let mut row = Vec::new();
                    for (i, t) in cols.chars().enumerate() {
                        row.push(match t {
                            'i' => r.get::<_, Option<i64>>(i)?.map_or(Val::Null, Val::Int),
                            _ => r.get::<_, Option<String>>(i)?.map_or(Val::Null, Val::Text),
                        });
                    }
                    out.push(row);
                }
            }
            Kind::Postgres => {
                let mut c = self.pg_client()?;
                for r in c.query(sql, &[])? {
                    let mut row = Vec::new();
                    for (i, t) in cols.chars().enumerate() {
                        row.push(match t {
                            'i' => r.try_get::<_, Option<i64>>(i)?.map_or(Val::Null, Val::Int),
                            _ => r
                                .try_get::<_, Option<String>>(i)?
                                .map_or(Val::Null, Val::Text),
                        });
                    }
                    out.push(row);
                }
            }
        }
        Ok(out)
    }

    /// Reads back every event, item, comment and audit row.
    pub(crate) fn facts(&self) -> Result<Facts> {
        let events = self
            .query(
                "SELECT CAST(id AS BIGINT), CAST(item_id AS BIGINT), CAST(at AS BIGINT), actor, \
                 kind, CAST(detail AS TEXT) FROM events ORDER BY id",
                "iiisss",
            )?
            .into_iter()
            .map(|r| {
                let detail: serde_json::Value =
                    serde_json::from_str(&r[5].text()).unwrap_or_default();
                Event {
                    id: r[0].int(),
                    item: r[1].int(),
                    at: r[2].int(),
                    actor: r[3].text(),
                    kind: r[4].text(),
                    token: detail["token"].as_i64(),
                    detail,
                }
            })
            .collect();
        let items = self
            .query(
                "SELECT CAST(id AS BIGINT), state, lock_user, CAST(created_at AS BIGINT), \
                 created_by, title, queue FROM items ORDER BY id",
                "ississs",
            )?
            .into_iter()
            .map(|r| ItemRow {
                id: r[0].int(),
                state: r[1].text(),
                lock_user: r[2].opt_text(),
                created_at: r[3].int(),
                created_by: r[4].text(),
                title: r[5].text(),
                queue: r[6].text(),
            })
            .collect();
        let mut rows: Vec<Row> = self
            .query(
                "SELECT CAST(at AS BIGINT), author, CAST(item_id AS BIGINT) FROM comments",
                "isi",
            )?
            .into_iter()
            .map(|r| Row {
                at: r[0].int(),
                actor: r[1].text(),
                what: "comment".into(),
                item: r[2].int(),
            })
            .collect();
        rows.extend(
            self.query("SELECT CAST(at AS BIGINT), actor, kind FROM audit", "iss")?
                .into_iter()
                .map(|r| Row {
                    at: r[0].int(),
                    actor: r[1].text(),
                    what: format!("audit {}", r[2].text()),
                    item: 0,
                }),
        );
        Ok(Facts {
            events,
            items,
            rows,
        })
    }
}

/// A new, empty PostgreSQL database `dbname` made through `admin_url`; returns its URL.
pub(crate) fn create_database(admin_url: &str, dbname: &str) -> Result<String> {
    let mut admin = postgres::Client::connect(admin_url, postgres::NoTls)
        .with_context(|| format!("connecting to {admin_url}"))?;
    admin.batch_execute(&format!("CREATE DATABASE {dbname}"))?;
    with_database(admin_url, dbname)
}

/// Drops the PostgreSQL database `dbname` (made by [`create_database`]).
pub(crate) fn drop_database(admin_url: &str, dbname: &str) -> Result<()> {
    let mut c = postgres::Client::connect(admin_url, postgres::NoTls)?;
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {dbname} WITH (FORCE)"))?;
    Ok(())
}

/// How many items the database `db` (an SQLite path or a postgres:// URL) holds now; 0
/// when it has no items table (yet).
pub(crate) fn count_items(db: &str) -> Result<i64> {
    const SQL: &str = "SELECT CAST(count(*) AS BIGINT) FROM items";
    if db.starts_with("postgres") {
        let mut c = postgres::Client::connect(db, postgres::NoTls)?;
        let exists: bool = c
            .query_one("SELECT to_regclass('items') IS NOT NULL", &[])?
            .get(0);
        if !exists {
            return Ok(0);
        }
        return Ok(c.query_one(SQL, &[])?.get(0));
    }
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let c = rusqlite::Connection::open_with_flags(db, flags)?;
    Ok(c.query_row(SQL, [], |r| r.get(0))?)
}

/// `url` with its database name replaced by `dbname`.
fn with_database(url: &str, dbname: &str) -> Result<String> {
    let Some(scheme_end) = url.find("://") else {
        bail!("not a postgres:// URL: {url}");
    };
    let rest = &url[scheme_end + 3..];
    let (authority, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let query = tail.find('?').map(|i| &tail[i..]).unwrap_or("");
    Ok(format!(
        "{}{authority}/{dbname}{query}",
        &url[..scheme_end + 3]
    ))
}
