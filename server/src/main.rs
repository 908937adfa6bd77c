//! `garblet`: the Garblet server, native client, circuit tools and benchmarks.

// A fuzzing build (`cfg(fuzzing)`, set by cargo-fuzz for every crate it builds) seeds the random
// source and runs the base OT on an insecure stand-in group (garblet-core's `random` and
// `ot/fuzzing_group.rs`): such a build must never serve or evaluate.
#[cfg(fuzzing)]
compile_error!("garblet cannot be built with cfg(fuzzing): that build's randomness is predictable and its base OT insecure");

use clap::{Args, Parser, Subcommand};
use garblet_server::circuit_cmd::{self, CircuitArg, CmdError};
use garblet_server::client::commands::{self as client_cmd, RunArgs, INPUT_HELP};
use garblet_server::client::ConnectOptions;
use garblet_core::garble::{Garbling, Scheme};
use garblet_core::protocol::frame::{DEFAULT_WINDOW, MIN_WINDOW};
use garblet_core::protocol::Security;
use garblet_server::link::{LinkSpec, Relay};
use garblet_server::{bench, serve};
use std::path::PathBuf;
use std::process::ExitCode;

/// The binary's allocator: jemalloc, whose background threads give memory freed for ten seconds
/// back to the system. Each session runs on a thread of its own, and glibc's allocator kept what
/// a burst of sessions freed in their threads' arenas for as long as the process ran
/// (docs/architecture.md, "Bounded memory").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The exit codes, for every command's `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  the computation or the connection failed (the server refused, was unreachable or went away),
     or the command could not do its work (a server that cannot start, a malformed circuit file)
  2  usage: a mistake in the command line or in an input, found before anything was computed
  3  `run --security cut-and-choose` or `authenticated` caught the server cheating (a check that
     does not depend on your input failed); the computation was stopped and gave no output

Colour: only on a terminal, and never with NO_COLOR set.";

#[derive(Parser)]
#[command(name = "garblet", version, about = "Secure two-party computation with garbled circuits", after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the garbling server (HTTP and WebSocket on one port).
    #[command(after_help = EXIT_CODES)]
    Serve {
        /// A TOML configuration (see server/README.md); without it, the embedded default.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print the embedded default configuration and exit.
        #[arg(long)]
        print_default_config: bool,
    },
    /// Run one computation on a server, as the evaluator, and print its outputs.
    ///
    /// Each output prints as `name = value`: a number of up to 64 bits in decimal (negative
    /// where the service says the output is signed), a wider value (a ciphertext, a digest) in
    /// hexadecimal after 0x. Statistics go to stderr.
    #[command(after_help = run_help())]
    Run {
        #[command(flatten)]
        server: ServerArg,
        /// The service (see `garblet services`).
        service: String,
        /// A client input, once per input in the order `garblet services` lists them: a number
        /// (decimal or 0x-hex), bytes (0x-hex or text:WORDS), or text (see below).
        #[arg(long = "input", value_name = "V", allow_hyphen_values = true)]
        inputs: Vec<String>,
        /// A parameter of the service that the client may set, k=v (repeatable).
        #[arg(long = "param", value_name = "K=V")]
        params: Vec<String>,
        /// Print one JSON object: {"service", "outputs": [{"name", "type" (uint, int or bytes),
        /// "bits", "value", "hex"}, …], "security", "recovered", "prepared", "stats", "window_bytes"; with
        /// --prepare "online_ms" and "preparation"}.
        #[arg(long)]
        json: bool,
        /// The protection to compute with. standard: the server is protected from a client that
        /// deviates, and you trust the server to garble the function it names. cut-and-choose
        /// (for a service that offers it; `garblet services` says): a server that cheats is
        /// caught (exit code 3, with the check that failed) or outvoted, except with probability
        /// 2^-40, at many times the bytes and CPU (docs/cut-and-choose.md). A result that came
        /// through cheating recovery is right, and stderr says the server cheated ("recovered":
        /// true with --json). authenticated (for a service that offers it): authenticated
        /// garbling, each side protected from a malicious other; a server that cheats is caught
        /// before any output is used (exit code 3), except with probability 2^-40, at a few times
        /// the standard mode's cost (docs/authenticated.md); the recommended protection. Every
        /// mode streams a circuit of any size in bounded memory. A service offers its mode and
        /// every one before it in this list.
        #[arg(long, value_name = "MODE", default_value = "standard", value_parser = parse_security)]
        security: Security,
        /// With --security authenticated: run the computation's preprocessing first on the same
        /// connection (it needs no input), then the computation on it, and print the online
        /// phase's time apart ("preparation" and "online_ms" with --json).
        #[arg(long)]
        prepare: bool,
        /// The credit window to start with, in bytes: how far the server may garble ahead of this
        /// client (it grants at most its `max_window_bytes`). The session doubles it while the
        /// stream waits for credit on a long network path, up to 32 MiB. Larger windows ride out
        /// scheduling hiccups on fast links at the cost of that much memory on both ends.
        #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_WINDOW, value_parser = clap::value_parser!(u32).range(MIN_WINDOW as i64..))]
        window: u32,
        /// The garbling schemes to accept: half-gates, three-halves or auto (either: the
        /// server's configuration picks).
        #[arg(long, value_name = "SCHEME", default_value = "auto", value_parser = parse_garbling)]
        garbling: Garbling,
    },
    /// List a server's services: name, your inputs and their sizes, who learns the output, AND
    /// gates (with the default parameters), and the strongest protection the service offers
    /// (standard, cut-and-choose or authenticated: see `garblet run --security`).
    #[command(after_help = EXIT_CODES)]
    Services {
        #[command(flatten)]
        server: ServerArg,
        /// The full description as JSON: each service's documentation, inputs (bits and
        /// encoding), the server's inputs, outputs, parameters, AND gates and security.
        #[arg(long)]
        json: bool,
    },
    /// Inspect and evaluate circuits in the clear.
    #[command(subcommand, after_help = EXIT_CODES)]
    Circuit(CircuitCommand),
    /// Benchmarks (numbers, not pass/fail).
    #[command(subcommand, after_help = EXIT_CODES)]
    Bench(BenchCommand),
    /// Relay TCP connections through an emulated network link (bandwidth each way and
    /// round-trip time), e.g. in front of `garblet serve` to try a browser over a slow link.
    ///
    /// No loss or jitter, and no TCP/IP header overhead: it shapes the bytes of each stream.
    #[command(after_help = EXIT_CODES)]
    Relay {
        /// Where to listen, HOST:PORT.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8081")]
        listen: String,
        /// Where to relay to, HOST:PORT (a running `garblet serve`).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
        to: String,
        /// The link: RATE,RTT (the same rate both ways, e.g. 100mbit,40ms) or DOWN/UP,RTT
        /// (down is toward the client, e.g. 1gbit/10mbit,40ms).
        #[arg(long, value_name = "RATE,RTT")]
        link: LinkSpec,
    },
}

/// A security mode by its name; the error lists the modes, as `Security` defines them.
fn parse_security(name: &str) -> Result<Security, String> {
    Security::from_name(name).ok_or_else(|| format!("{name:?} is not {}", one_of(Security::ALL.map(Security::name))))
}

/// A garbling scheme by its name, or `auto`; the error lists the names, as `Scheme` defines them.
fn parse_garbling(name: &str) -> Result<Garbling, String> {
    let names = Scheme::ALL.map(Scheme::name).into_iter().chain(["auto"]);
    Garbling::from_name(name).ok_or_else(|| format!("{name:?} is not {}", one_of(names)))
}

/// `a, b or c`.
fn one_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Which server to talk to.
#[derive(Args)]
struct ServerArg {
    /// ws://HOST:PORT or wss://HOST:PORT.
    #[arg(long = "server", value_name = "URL", default_value = "ws://127.0.0.1:8080")]
    url: String,
    /// A PEM CA certificate to trust for wss:// besides the web's roots.
    #[arg(long, value_name = "FILE")]
    ca_cert: Option<PathBuf>,
}

impl ServerArg {
    fn options(&self) -> ConnectOptions {
        ConnectOptions { ca_cert: self.ca_cert.clone(), ..ConnectOptions::default() }
    }
}

/// A Bristol Fashion file, or a built-in program with parameters.
#[derive(Args)]
struct CircuitSource {
    /// A Bristol Fashion (or old Bristol format) circuit file.
    file: Option<PathBuf>,
    /// A built-in program instead of a file (see `garblet circuit list`).
    #[arg(long)]
    builtin: Option<String>,
    /// A parameter of the built-in program, k=v (repeatable).
    #[arg(long = "param", value_name = "K=V")]
    params: Vec<String>,
}

impl CircuitSource {
    fn resolve(self) -> Result<CircuitArg, CmdError> {
        CircuitArg::parse(self.file, self.builtin, &self.params)
    }
}

#[derive(Subcommand)]
enum CircuitCommand {
    /// Gate counts as one JSON object: gates, and, xor, inv, other, wires, inputs, outputs,
    /// max_live. `and` counts AND operations (a MAND of width k counts k); `other` counts EQ,
    /// EQW and MAND gates; `max_live` is the most wire labels held at once.
    Stats {
        #[command(flatten)]
        source: CircuitSource,
        /// The manifest garblet-compile wrote beside FILE: adds `circuit`, the identity a
        /// service of FILE with this manifest announces (`sha256:` and 64 hex digits), which a
        /// page pins with the SDK's `expectCircuit`.
        #[arg(long, value_name = "FILE")]
        manifest: Option<PathBuf>,
    },
    /// Evaluates in the clear and prints each output as `name = value`, like `garblet run`.
    #[command(after_help = run_help())]
    Eval {
        #[command(flatten)]
        source: CircuitSource,
        /// An input value, once per input in order: for a file, its inputs (numbers, bit i =
        /// wire i); for a built-in program, the server's inputs as a service configures them,
        /// then the client's. Read like `garblet run --input` (see below).
        #[arg(long = "input", value_name = "V", allow_hyphen_values = true)]
        inputs: Vec<String>,
        /// Print {"outputs": [{"name", "type", "bits", "value", "hex"}, …]}.
        #[arg(long)]
        json: bool,
    },
    /// The built-in programs, one a line: name, parameters with their defaults, what it computes.
    List {
        /// Print them as JSON, with each parameter's documentation and range.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Garbling and evaluation speed beside raw AES, in one process.
    Garble {
        /// AND gates to garble and evaluate.
        #[arg(long, default_value_t = 20_000_000)]
        and_gates: u64,
        /// Print one JSON object instead of aligned lines.
        #[arg(long)]
        json: bool,
    },
    /// A whole session on loopback (server child process + native client) beside garbling
    /// speed and raw WebSocket speed; or, with --link, over an emulated network link.
    Session {
        /// AND gates of the measured `synthetic` computation [default: 20000000; with --link,
        /// about 5 s of the link's time].
        #[arg(long)]
        and_gates: Option<u64>,
        /// Also the server's resident memory during a 10^6-AND and a 10^8-AND session.
        #[arg(long)]
        memory: bool,
        /// The client's credit window for the measured sessions, in bytes (the protocol's
        /// default, 4 MiB, is measured beside it).
        #[arg(long, value_name = "BYTES", default_value_t = bench::session::WINDOW, value_parser = clap::value_parser!(u32).range(MIN_WINDOW as i64..=bench::session::MAX_WINDOW as i64))]
        window: u32,
        /// Measure over an emulated link instead: RATE,RTT (e.g. 1gbit,10ms or 100mbit,40ms) or
        /// DOWN/UP,RTT (e.g. 1gbit/10mbit,40ms), a relay between client and server with those
        /// bandwidths and that round-trip time. Reports AND/s, bytes per AND and the ratio to
        /// the link's ceiling.
        #[arg(long, value_name = "RATE,RTT")]
        link: Option<LinkSpec>,
        /// The garbling scheme to measure: half-gates, three-halves, or auto (with --link: both,
        /// interleaved, and their ratio; else the server's choice, three-halves).
        #[arg(long, value_name = "SCHEME", default_value = "auto", value_parser = parse_garbling)]
        garbling: Garbling,
        /// Print one JSON object instead of aligned lines.
        #[arg(long)]
        json: bool,
    },
    /// The applications at the sizes of Huang–Evans–Katz–Malka 2011 (loopback server + native
    /// client), beside that paper's designs' AND counts, and 1,000 AES blocks in one session.
    Apps {
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Many real sessions through one server, C at a time: aggregate AND/s, CPU per AND of
    /// both parties, latency percentiles, the server's memory; every result checked.
    Load {
        /// Sessions per concurrency level, each on a fresh connection.
        #[arg(long, default_value_t = 100)]
        sessions: usize,
        /// Sessions at a time, one measurement per value (comma-separated).
        #[arg(long, value_delimiter = ',', default_value = "1,2")]
        concurrency: Vec<usize>,
        /// AND gates of each `synthetic` session.
        #[arg(long, default_value_t = 2_000_000)]
        and_gates: u64,
        /// Rotate through the applications (Hamming, AES, edit distance, millionaires) too.
        #[arg(long)]
        mix: bool,
        /// Run each level for this many seconds instead of --sessions sessions (a soak test;
        /// reports the server's memory per minute).
        #[arg(long, value_name = "SECS")]
        duration: Option<u64>,
        /// The share of sessions that walk away mid-computation (half cancel, half drop the
        /// connection), from 0 to 1.
        #[arg(long, value_name = "FRACTION", default_value_t = 0.0)]
        leave: f64,
        /// Leave the server without sessions this many seconds after the warm-up and after the
        /// last level, and report its memory at both times: whether a burst's memory goes back.
        #[arg(long, value_name = "SECS")]
        settle: Option<u64>,
        /// The mode every session computes in (standard, cut-and-choose or authenticated); the
        /// server offers it for every service.
        #[arg(long, value_name = "MODE", default_value = "standard", value_parser = parse_security)]
        security: Security,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// What protection from a cheating server costs: private AES-128 and Hamming distance in the
    /// standard mode and under cut-and-choose, each party's CPU and the bytes each way — in
    /// memory (no network), then over loopback through an in-process server and the native
    /// client, with wall time (`loopback_…`).
    Malicious {
        /// Print one JSON object instead of aligned lines.
        #[arg(long)]
        json: bool,
    },
    /// Base OT; the correlated-OT extension (SoftSpoken, every k, both directions, with and
    /// without its checks); the check's share of an input-heavy session; AES and transposition.
    Ot {
        /// Also a 10^6-bit Hamming distance as whole sessions over an emulated link (RATE,RTT or
        /// DOWN/UP,RTT, e.g. 1gbit/10mbit,40ms): the default k against k = 1 (IKNP), alternated.
        #[arg(long, value_name = "DOWN/UP,RTT")]
        link: Option<LinkSpec>,
        /// Print one JSON object instead of aligned lines.
        #[arg(long)]
        json: bool,
    },
    /// The evaluating process of `bench session`'s protocol-free pipeline (started by it).
    #[command(hide = true)]
    PipelinePeer {
        #[arg(long)]
        connect: String,
        #[arg(long)]
        and_gates: u64,
    },
}

/// `--help` for the commands that take `--input`.
fn run_help() -> String {
    format!("{INPUT_HELP}\n\n{EXIT_CODES}")
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A script that asked for JSON gets its usage error as JSON too (help and --version are
        // not errors).
        Err(e) if e.use_stderr() && std::env::args().any(|a| a == "--json") => {
            return report(&first_line(&e), "usage", 2, true);
        }
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Serve { print_default_config: true, .. } => {
            print!("{}", serve::config::DEFAULT_CONFIG);
            Ok(())
        }
        Command::Serve { config, .. } => serve::run(config.as_deref()).map_err(|e| e.to_string()),
        Command::Run { server, service, inputs, params, json, security, prepare, window, garbling } => {
            let args = RunArgs { server: server.url.clone(), service, inputs, params, json, security, prepare, connect: ConnectOptions { window, garbling, ..server.options() } };
            return client_exit(client_cmd::run(&args), json);
        }
        Command::Services { server, json } => return client_exit(client_cmd::services(&server.url, &server.options(), json), json),
        Command::Circuit(c) => {
            let json = matches!(c, CircuitCommand::Eval { json: true, .. } | CircuitCommand::List { json: true });
            return match run_circuit(c) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    let kind = if e.exit_code() == 2 { "usage" } else { "failed" };
                    report(&e.to_string(), kind, e.exit_code(), json)
                }
            };
        }
        Command::Relay { listen, to, link } => match Relay::start(&listen, &to, link) {
            Ok(relay) => {
                println!("relaying {} -> {to} over {link}", relay.addr);
                loop {
                    std::thread::park();
                }
            }
            Err(e) => Err(format!("relay on {listen}: {e}")),
        },
        Command::Bench(b) => match b {
            BenchCommand::Session { and_gates, memory, window, link, garbling, json } => bench::session::run(&bench::session::Options { and_gates, memory, window, link, garbling }, json),
            BenchCommand::Garble { and_gates, json } => bench::garble::run(&bench::garble::Options { and_gates }, json),
            BenchCommand::Apps { json } => bench::apps::run(json),
            BenchCommand::Load { sessions, concurrency, and_gates, mix, duration, leave, settle, security, json } => {
                let (duration, settle) = (duration.map(std::time::Duration::from_secs), settle.map(std::time::Duration::from_secs));
                bench::load::run(&bench::load::Options { sessions, concurrency, and_gates, mix, duration, leave, settle, security }, json)
            }
            BenchCommand::PipelinePeer { connect, and_gates } => bench::pipeline::peer(&connect, and_gates),
            BenchCommand::Malicious { json } => bench::malicious::run(json),
            BenchCommand::Ot { link, json } => bench::ot::run(link, json),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("garblet: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The client's errors: 2 for a mistake in what was asked, 3 for a server caught cheating, 1 for
/// another failure (see `EXIT_CODES`); with `--json`, as one JSON object on stdout.
fn client_exit(result: Result<(), garblet_server::client::ClientError>, json: bool) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if json => {
            println!("{}", e.to_json());
            ExitCode::from(e.exit_code())
        }
        Err(e) => {
            eprintln!("garblet: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// An error of a command other than the client's: on stderr, or with `--json` as
/// `{"error": {"kind", "message", "exit_code"}}` on stdout.
fn report(message: &str, kind: &str, exit_code: u8, json: bool) -> ExitCode {
    if json {
        println!("{}", serde_json::json!({ "error": { "kind": kind, "message": message, "exit_code": exit_code } }));
    } else {
        eprintln!("garblet: {message}");
    }
    ExitCode::from(exit_code)
}

/// A clap error's own sentence, without its usage lines and hints.
fn first_line(e: &clap::Error) -> String {
    e.to_string().lines().next().unwrap_or_default().trim_start_matches("error: ").to_string()
}

fn run_circuit(command: CircuitCommand) -> Result<(), CmdError> {
    match command {
        CircuitCommand::Stats { source, manifest } => {
            let circuit = source.resolve()?;
            let mut stats = circuit_cmd::stats(&circuit)?;
            if let Some(manifest) = manifest {
                stats["circuit"] = circuit_cmd::manifest_circuit_id(&circuit, &manifest)?.into();
            }
            println!("{stats}");
        }
        CircuitCommand::Eval { source, inputs, json } => print!("{}", circuit_cmd::eval(&source.resolve()?, &inputs, json)?),
        CircuitCommand::List { json } => print!("{}", circuit_cmd::list(json)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_security_mode_parses_and_a_wrong_name_lists_them_all() {
        for mode in Security::ALL {
            assert_eq!(parse_security(mode.name()), Ok(mode));
        }
        let error = parse_security("paranoid").unwrap_err();
        assert_eq!(error, "\"paranoid\" is not standard, cut-and-choose or authenticated");
        for mode in Security::ALL {
            assert!(error.contains(mode.name()), "{error} names {}", mode.name());
        }
    }

    #[test]
    fn every_garbling_scheme_parses_and_a_wrong_name_lists_them_all() {
        for scheme in Scheme::ALL {
            assert_eq!(parse_garbling(scheme.name()), Ok(Garbling::Only(scheme)));
        }
        assert_eq!(parse_garbling("auto"), Ok(Garbling::Auto));
        assert_eq!(parse_garbling("yao").unwrap_err(), "\"yao\" is not half-gates, three-halves or auto");
    }
}
