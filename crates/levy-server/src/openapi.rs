//! The OpenAPI documents: the whole interface (`GET /openapi.json`, every version's fields
//! together) and one closed document per API version (`GET /openapi/{version}.json`).
//!
//! The whole document marks what belongs to which version with three extensions, and
//! [`for_version`] derives a version's document from them:
//!
//! * `x-levy-since: "V"` on an operation or a property: it exists from version `V` on;
//! * `x-levy-until: "V"` on a property: it exists in the versions before `V`;
//! * `x-levy-required-since: "V"` on a property: it is required from version `V` on;
//! * `x-levy-before: {"V": {…}}` on a schema: in the versions before `V` the given
//!   keywords replace the schema's own (a shorter currency list, for example);
//! * `x-levy-anyof-since: {"V": [...]}` on a schema: from version `V` on (the latest `V`
//!   not after the version wins) the list is the schema's `anyOf`.
//!
//! A version's document has only that version's operations and fields, its own error
//! format, the `X-API-Version` header fixed to it, `product_category` enumerated from the
//! rate table the server runs on, and every free string patterned to hold no NUL
//! ([`NO_NUL`]), which the service refuses. Every object schema is closed
//! (`additionalProperties: false`) except metadata, so a request the document accepts is a
//! request the service accepts, field for field.

use std::sync::LazyLock;

use levy_api::ApiVersion;
use serde_json::{Map, Value};

/// The whole document's text; the same text is `crates/levy-server/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("../openapi.json");

/// The path of the whole document.
pub const OPENAPI_PATH: &str = "/openapi.json";

/// The document of the TaxJar v2 and AvaTax REST v2 request shapes `levy serve` accepts
/// (`/v2/…`, `/api/v2/…`; `docs/integrations.md`): its text, the same text as
/// `crates/levy-server/openapi-dialects.json`, served as it is (the shapes have no
/// versions of levy's).
pub const DIALECTS_JSON: &str = include_str!("../openapi-dialects.json");

/// The path of [`DIALECTS_JSON`].
pub const DIALECTS_PATH: &str = "/openapi/dialects.json";

/// The path prefix of a version's document: `/openapi/2026-03-01.json`.
pub const VERSIONED_PREFIX: &str = "/openapi/";

/// The whole document, parsed once.
static WHOLE: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(OPENAPI_JSON).expect("openapi.json is JSON"));

/// The version named by a document path (`/openapi/2026-03-01.json`), if it is one.
pub fn version_of_path(path: &str) -> Option<ApiVersion> {
    let rest = path.strip_prefix(VERSIONED_PREFIX)?;
    ApiVersion::parse(rest.strip_suffix(".json")?)
}

/// The document of one API version, with `categories` (the rate table's product
/// categories) as the enum of every `product_category`.
pub fn for_version(version: ApiVersion, categories: &[&str]) -> Value {
    let mut doc = WHOLE.clone();
    let v = version.as_str();

    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for item in paths.values_mut() {
            if let Some(item) = item.as_object_mut() {
                item.retain(|_, op| !later(op.get("x-levy-since"), v));
            }
        }
        paths.retain(|_, item| {
            item.as_object()
                .is_some_and(|m| m.keys().any(|k| k != "parameters"))
        });
    }
    if let Some(components) = doc.get_mut("components") {
        prune(components, v, categories);
        let error = if version.flat_errors() {
            "#/components/schemas/ErrorFlat"
        } else {
            "#/components/schemas/ErrorLegacy"
        };
        components["responses"]["Error"]["content"]["application/json"]["schema"] =
            serde_json::json!({ "$ref": error });
        if version == ApiVersion::ALL[0] {
            let header = &mut components["parameters"]["Version"];
            header["schema"]["enum"] = serde_json::json!([v]);
            header["description"] =
                Value::from(format!("API version {v}, also the version when absent."));
        } else if let Some(parameters) = components["parameters"].as_object_mut() {
            // The header is not a parameter here: this whole document is its one value.
            // (Absent, it would select 2024-09-01, whose document is another.)
            parameters.remove("Version");
        }
    }
    if version != ApiVersion::ALL[0] {
        drop_version_parameter(&mut doc);
    }
    if let Some(paths) = doc.get_mut("paths") {
        prune(paths, v, categories);
    }
    doc["info"]["description"] = Value::from(format!(
        "The tax service interface as levy implements it, for API version {v}: every \
         request carries the header `X-API-Version: {v}` (without it the service answers \
         as 2024-09-01). Every operation and field listed is one this version answers or \
         accepts, and no other field is accepted. `GET /openapi.json` describes every \
         version at once."
    ));
    doc["info"]["x-api-version"] = Value::from(v);
    forbid_nul(&mut doc);
    doc
}

/// The pattern of every free string of a version's document: no NUL (U+0000), which the
/// service refuses in any string (400 `INVALID_CHARACTER`: a PostgreSQL ledger cannot
/// store it).
pub const NO_NUL: &str = "^[^\\x00]*$";

/// Gives every string schema without an `enum` or `const` of its own (beside its own
/// pattern, if it has one), and the keys of every open object (metadata), the [`NO_NUL`]
/// pattern, so that a request the document accepts is one the service accepts.
fn forbid_nul(node: &mut Value) {
    match node {
        Value::Object(map) => {
            let string = match map.get("type") {
                Some(Value::String(t)) => t == "string",
                Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
                _ => false,
            };
            if string && !["enum", "const"].iter().any(|k| map.contains_key(*k)) {
                if map.contains_key("pattern") {
                    // A pattern of its own (a name that is not blank): both must match.
                    let all = map
                        .entry("allOf")
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Some(all) = all.as_array_mut() {
                        all.push(serde_json::json!({ "pattern": NO_NUL }));
                    }
                } else {
                    map.insert("pattern".into(), Value::from(NO_NUL));
                }
            }
            // An open object (metadata): its keys are strings too.
            let open = map
                .get("additionalProperties")
                .is_some_and(|a| *a != Value::Bool(false));
            if open {
                let names = map
                    .entry("propertyNames")
                    .or_insert_with(|| serde_json::json!({}));
                if let Some(names) = names.as_object_mut() {
                    names
                        .entry("pattern")
                        .or_insert_with(|| Value::from(NO_NUL));
                }
            }
            map.values_mut().for_each(forbid_nul);
        }
        Value::Array(items) => items.iter_mut().for_each(forbid_nul),
        _ => {}
    }
}

/// Removes every reference to the `X-API-Version` parameter.
fn drop_version_parameter(node: &mut Value) {
    match node {
        Value::Object(map) => {
            if let Some(Value::Array(list)) = map.get_mut("parameters") {
                list.retain(|p| p["$ref"] != "#/components/parameters/Version");
            }
            map.values_mut().for_each(drop_version_parameter);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_version_parameter),
        _ => {}
    }
}

/// Whether a `x-levy-since` value names a version after `v` (ISO dates compare as text).
fn later(since: Option<&Value>, v: &str) -> bool {
    since.and_then(Value::as_str).is_some_and(|s| s > v)
}

/// Drops the properties `v` does not have, requires those it requires, fills the
/// category enums, and removes the version extensions, everywhere under `node`.
fn prune(node: &mut Value, v: &str, categories: &[&str]) {
    match node {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                let mut dropped = Vec::new();
                let mut required = Vec::new();
                props.retain(|name, p| {
                    let keep = !later(p.get("x-levy-since"), v)
                        && p.get("x-levy-until")
                            .and_then(Value::as_str)
                            .is_none_or(|u| u > v);
                    if !keep {
                        dropped.push(name.clone());
                    } else if p
                        .get("x-levy-required-since")
                        .and_then(Value::as_str)
                        .is_some_and(|s| s <= v)
                    {
                        required.push(name.clone());
                    }
                    keep
                });
                set_required(map, &dropped, &required);
            }
            if let Some(Value::Object(before)) = map.get("x-levy-before").cloned() {
                for (until, keywords) in before {
                    if v < until.as_str() {
                        if let Value::Object(keywords) = keywords {
                            map.extend(keywords);
                        }
                    }
                }
            }
            if let Some(Value::Object(since)) = map.get("x-levy-anyof-since").cloned() {
                if let Some((_, any_of)) = since
                    .into_iter()
                    .filter(|(s, _)| s.as_str() <= v)
                    .max_by(|a, b| a.0.cmp(&b.0))
                {
                    map.insert("anyOf".into(), any_of);
                }
            }
            if map.get("x-levy-enum").and_then(Value::as_str) == Some("product_categories") {
                map.insert("enum".into(), Value::from(categories.to_vec()));
            }
            for key in [
                "x-levy-since",
                "x-levy-until",
                "x-levy-required-since",
                "x-levy-enum",
                "x-levy-before",
                "x-levy-anyof-since",
            ] {
                map.remove(key);
            }
            map.values_mut().for_each(|x| prune(x, v, categories));
        }
        Value::Array(items) => items.iter_mut().for_each(|x| prune(x, v, categories)),
        _ => {}
    }
}

/// Removes `dropped` from a schema's `required` list and adds `added` to it.
fn set_required(schema: &mut Map<String, Value>, dropped: &[String], added: &[String]) {
    let mut list: Vec<Value> = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.retain(|r| !r.as_str().is_some_and(|r| dropped.iter().any(|d| d == r)));
    for a in added {
        if !list.iter().any(|r| r.as_str() == Some(a)) {
            list.push(Value::from(a.as_str()));
        }
    }
    if list.is_empty() {
        schema.remove("required");
    } else {
        schema.insert("required".into(), Value::Array(list));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_paths_name_their_version() {
        assert_eq!(
            version_of_path("/openapi/2025-05-12.json"),
            Some(ApiVersion::V2025_05_12)
        );
        assert_eq!(version_of_path("/openapi/2025-05-13.json"), None);
        assert_eq!(version_of_path("/openapi/2025-05-12"), None);
        assert_eq!(version_of_path("/openapi.json"), None);
    }

    #[test]
    fn a_version_keeps_only_its_own_operations_and_fields() {
        let base = for_version(ApiVersion::V2024_09_01, &["GENERAL_MERCHANDISE"]);
        let latest = for_version(ApiVersion::V2026_03_01, &["GENERAL_MERCHANDISE"]);
        // Merchants arrive in 2026-01-01 (spec, Versioning, item 4).
        assert!(base["paths"].get("/tax/merchants").is_none());
        assert!(latest["paths"]["/tax/merchants"]["post"].is_object());
        // The fallback customer type arrives in 2026-03-01 (item 5).
        let customer =
            |d: &Value| d["components"]["schemas"]["CustomerInput"]["properties"].clone();
        assert!(customer(&base).get("fallback_type").is_none());
        assert!(customer(&latest).get("fallback_type").is_some());
        // The origin address is required from 2025-05-12 (spec, Create calculation).
        let required = |d: &Value| {
            d["components"]["schemas"]["CalculationRequest"]["required"]
                .as_array()
                .unwrap()
                .contains(&Value::from("origin_address"))
        };
        assert!(!required(&base));
        assert!(required(&latest));
        // Errors: the legacy format before 2026-01-01, the flat one after.
        let error = |d: &Value| d["components"]["responses"]["Error"].to_string();
        assert!(error(&base).contains("ErrorLegacy") && !error(&base).contains("ErrorFlat"));
        assert!(error(&latest).contains("ErrorFlat") && !error(&latest).contains("ErrorLegacy"));
        // No extension is left for a client's generator to puzzle over.
        assert!(!latest.to_string().contains("\"x-levy-since\":"));
        // The version header is fixed by the document, and a parameter only where it
        // may be left out: in the base version's.
        assert!(!latest.to_string().contains("parameters/Version"));
        assert_eq!(
            base["components"]["parameters"]["Version"]["schema"]["enum"],
            serde_json::json!(["2024-09-01"])
        );
    }
}
