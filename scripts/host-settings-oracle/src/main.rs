//! Reads a JSON array of settings.toml texts on stdin; prints a JSON array with,
//! for each text, the capability instances yolop would run, in order:
//! `[{"ref": "...", "config": {...} | null}]`, or `{"error": "..."}` when the text
//! does not parse. `parse_capability_entry`, `apply_capability_settings`,
//! `merge_config` and `toml_value_to_json` are copied verbatim from yolop v0.3.0
//! (src/capability_settings.rs); `AgentCapabilityConfig` is reduced to its id and
//! config, and the defaults list is empty (no extension is a built-in default).
use serde_json::{json, Value};
use std::io::Read;
use toml::value::Table;
use toml::Value as TomlValue;

#[derive(Debug, Clone)]
pub struct CapabilityOverride {
    pub capability_ref: String,
    pub enabled: Option<bool>,
    pub append: bool,
    pub config: Value,
}

impl CapabilityOverride {
    pub fn is_remove(&self) -> bool {
        self.enabled == Some(false)
    }
}

pub struct AgentCapabilityConfig {
    id: String,
    pub config: Value,
}

impl AgentCapabilityConfig {
    fn with_config(id: String, config: Value) -> Self {
        Self { id, config }
    }
    fn capability_id(&self) -> &str {
        &self.id
    }
}

pub fn parse_capabilities_table(table: &Table) -> Vec<CapabilityOverride> {
    let Some(raw) = table.get("capabilities") else {
        return Vec::new();
    };

    match raw {
        TomlValue::Array(items) => items.iter().filter_map(parse_capability_entry).collect(),
        _ => Vec::new(),
    }
}

fn parse_capability_entry(value: &TomlValue) -> Option<CapabilityOverride> {
    let entry = value.as_table()?;
    let capability_ref = entry
        .get("ref")
        .or_else(|| entry.get("id"))
        .and_then(TomlValue::as_str)?
        .to_string();
    let enabled = entry.get("enabled").and_then(TomlValue::as_bool);
    let append = entry
        .get("append")
        .and_then(TomlValue::as_bool)
        .unwrap_or(false);
    let mut config_table = entry.clone();
    for key in ["ref", "id", "enabled", "append"] {
        config_table.remove(key);
    }
    let config = if config_table.is_empty() {
        Value::Null
    } else {
        toml_value_to_json(&TomlValue::Table(config_table))
    };
    Some(CapabilityOverride {
        capability_ref,
        enabled,
        append,
        config,
    })
}

fn toml_value_to_json(value: &TomlValue) -> Value {
    match value {
        TomlValue::String(s) => Value::String(s.clone()),
        TomlValue::Integer(i) => json!(*i),
        TomlValue::Float(f) => json!(*f),
        TomlValue::Boolean(b) => Value::Bool(*b),
        TomlValue::Datetime(dt) => Value::String(dt.to_string()),
        TomlValue::Array(items) => Value::Array(items.iter().map(toml_value_to_json).collect()),
        TomlValue::Table(table) => {
            let mut map = serde_json::Map::new();
            for (k, v) in table {
                map.insert(k.clone(), toml_value_to_json(v));
            }
            Value::Object(map)
        }
    }
}

/// Apply ordered user overrides to the compile-time default harness list.
pub fn apply_capability_settings(
    defaults: Vec<AgentCapabilityConfig>,
    overrides: &[CapabilityOverride],
) -> Vec<AgentCapabilityConfig> {
    let mut caps = defaults;
    for entry in overrides {
        if entry.is_remove() {
            caps.retain(|cap| cap.capability_id() != entry.capability_ref);
            continue;
        }
        if entry.append {
            caps.push(AgentCapabilityConfig::with_config(
                entry.capability_ref.clone(),
                entry.config.clone(),
            ));
            continue;
        }
        if let Some(existing) = caps
            .iter_mut()
            .find(|cap| cap.capability_id() == entry.capability_ref)
        {
            existing.config = merge_config(&existing.config, &entry.config);
        } else {
            caps.push(AgentCapabilityConfig::with_config(
                entry.capability_ref.clone(),
                entry.config.clone(),
            ));
        }
    }
    caps
}

fn merge_config(default: &Value, override_config: &Value) -> Value {
    if override_config.is_null() {
        return default.clone();
    }
    match (default, override_config) {
        (Value::Object(base), Value::Object(over)) => {
            let mut merged = base.clone();
            for (k, v) in over {
                merged.insert(k.clone(), v.clone());
            }
            Value::Object(merged)
        }
        (_, over) => over.clone(),
    }
}

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let texts: Vec<String> = serde_json::from_str(&input).expect("a JSON array of strings");
    let out: Vec<Value> = texts
        .iter()
        .map(|text| match text.parse::<TomlValue>() {
            Ok(TomlValue::Table(table)) => {
                let caps = apply_capability_settings(Vec::new(), &parse_capabilities_table(&table));
                Value::Array(
                    caps.iter()
                        .map(|c| json!({ "ref": c.capability_id(), "config": c.config }))
                        .collect(),
                )
            }
            Ok(_) => json!({ "error": "not a table" }),
            Err(e) => json!({ "error": e.to_string() }),
        })
        .collect();
    println!("{}", Value::Array(out));
}
