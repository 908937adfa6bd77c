//! Which browser origins may open sessions: the `allowed_origins` patterns of the
//! configuration, matched against a request's `Origin`.

/// Which browser origins may open sessions. Browsers always send `Origin` on WebSocket
/// upgrades, so this is what stops an arbitrary web page from using a visitor's browser to
/// talk to the server; native clients send none.
#[derive(Clone, Debug)]
pub struct OriginPolicy {
    any: bool,
    /// Lower-case `scheme://host[:port]`.
    exact: Vec<String>,
    /// Lower-case `scheme://host`, any port or none.
    any_port: Vec<String>,
    allow_missing: bool,
}

impl OriginPolicy {
    pub fn new(patterns: &[String], allow_missing: bool) -> Result<Self, String> {
        let mut policy = OriginPolicy { any: false, exact: Vec::new(), any_port: Vec::new(), allow_missing };
        for p in patterns {
            let lower = p.to_ascii_lowercase();
            if lower == "*" {
                policy.any = true;
            } else if lower == "null" {
                policy.exact.push(lower);
            } else if !(lower.starts_with("http://") || lower.starts_with("https://")) || lower.ends_with('/') {
                return Err(format!("allowed origin '{p}' is not '*', 'null' or scheme://host[:port] (no path, no trailing slash)"));
            } else if let Some(host) = lower.strip_suffix(":*") {
                policy.any_port.push(host.to_string());
            } else if lower.contains('*') {
                return Err(format!("allowed origin '{p}': '*' may only stand for the whole origin or the port (':*')"));
            } else {
                policy.exact.push(lower);
            }
        }
        Ok(policy)
    }

    pub fn allows(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else { return self.allow_missing };
        if self.any {
            return true;
        }
        let origin = origin.to_ascii_lowercase();
        self.exact.contains(&origin)
            || self.any_port.iter().any(|host| match origin.strip_prefix(host.as_str()) {
                Some("") => true,
                Some(rest) => rest.strip_prefix(':').is_some_and(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())),
                None => false,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let strict = OriginPolicy::new(&["https://app.example.com".into()], false).unwrap();
        assert!(!strict.allows(None));
        assert!(strict.allows(Some("https://app.example.com")));
        assert!(!strict.allows(Some("https://app.example.com:444")));
        let local = OriginPolicy::new(&["http://localhost:*".into()], true).unwrap();
        assert!(local.allows(None));
        assert!(local.allows(Some("http://localhost:5173")));
        assert!(local.allows(Some("http://LOCALHOST")));
        assert!(!local.allows(Some("http://localhost.evil.com")));
        assert!(!local.allows(Some("http://localhost:80x")));
        assert!(OriginPolicy::new(&["*".into()], false).unwrap().allows(Some("https://anything")));
        assert!(OriginPolicy::new(&["example.com".into()], true).is_err());
        assert!(OriginPolicy::new(&["https://*.example.com".into()], true).is_err());
    }
}
