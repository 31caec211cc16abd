//! Reading request bodies field by field, with the interface's validation errors, and
//! writing exact decimals as JSON numbers.
//!
//! A body is parsed once into a [`Node`] tree that borrows its keys and strings from the
//! body. Numbers keep their text (serde_json's `arbitrary_precision`), so a number becomes
//! a [`Decimal`] without passing through a binary float. A JSON `null` counts as absent.
//! Every field a reader does not take is reported as `UNRECOGNIZED_FIELD`.

use std::borrow::Cow;
use std::fmt;

use rust_decimal::Decimal;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::{ApiError, ErrorKind};

/// Longest string accepted in an ordinary field (ids, names, categories).
pub(crate) const MAX_STRING: usize = 255;

/// Refuses a string that holds a character a ledger cannot store: NUL (U+0000), which
/// PostgreSQL's `text` cannot hold (every other character of a Rust string both ledgers
/// hold). `INVALID_CHARACTER`, naming the field.
pub(crate) fn storable(field: &str, s: &str) -> Result<(), ApiError> {
    match s.find('\0') {
        None => Ok(()),
        Some(at) => Err(ApiError::field(
            ErrorKind::InvalidCharacter,
            field,
            format!(
                "{field} holds the NUL character (U+0000) at character {}, which the ledger cannot store",
                s[..at].chars().count()
            ),
            "a string without NUL (U+0000)",
            "a string with NUL",
        )),
    }
}

/// A request body's JSON, parsed once. Keys and strings are borrowed from the body when
/// they hold no escape, numbers keep their text, and an object's fields are sorted by
/// name, the last of a repeated name winning (as in a [`Map`]). Reading a body this way
/// allocates once per object, array and number, where a [`Value`] tree allocates for every
/// key and string too.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as its text.
    Number(Number),
    /// A string.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Node<'a>>),
    /// An object: its fields sorted by name, each name once.
    Object(Fields<'a>),
}

/// An object's fields, sorted by name, each name once.
pub(crate) type Fields<'a> = Vec<(Cow<'a, str>, Node<'a>)>;

/// The name under which serde_json (with `arbitrary_precision`) hands a number's text to a
/// visitor, as a map of one entry; serde_json's own [`Value`] reads numbers by this name.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl Node<'_> {
    /// The node as a [`Value`] (metadata is stored as one).
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.to_string()),
            Node::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(fields) => Value::Object(object_value(fields)),
        }
    }
}

/// An object's fields as a [`Map`].
pub(crate) fn object_value(fields: &[(Cow<'_, str>, Node<'_>)]) -> Map<String, Value> {
    fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_value()))
        .collect()
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Node<'de>, E> {
        Number::from_f64(n)
            .map(Node::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s)))
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        Node::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let Some(Key(first)) = map.next_key()? else {
            return Ok(Node::Object(Vec::new()));
        };
        if first == NUMBER_TOKEN {
            let Key(text) = map.next_value()?;
            return text
                .parse::<Number>()
                .map(Node::Number)
                .map_err(de::Error::custom);
        }
        let mut fields: Fields<'de> = Vec::with_capacity(8);
        fields.push((first, map.next_value()?));
        while let Some(Key(name)) = map.next_key()? {
            fields.push((name, map.next_value()?));
        }
        // Sorted by name (a stable sort keeps repeated names in the body's order), then
        // each repeated name once, with its last value.
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        fields.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(&mut later.1, &mut kept.1);
            }
            same
        });
        Ok(Node::Object(fields))
    }
}

/// An object key (or a number's text), borrowed from the body when it holds no escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// A short description of a JSON value for `error_meta.received`.
pub(crate) fn describe(v: &Node<'_>) -> String {
    match v {
        Node::Null => "null".into(),
        Node::Bool(b) => b.to_string(),
        Node::Number(n) => n.as_str().chars().take(64).collect(),
        Node::String(s) => {
            let short: String = s.chars().take(64).collect();
            format!("{short:?}")
        }
        Node::Array(_) => "array".into(),
        Node::Object(_) => "object".into(),
    }
}

/// An exact decimal as a JSON number (trailing zeros dropped: `7.00` -> `7`).
pub(crate) fn num(d: Decimal) -> Value {
    let text = if d.is_zero() {
        "0".to_string()
    } else {
        d.normalize().to_string()
    };
    Value::Number(Number::from_string_unchecked(text))
}

/// Parses a JSON number's text into a decimal, exactly.
pub(crate) fn decimal_of(n: &Number) -> Option<Decimal> {
    let s = n.as_str();
    Decimal::from_str_exact(s).ok().or_else(|| {
        if s.contains(['e', 'E']) {
            Decimal::from_scientific(s).ok()
        } else {
            None
        }
    })
}

/// Parses a request body into a JSON object's fields.
pub(crate) fn parse_body(body: &[u8]) -> Result<Fields<'_>, ApiError> {
    match serde_json::from_slice::<Node<'_>>(body) {
        Ok(Node::Object(fields)) => Ok(fields),
        Ok(other) => Err(ApiError::field(
            ErrorKind::InvalidJson,
            "body",
            "the request body must be a JSON object",
            "object",
            describe(&other),
        )),
        Err(e) => Err(ApiError::of(
            ErrorKind::InvalidJson,
            format!("the request body is not valid JSON: {e}"),
        )),
    }
}

/// Which fields of an object were taken: a bit per field, by its place in the sorted
/// fields (an object of at most 64 fields, any request's, needs no allocation).
enum Taken {
    Few(u64),
    Many(Vec<bool>),
}

impl Taken {
    fn new(len: usize) -> Taken {
        if len <= 64 {
            Taken::Few(0)
        } else {
            Taken::Many(vec![false; len])
        }
    }

    fn set(&mut self, i: usize) {
        match self {
            Taken::Few(bits) => *bits |= 1 << i,
            Taken::Many(v) => v[i] = true,
        }
    }

    fn get(&self, i: usize) -> bool {
        match self {
            Taken::Few(bits) => bits & (1 << i) != 0,
            Taken::Many(v) => v[i],
        }
    }
}

/// How many names and indexes a [`Path`] holds without allocating: deeper than any object
/// the interface reads.
const INLINE_DEPTH: usize = 6;

/// One step of a [`Path`]: a field's name (borrowed from the body) or an array index.
#[derive(Clone, Copy, Debug)]
enum Step<'a> {
    Name(&'a str),
    Index(usize),
}

/// Where an object lies in the body (`order_details.line_items[0]`), kept as its steps and
/// written out only when an error names one of its fields: reading a valid body builds no
/// path text.
#[derive(Clone, Debug)]
enum Path<'a> {
    Inline {
        steps: [Step<'a>; INLINE_DEPTH],
        len: usize,
    },
    /// Deeper than [`INLINE_DEPTH`]: written out.
    Text(String),
}

impl<'a> Path<'a> {
    const ROOT: Path<'a> = Path::Inline {
        steps: [Step::Index(0); INLINE_DEPTH],
        len: 0,
    };

    fn then(&self, step: Step<'a>) -> Path<'a> {
        match self {
            Path::Inline { steps, len } if *len < INLINE_DEPTH => {
                let mut steps = *steps;
                steps[*len] = step;
                Path::Inline {
                    steps,
                    len: len + 1,
                }
            }
            _ => {
                let mut text = self.text();
                push_step(&mut text, step);
                Path::Text(text)
            }
        }
    }

    fn text(&self) -> String {
        match self {
            Path::Inline { steps, len } => {
                let mut text = String::new();
                for step in &steps[..*len] {
                    push_step(&mut text, *step);
                }
                text
            }
            Path::Text(text) => text.clone(),
        }
    }
}

fn push_step(text: &mut String, step: Step<'_>) {
    use std::fmt::Write;
    match step {
        Step::Name(name) => {
            if !text.is_empty() {
                text.push('.');
            }
            text.push_str(name);
        }
        Step::Index(i) => {
            let _ = write!(text, "[{i}]");
        }
    }
}

/// One JSON object being read; remembers which fields were taken.
pub(crate) struct Obj<'a> {
    fields: &'a [(Cow<'a, str>, Node<'a>)],
    path: Path<'a>,
    taken: Taken,
}

impl<'a> Obj<'a> {
    /// Reads the top-level object.
    pub(crate) fn root(fields: &'a [(Cow<'a, str>, Node<'a>)]) -> Obj<'a> {
        Obj::at(fields, Path::ROOT)
    }

    fn at(fields: &'a [(Cow<'a, str>, Node<'a>)], path: Path<'a>) -> Obj<'a> {
        Obj {
            fields,
            path,
            taken: Taken::new(fields.len()),
        }
    }

    /// The full path of a field of this object.
    pub(crate) fn path(&self, name: &str) -> String {
        let mut text = self.path.text();
        push_step(&mut text, Step::Name(name));
        text
    }

    /// The path of a field of this object that holds an object: its name as the body
    /// spells it (the key that `take` found).
    fn field_path(&self, name: &str) -> Path<'a> {
        let key = self.find(name).map_or("", |i| self.fields[i].0.as_ref());
        self.path.then(Step::Name(key))
    }

    /// Takes a field; `None` when absent or null.
    pub(crate) fn take(&mut self, name: &str) -> Option<&'a Node<'a>> {
        let i = self.find(name)?;
        self.taken.set(i);
        let value = &self.fields[i].1;
        (*value != Node::Null).then_some(value)
    }

    /// Where the field `name` is. A reader asks for every field it knows, most of them
    /// absent, and an object holds few: its names are compared by length first, and only
    /// those of the same length by their bytes. A large object is searched by halves.
    fn find(&self, name: &str) -> Option<usize> {
        if self.fields.len() > 16 {
            return self
                .fields
                .binary_search_by(|(k, _)| k.as_ref().cmp(name))
                .ok();
        }
        self.fields
            .iter()
            .position(|(k, _)| k.len() == name.len() && k.as_bytes() == name.as_bytes())
    }

    /// An optional string of at most `max` characters.
    pub(crate) fn opt_str(&mut self, name: &str, max: usize) -> Result<Option<&'a str>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(Node::String(s)) => {
                // A string of at most `max` bytes has at most `max` characters.
                if s.len() > max && s.chars().count() > max {
                    let field = self.path(name);
                    return Err(ApiError::field(
                        ErrorKind::StringTooLong,
                        &field,
                        format!("{field} must be at most {max} characters"),
                        format!("string of at most {max} characters"),
                        format!("string of {} characters", s.chars().count()),
                    ));
                }
                if s.contains('\0') {
                    storable(&self.path(name), s)?;
                }
                Ok(Some(s.as_ref()))
            }
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "string", v)),
        }
    }

    /// A required string.
    pub(crate) fn req_str(&mut self, name: &str, max: usize) -> Result<&'a str, ApiError> {
        self.opt_str(name, max)?
            .ok_or_else(|| ApiError::missing(&self.path(name), "string"))
    }

    /// An optional boolean.
    pub(crate) fn opt_bool(&mut self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(Node::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "boolean", v)),
        }
    }

    /// An optional number, exactly.
    pub(crate) fn opt_decimal(&mut self, name: &str) -> Result<Option<Decimal>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(v @ Node::Number(n)) => decimal_of(n).map(Some).ok_or_else(|| {
                ApiError::incorrect_type(
                    &self.path(name),
                    "number of at most 28 significant digits",
                    v,
                )
            }),
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "number", v)),
        }
    }

    /// An optional integer. As in JSON Schema, a number with a zero fraction (`3.0`,
    /// `1e3`) is an integer.
    pub(crate) fn opt_int(&mut self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(v @ Node::Number(n)) => n
                .as_str()
                .parse::<i64>()
                .ok()
                .or_else(|| {
                    decimal_of(n)
                        .filter(|d| d.fract().is_zero())
                        .and_then(|d| i64::try_from(d).ok())
                })
                .map(Some)
                .ok_or_else(|| ApiError::incorrect_type(&self.path(name), "integer", v)),
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "integer", v)),
        }
    }

    /// An optional nested object.
    pub(crate) fn opt_obj(&mut self, name: &str) -> Result<Option<Obj<'a>>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(Node::Object(fields)) => Ok(Some(Obj::at(fields, self.field_path(name)))),
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "object", v)),
        }
    }

    /// A required nested object.
    pub(crate) fn req_obj(&mut self, name: &str) -> Result<Obj<'a>, ApiError> {
        self.opt_obj(name)?
            .ok_or_else(|| ApiError::missing(&self.path(name), "object"))
    }

    /// An optional array.
    pub(crate) fn opt_array(&mut self, name: &str) -> Result<Option<&'a [Node<'a>]>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(Node::Array(items)) => Ok(Some(items)),
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "array", v)),
        }
    }

    /// The object at index `i` of an array field.
    pub(crate) fn element(
        &self,
        name: &str,
        i: usize,
        v: &'a Node<'a>,
    ) -> Result<Obj<'a>, ApiError> {
        let path = self.field_path(name).then(Step::Index(i));
        match v {
            Node::Object(fields) => Ok(Obj::at(fields, path)),
            v => Err(ApiError::incorrect_type(&path.text(), "object", v)),
        }
    }

    /// Fails on the first field (by name) that was not taken.
    pub(crate) fn finish(self) -> Result<(), ApiError> {
        let extra = (0..self.fields.len()).find(|&i| !self.taken.get(i));
        if let Some(i) = extra {
            let (name, value) = &self.fields[i];
            // A name holding NUL is refused as such, and not written back into the answer.
            let at = self.path.text();
            storable(if at.is_empty() { "body" } else { &at }, name)?;
            let field = self.path(name);
            return Err(ApiError::field(
                ErrorKind::UnrecognizedField,
                &field,
                format!("{field} is not a field of this request in this API version"),
                "no such field",
                describe(value),
            ));
        }
        Ok(())
    }

    /// Takes a metadata object: at most 50 keys shorter than 255 characters, each value a
    /// string, number, boolean or null shorter than 255 characters (a string by its
    /// length, another value by its JSON text). Arrays and objects are refused.
    pub(crate) fn opt_metadata(
        &mut self,
        name: &str,
    ) -> Result<Option<Map<String, Value>>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(Node::Object(map)) => {
                // The same bounds as merchants' metadata: at most 50 keys, keys shorter
                // than 255 characters, values too (below).
                if map.len() > 50 {
                    return Err(ApiError::field(
                        ErrorKind::TooManyItems,
                        &self.path(name),
                        format!("{} may hold at most 50 keys", self.path(name)),
                        "at most 50 keys",
                        format!("{} keys", map.len()),
                    ));
                }
                for (k, v) in map {
                    storable(&self.path(name), k)?;
                    if let Node::String(s) = v {
                        storable(&format!("{}.{k}", self.path(name)), s)?;
                    }
                    let key_len = k.chars().count();
                    if key_len >= 255 {
                        let field = self.path(name);
                        return Err(ApiError::field(
                            ErrorKind::StringTooLong,
                            &field,
                            format!("metadata keys of {field} must be shorter than 255 characters"),
                            "key shorter than 255 characters",
                            format!("{key_len} characters"),
                        ));
                    }
                    let len = match v {
                        Node::String(s) => s.chars().count(),
                        Node::Number(n) => n.as_str().chars().count(),
                        Node::Bool(b) => b.to_string().len(),
                        Node::Null => "null".len(),
                        Node::Array(_) | Node::Object(_) => {
                            let field = format!("{}.{k}", self.path(name));
                            return Err(ApiError::incorrect_type(
                                &field,
                                "string, number, boolean or null",
                                v,
                            ));
                        }
                    };
                    if len >= 255 {
                        let field = format!("{}.{k}", self.path(name));
                        return Err(ApiError::field(
                            ErrorKind::StringTooLong,
                            &field,
                            format!("metadata value {field} must be shorter than 255 characters"),
                            "value shorter than 255 characters",
                            format!("{len} characters"),
                        ));
                    }
                }
                Ok(Some(object_value(map)))
            }
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "object", v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_found_by_name_in_small_and_large_objects() {
        // 16 fields are compared one by one, 17 and more searched by halves: every name is
        // found either way, a name of the same length as another's is told apart, and an
        // absent one is not found.
        for n in [1, 16, 17, 40] {
            let body = (0..n)
                .map(|i| format!("\"f{i:02}\": {i}"))
                .collect::<Vec<_>>()
                .join(", ");
            let body = format!("{{{body}, \"longer_name\": true}}");
            let map = parse_body(body.as_bytes()).unwrap();
            let mut o = Obj::root(&map);
            for i in (0..n).rev() {
                assert_eq!(
                    o.opt_int(&format!("f{i:02}")).unwrap(),
                    Some(i),
                    "{n} fields"
                );
            }
            assert_eq!(o.opt_int("f99").unwrap(), None, "{n} fields");
            assert_eq!(o.opt_bool("longer_name").unwrap(), Some(true), "{n} fields");
            o.finish().unwrap();
        }
    }

    #[test]
    fn numbers_are_read_from_their_text() {
        // 12345678901234567 has 17 digits, more than an f64 holds exactly (2^53 ~ 9.007e15).
        let map = parse_body(br#"{"a": 12345678901234567, "b": 0.1, "c": 1e3}"#).unwrap();
        let mut o = Obj::root(&map);
        assert_eq!(
            o.opt_decimal("a").unwrap().unwrap().to_string(),
            "12345678901234567"
        );
        assert_eq!(o.opt_decimal("b").unwrap().unwrap().to_string(), "0.1");
        assert_eq!(o.opt_decimal("c").unwrap().unwrap(), Decimal::from(1000));
        o.finish().unwrap();
        // JSON Schema counts a number with a zero fraction as an integer.
        let map = parse_body(br#"{"a": 3703.0, "b": 1e3, "c": 2.5, "d": 1e19}"#).unwrap();
        let mut o = Obj::root(&map);
        assert_eq!(o.opt_int("a").unwrap(), Some(3703));
        assert_eq!(o.opt_int("b").unwrap(), Some(1000));
        assert!(o.opt_int("c").is_err());
        assert!(o.opt_int("d").is_err(), "1e19 is beyond i64");
        assert_eq!(num(Decimal::new(700, 2)).to_string(), "7");
        assert_eq!(
            num("12345678901234567.5".parse().unwrap()).to_string(),
            "12345678901234567.5"
        );
    }

    /// The body parsed as serde_json's own tree, the reference the borrowed tree must
    /// agree with.
    fn as_value(body: &str) -> Value {
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn an_error_names_the_full_path_of_its_field_at_any_depth() {
        // Eight objects deep (past the steps a path keeps inline), then an array element:
        // the error names every step, as the body spells it.
        let body =
            br#"{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"list":[{"x":1},{"x":"no"}]}}}}}}}}}"#;
        let map = parse_body(body).unwrap();
        let mut o = Obj::root(&map);
        let mut objs = Vec::new();
        let mut cur = o.req_obj("a").unwrap();
        for name in ["b", "c", "d", "e", "f", "g", "h"] {
            let next = cur.req_obj(name).unwrap();
            objs.push(std::mem::replace(&mut cur, next));
        }
        let list = cur.opt_array("list").unwrap().unwrap();
        let mut first = cur.element("list", 0, &list[0]).unwrap();
        assert_eq!(first.opt_int("x").unwrap(), Some(1));
        let mut second = cur.element("list", 1, &list[1]).unwrap();
        let e = second.opt_int("x").unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("a.b.c.d.e.f.g.h.list[1].x"),
            "{e:?}"
        );
        // A missing field of a shallow object, and an element that is not an object.
        let mut a = Obj::root(&map);
        let Err(e) = a.req_obj("a").unwrap().req_str("missing", 10) else {
            panic!("a missing string was read");
        };
        assert_eq!(e.field.as_deref(), Some("a.missing"));
        let Err(e) = cur.element("list", 7, &Node::Null) else {
            panic!("null was read as an object");
        };
        assert_eq!(e.field.as_deref(), Some("a.b.c.d.e.f.g.h.list[7]"));
        let _ = o.finish();
    }

    #[test]
    fn a_body_reads_as_serde_json_reads_it() {
        // Escapes, unicode, nesting, every type, numbers past f64 and i64, a repeated key
        // (the last wins in serde_json's map, and here): converted back to a `Value`, the
        // tree is serde_json's tree.
        let body = r#"{"s": "plain", "e": "tab\there \"q\" \u00e9\ud83d\ude00", "n": null,
            "t": true, "f": false, "i": -42, "big": 123456789012345678901234567890,
            "d": 0.1000, "x": 1E-7, "a": [1, "two", [3], {"four": 4}, null],
            "o": {"z": 1, "a": {"deep": []}}, "k": 1, "k": 2, "é": "key with an accent"}"#;
        let fields = parse_body(body.as_bytes()).unwrap();
        assert_eq!(Value::Object(object_value(&fields)), as_value(body));
        // A string without an escape is borrowed from the body; one with an escape is not.
        let find = |name: &str| &fields.iter().find(|(k, _)| k == name).unwrap().1;
        assert!(matches!(find("s"), Node::String(Cow::Borrowed("plain"))));
        assert!(matches!(find("e"), Node::String(Cow::Owned(_))));
        // The last of a repeated key wins, and the name is there once.
        assert_eq!(fields.iter().filter(|(k, _)| k == "k").count(), 1);
        assert_eq!(find("k"), &Node::Number(2.into()));
        // Fields are in name order (bytes), as a `Map` keeps them.
        let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_ref()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }

    #[test]
    fn what_is_not_a_json_object_is_refused_as_serde_json_refuses_it() {
        for body in [
            &b"[1, 2]"[..],
            b"\"text\"",
            b"12",
            b"null",
            b"{\"a\": }",
            b"{\"a\": 1",
            b"{\"a\": \"\xff\"}",
            b"{\"a\": 01}",
            b"",
        ] {
            let e = parse_body(body).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidJson, "{body:?}");
            assert!(serde_json::from_slice::<Map<String, Value>>(body).is_err());
        }
        // Nesting past serde_json's limit (128) is an error, not a stack overflow.
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(
            parse_body(deep.as_bytes()).unwrap_err().kind,
            ErrorKind::InvalidJson
        );
    }

    #[test]
    fn a_field_named_like_serde_jsons_number_token_is_read_as_serde_json_reads_it() {
        // serde_json hands a number's text to a visitor as an object of one field with
        // this name; its own `Value` reads such an object in a body as a number, or
        // refuses it. The tree does the same.
        let body = r#"{"a": {"$serde_json::private::Number": "12.5"}}"#;
        let fields = parse_body(body.as_bytes()).unwrap();
        assert_eq!(Value::Object(object_value(&fields)), as_value(body));
        let bad = r#"{"a": {"$serde_json::private::Number": "twelve"}}"#;
        assert!(serde_json::from_str::<Value>(bad).is_err());
        assert_eq!(
            parse_body(bad.as_bytes()).unwrap_err().kind,
            ErrorKind::InvalidJson
        );
    }

    #[test]
    fn the_first_field_not_taken_is_reported_by_name_in_any_object() {
        // Objects of up to 64 fields keep what was taken in a bit mask, larger ones in a
        // vector: both report the first field, in name order, that no reader took.
        for n in [3usize, 64, 65, 300] {
            let body = format!(
                "{{{}}}",
                (0..n)
                    .map(|i| format!("\"f{i:03}\": {i}"))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let fields = parse_body(body.as_bytes()).unwrap();
            let mut o = Obj::root(&fields);
            for i in (0..n).filter(|&i| i != n - 2) {
                assert_eq!(o.opt_int(&format!("f{i:03}")).unwrap(), Some(i as i64));
            }
            let e = o.finish().unwrap_err();
            assert_eq!(e.kind, ErrorKind::UnrecognizedField);
            assert_eq!(e.field.as_deref(), Some(format!("f{:03}", n - 2).as_str()));
            // All taken: nothing to report.
            let mut o = Obj::root(&fields);
            for i in 0..n {
                o.take(&format!("f{i:03}"));
            }
            o.finish().unwrap();
        }
    }

    #[test]
    fn strings_are_bounded_by_characters_not_bytes() {
        // "é" is 2 bytes: 4 of them are 8 bytes but 4 characters.
        let fields = parse_body("{\"s\": \"éééé\", \"t\": \"ééééé\"}".as_bytes()).unwrap();
        let mut o = Obj::root(&fields);
        assert_eq!(o.opt_str("s", 4).unwrap(), Some("éééé"));
        let e = o.opt_str("t", 4).unwrap_err();
        assert_eq!(e.kind, ErrorKind::StringTooLong);
    }
}
