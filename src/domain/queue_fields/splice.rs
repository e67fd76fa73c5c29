//! One key of a record's params changed in the params' JSON text, the other keys left as
//! they are: a field save changes one value of a record's twenty, and parsing all twenty
//! into values to write them all back was most of what a save cost beyond a notes save
//! (issue 26 §4, BENCHMARKS.md "where the SQLite field save's extra CPU goes").
//!
//! The text is still read whole by serde_json (so it must be one valid JSON object and
//! nothing else), but each value only as a borrowed slice of the text, not built into a
//! `Value`. What cannot be spliced — not an object, the key given twice, a key removed —
//! is left to the caller, who parses the object into a map instead.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserializer as _, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// Where a key's value is in an object's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The value's bytes in the text (`None`: the object has no such key).
    pub(crate) at: Option<Range<usize>>,
    /// True when the object has no keys at all.
    pub(crate) empty: bool,
}

/// Where `key`'s value is in `text`, a JSON object. `None` when `text` is not exactly one
/// JSON object (surrounding whitespace aside), or has `key` more than once (whose value
/// counts is a reader's choice; the caller's map decides).
pub(crate) fn locate(text: &str, key: &str) -> Option<Slot> {
    let mut de = serde_json::Deserializer::from_str(text);
    let (count, raw, empty) = de.deserialize_map(Seek { key }).ok()?;
    de.end().ok()?;
    if count > 1 {
        return None;
    }
    let at = raw.map(|r| {
        let start = r.get().as_ptr() as usize - text.as_ptr() as usize;
        start..start + r.get().len()
    });
    Some(Slot { at, empty })
}

/// The value at `slot` in `text` (`Null` when the key is absent).
pub(crate) fn value_at(text: &str, slot: &Slot) -> Value {
    slot.at
        .clone()
        .and_then(|r| serde_json::from_str(&text[r]).ok())
        .unwrap_or(Value::Null)
}

/// `text` with `key` (at `slot`, found by [`locate`]) set to `to`: its value replaced, or
/// the key added last when the object has none.
pub(crate) fn put(text: &str, key: &str, slot: &Slot, to: &Value) -> String {
    // As `Value`'s `Display` writes it, without its formatter's detour.
    let value = serde_json::to_string(to).unwrap_or_else(|_| to.to_string());
    match &slot.at {
        Some(r) => {
            let mut s = String::with_capacity(text.len() - r.len() + value.len());
            s.push_str(&text[..r.start]);
            s.push_str(&value);
            s.push_str(&text[r.end..]);
            s
        }
        None => {
            // `locate` read one object and only whitespace after it: its last `}` closes it.
            let close = text.rfind('}').unwrap_or(text.len());
            let key = Value::from(key).to_string();
            let mut s = String::with_capacity(text.len() + key.len() + value.len() + 2);
            s.push_str(&text[..close]);
            if !slot.empty {
                s.push(',');
            }
            s.push_str(&key);
            s.push(':');
            s.push_str(&value);
            s.push_str(&text[close..]);
            s
        }
    }
}

/// Reads an object's keys (borrowed unless escaped) and values (as slices of the text),
/// counting the keys equal to `key` and keeping the last one's value.
struct Seek<'k> {
    key: &'k str,
}

impl<'de> Visitor<'de> for Seek<'_> {
    type Value = (usize, Option<&'de RawValue>, bool);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let (mut count, mut found, mut empty) = (0, None, true);
        while let Some(Key(k)) = m.next_key::<Key<'de>>()? {
            empty = false;
            let v: &'de RawValue = m.next_value()?;
            if k == self.key {
                count += 1;
                found = Some(v);
            }
        }
        Ok((count, found, empty))
    }
}

/// An object's key, borrowed from the text when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What a splice gives, against setting the key in the parsed object: the same object
    /// and the same old value.
    fn same_as_parsed(text: &str, key: &str, to: Value) {
        let slot = locate(text, key).unwrap_or_else(|| panic!("{text}: no slot"));
        let spliced = put(text, key, &slot, &to);
        let mut parsed: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
        let from = parsed.insert(key.to_string(), to).unwrap_or(Value::Null);
        assert_eq!(value_at(text, &slot), from, "{text}: old value of {key}");
        let got: Value = serde_json::from_str(&spliced)
            .unwrap_or_else(|e| panic!("{text} → {spliced}: not JSON: {e}"));
        assert_eq!(got, Value::Object(parsed), "{text} → {spliced}");
    }

    #[test]
    fn a_splice_gives_what_setting_the_parsed_key_gives() {
        let texts = [
            r#"{}"#,
            r#" { } "#,
            r#"{"a":1}"#,
            r#"{"name":"Old","vat":"DE1"}"#,
            "{\n  \"vat\" : \"DE1\" ,\n  \"name\" :\t\"Old\"\n}\n",
            r#"{"name":{"nested":{"name":"inner"}},"x":[1,{"name":2}]}"#,
            r#"{"na\u006de":"escaped key","other":"}"}"#,
            r#"{"other":"a \"quoted\" } brace","name":null}"#,
            r#"{"other":"\u00e9t\u00e9","name":12.50}"#,
            r#"{"other":"x"}"#,
        ];
        for text in texts {
            for to in [
                json!("New"),
                json!(42),
                json!(["a", "b"]),
                json!({"k": "v"}),
            ] {
                same_as_parsed(text, "name", to);
            }
        }
    }

    #[test]
    fn what_cannot_be_spliced_is_left_to_the_caller() {
        for text in [
            "[1,2]",
            "\"name\"",
            "{\"name\":1} {}",
            "{\"name\":1,\"name\":2}",
            "{\"name\":1,\"na\\u006de\":2}",
            "{\"name\":}",
            "{\"name\":1",
            "",
        ] {
            assert_eq!(locate(text, "name"), None, "{text}");
        }
    }

    #[test]
    fn a_value_keeps_the_text_around_it() {
        let text = "{\"b\": 1, \"name\": \"Old\", \"a\": [1, 2]}";
        let slot = locate(text, "name").unwrap();
        assert_eq!(
            put(text, "name", &slot, &json!("New")),
            "{\"b\": 1, \"name\": \"New\", \"a\": [1, 2]}"
        );
        let slot = locate(text, "new key").unwrap();
        assert_eq!(
            put(text, "new key", &slot, &json!(true)),
            "{\"b\": 1, \"name\": \"Old\", \"a\": [1, 2],\"new key\":true}"
        );
    }
}
