//! Reading request bodies field by field, with the interface's validation errors, and
//! writing exact decimals as JSON numbers.
//!
//! Bodies are parsed with serde_json's `arbitrary_precision`, so a number keeps its text
//! and becomes a [`Decimal`] without passing through a binary float. A JSON `null` counts
//! as absent. Every field a reader does not take is reported as `UNRECOGNIZED_FIELD`.

use rust_decimal::Decimal;
use serde_json::{Map, Number, Value};

use crate::error::{ApiError, ErrorKind};

/// Longest string accepted in an ordinary field (ids, names, categories).
pub(crate) const MAX_STRING: usize = 255;

/// A short description of a JSON value for `error_meta.received`.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_str().chars().take(64).collect(),
        Value::String(s) => {
            let short: String = s.chars().take(64).collect();
            format!("{short:?}")
        }
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
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

/// Parses a request body into a JSON object.
pub(crate) fn parse_body(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
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

/// One JSON object being read; remembers which fields were taken.
pub(crate) struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
    taken: Vec<&'a str>,
}

impl<'a> Obj<'a> {
    /// Reads the top-level object.
    pub(crate) fn root(map: &'a Map<String, Value>) -> Obj<'a> {
        Obj {
            map,
            path: String::new(),
            taken: Vec::with_capacity(map.len()),
        }
    }

    /// The full path of a field of this object.
    pub(crate) fn path(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    /// Takes a field; `None` when absent or null.
    pub(crate) fn take(&mut self, name: &str) -> Option<&'a Value> {
        let (key, value) = self.map.get_key_value(name)?;
        self.taken.push(key.as_str());
        (!value.is_null()).then_some(value)
    }

    /// An optional string of at most `max` characters.
    pub(crate) fn opt_str(&mut self, name: &str, max: usize) -> Result<Option<&'a str>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::String(s)) => {
                if s.chars().count() > max {
                    let field = self.path(name);
                    return Err(ApiError::field(
                        ErrorKind::StringTooLong,
                        &field,
                        format!("{field} must be at most {max} characters"),
                        format!("string of at most {max} characters"),
                        format!("string of {} characters", s.chars().count()),
                    ));
                }
                Ok(Some(s.as_str()))
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
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "boolean", v)),
        }
    }

    /// An optional number, exactly.
    pub(crate) fn opt_decimal(&mut self, name: &str) -> Result<Option<Decimal>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(v @ Value::Number(n)) => decimal_of(n).map(Some).ok_or_else(|| {
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
            Some(v @ Value::Number(n)) => n
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
            Some(Value::Object(map)) => Ok(Some(Obj {
                map,
                path: self.path(name),
                taken: Vec::with_capacity(map.len()),
            })),
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "object", v)),
        }
    }

    /// A required nested object.
    pub(crate) fn req_obj(&mut self, name: &str) -> Result<Obj<'a>, ApiError> {
        self.opt_obj(name)?
            .ok_or_else(|| ApiError::missing(&self.path(name), "object"))
    }

    /// An optional array.
    pub(crate) fn opt_array(&mut self, name: &str) -> Result<Option<&'a [Value]>, ApiError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "array", v)),
        }
    }

    /// The object at index `i` of an array field.
    pub(crate) fn element(&self, name: &str, i: usize, v: &'a Value) -> Result<Obj<'a>, ApiError> {
        let path = format!("{}[{i}]", self.path(name));
        match v {
            Value::Object(map) => Ok(Obj {
                map,
                path,
                taken: Vec::with_capacity(map.len()),
            }),
            v => Err(ApiError::incorrect_type(&path, "object", v)),
        }
    }

    /// Fails on the first field that was not taken.
    pub(crate) fn finish(self) -> Result<(), ApiError> {
        if let Some(extra) = self.map.keys().find(|k| !self.taken.contains(&k.as_str())) {
            let field = self.path(extra);
            return Err(ApiError::field(
                ErrorKind::UnrecognizedField,
                &field,
                format!("{field} is not a field of this request in this API version"),
                "no such field",
                describe(&self.map[extra]),
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
            Some(Value::Object(map)) => {
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
                        Value::String(s) => s.chars().count(),
                        Value::Array(_) | Value::Object(_) => {
                            let field = format!("{}.{k}", self.path(name));
                            return Err(ApiError::incorrect_type(
                                &field,
                                "string, number, boolean or null",
                                v,
                            ));
                        }
                        other => other.to_string().chars().count(),
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
                Ok(Some(map.clone()))
            }
            Some(v) => Err(ApiError::incorrect_type(&self.path(name), "object", v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
