//! What a pooler in transaction mode (PgBouncer `pool_mode = transaction`) asks of a
//! client: no startup options (the URL's `options` become settings of each transaction),
//! and statements that leave nothing on the server (unnamed, each parameter sent with
//! the type it encodes as).

use bytes::BytesMut;
use postgres::types::{ToSql, Type};

use crate::store::error::{Result, StoreError};

/// How caseload's connections reach the server (`CASELOAD_PG_POOL`, `pg_pool` in the
/// config file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pooling {
    /// Straight to PostgreSQL (or through a pooler in session mode): settings are the
    /// session's, statements are prepared once per connection.
    #[default]
    Direct,
    /// Through a pooler in transaction mode: no session state at all.
    Transaction,
}

impl Pooling {
    /// The setting's value: `transaction`, or `direct` / `session` / `none` for none.
    pub fn parse(s: &str) -> std::result::Result<Pooling, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "transaction" => Ok(Pooling::Transaction),
            "direct" | "session" | "none" | "" => Ok(Pooling::Direct),
            other => Err(format!(
                "pg_pool = \"{}\" is not one of \"transaction\", \"session\", \"direct\"",
                crate::domain::sanitize::line(other)
            )),
        }
    }
}

/// The PostgreSQL types a parameter may be sent as, in order of preference: the first one
/// a value encodes as is its own (`i64` → int8, `String` → text, `Vec<i64>` → int8[]).
const TYPES: [Type; 17] = [
    Type::INT8,
    Type::TEXT,
    Type::BOOL,
    Type::INT4,
    Type::FLOAT8,
    Type::JSON,
    Type::JSONB,
    Type::BYTEA,
    Type::TIMESTAMPTZ,
    Type::TIMESTAMP,
    Type::INT2,
    Type::FLOAT4,
    Type::INT8_ARRAY,
    Type::TEXT_ARRAY,
    Type::INT4_ARRAY,
    Type::BOOL_ARRAY,
    Type::OID,
];

/// The parameters of an unnamed statement, each with its type. A prepared statement
/// learns them from the server (a round trip of its own); here each value's own type is
/// sent, which is the server's choice wherever the value could be bound to it (an `i64`
/// binds only to int8). A value of none of these types is sent as `unknown`, and its
/// encoding then fails with the crate's own "cannot convert" error.
pub(super) fn typed<'a>(p: &[&'a (dyn ToSql + Sync)]) -> Vec<(&'a (dyn ToSql + Sync), Type)> {
    let mut buf = BytesMut::new();
    p.iter()
        .map(|v| {
            let ty = TYPES.iter().find(|t| {
                buf.clear();
                v.to_sql_checked(t, &mut buf).is_ok()
            });
            (*v, ty.cloned().unwrap_or(Type::UNKNOWN))
        })
        .collect()
}

/// A URL for a pooler: `url` without its `options` parameter, and the settings that
/// parameter gave (`-c name=value`, `--name=value`), to be set in each transaction.
pub(super) fn without_options(url: &str) -> Result<(String, Vec<(String, String)>)> {
    let Some((head, query)) = url.split_once('?') else {
        return Ok((url.to_string(), vec![]));
    };
    let mut kept = Vec::new();
    let mut settings = Vec::new();
    for part in query.split('&') {
        let Some(raw) = part.strip_prefix("options=") else {
            kept.push(part);
            continue;
        };
        let value: String = url::form_urlencoded::parse(format!("v={raw}").as_bytes())
            .map(|(_, v)| v.into_owned())
            .collect();
        settings.extend(option_settings(&value)?);
    }
    let url = match kept.is_empty() {
        true => head.to_string(),
        false => format!("{head}?{}", kept.join("&")),
    };
    Ok((url, settings))
}

/// The settings of a libpq `options` value: `-c name=value`, `-cname=value` or
/// `--name=value`, separated by spaces (`\ ` is a space inside a value).
fn option_settings(options: &str) -> Result<Vec<(String, String)>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)))
            }
            c => word.push(c),
        }
    }
    words.extend((!word.is_empty()).then_some(word));
    let refused = |w: &str| {
        StoreError::Unusable(format!(
            "the URL's options={} cannot go through a pooler in transaction mode: only \
             settings (-c name=value) can, and caseload sets them in each transaction",
            crate::domain::sanitize::line(w)
        ))
    };
    let mut out = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let pair = match w.as_str() {
            "-c" => it.next().ok_or_else(|| refused(w))?.as_str(),
            w if w.starts_with("--") => &w[2..],
            w if w.starts_with("-c") => &w[2..],
            w => return Err(refused(w)),
        };
        let (name, value) = pair.split_once('=').ok_or_else(|| refused(pair))?;
        out.push((name.replace('-', "_"), value.to_string()));
    }
    Ok(out)
}

/// The statement that gives a pooled transaction its settings.
pub(super) fn settings_sql(settings: &[(String, String)]) -> String {
    let lit = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let each: Vec<String> = settings
        .iter()
        .map(|(k, v)| format!("set_config({}, {}, true)", lit(k), lit(v)))
        .collect();
    format!("SELECT {}", each.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_urls_options_become_settings_and_leave_the_url() {
        let (url, set) = without_options(
            "postgres://a@h:6432/db?application_name=x&options=-c%20search_path%3Dcl%2Cpublic%20--statement-timeout=5s",
        )
        .unwrap();
        assert_eq!(url, "postgres://a@h:6432/db?application_name=x");
        assert_eq!(
            set,
            [
                ("search_path".to_string(), "cl,public".to_string()),
                ("statement_timeout".to_string(), "5s".to_string())
            ]
        );
        let (url, set) = without_options("postgres://a@h/db?options=-csearch_path%3Dx").unwrap();
        assert_eq!((url.as_str(), set.len()), ("postgres://a@h/db", 1));
        assert!(without_options("postgres://h/db?options=-e").is_err());
        assert_eq!(
            settings_sql(&[("search_path".into(), "it's".into())]),
            "SELECT set_config('search_path', 'it''s', true)"
        );
    }

    #[test]
    fn each_value_is_sent_as_its_own_type() {
        let (n, t, none, ids): (i64, String, Option<String>, Vec<i64>) =
            (1, "x".into(), None, vec![1]);
        let got: Vec<Type> = typed(&[&n, &t, &none, &ids, &true, &2i32])
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(
            got,
            [
                Type::INT8,
                Type::TEXT,
                Type::TEXT,
                Type::INT8_ARRAY,
                Type::BOOL,
                Type::INT4
            ]
        );
    }
}
