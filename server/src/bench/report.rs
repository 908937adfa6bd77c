//! Printing benchmark results: aligned `key value` lines for people, one JSON object for scripts.

use serde_json::{Map, Value};

/// An ordered set of named measurements.
#[derive(Default)]
pub struct Report {
    fields: Map<String, Value>,
}

impl Report {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, key: &str, value: impl Into<Value>) -> &mut Self {
        self.fields.insert(key.to_string(), value.into());
        self
    }

    /// A number set earlier, to put another beside it.
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.fields.get(key).and_then(Value::as_f64)
    }

    pub fn print(&self, json: bool) {
        if json {
            println!("{}", Value::Object(self.fields.clone()));
            return;
        }
        let width = self.fields.keys().map(String::len).max().unwrap_or(0);
        for (key, value) in &self.fields {
            let shown = match value {
                Value::Number(n) => match n.as_f64() {
                    Some(x) if x.abs() >= 1000.0 => format!("{x:.3e}"),
                    Some(x) if n.is_f64() => format!("{x:.3}"),
                    _ => n.to_string(),
                },
                other => other.to_string(),
            };
            println!("{key:<width$}  {shown}");
        }
    }
}

/// Items per second.
pub fn rate(items: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        items / seconds
    } else {
        0.0
    }
}
