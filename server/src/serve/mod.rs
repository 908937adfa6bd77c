//! `garblet serve`: the garbling server.
//!
//! Data flow: the configuration ([`config`], [`values`], [`bundled`], [`origin`]) becomes the
//! service table ([`services`]) and what every connection shares ([`server`]); the accept loop
//! (here) hands each connection to [`connection`], which answers plain HTTP ([`http`]: health,
//! metrics, the catalog) or pumps a WebSocket ([`socket`]) for a session whose garbler runs on
//! its own thread ([`session`]), in one of the server's slots ([`slots`]); [`metrics`] counts it
//! all.

mod addresses;
pub mod bundled;
mod computation_memory;
pub mod config;
mod connection;
pub mod http;
pub mod manifest;
pub mod metrics;
pub mod origin;
pub mod proxy;
mod raw;
mod server;
pub mod services;
mod session;
mod slots;
mod socket;
mod tls;
pub mod values;
mod windows;

use crate::service_table::ServiceTable;
use config::{Config, ConfigError};
use metrics::Metrics;
pub use server::SessionHook;
use server::{Phase, Server};
use services::ServiceError;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::{info, warn};
use tracing_subscriber::EnvFilter;

#[derive(Debug, Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("GARBLET_LOG_FORMAT={0:?}: the log format is text (the default) or json")]
    LogFormat(String),
}

/// Structured logs on stderr; `GARBLET_LOG` filters them (default `info`). `GARBLET_LOG_FORMAT`:
/// `text` (the default) for people, `json` for log collectors — one object a line with the
/// timestamp, level, message, the event's fields at the top level, and the session's span (its
/// id and client address). An unknown format is an error, not a silent fallback to text.
pub fn init_logging() -> Result<(), ServeError> {
    let filter = EnvFilter::try_from_env("GARBLET_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    // try_init fails only when a subscriber is already set (tests that run the server twice in
    // one process): the first one keeps logging.
    let _ = match std::env::var("GARBLET_LOG_FORMAT").as_deref() {
        Err(_) | Ok("" | "text") => builder.with_ansi(crate::client::display::colour_on_stderr()).try_init(),
        Ok("json") => builder.json().flatten_event(true).with_current_span(true).with_span_list(false).try_init(),
        Ok(other) => return Err(ServeError::LogFormat(other.to_string())),
    };
    Ok(())
}

/// What a program that embeds the server may add to its configuration file: things that are
/// code, not settings.
#[derive(Clone, Default)]
pub struct ServeOptions {
    /// See [`SessionHook`].
    pub session_hook: Option<SessionHook>,
}

/// Runs the server until Ctrl-C (or SIGTERM). `config_path`: `None` for the embedded default.
pub fn run(config_path: Option<&Path>) -> Result<(), ServeError> {
    run_with(config_path, ServeOptions::default())
}

/// [`run`] with `options`.
pub fn run_with(config_path: Option<&Path>, options: ServeOptions) -> Result<(), ServeError> {
    init_logging()?;
    let config = match config_path {
        Some(path) => Config::load(path)?,
        None => {
            info!("no --config given: using the embedded default (see garblet serve --print-default-config)");
            Config::embedded_default()?
        }
    };
    let table = build_services(&config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("garblet-io").build()?;
    runtime.block_on(async {
        // The handlers first: a signal that comes as soon as the server answers must find them.
        let stop = shutdown_signal();
        let listening = listen(&config, table, options).await?;
        // One plain line on stdout for scripts and tests (port 0 picks a free port); logs go to stderr.
        println!("listening on {}", listening.local);
        listening.serve(&config, stop, Hangup::new()).await
    })
}

/// A server running inside this process ([`spawn`]), until [`Serving::stop`] or its drop.
pub struct Serving {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), ServeError>>>,
}

impl Serving {
    /// `ws://addr/`.
    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    /// Shuts down as Ctrl-C would (running computations may finish within the grace period)
    /// and waits for the server to stop.
    pub fn stop(mut self) -> Result<(), ServeError> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(ServeError::Io(std::io::Error::other("the server's thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}

/// Starts the server inside this process, on threads of its own, and returns once it listens:
/// for benchmarks and tests that measure or drive it beside a client in the same process. It
/// installs no signal handlers and no logger, and prints nothing.
pub fn spawn(config: Config, options: ServeOptions) -> Result<Serving, ServeError> {
    let table = build_services(&config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("garblet-io").build()?;
    let listening = runtime.block_on(listen(&config, table, options))?;
    let addr = listening.local;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new().name("garblet-serve".into()).spawn(move || {
        let stop = async move {
            let _ = stop_rx.await;
        };
        runtime.block_on(listening.serve(&config, stop, Hangup::none()))
    })?;
    Ok(Serving { addr, stop: Some(stop_tx), thread: Some(thread) })
}

/// The service table of `config`, its warnings logged.
fn build_services(config: &Config) -> Result<ServiceTable, ServeError> {
    let started = Instant::now();
    let services = services::build(config)?;
    for warning in &services.warnings {
        warn!("{warning}");
    }
    let names: Vec<&str> = services.table.names().collect();
    info!(services = %names.join(" "), ms = started.elapsed().as_millis() as u64, "services ready");
    Ok(services.table)
}

/// A bound listener and what every connection shares, before the first accept.
struct Listening {
    listener: TcpListener,
    local: SocketAddr,
    tls: Option<tokio_rustls::TlsAcceptor>,
    certificate: Option<Arc<tls::Certificate>>,
    server: Arc<Server>,
    shutdown: watch::Sender<Phase>,
}

async fn listen(config: &Config, services: ServiceTable, options: ServeOptions) -> Result<Listening, ServeError> {
    let addr = config.listen_addr()?;
    let (tls, certificate) = config.server.tls.as_ref().map(|t| tls::acceptor(config, t)).transpose().map_err(ServeError::Tls)?.unzip();
    let proxies = config.trusted_proxies().map_err(|message| ConfigError::Invalid { origin: config.origin.clone(), message })?;
    let listener = TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener.local_addr()?;
    let origins = origin::OriginPolicy::new(&config.server.allowed_origins, config.server.allow_missing_origin)
        .map_err(|message| ConfigError::Invalid { origin: config.origin.clone(), message })?;
    let (shutdown, shutdown_rx) = watch::channel(Phase::Running);
    let metrics = Arc::new(Metrics::new());
    let request_and_gates = config.services.iter().map(|s| (s.name.clone(), s.max_and_gates.unwrap_or(config.limits.max_and_gates_per_request))).collect();
    let computation_threads = config.computation_threads().map_err(|message| ConfigError::Invalid { origin: config.origin.clone(), message })?;
    let server = Arc::new(Server {
        services: Arc::new(services),
        slots: slots::Slots::new(config.limits.max_sessions, config.limits.pressure_idle(), metrics.clone()),
        addresses: addresses::Addresses::new(config.limits.clone(), metrics.clone()),
        windows: windows::WindowPool::new(config.limits.max_window_memory_bytes, metrics.clone()),
        computation_memory: computation_memory::ComputationMemory::new(config.limits.max_computation_memory_bytes, metrics.clone()),
        request_and_gates: Arc::new(request_and_gates),
        limits: config.limits.clone(),
        origins,
        proxies,
        raw_throughput_endpoint: config.server.raw_throughput_endpoint,
        garbling: config.garbling().map_err(|message| ConfigError::Invalid { origin: config.origin.clone(), message })?,
        ot_k: config.ot_k().map_err(|message| ConfigError::Invalid { origin: config.origin.clone(), message })?,
        computation_threads,
        helpers: crate::threads::HelperPool::start(computation_threads.saturating_sub(1)),
        session_hook: options.session_hook,
        metrics,
        shutdown: shutdown_rx,
        next_id: AtomicU64::new(0),
        prepared_ots: server::prepare_ots()?,
    });
    Ok(Listening { listener, local, tls, certificate, server, shutdown })
}

impl Listening {
    /// Accepts connections until `stop`, then lets running computations finish within the
    /// grace period.
    async fn serve(self, config: &Config, stop: impl std::future::Future<Output = ()>, mut hangup: Hangup) -> Result<(), ServeError> {
        let Listening { listener, local, tls, certificate, server, shutdown } = self;
        let scheme = if tls.is_some() { "wss" } else { "ws" };
        info!(url = %format!("{scheme}://{local}/"), max_sessions = config.limits.max_sessions, "garblet serve is listening");
        tokio::pin!(stop);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((tcp, peer)) => {
                        // Frames are whole messages; Nagle would only delay credit and small frames.
                        let _ = tcp.set_nodelay(true);
                        // Counted here, in the order of arrival, not when its task first runs; a
                        // trusted proxy's connection once its request has named the client.
                        let admitted = (!server.proxies.trusts(peer.ip())).then(|| server.addresses.connect(peer.ip()));
                        tokio::spawn(connection::accept(tcp, peer, admitted, tls.clone(), server.clone()));
                    }
                    Err(e) => {
                        // Out of file descriptors, say: back off instead of spinning.
                        warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                },
                () = hangup.recv() => match &certificate {
                    Some(certificate) => match certificate.reload() {
                        Ok(()) => info!("SIGHUP: TLS certificate reloaded; new connections get it"),
                        Err(e) => warn!(error = %e, "SIGHUP: the TLS certificate was not reloaded; the old one stays in use"),
                    },
                    None => info!("SIGHUP: no TLS configured, nothing to reload"),
                },
                () = &mut stop => break,
            }
        }
        drop(listener);
        let grace = config.limits.shutdown_grace();
        info!(active = server.metrics.sessions_active(), grace_s = grace.as_secs_f64(), "shutting down: no new connections; running computations may finish");
        shutdown.send_replace(Phase::Draining);
        if !sessions_end(&server.metrics, grace).await {
            warn!(active = server.metrics.sessions_active(), "grace period over: aborting the remaining sessions");
            shutdown.send_replace(Phase::Aborting);
            sessions_end(&server.metrics, Duration::from_secs(2)).await;
        }
        info!("stopped");
        Ok(())
    }
}

/// Waits up to `limit` for every session to end; whether they did.
async fn sessions_end(metrics: &Metrics, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while metrics.sessions_active() > 0 {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// SIGHUP, the conventional "reload" signal (`systemctl reload`, `kill -HUP`): without a
/// handler it would end the process.
struct Hangup {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Hangup {
    /// Never: a server inside another program leaves that program's signals alone.
    fn none() -> Hangup {
        #[cfg(unix)]
        {
            Hangup { signal: None }
        }
        #[cfg(not(unix))]
        Hangup {}
    }

    fn new() -> Hangup {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Hangup { signal: signal(SignalKind::hangup()).ok() }
        }
        #[cfg(not(unix))]
        Hangup {}
    }

    /// The next SIGHUP (never, where there are none).
    async fn recv(&mut self) {
        #[cfg(unix)]
        if let Some(signal) = &mut self.signal {
            if signal.recv().await.is_some() {
                return;
            }
        }
        std::future::pending::<()>().await
    }
}

/// Ctrl-C, or SIGTERM (what service managers and container runtimes send). The handlers are
/// installed when this is called, not when the future is first polled: until then a signal
/// would take its default action and kill the server mid-session.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (interrupt, terminate) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()));
        async move {
            match (interrupt, terminate) {
                (Ok(mut interrupt), Ok(mut terminate)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = terminate.recv() => {}
                    }
                }
                (Ok(mut interrupt), Err(_)) => {
                    interrupt.recv().await;
                }
                (Err(_), _) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
