//! What an operator's tools read: `GET /metrics` in Prometheus's text exposition format (checked
//! line by line against the format's grammar, and against `/metrics.json`), and the server's log
//! as JSON lines with `GARBLET_LOG_FORMAT=json` (every line parsed, the session's fields found).

mod common;

use common::{honest_client, honest_services, RawClient, Server};
use garblet_core::protocol::ErrorCode;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::TcpStream;

/// One session at a time, and the honest client's services.
fn config() -> String {
    format!("[limits]\nmax_sessions = 1\n{}", honest_services(1_000_000))
}

/// `GET path`: the status, the headers (names in lower case) and the body.
fn get(addr: &str, path: &str) -> (u16, HashMap<String, String>, String) {
    let mut tcp = TcpStream::connect(addr).unwrap();
    write!(tcp, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    let headers = lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string())).collect();
    (status, headers, body.to_string())
}

/// One sample line of the text format: the metric name, its labels, its value.
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

fn is_metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn is_label_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && !s.starts_with("__")
}

/// A value as the format allows: a Go float (decimal or exponent), `+Inf`, `-Inf` or `NaN`.
fn parse_value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ if s.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) && s.chars().any(|c| c.is_ascii_digit()) => s.parse().map_err(|e| format!("value {s:?}: {e}")),
        _ => Err(format!("value {s:?} is not a number")),
    }
}

/// `{name="value",…}`: label values escape only backslash, double quote and newline.
fn parse_labels(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut labels = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let (name, after) = rest.split_once("=\"").ok_or_else(|| format!("label without =\" in {s:?}"))?;
        if !is_label_name(name) {
            return Err(format!("label name {name:?}"));
        }
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, 'n')) => value.push('\n'),
                    other => return Err(format!("escape \\{other:?} in a label value")),
                },
                Some((i, '"')) => break i,
                Some((_, '\n')) => return Err("a raw newline in a label value".into()),
                Some((_, c)) => value.push(c),
                None => return Err(format!("unterminated label value in {s:?}")),
            }
        };
        if labels.iter().any(|(n, _)| n == name) {
            return Err(format!("label {name} twice"));
        }
        labels.push((name.to_string(), value));
        rest = &after[end + 1..];
        rest = match rest.strip_prefix(',') {
            Some(next) => next,
            None if rest.is_empty() => rest,
            None => return Err(format!("labels run on after a value: {rest:?}")),
        };
    }
    Ok(labels)
}

/// Checks the text exposition format (version 0.0.4) strictly, line by line, and returns the
/// samples. Beyond the grammar: every sample's family has one HELP and one TYPE, given before
/// its samples; a family's samples are together; counters end in `_total` and are not negative;
/// no sample repeats a name and label set.
fn parse_exposition(text: &str) -> Result<Vec<Sample>, String> {
    if !text.ends_with('\n') {
        return Err("the exposition does not end with a newline".into());
    }
    let mut helps = HashSet::new();
    let mut types: HashMap<String, String> = HashMap::new();
    let mut finished: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut seen = HashSet::new();
    let mut samples = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let error = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if line.is_empty() || line.trim() != line || line.contains('\t') || line.contains('\r') {
            return Err(error("blank, padded or with a tab or CR".into()));
        }
        if let Some(comment) = line.strip_prefix("# ") {
            let mut parts = comment.splitn(3, ' ');
            let (keyword, name, rest) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next());
            if !is_metric_name(name) {
                return Err(error(format!("metric name {name:?}")));
            }
            match (keyword, rest) {
                ("HELP", Some(help)) => {
                    if help.is_empty() || help.replace("\\\\", "").replace("\\n", "").contains('\\') {
                        return Err(error("HELP text empty or with an escape other than \\\\ and \\n".into()));
                    }
                    if !helps.insert(name.to_string()) || types.contains_key(name) {
                        return Err(error("HELP twice, or after TYPE".into()));
                    }
                }
                ("TYPE", Some(kind)) => {
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                        return Err(error(format!("type {kind:?}")));
                    }
                    if kind == "counter" && !name.ends_with("_total") {
                        return Err(error("a counter whose name does not end in _total".into()));
                    }
                    if types.insert(name.to_string(), kind.to_string()).is_some() || finished.contains(name) {
                        return Err(error("TYPE twice, or after the family's samples".into()));
                    }
                }
                _ => return Err(error("a comment that is neither HELP nor TYPE".into())),
            }
            continue;
        }
        if line.starts_with('#') {
            return Err(error("a comment without a space after #".into()));
        }
        let (series, value) = line.rsplit_once(' ').ok_or_else(|| error("no value".into()))?;
        let (name, labels) = match series.split_once('{') {
            Some((name, labels)) => (name, parse_labels(labels.strip_suffix('}').ok_or_else(|| error("labels not closed by }".into()))?).map_err(error)?),
            None => (series, Vec::new()),
        };
        if !is_metric_name(name) {
            return Err(error(format!("metric name {name:?}")));
        }
        let value = parse_value(value).map_err(error)?;
        let kind = types.get(name).ok_or_else(|| error("a sample with no TYPE before it".into()))?;
        if !helps.contains(name) {
            return Err(error("a sample with no HELP".into()));
        }
        if kind == "counter" && (value.is_nan() || value < 0.0) {
            return Err(error("a counter below zero or NaN".into()));
        }
        if current.as_deref() != Some(name) {
            if let Some(previous) = current.replace(name.to_string()) {
                finished.insert(previous);
            }
            if finished.contains(name) {
                return Err(error("the family's samples are not together".into()));
            }
        }
        let mut key = labels.clone();
        key.sort();
        if !seen.insert((name.to_string(), key)) {
            return Err(error("the same series twice".into()));
        }
        samples.push(Sample { name: name.to_string(), labels, value });
    }
    Ok(samples)
}

/// The check itself refuses what the format does not allow.
#[test]
fn the_exposition_check_is_strict() {
    let ok = "# HELP a_total A.\n# TYPE a_total counter\na_total{cause=\"x\\\"y\"} 1\na_total{cause=\"z\"} 2e3\n# HELP g G.\n# TYPE g gauge\ng -1.5\n";
    let samples = parse_exposition(ok).unwrap();
    assert_eq!((samples[0].labels[0].1.as_str(), samples[1].value, samples[2].value), ("x\"y", 2000.0, -1.5));
    for bad in [
        "# HELP a A.\n# TYPE a counter\na 1\n",                         // a counter without _total
        "# HELP g G.\n# TYPE g gauge\ng 1",                            // no final newline
        "# TYPE g gauge\ng 1\n",                                       // no HELP
        "# HELP g G.\ng 1\n",                                          // no TYPE
        "# HELP g G.\n# TYPE g gauge\ng one\n",                        // not a number
        "# HELP g G.\n# TYPE g gauge\ng{c=x} 1\n",                     // an unquoted label value
        "# HELP g G.\n# TYPE g gauge\ng{c=\"x\"} 1\ng{c=\"x\"} 2\n",   // one series twice
        "# HELP g G.\n# TYPE g gauge\n# TYPE g gauge\ng 1\n",          // TYPE twice
        "# HELP g G.\n# TYPE g gauge\ng  1\n",                         // two spaces
        "# HELP g G.\n# TYPE g gauge\ng 1\n\n",                        // a blank line
        "# HELP g G.\n# TYPE g gauge\n# HELP h H.\n# TYPE h gauge\ng 1\nh 1\ng 2\n", // g's samples apart
        "# HELP 1g G.\n# TYPE 1g gauge\n1g 1\n",                       // a name starting with a digit
        "# HELP b_total B.\n# TYPE b_total counter\nb_total -1\n",     // a negative counter
    ] {
        assert!(parse_exposition(bad).is_err(), "accepted: {bad:?}");
    }
}

#[test]
fn metrics_in_prometheus_text_format_agree_with_the_json() {
    let server = Server::start(&config());
    honest_client(server.url(), 2, 1000).join().unwrap();
    // The honest client's session ends on the server a moment after the client returns.
    server.wait_for_active(0, std::time::Duration::from_secs(10));
    // A second session is refused (max_sessions = 1): a refusal with its cause.
    let _first = RawClient::connect(&server.url());
    server.wait_for_active(1, std::time::Duration::from_secs(10));
    let (code, _) = RawClient::connect(&server.url()).expect_error();
    assert_eq!(code, ErrorCode::Busy as u16);
    drop(_first);
    server.wait_for_active(0, std::time::Duration::from_secs(10));

    let (status, headers, body) = get(&server.addr, "/metrics");
    assert_eq!(status, 200);
    assert_eq!(headers.get("content-type").map(String::as_str), Some("text/plain; version=0.0.4; charset=utf-8"));
    let samples = parse_exposition(&body).unwrap_or_else(|e| panic!("{e}\n{body}"));
    let json = server.metrics();
    let value = |name: &str, label: Option<&str>| {
        let found = samples.iter().find(|s| s.name == name && s.labels.iter().map(|(_, v)| v.as_str()).next() == label);
        found.unwrap_or_else(|| panic!("{name} {label:?} in\n{body}")).value as u64
    };
    // The counters did not move between the two requests: nothing ran in between.
    for (name, key) in [
        ("garblet_sessions_active", "sessions_active"),
        ("garblet_sessions_total", "sessions_total"),
        ("garblet_sessions_failed_total", "sessions_failed"),
        ("garblet_sessions_cancelled_total", "sessions_cancelled"),
        ("garblet_computations_total", "computations"),
        ("garblet_and_gates_total", "and_gates"),
        ("garblet_received_bytes_total", "bytes_in"),
        ("garblet_ot_check_failures_total", "ot_check_failures"),
        ("garblet_forged_outputs_total", "forged_outputs"),
        ("garblet_window_memory_bytes", "window_memory_bytes"),
    ] {
        assert_eq!(value(name, None), json[key].as_u64().unwrap(), "{name} against {key}");
    }
    assert_eq!(value("garblet_computations_total", None), 4, "two rounds of two computations");
    assert_eq!(value("garblet_refusals_total", Some("max_sessions")), 1);
    assert_eq!(value("garblet_refusals_total", Some("handshake_rate")), json["refused_handshake_rate"].as_u64().unwrap());
    for cause in ["silent", "not_reading", "no_progress", "idle"] {
        assert_eq!(value("garblet_sessions_reclaimed_total", Some(cause)), json[format!("reclaimed_{cause}")].as_u64().unwrap(), "{cause}");
    }
    // Bytes sent were counted up to the refusal's frame at the latest, before the JSON.
    assert!(value("garblet_sent_bytes_total", None) <= json["bytes_out"].as_u64().unwrap());
    assert!(samples.iter().any(|s| s.name == "garblet_uptime_seconds" && s.value > 0.0));

    let (status, headers, _) = get(&server.addr, "/metrics.json");
    assert_eq!((status, headers.get("content-type").map(String::as_str)), (200, Some("application/json")));
    server.stop();
}

#[test]
fn json_logs_are_one_object_a_line_with_the_session_s_fields() {
    let server = Server::start_with(&config(), &[("GARBLET_LOG_FORMAT", "json")]);
    honest_client(server.url(), 1, 1000).join().unwrap();
    // The honest client's session ends on the server a moment after the client returns, and
    // max_sessions = 1 would refuse the next one until then.
    server.wait_for_active(0, std::time::Duration::from_secs(10));
    let _first = RawClient::connect(&server.url());
    server.wait_for_active(1, std::time::Duration::from_secs(10));
    RawClient::connect(&server.url()).expect_error();
    drop(_first);
    server.wait_for_active(0, std::time::Duration::from_secs(10));
    let log = server.stop();

    let lines: Vec<Value> = log.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}\n{log}"))).collect();
    for line in &lines {
        assert!(line["timestamp"].as_str().is_some_and(|t| t.len() >= 20 && t.ends_with('Z')), "an RFC 3339 UTC timestamp: {line}");
        assert!(["ERROR", "WARN", "INFO", "DEBUG", "TRACE"].contains(&line["level"].as_str().unwrap_or("")), "{line}");
        assert!(line["message"].as_str().is_some_and(|m| !m.is_empty()), "{line}");
    }
    let find = |message: &'static str| lines.iter().filter(move |l| l["message"] == message);
    let started = find("session started").next().unwrap_or_else(|| panic!("no session start in\n{log}"));
    let session = &started["span"];
    assert!(session["id"].is_u64() && session["peer"].as_str().is_some_and(|p| p.starts_with("127.0.0.1:")), "session id and client address: {started}");
    let computed = find("computation finished").find(|l| l["service"] == "aes128").unwrap_or_else(|| panic!("no aes128 computation in\n{log}"));
    assert_eq!(computed["span"]["id"], session["id"], "the computation names its session");
    assert_eq!(computed["and_gates"], 6400);
    let ended = lines.iter().find(|l| l["span"]["id"] == session["id"] && l["outcome"].is_string()).unwrap_or_else(|| panic!("no session end in\n{log}"));
    assert_eq!(ended["outcome"], "completed", "{ended}");
    let refused = lines.iter().find(|l| l["outcome"] == "refused").unwrap_or_else(|| panic!("no refusal in\n{log}"));
    assert!(refused["peer"].as_str().is_some_and(|p| p.starts_with("127.0.0.1:")), "{refused}");
    assert!(find("garblet serve is listening").next().is_some());
}

#[test]
fn an_unknown_log_format_is_an_error_before_anything_starts() {
    // A configuration that does not exist: were the format checked later, the test would see
    // that error instead (and never a server listening on the default's port).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_garblet")).args(["serve", "--config", "/nonexistent/garblet.toml"]).env("GARBLET_LOG_FORMAT", "xml").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("GARBLET_LOG_FORMAT") && stderr.contains("json"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing listened");
}
