//! The server's configuration: a TOML file (`garblet serve --config FILE`), or the embedded
//! default (`default.toml`, printed by `garblet serve --print-default-config`). The format is
//! described in server/README.md.

use super::values::ValueSource;
use garblet_core::protocol::frame::{DEFAULT_MAX_WINDOW, MIN_WINDOW};
use garblet_core::protocol::Security;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// The configuration used when `--config` is not given.
pub const DEFAULT_CONFIG: &str = include_str!("default.toml");

/// The smallest frame limit that still admits the largest protocol frame a client sends (an
/// OT-extension chunk at k = 1 with the set-up riding on it: 16 bytes for each of up to
/// `MAX_CHUNK` input bits and for the check's padding OTs, the check values, the set-up's
/// corrections and commitments, and slack for its type byte).
pub const MIN_FRAME_BYTES: u32 = (garblet_core::ot::max_message_len(garblet_core::ot::MAX_CHUNK) + 1024) as u32;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{origin}: {source}")]
    Parse { origin: String, source: Box<toml::de::Error> },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
    /// A service's `security` is not a mode's name.
    #[error("{origin}: service {service}: security = {value:?} is not {}", security_names())]
    Security { origin: String, service: String, value: String },
}

/// The `security` values, for messages: `"standard", "cut-and-choose" or "authenticated"`.
fn security_names() -> String {
    let names: Vec<String> = Security::ALL.iter().map(|s| format!("{:?}", s.name())).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub server: ServerConfig,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default, rename = "service")]
    pub services: Vec<ServiceConfig>,
    /// Where relative paths in the file are resolved from (the file's directory).
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The file it came from, or "the default configuration", for messages.
    #[serde(skip)]
    pub origin: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    pub listen: String,
    /// WebSocket `Origin`s allowed to open sessions: exact origins, `scheme://host:*` for any
    /// port, or `*` for any origin.
    pub allowed_origins: Vec<String>,
    /// Whether clients that send no `Origin` (native clients, not browsers) may connect.
    pub allow_missing_origin: bool,
    pub tls: Option<TlsConfig>,
    /// `GET /bench/raw` (WebSocket): raw transfer speed for `garblet bench session`. Off by
    /// default: it lets any client make the server send bytes for nothing.
    pub raw_throughput_endpoint: bool,
    /// Reverse proxies (addresses or blocks like `10.0.0.0/8`) whose `client_address_header`
    /// names the client: for the per-address limits and the logs. From any other peer the
    /// header is ignored. Empty: every client is its TCP peer.
    pub trusted_proxies: Vec<String>,
    /// `X-Forwarded-For` (the rightmost address that is not a trusted proxy) or `X-Real-IP`.
    pub client_address_header: String,
    /// The garbling schemes offered to every session: `half-gates`, `three-halves` or `auto`
    /// (either, three-halves first; a client may accept only one). Server-wide, not per service:
    /// a session's scheme is settled by the hellos, before the client names a service, and one
    /// session's computations share its Δ and tweak counter.
    pub garbling: String,
    /// SoftSpoken's k (Roy 2022) offered for the correlated OTs, most preferred first: 1, 2, 4
    /// or 8. A larger k uploads 128/k bits per OT and costs 2^k/k PRG blocks per OT; the client
    /// accepts any of them unless told otherwise.
    pub ot_k: Vec<u8>,
    /// Threads each authenticated computation's preprocessing spreads over (its correlated
    /// OTs, leaky ANDs and bucketing; `garblet_core::spread`): 0 for this machine's cores, at
    /// most [`AUTO_THREADS`]. The session's own thread is one of them; the others come from
    /// one pool of helpers every session shares ([`crate::threads::HelperPool`]).
    pub computation_threads: usize,
}

/// The most threads `computation_threads = 0` takes.
pub const AUTO_THREADS: usize = 8;

/// The most threads `computation_threads` may name.
pub const MAX_COMPUTATION_THREADS: usize = 64;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: "127.0.0.1:8080".into(),
            allowed_origins: ["http://localhost:*", "https://localhost:*", "http://127.0.0.1:*", "https://127.0.0.1:*", "http://[::1]:*", "https://[::1]:*"]
                .map(String::from)
                .to_vec(),
            allow_missing_origin: true,
            tls: None,
            raw_throughput_endpoint: false,
            trusted_proxies: Vec::new(),
            client_address_header: "X-Forwarded-For".into(),
            garbling: "auto".into(),
            ot_k: garblet_core::ot::DEFAULT_K_OFFER.to_vec(),
            computation_threads: 0,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM certificate chain.
    pub cert: PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Sessions at once; further connections get an `Error` frame with code Busy.
    pub max_sessions: usize,
    /// The largest WebSocket message (= frame) a client may send.
    pub max_frame_bytes: u32,
    /// Bytes of garbled stream per `Data` frame.
    pub data_frame_bytes: u32,
    /// The largest credit window granted: what one stalled client can make the server hold.
    pub max_window_bytes: u32,
    /// AND gates per session, all its computations together.
    pub max_and_gates_per_session: u64,
    /// From the TCP connection to the client's hello.
    pub handshake_timeout_secs: f64,
    /// How long a session waits for a frame it needs from the client (a hello, credit, OT
    /// chunks, the next request), and how long a write to a client that does not read may take.
    pub idle_timeout_secs: f64,
    /// On Ctrl-C, how long running computations may take to finish before they are aborted.
    pub shutdown_grace_secs: f64,
    /// How long a write to the client may wait without the client's TCP stack acknowledging a
    /// single byte: a client that stops reading loses its slot after this (a slow reader keeps
    /// it only while it keeps up with `min_credit_bytes_per_sec`).
    pub write_timeout_secs: f64,
    /// The slowest rate at which a client must earn credit — acknowledge garbled data it
    /// evaluated — while the server waits for it (the window is full, or the client's socket
    /// takes nothing). Set well below what the slowest supported device and network achieve.
    pub min_credit_bytes_per_sec: u64,
    /// How long a client may fall behind `min_credit_bytes_per_sec` before its session is
    /// reclaimed: the stall it may take at any point (a pause, a slow start), on top of the time
    /// the rate allows for the quarter of its window it evaluates before each credit.
    pub progress_grace_secs: f64,
    /// When every slot is taken: how long a session may run no computation before a client
    /// from an address without a session takes its slot (`server/src/serve/slots.rs`).
    pub pressure_idle_secs: f64,
    /// All connections (HTTP and WebSocket) from one client address at once.
    pub max_connections_per_address: u32,
    /// Sessions from one client address at once.
    pub max_sessions_per_address: u32,
    /// New sessions one address may open per second, sustained…
    pub handshakes_per_address_per_sec: f64,
    /// …and at once, after a quiet time.
    pub handshake_burst_per_address: u32,
    /// AND gates one address may have garbled per hour (also what it may use at once).
    pub and_gates_per_address_per_hour: u64,
    /// AND gates one computation may take, for services that do not set their own
    /// `max_and_gates`.
    pub max_and_gates_per_request: u64,
    /// AND gates of the computations one session holds prepared ahead in the authenticated mode
    /// and not yet used (their masks, σ shares and gates in memory, about 160 bytes per AND gate
    /// on the server).
    pub max_prepared_and_gates: u64,
    /// All sessions' credit windows together: what stalled clients can make the server hold.
    /// A session gets the window it asks for while this has room, a smaller one (down to the
    /// protocol's minimum) when it is nearly spent, and a Busy refusal when it is.
    pub max_window_memory_bytes: u64,
    /// What the cut-and-choose and authenticated computations running at once and the
    /// preparations parked on sessions hold together, beyond their windows, as the core
    /// estimates it from above: a computation that would take it past this is refused with Busy
    /// (or with Limit, if it needs more than all of it).
    pub max_computation_memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_sessions: 32,
            max_frame_bytes: 1 << 20,
            data_frame_bytes: 256 << 10,
            max_window_bytes: DEFAULT_MAX_WINDOW,
            max_and_gates_per_session: 10_000_000_000,
            handshake_timeout_secs: 10.0,
            idle_timeout_secs: 60.0,
            shutdown_grace_secs: 10.0,
            write_timeout_secs: 15.0,
            min_credit_bytes_per_sec: 32 << 10,
            progress_grace_secs: 20.0,
            pressure_idle_secs: 10.0,
            max_connections_per_address: 32,
            max_sessions_per_address: 8,
            handshakes_per_address_per_sec: 10.0,
            handshake_burst_per_address: 100,
            and_gates_per_address_per_hour: 100_000_000_000,
            max_and_gates_per_request: 2_000_000_000,
            max_prepared_and_gates: garblet_core::protocol::DEFAULT_MAX_PREPARED_AND_GATES,
            max_window_memory_bytes: 128 << 20,
            max_computation_memory_bytes: 1 << 30,
        }
    }
}

impl Limits {
    pub fn handshake_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.handshake_timeout_secs)
    }
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.idle_timeout_secs)
    }
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs_f64(self.shutdown_grace_secs)
    }
    pub fn write_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.write_timeout_secs)
    }
    pub fn progress_grace(&self) -> Duration {
        Duration::from_secs_f64(self.progress_grace_secs)
    }
    pub fn pressure_idle(&self) -> Duration {
        Duration::from_secs_f64(self.pressure_idle_secs)
    }

    fn check(&self) -> Result<(), String> {
        if self.max_sessions == 0 {
            return Err("limits.max_sessions must be at least 1".into());
        }
        if self.max_frame_bytes < MIN_FRAME_BYTES {
            return Err(format!("limits.max_frame_bytes must be at least {MIN_FRAME_BYTES} (an OT-extension chunk)"));
        }
        if self.data_frame_bytes == 0 || self.data_frame_bytes >= self.max_frame_bytes {
            return Err("limits.data_frame_bytes must be between 1 and max_frame_bytes".into());
        }
        // The protocol's smallest window: the garbler clamps every request to at least this.
        if self.max_window_bytes < MIN_WINDOW {
            return Err(format!("limits.max_window_bytes must be at least {MIN_WINDOW}"));
        }
        if self.max_window_memory_bytes < u64::from(MIN_WINDOW) {
            return Err(format!("limits.max_window_memory_bytes must be at least {MIN_WINDOW} (one session's smallest window)"));
        }
        for (name, n) in [
            ("min_credit_bytes_per_sec", self.min_credit_bytes_per_sec),
            ("max_connections_per_address", self.max_connections_per_address.into()),
            ("max_sessions_per_address", self.max_sessions_per_address.into()),
            ("handshake_burst_per_address", self.handshake_burst_per_address.into()),
            ("and_gates_per_address_per_hour", self.and_gates_per_address_per_hour),
            ("max_and_gates_per_request", self.max_and_gates_per_request),
            ("max_prepared_and_gates", self.max_prepared_and_gates),
        ] {
            if n == 0 {
                return Err(format!("limits.{name} must be at least 1"));
            }
        }
        if !(self.handshakes_per_address_per_sec.is_finite() && self.handshakes_per_address_per_sec > 0.0) {
            return Err("limits.handshakes_per_address_per_sec must be a positive number".into());
        }
        for (name, secs) in [
            ("handshake_timeout_secs", self.handshake_timeout_secs),
            ("idle_timeout_secs", self.idle_timeout_secs),
            ("shutdown_grace_secs", self.shutdown_grace_secs),
            ("write_timeout_secs", self.write_timeout_secs),
            ("progress_grace_secs", self.progress_grace_secs),
            ("pressure_idle_secs", self.pressure_idle_secs),
        ] {
            // Duration::from_secs_f64 panics outside this range: check before anyone calls it.
            if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
                return Err(format!("limits.{name} must be a positive number of seconds"));
            }
        }
        Ok(())
    }
}

/// One service: a circuit, who holds each input, who learns each output.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceConfig {
    pub name: String,
    #[serde(default)]
    pub doc: Option<String>,
    pub circuit: CircuitConfig,
    /// Bristol circuits: every input of the circuit, in order.
    #[serde(default)]
    pub inputs: Vec<BristolInputConfig>,
    /// Bristol circuits: every output, in order (default: all to the client, `out0`, `out1`…).
    #[serde(default)]
    pub outputs: Option<Vec<BristolOutputConfig>>,
    /// Built-in programs and circuits with a manifest: the value of each of the garbler's input
    /// fields, by field name.
    #[serde(default)]
    pub garbler_inputs: BTreeMap<String, ValueSource>,
    /// AND gates one computation of this service may take (default: the limits'
    /// `max_and_gates_per_request`); a computation that passes it is ended with a `limit` error.
    #[serde(default)]
    pub max_and_gates: Option<u64>,
    /// The strongest protection the service offers clients, `standard` (default) or
    /// `cut-and-choose`; it offers every weaker one too, and each computation's request picks.
    #[serde(default)]
    pub security: Option<String>,
}

impl ServiceConfig {
    /// `security`, parsed (`standard` when not set).
    pub fn security(&self) -> Result<Security, String> {
        match &self.security {
            None => Ok(Security::Standard),
            Some(name) => Security::from_name(name).ok_or_else(|| format!("security = {name:?} is not {}", security_names())),
        }
    }
}

/// Exactly one of `builtin`, `bristol` (a bundled circuit) or `bristol_file`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CircuitConfig {
    pub builtin: Option<String>,
    pub bristol: Option<String>,
    pub bristol_file: Option<PathBuf>,
    /// With `bristol_file`: the manifest `garblet-compile` wrote beside it, which names and types
    /// the circuit's inputs and outputs (instead of `inputs` and `outputs`; the garbler's input
    /// values are then given by name in `garbler_inputs`).
    pub manifest: Option<PathBuf>,
    /// A function compiled from TypeScript that the binary embeds with its manifest (the files
    /// in circuits/compiled/), by name.
    pub compiled: Option<String>,
    /// Built-in programs: parameters the service fixes (the default of client-settable ones).
    #[serde(default)]
    pub params: BTreeMap<String, u64>,
    /// Built-in programs: parameters the client may set, with the range it may choose from
    /// (default: the program's whole range).
    #[serde(default)]
    pub client_params: BTreeMap<String, ClientParamConfig>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientParamConfig {
    pub min: Option<u64>,
    pub max: Option<u64>,
    /// The client input whose length (in symbols or bytes) this parameter is, so that clients
    /// can set it from the value they pass.
    pub length_of: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputOwner {
    Garbler,
    Evaluator,
    /// Known to both: folded into the circuit.
    Public,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EncodingConfig {
    #[default]
    Uint,
    /// Two's complement: a client may send a negative number.
    Int,
    Bytes,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BristolInputConfig {
    pub name: Option<String>,
    pub party: InputOwner,
    #[serde(default)]
    pub encoding: EncodingConfig,
    /// The garbler's or the public value (not allowed for the evaluator's inputs).
    pub value: Option<ValueSource>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BristolOutputConfig {
    pub name: Option<String>,
    /// `evaluator`, `garbler` or `both`.
    pub reveal: String,
    /// How clients show the value: a number (`uint`, `int` in two's complement) or a byte string.
    #[serde(default)]
    pub encoding: EncodingConfig,
}

impl Config {
    /// The embedded default.
    pub fn embedded_default() -> Result<Config, ConfigError> {
        Config::parse(DEFAULT_CONFIG, "the default configuration", PathBuf::from("."))
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Config::parse(&text, &path.display().to_string(), base_dir)
    }

    pub fn parse(text: &str, origin: &str, base_dir: PathBuf) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text).map_err(|e| ConfigError::Parse { origin: origin.into(), source: Box::new(e) })?;
        config.base_dir = base_dir;
        config.origin = origin.into();
        let invalid = |message: String| ConfigError::Invalid { origin: origin.into(), message };
        config.limits.check().map_err(invalid)?;
        config.listen_addr()?;
        super::origin::OriginPolicy::new(&config.server.allowed_origins, config.server.allow_missing_origin).map_err(invalid)?;
        config.trusted_proxies().map_err(invalid)?;
        config.garbling().map_err(invalid)?;
        config.ot_k().map_err(invalid)?;
        config.computation_threads().map_err(invalid)?;
        if config.services.is_empty() {
            return Err(invalid("no [[service]] is defined".into()));
        }
        for service in &config.services {
            if service.security().is_err() {
                let value = service.security.clone().unwrap_or_default();
                return Err(ConfigError::Security { origin: origin.into(), service: service.name.clone(), value });
            }
        }
        Ok(config)
    }

    /// `server.garbling`, parsed.
    pub fn garbling(&self) -> Result<garblet_core::garble::Garbling, String> {
        let name = &self.server.garbling;
        garblet_core::garble::Garbling::from_name(name).ok_or_else(|| format!("server.garbling: {name:?} is not \"half-gates\", \"three-halves\" or \"auto\""))
    }

    /// `server.ot_k`, checked: one or more of the supported k, none twice.
    /// How many threads `server.computation_threads` names: this machine's cores (at most
    /// [`AUTO_THREADS`]) for 0.
    pub fn computation_threads(&self) -> Result<usize, String> {
        match self.server.computation_threads {
            0 => Ok(crate::threads::cores(AUTO_THREADS)),
            n if n > MAX_COMPUTATION_THREADS => Err(format!("server.computation_threads: {n} is more than {MAX_COMPUTATION_THREADS}")),
            n => Ok(n),
        }
    }

    pub fn ot_k(&self) -> Result<Vec<u8>, String> {
        let offer = &self.server.ot_k;
        let supported = garblet_core::ot::SUPPORTED_K.map(|k| k as u8);
        let names = garblet_core::ot::k_names(supported);
        if offer.is_empty() {
            return Err(format!("server.ot_k is empty: offer one or more of {names}"));
        }
        for (i, k) in offer.iter().enumerate() {
            if !supported.contains(k) {
                return Err(format!("server.ot_k: {k} is not one of {names}"));
            }
            if offer[..i].contains(k) {
                return Err(format!("server.ot_k: {k} is offered twice"));
            }
        }
        Ok(offer.clone())
    }

    /// The peers believed when they name the client (`trusted_proxies`).
    pub fn trusted_proxies(&self) -> Result<super::proxy::TrustedProxies, String> {
        super::proxy::TrustedProxies::new(&self.server.trusted_proxies, &self.server.client_address_header)
    }

    pub fn listen_addr(&self) -> Result<SocketAddr, ConfigError> {
        self.server.listen.parse().map_err(|_| ConfigError::Invalid {
            origin: self.origin.clone(),
            message: format!("server.listen = '{}' is not an address like 127.0.0.1:8080", self.server.listen),
        })
    }

    /// A path from the file, relative to the file's directory.
    pub fn path(&self, path: &Path) -> PathBuf {
        self.base_dir.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_origins_are_local_pages_and_native_clients() {
        let defaults = ServerConfig::default();
        let p = super::super::origin::OriginPolicy::new(&defaults.allowed_origins, true).unwrap();
        assert!(p.allows(None));
        assert!(p.allows(Some("http://localhost:5173")));
        assert!(p.allows(Some("http://LOCALHOST")));
        assert!(p.allows(Some("http://[::1]:8080")));
        assert!(!p.allows(Some("http://localhost.evil.com")));
        assert!(!p.allows(Some("http://localhost:80x")));
        assert!(!p.allows(Some("https://example.com")));
        assert!(!p.allows(Some("null")));
    }

    #[test]
    fn the_embedded_default_parses() {
        let config = Config::embedded_default().unwrap();
        assert_eq!(config.listen_addr().unwrap().to_string(), "127.0.0.1:8080");
        assert!(config.services.iter().any(|s| s.name == "aes128"));
        assert!(config.services.iter().any(|s| s.name == "synthetic"));
    }

    #[test]
    fn the_example_parses() {
        let config = Config::parse(include_str!("../../garblet.example.toml"), "garblet.example.toml", PathBuf::from("/etc/garblet")).unwrap();
        assert_eq!(config.path(Path::new("tls/privkey.pem")), Path::new("/etc/garblet/tls/privkey.pem"));
        assert_eq!(config.services.len(), 5);
    }

    #[test]
    fn bad_configurations_are_refused_with_the_reason() {
        let err = |text: &str| Config::parse(text, "test.toml", PathBuf::new()).unwrap_err().to_string();
        assert!(err("[server]\nlisten = 'nowhere'\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("nowhere"));
        assert!(err("[limits]\nmax_frame_bytes = 1000\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("max_frame_bytes"));
        assert!(err("[limits]\nidle_timeout_secs = -1\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("idle_timeout_secs"));
        assert!(err("[limits]\npressure_idle_secs = 0\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("limits.pressure_idle_secs must be a positive number of seconds"));
        assert!(err("[limits]\npressure_idle_secs = 'soon'\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("pressure_idle_secs"));
        assert!(err("[server]\nlisten_on = '127.0.0.1:1'").contains("listen_on"), "unknown keys are errors");
        assert!(err("[server]\ngarbling = 'quarter-gates'\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("server.garbling"));
        assert!(err("[server]\not_k = [3]\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("server.ot_k: 3 is not one of"));
        assert!(err("[server]\not_k = []\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("server.ot_k is empty"));
        assert!(err("[server]\not_k = [4, 4]\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("offered twice"));
        assert!(err("[server]\not_k = [300]\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("ot_k"));
        assert!(err("[server]\ncomputation_threads = 65\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("server.computation_threads: 65 is more than 64"));
        assert!(err("[server]\ncomputation_threads = -1\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("computation_threads"));
        assert!(err("").contains("no [[service]]"));
        assert!(err("[server]\ntrusted_proxies = ['nginx']\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("server.trusted_proxies: 'nginx'"));
        assert!(err("[server]\nclient_address_header = 'Forwarded'\n[[service]]\nname='x'\ncircuit={builtin='synthetic'}").contains("client_address_header"));
    }

    #[test]
    fn computation_threads_name_a_count_or_the_cores() {
        let threads = |text: &str| Config::parse(&format!("[server]\n{text}\n[[service]]\nname='x'\ncircuit={{builtin='synthetic'}}"), "test.toml", PathBuf::new()).unwrap().computation_threads().unwrap();
        assert_eq!(threads("computation_threads = 3"), 3);
        assert_eq!(threads("computation_threads = 1"), 1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(threads(""), cores.min(AUTO_THREADS));
    }

    #[test]
    fn a_service_s_security_is_one_of_the_modes() {
        let parse = |security: &str| Config::parse(&format!("[[service]]\nname = 'x'\ncircuit = {{ builtin = 'synthetic' }}\n{security}"), "test.toml", PathBuf::new());
        assert_eq!(parse("").unwrap().services[0].security(), Ok(Security::Standard), "standard when not set");
        assert_eq!(parse("security = 'standard'").unwrap().services[0].security(), Ok(Security::Standard));
        assert_eq!(parse("security = 'cut-and-choose'").unwrap().services[0].security(), Ok(Security::CutAndChoose));
        assert_eq!(parse("security = 'authenticated'").unwrap().services[0].security(), Ok(Security::Authenticated));
        for wrong in ["malicious", "Cut-And-Choose", "cut_and_choose", ""] {
            let e = parse(&format!("security = '{wrong}'")).unwrap_err();
            let ConfigError::Security { origin, service, value } = &e else { panic!("security = {wrong:?}: {e:?}") };
            assert_eq!((origin.as_str(), service.as_str(), value.as_str()), ("test.toml", "x", wrong));
            assert_eq!(e.to_string(), format!("test.toml: service x: security = {wrong:?} is not \"standard\", \"cut-and-choose\" or \"authenticated\""));
        }
        assert!(matches!(parse("security = 1"), Err(ConfigError::Parse { .. })), "not a string");
    }

    #[test]
    fn the_default_offers_the_protected_modes_for_the_demos_protected_services_and_the_benchmark_circuit_only() {
        let config = Config::embedded_default().unwrap();
        for service in &config.services {
            let protected = ["aes128", "aes128_bp", "hamming", "hamming_threshold", "levenshtein", "levenshtein_text", "synthetic"];
            let expected = if protected.contains(&service.name.as_str()) { Security::Authenticated } else { Security::Standard };
            assert_eq!(service.security(), Ok(expected), "{}", service.name);
        }
    }

    #[test]
    fn the_deployment_example_parses_and_trusts_the_local_proxy() {
        let config = Config::parse(include_str!("../../../deploy/garblet.toml"), "deploy/garblet.toml", PathBuf::from("/etc/garblet")).unwrap();
        let proxies = config.trusted_proxies().unwrap();
        assert!(proxies.trusts("127.0.0.1".parse().unwrap()) && proxies.trusts("::1".parse().unwrap()));
        assert!(!proxies.trusts("203.0.113.7".parse().unwrap()));
        // Nobody is trusted unless configured.
        assert!(!Config::embedded_default().unwrap().trusted_proxies().unwrap().trusts("127.0.0.1".parse().unwrap()));
    }
}
