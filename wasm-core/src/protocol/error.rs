//! Why a session, or one request on it, failed: [`SessionError`], one variant per failure with
//! the data that describes it, never a sentence to parse.
//!
//! Each error has three faces, all stable:
//!
//! * its **wire code** ([`SessionError::code`]), what an `Error` frame carries to the peer
//!   (docs/architecture.md, "Error codes", has the table and the rule for adding codes);
//! * its **kind** ([`SessionError::kind`]): who is to blame and what became of the session — the
//!   SDK turns kinds into its error classes;
//! * its **reason and fields** ([`SessionError::report`]): a kebab-case name for the exact check
//!   that failed and the values it compared, which the wasm boundary hands to JavaScript as JSON.
//!
//! The `Display` text is for people (logs, the CLI); programs match on variants, codes and
//! reasons.

use super::catalog::{hex, ResolveError, Security};
use crate::cnc::primary::{Cheating, PrimaryError};
use crate::cnc::CncError;
use super::frame::{ErrorCode, FrameError};
use super::topology::TopologyError;
use crate::auth::AuthError;
use crate::garble::{GarbleError, OutputError};
use crate::ot::{BasePoint, OtError};
use garblet_circuits::BuildError;
use serde_json::{Map, Value};
use thiserror::Error;

/// Why a session ended, or why a request was refused. Every variant maps to an [`ErrorCode`]
/// for the `Error` frame.
#[derive(Debug, Error)]
pub enum SessionError {
    // ---- The peer broke the protocol ----
    #[error("malformed frame: {0}")]
    Frame(#[from] FrameError),
    /// A frame this side does not accept in its current state.
    #[error("unexpected {frame} frame while {state}")]
    Unexpected { frame: &'static str, state: &'static str },
    #[error("protocol version {theirs} is not supported (this side speaks version {ours})")]
    Version { ours: u16, theirs: u16 },
    /// The hellos have no garbling scheme in common: the server offers `offered`, the client
    /// accepts `accepted` (names, comma-separated).
    #[error("no garbling scheme in common: the server offers {offered}, the client accepts {accepted}")]
    Garbling { offered: String, accepted: String },
    /// The hellos have no SoftSpoken k in common for OT direction `direction`: the server offers
    /// `offered`, the client accepts `accepted` (k values, comma-separated).
    #[error("no SoftSpoken k in common for OT direction {direction}: the server offers {offered}, the client accepts {accepted}")]
    OtParameters { direction: u8, offered: String, accepted: String },
    /// Credit that acknowledges bytes never sent, or takes back acknowledged ones.
    #[error("credit for {credit} bytes, but {sent} were sent and {acknowledged} acknowledged")]
    Credit { credit: u64, acknowledged: u64, sent: u64 },
    /// The garbler sent more than the credit window (and one batch of slack) allows.
    #[error("{unevaluated} bytes of garbled data wait unevaluated; the credit window allows {allowed}")]
    WindowExceeded { unevaluated: u64, allowed: u64 },
    #[error("{extra} bytes of data after the end of the garbled stream")]
    DataAfterEnd { extra: u64 },
    /// A `LabelCorrections` frame of the wrong length for the OT chunk it answers.
    #[error("{got} bytes of label corrections; {expected} expected")]
    Corrections { expected: u64, got: u64 },
    /// The evaluation produced another number of output bits than the service declares.
    #[error("the evaluation produced {got} output bits; the service declares {expected}")]
    OutputBits { expected: u64, got: u64 },
    #[error("oblivious transfer failed: {0}")]
    Ot(#[from] OtError),
    #[error("garbling failed: {0}")]
    Garble(#[from] GarbleError),
    #[error("the garbler's outputs were refused: {0}")]
    Output(#[from] OutputError),
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// A message of a mode that sends whole messages (a flight, gathered from its pieces) of
    /// the wrong length.
    #[error("flight {flight} has {got} bytes; {expected} expected")]
    FlightLength { flight: u8, expected: u64, got: u64 },
    /// A cut-and-choose message whose content does not fit its computation: a count, an index
    /// or a length (a malformed message, not a detected deviation).
    #[error("cut-and-choose: {0}")]
    Cnc(#[from] CncError),
    /// The evaluator returned, for the garbler's output `index` of a cut-and-choose
    /// computation, a key that is neither of that output's keys.
    #[error("the key returned for the garbler's output {index} is neither of its keys")]
    ForgedKey { index: u64 },

    // ---- The garbler cheated (cut-and-choose) ----
    /// A check whose outcome does not depend on this party's input failed: a check circuit, a
    /// commitment, the consistency of the garbler's input (docs/cut-and-choose.md).
    #[error("the server cheated: {0}")]
    Cheating(#[from] Cheating),

    /// An authenticated-mode message that failed: a length or an order (the peer broke the
    /// protocol), or a check — a MAC, a commitment, the leaky-AND equality check, the garbled
    /// circuit's consistency check — that caught the peer deviating.
    #[error("authenticated garbling: {0}")]
    Authenticated(#[from] AuthError),

    // ---- A request that does not fit ----
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The request's number of evaluator input bits is not the service's.
    #[error("{service} takes {expected} input bits from the client; {got} were given")]
    InputBits { service: String, expected: u64, got: u64 },
    /// The client resolved the service to another circuit than the server did.
    #[error("the client's circuit for {service} is not the server's ({} vs {}): client and server builds differ", hex(&client[..8]), hex(&server[..8]))]
    CircuitMismatch { service: String, client: [u8; 32], server: [u8; 32] },
    /// The server's AND gates per session: `requested`, the computation's own count, when it is
    /// known up front; `None` when the stream ran past the limit.
    #[error("{}", and_gate_limit(*limit, *requested))]
    AndGateLimit { limit: u64, requested: Option<u64> },
    /// Preparing ahead would park more AND gates on the session than the server allows:
    /// `parked` already, `requested` more.
    #[error("{parked} AND gates prepared ahead and {requested} more exceed this server's limit of {limit} per session")]
    PreparedLimit { limit: u64, parked: u64, requested: u64 },
    /// Preparing ahead would park more AND gates on the session than this client holds
    /// ([`super::EvaluatorConfig::max_prepared_and_gates`]): `parked` already, `requested` more.
    #[error("{parked} AND gates prepared ahead and {requested} more exceed this client's limit of {limit} per session")]
    ClientPreparedLimit { limit: u64, parked: u64, requested: u64 },
    /// A computation on a preparation done ahead, with none parked for its service, params and
    /// circuit.
    #[error("nothing is prepared ahead for {service} with these parameters on this session")]
    NothingPrepared { service: String },
    /// A phase other than the whole computation asked of a mode that does not prepare ahead.
    #[error("{} security does not prepare computations ahead ({phase} was asked for)", security.name())]
    PhaseNotOffered { security: Security, phase: &'static str },
    /// A computation on a preparation done ahead named another preparation than the oldest
    /// parked for it: the two sides would not use the same material.
    #[error("the request uses preparation {got}; the oldest parked for it is {expected}")]
    PreparedMismatch { expected: u64, got: u64 },
    /// The client asked for more protection than the service offers.
    #[error("{service} offers {} security; {} was asked for", offered.name(), requested.name())]
    SecurityNotOffered { service: String, offered: Security, requested: Security },
    /// A streamed circuit larger than this client keeps for cut-and-choose's cheating recovery
    /// (which computes it in the clear).
    #[error("the streamed circuit has more than the {limit} gates this client keeps for a cut-and-choose computation")]
    KeptCircuit { limit: u64 },
    /// A streamed circuit wider than this client allows.
    #[error("{service} needs {slots} wire slots; this client allows {limit}")]
    SlotLimit { service: String, slots: u32, limit: u32 },
    /// A parameter value that is not a non-negative integer (JavaScript's parameters, as JSON).
    #[error("parameter '{param}' must be a non-negative integer")]
    ParamValue { param: String },
    #[error("the parameters must be a JSON object of non-negative integers")]
    ParamsNotObject,
    /// Packed input bits shorter than their count says.
    #[error("{bits} input bits do not fit in {bytes} bytes")]
    PackedBits { bits: u64, bytes: u64 },
    /// A computation asked for while none can start.
    #[error("no computation can start: the session is {state}")]
    NotReady { state: &'static str },

    // ---- This side failed ----
    #[error("building the circuit failed: {0}")]
    Build(#[from] BuildError),
    /// A circuit program failed while a cut-and-choose pass ran it (its error, in words).
    #[error("the circuit program failed: {message}")]
    Program { message: String },
    /// The server could not set up a service it offers (its configuration or a bug).
    #[error(transparent)]
    Service(#[from] ServiceFailure),
    #[error("the operating system's random generator failed: {0}")]
    Random(getrandom::Error),
    /// The result of a base-OT share of the wrong length (0 expected: no share is out).
    #[error("{got} bytes of base-OT products; {expected} expected")]
    BaseOtShare { expected: u64, got: u64 },

    // ---- The peer ended the session ----
    /// The peer's `Error` frame: its code, its own words, and for a refusal that passes
    /// (`busy`), when to try again.
    #[error("the other side ended the session: {message}")]
    Remote { code: u16, message: String, retry_after_ms: Option<u32> },
}

fn and_gate_limit(limit: u64, requested: Option<u64>) -> String {
    match requested {
        Some(n) => format!("{n} AND gates exceed this server's limit of {limit} per session"),
        None => format!("the session exceeded this server's limit of {limit} AND gates"),
    }
}

/// A service the server cannot set up: found when its table is built, or when a session plans a
/// computation.
#[derive(Debug, Error)]
#[error("service {service}: {source}")]
pub struct ServiceFailure {
    pub service: String,
    pub source: ServiceError,
}

/// What went wrong setting up a service on the server.
#[derive(Debug, Error)]
pub enum ServiceError {
    /// Two services of one name.
    #[error("the service is defined twice")]
    Duplicate,
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The configured garbler input does not fit the circuit.
    #[error("the garbler's input has {got} bits; the circuit takes {expected}")]
    GarblerInput { expected: u64, got: u64 },
    /// The service's catalog entry and its definition disagree (a bug).
    #[error("the catalog and the service's definition disagree")]
    CatalogMismatch,
    #[error("opening the circuit: {0}")]
    CircuitFile(std::io::Error),
}

/// Who is to blame for an error, and what became of the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The caller's request does not fit (unknown service, parameter out of range, wrong input
    /// length): refused before anything was sent; the session stays usable.
    Input,
    /// This side found the peer breaking the protocol, or failed itself: the session is closed.
    Protocol,
    /// The peer ended the session with an `Error` frame: the session is closed.
    Remote,
    /// This side caught the peer cheating in a cut-and-choose computation (a check that does
    /// not depend on this side's input failed): the session is closed.
    Cheating,
}

impl ErrorKind {
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Input => "input",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Remote => "remote",
            ErrorKind::Cheating => "cheating",
        }
    }
}

/// An error as data: what the wasm boundary hands to JavaScript.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorReport {
    pub kind: ErrorKind,
    pub code: ErrorCode,
    /// The code as it came over the wire, for [`ErrorKind::Remote`] errors (a newer peer may
    /// send a code this build does not know; `code` is then `protocol`).
    pub wire_code: u16,
    /// The exact check that failed, kebab-case; stable.
    pub reason: &'static str,
    /// The values the check compared, by name (camelCase).
    pub fields: Map<String, Value>,
    /// For people: this side's description, or the peer's own words.
    pub message: String,
}

impl ErrorReport {
    /// `{"kind", "code", "wireCode", "reason", "message", "fields": {…}}`.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "kind": self.kind.name(),
            "code": self.code.name(),
            "wireCode": self.wire_code,
            "reason": self.reason,
            "message": self.message,
            "fields": self.fields,
        })
        .to_string()
    }
}

impl SessionError {
    /// The code to report this error with.
    pub fn code(&self) -> ErrorCode {
        use SessionError::*;
        match self {
            Version { .. } => ErrorCode::Version,
            Garbling { .. } => ErrorCode::Garbling,
            OtParameters { .. } => ErrorCode::OtParameters,
            Ot(OtError::CheckFailed { .. } | OtError::SetupCheckFailed | OtError::FerretCheckFailed { .. }) => ErrorCode::OtCheckFailed,
            Ot(OtError::Random(_) | OtError::FerretParams { .. }) | Garble(GarbleError::Random(_) | GarbleError::DeltaLsb) => ErrorCode::Internal,
            Output(OutputError::Forged { .. }) | ForgedKey { .. } => ErrorCode::OutputForged,
            Cheating(_) => ErrorCode::CheatingDetected,
            Authenticated(e) if caught_cheating(e) => ErrorCode::CheatingDetected,
            Authenticated(AuthError::OutputLabel) => ErrorCode::OutputForged,
            Authenticated(AuthError::Ot(OtError::CheckFailed { .. } | OtError::SetupCheckFailed | OtError::FerretCheckFailed { .. })) => ErrorCode::OtCheckFailed,
            Authenticated(AuthError::Random(_) | AuthError::Ot(OtError::Random(_) | OtError::FerretParams { .. })) => ErrorCode::Internal,
            Authenticated(_) => ErrorCode::Protocol,
            Frame(_) | Unexpected { .. } | PreparedMismatch { .. } | Credit { .. } | WindowExceeded { .. } | DataAfterEnd { .. } | Corrections { .. } | OutputBits { .. } | Ot(_) | Garble(_) | Output(_) | Topology(_) | FlightLength { .. } | Cnc(_) => {
                ErrorCode::Protocol
            }
            Resolve(ResolveError::UnknownService { .. }) => ErrorCode::UnknownService,
            Resolve(e) if e.is_malformed_catalog() => ErrorCode::Protocol,
            Resolve(_) | InputBits { .. } | CircuitMismatch { .. } | ParamValue { .. } | ParamsNotObject | PackedBits { .. } | NotReady { .. } | SecurityNotOffered { .. } | NothingPrepared { .. } | PhaseNotOffered { .. } => ErrorCode::BadRequest,
            AndGateLimit { .. } | PreparedLimit { .. } | ClientPreparedLimit { .. } | SlotLimit { .. } | KeptCircuit { .. } => ErrorCode::Limit,
            Build(_) | Program { .. } | Service { .. } | Random(_) | BaseOtShare { .. } => ErrorCode::Internal,
            Remote { code, .. } => ErrorCode::from_u16(*code).unwrap_or(ErrorCode::Protocol),
        }
    }

    /// Who is to blame, and whether the session survived.
    pub fn kind(&self) -> ErrorKind {
        use SessionError::*;
        match self {
            Remote { .. } => ErrorKind::Remote,
            Cheating(_) => ErrorKind::Cheating,
            Authenticated(e) if caught_cheating(e) => ErrorKind::Cheating,
            Resolve(e) if !e.is_malformed_catalog() => ErrorKind::Input,
            InputBits { .. } | SlotLimit { .. } | KeptCircuit { .. } | ClientPreparedLimit { .. } | ParamValue { .. } | ParamsNotObject | PackedBits { .. } | NotReady { .. } | SecurityNotOffered { .. } | NothingPrepared { .. } | PhaseNotOffered { .. } => ErrorKind::Input,
            _ => ErrorKind::Protocol,
        }
    }

    /// The error as data: kind, code, reason and fields.
    pub fn report(&self) -> ErrorReport {
        let mut f = Fields::default();
        let reason = self.describe(&mut f);
        let (wire_code, message) = match self {
            SessionError::Remote { code, message, .. } => (*code, message.clone()),
            other => (other.code() as u16, other.to_string()),
        };
        ErrorReport { kind: self.kind(), code: self.code(), wire_code, reason, fields: f.0, message }
    }

    fn describe(&self, f: &mut Fields) -> &'static str {
        use SessionError::*;
        match self {
            Frame(e) => describe_frame(e, f),
            Unexpected { frame, state } => {
                f.str("frame", frame).str("state", state);
                "unexpected-frame"
            }
            Version { ours, theirs } => {
                f.num("ours", *ours).num("theirs", *theirs);
                "version"
            }
            Garbling { offered, accepted } => {
                f.str("offered", offered).str("accepted", accepted);
                "garbling-scheme"
            }
            OtParameters { direction, offered, accepted } => {
                f.num("direction", *direction).str("offered", offered).str("accepted", accepted);
                "ot-parameters"
            }
            Credit { credit, acknowledged, sent } => {
                f.num("credit", *credit).num("acknowledged", *acknowledged).num("sent", *sent);
                "credit-out-of-range"
            }
            WindowExceeded { unevaluated, allowed } => {
                f.num("unevaluated", *unevaluated).num("allowed", *allowed);
                "window-exceeded"
            }
            DataAfterEnd { extra } => {
                f.num("extra", *extra);
                "data-after-end"
            }
            Corrections { expected, got } => {
                f.num("expected", *expected).num("got", *got);
                "label-corrections-length"
            }
            OutputBits { expected, got } => {
                f.num("expected", *expected).num("got", *got);
                "output-bits"
            }
            Ot(e) => describe_ot(e, f),
            Garble(e) => describe_garble(e, f),
            Output(OutputError::Count { expected, actual }) => {
                f.num("expected", *expected).num("got", *actual);
                "output-label-count"
            }
            Output(OutputError::Forged { index }) => {
                f.num("index", *index);
                "output-forged"
            }
            Topology(e) => describe_topology(e, f),
            FlightLength { flight, expected, got } => {
                f.num("flight", *flight).num("expected", *expected).num("got", *got);
                "flight-length"
            }
            Cnc(e) => {
                f.str("detail", &e.to_string());
                "cut-and-choose-message"
            }
            ForgedKey { index } => {
                f.num("index", *index);
                "output-forged"
            }
            Cheating(e) => describe_cheating(e, f),
            Authenticated(e) => describe_authenticated(e, f),
            PreparedLimit { limit, parked, requested } | ClientPreparedLimit { limit, parked, requested } => {
                f.num("limit", *limit).num("parked", *parked).num("requested", *requested);
                "prepared-limit"
            }
            NothingPrepared { service } => {
                f.str("service", service);
                "nothing-prepared"
            }
            PhaseNotOffered { security, phase } => {
                f.str("security", security.name()).str("phase", phase);
                "phase-not-offered"
            }
            PreparedMismatch { expected, got } => {
                f.num("expected", *expected).num("got", *got);
                "prepared-mismatch"
            }
            SecurityNotOffered { service, offered, requested } => {
                f.str("service", service).str("offered", offered.name()).str("requested", requested.name());
                "security-not-offered"
            }
            Resolve(e) => describe_resolve(e, f),
            InputBits { service, expected, got } => {
                f.str("service", service).num("expected", *expected).num("got", *got);
                "input-bits"
            }
            CircuitMismatch { service, client, server } => {
                f.str("service", service).str("client", &hex(client)).str("server", &hex(server));
                "circuit-mismatch"
            }
            AndGateLimit { limit, requested } => {
                f.num("limit", *limit);
                if let Some(n) = requested {
                    f.num("requested", *n);
                }
                "and-gate-limit"
            }
            KeptCircuit { limit } => {
                f.num("limit", *limit);
                "kept-circuit"
            }
            SlotLimit { service, slots, limit } => {
                f.str("service", service).num("slots", *slots).num("limit", *limit);
                "slot-limit"
            }
            ParamValue { param } => {
                f.str("param", param);
                "param-value"
            }
            ParamsNotObject => "param-value",
            PackedBits { bits, bytes } => {
                f.num("bits", *bits).num("bytes", *bytes);
                "packed-bits"
            }
            NotReady { state } => {
                f.str("state", state);
                "not-ready"
            }
            Build(e) => describe_build(e, f),
            Program { .. } => "program",
            Service(ServiceFailure { service, source }) => {
                f.str("service", service);
                match source {
                    ServiceError::Duplicate => "duplicate-service",
                    ServiceError::Build(e) => describe_build(e, f),
                    ServiceError::GarblerInput { expected, got } => {
                        f.num("expected", *expected).num("got", *got);
                        "garbler-input-bits"
                    }
                    ServiceError::CatalogMismatch => "catalog-mismatch",
                    ServiceError::CircuitFile(_) => "circuit-file",
                }
            }
            Random(_) => "random",
            BaseOtShare { expected, got } => {
                f.num("expected", *expected).num("got", *got);
                "base-ot-share-length"
            }
            Remote { retry_after_ms, .. } => {
                if let Some(ms) = retry_after_ms {
                    f.num("retryAfterMs", *ms);
                }
                "remote"
            }
        }
    }
}

/// Whether an authenticated-mode error is a check that caught the peer deviating (rather than
/// a malformed message): whoever sees it knows the peer cheated.
fn caught_cheating(e: &AuthError) -> bool {
    matches!(e, AuthError::MacCheckFailed { .. } | AuthError::CommitmentMismatch { .. } | AuthError::EqualityCheckFailed | AuthError::ConsistencyCheckFailed)
}

fn describe_authenticated(e: &AuthError, f: &mut Fields) -> &'static str {
    match e {
        AuthError::WrongLength { what, expected, actual } => {
            f.str("what", what).num("expected", *expected).num("got", *actual);
            "authenticated-message-length"
        }
        AuthError::OutOfOrder { expected, got } => {
            f.str("expected", expected).str("got", got);
            "authenticated-message-order"
        }
        AuthError::Ot(e) => describe_ot(e, f),
        AuthError::Padding { what } => {
            f.str("what", what);
            "authenticated-padding"
        }
        AuthError::MacCheckFailed { what } => {
            f.str("what", what);
            "mac-check-failed"
        }
        AuthError::CommitmentMismatch { what } => {
            f.str("what", what);
            "commitment-mismatch"
        }
        AuthError::EqualityCheckFailed => "leaky-and-check-failed",
        AuthError::ConsistencyCheckFailed => "consistency-check-failed",
        AuthError::OutputLabel => "output-forged",
        AuthError::MaterialCount { what, needed, given } => {
            f.str("what", what).num("expected", *needed as u64).num("got", *given as u64);
            "authenticated-material-count"
        }
        AuthError::MaterialReuse { made_for, computation } => {
            f.num("madeFor", *made_for).num("computation", *computation);
            "authenticated-material-reuse"
        }
        AuthError::BadCircuit => "authenticated-circuit",
        AuthError::TripleCount { needed, given } => {
            f.num("expected", *needed as u64).num("got", *given as u64);
            "authenticated-triple-count"
        }
        AuthError::BatchSize { count, max } => {
            f.num("count", *count as u64).num("max", *max as u64);
            "authenticated-batch-size"
        }
        AuthError::Random(_) => "random",
    }
}

fn describe_cheating(e: &Cheating, f: &mut Fields) -> &'static str {
    match e {
        Cheating::CheckCircuit { circuit, what } => {
            f.num("circuit", *circuit).str("what", what);
            "check-circuit"
        }
        Cheating::EvaluationCircuit { circuit, what } => {
            f.num("circuit", *circuit).str("what", what);
            "evaluation-circuit"
        }
        Cheating::InconsistentInput { first, other } => {
            f.num("first", *first).num("other", *other);
            "inconsistent-input"
        }
        Cheating::NoValidOutput => "no-valid-output",
        Cheating::RecoveryDelta => "recovery-delta",
        Cheating::RecoveryInput { circuit } => {
            f.num("circuit", *circuit);
            "recovery-input"
        }
        Cheating::NoMajority => "no-majority",
    }
}

impl From<PrimaryError> for SessionError {
    fn from(e: PrimaryError) -> Self {
        match e {
            PrimaryError::Cheating(c) => SessionError::Cheating(c),
            PrimaryError::Input(e) => SessionError::Cnc(e),
            PrimaryError::Garble(e) => SessionError::Garble(e),
            PrimaryError::Program(message) => SessionError::Program { message },
            PrimaryError::ForgedOutput { index } => SessionError::ForgedKey { index: index as u64 },
        }
    }
}

/// Fields of an [`ErrorReport`], by name.
#[derive(Default)]
struct Fields(Map<String, Value>);

impl Fields {
    fn str(&mut self, name: &str, value: &str) -> &mut Self {
        self.0.insert(name.into(), Value::from(value));
        self
    }
    fn num(&mut self, name: &str, value: impl TryInto<u64>) -> &mut Self {
        self.0.insert(name.into(), Value::from(value.try_into().unwrap_or(u64::MAX)));
        self
    }
}

fn describe_frame(e: &FrameError, f: &mut Fields) -> &'static str {
    match e {
        FrameError::Empty => "frame-empty",
        FrameError::UnknownType(t) => {
            f.num("type", *t);
            "frame-type"
        }
        FrameError::Truncated { frame, what } => {
            f.str("frame", frame).str("what", what);
            "frame-truncated"
        }
        FrameError::Trailing { frame, extra } => {
            f.str("frame", frame).num("extra", *extra);
            "frame-trailing"
        }
        FrameError::Utf8 { frame, what } => {
            f.str("frame", frame).str("what", what);
            "frame-utf8"
        }
        FrameError::Magic => "frame-magic",
        FrameError::TooLong { frame, what, len } => {
            f.str("frame", frame).str("what", what).num("length", *len);
            "frame-too-long"
        }
        FrameError::Value { frame, what, value } => {
            f.str("frame", frame).str("what", what).num("value", *value);
            "frame-value"
        }
    }
}

fn describe_ot(e: &OtError, f: &mut Fields) -> &'static str {
    let point = |f: &mut Fields, p: &BasePoint| {
        match p {
            BasePoint::SenderKey => f.str("point", "R"),
            BasePoint::ReceiverKey(j) => f.str("point", "P").num("index", *j),
        };
    };
    match e {
        OtError::WrongLength { what, expected, actual } => {
            f.str("what", what).num("expected", *expected).num("got", *actual);
            "ot-message-length"
        }
        OtError::InvalidPoint { point: p } => {
            point(f, p);
            "ot-invalid-point"
        }
        OtError::IdentityPoint { point: p } => {
            point(f, p);
            "ot-identity-point"
        }
        OtError::OutOfOrder { expected, got } => {
            f.str("expected", expected).str("got", got);
            "ot-out-of-order"
        }
        OtError::ChunkTooLarge { count, max } => {
            f.num("count", *count).num("limit", *max);
            "ot-chunk-too-large"
        }
        OtError::OtRange { start, end, count } => {
            f.num("start", *start).num("end", *end).num("count", *count);
            "ot-range"
        }
        OtError::DeltaLsbNotSet => "delta-lsb",
        OtError::CheckFailed { chunk } => {
            f.num("chunk", *chunk);
            "ot-check-failed"
        }
        OtError::SetupCheckFailed => "ot-setup-check-failed",
        OtError::FerretCheckFailed { iteration } => {
            f.num("iteration", *iteration);
            "ferret-check-failed"
        }
        OtError::FerretParams { trees, depth, k } => {
            f.num("trees", *trees).num("depth", *depth).num("k", *k);
            "ferret-params"
        }
        OtError::UnsupportedK { k } => {
            f.num("k", *k);
            "ot-unsupported-k"
        }
        OtError::Random(_) => "random",
    }
}

fn describe_garble(e: &GarbleError, f: &mut Fields) -> &'static str {
    match e {
        GarbleError::InputsExhausted(party) => {
            f.str("party", party.name());
            "inputs-exhausted"
        }
        GarbleError::PayloadLength { expected, actual } => {
            f.num("expected", *expected).num("got", *actual);
            "payload-length"
        }
        GarbleError::GarblerLabels { expected, actual } => {
            f.num("expected", *expected).num("got", *actual);
            "garbler-labels-length"
        }
        GarbleError::DeltaLsb => "delta-lsb",
        GarbleError::Random(_) => "random",
    }
}

fn describe_topology(e: &TopologyError, f: &mut Fields) -> &'static str {
    match e {
        TopologyError::TooManyGates(n) => {
            f.num("gates", *n);
            "topology-gates"
        }
        TopologyError::TooManySlots { slots, max } => {
            f.num("slots", *slots).num("limit", *max);
            "topology-slots"
        }
        TopologyError::BadGate { index, reason } => {
            f.num("index", *index).str("what", reason);
            "topology-gate"
        }
        TopologyError::HashMismatch => "circuit-hash-mismatch",
    }
}

fn describe_resolve(e: &ResolveError, f: &mut Fields) -> &'static str {
    match e {
        ResolveError::UnknownService { service } => {
            f.str("service", service);
            "unknown-service"
        }
        ResolveError::ParamNotSettable { service, param } => {
            f.str("service", service).str("param", param);
            "unknown-param"
        }
        ResolveError::ParamOutOfRange { service, param, value, min, max } => {
            f.str("service", service).str("param", param).num("value", *value).num("min", *min).num("max", *max);
            "param-out-of-range"
        }
        ResolveError::Build { service, source } => {
            f.str("service", service);
            describe_build(source, f)
        }
        ResolveError::UnknownProgram { service, program } => {
            f.str("service", service).str("program", program);
            "unknown-program"
        }
        ResolveError::CatalogJson { line, column } => {
            f.num("line", *line).num("column", *column);
            "catalog-json"
        }
        ResolveError::CircuitHash { service } => {
            f.str("service", service);
            "catalog-circuit-hash"
        }
        ResolveError::Party { input, party } => {
            f.str("input", input).str("party", party);
            "catalog-party"
        }
        ResolveError::Reveal { output, reveal } => {
            f.str("output", output).str("reveal", reveal);
            "catalog-reveal"
        }
        ResolveError::SignedNotNumber { input } => {
            f.str("input", input);
            "catalog-signed"
        }
        ResolveError::SignedBytes { output } => {
            f.str("output", output);
            "catalog-signed"
        }
    }
}

fn describe_build(e: &BuildError, f: &mut Fields) -> &'static str {
    match e {
        BuildError::UnknownParameter { program, name, .. } => {
            f.str("program", program).str("param", name);
            "unknown-param"
        }
        BuildError::ParameterOutOfRange { program, name, value, min, max } => {
            f.str("program", program).str("param", name).num("value", *value).num("min", *min).num("max", *max);
            "param-out-of-range"
        }
        BuildError::Parameter(_) => "invalid-params",
        BuildError::InputCount { party, expected, actual } => {
            f.str("party", party).num("expected", *expected).num("got", *actual);
            "program-input-bits"
        }
        BuildError::OutputCount { expected, actual } => {
            f.num("expected", *expected).num("got", *actual);
            "program-output-bits"
        }
        BuildError::Bristol(e) => {
            if let Some(line) = e.line() {
                f.num("line", line);
            }
            "bristol"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_has_its_code_kind_and_fields() {
        let cases: Vec<(SessionError, ErrorCode, ErrorKind, &str)> = vec![
            (SessionError::Unexpected { frame: "Credit", state: "idle" }, ErrorCode::Protocol, ErrorKind::Protocol, "unexpected-frame"),
            (SessionError::Version { ours: 3, theirs: 9 }, ErrorCode::Version, ErrorKind::Protocol, "version"),
            (SessionError::Garbling { offered: "half-gates".into(), accepted: "three-halves".into() }, ErrorCode::Garbling, ErrorKind::Protocol, "garbling-scheme"),
            (OtError::CheckFailed { chunk: 2 }.into(), ErrorCode::OtCheckFailed, ErrorKind::Protocol, "ot-check-failed"),
            (OutputError::Forged { index: 4 }.into(), ErrorCode::OutputForged, ErrorKind::Protocol, "output-forged"),
            (ResolveError::UnknownService { service: "x".into() }.into(), ErrorCode::UnknownService, ErrorKind::Input, "unknown-service"),
            (
                ResolveError::ParamOutOfRange { service: "s".into(), param: "n".into(), value: 0, min: 1, max: 9 }.into(),
                ErrorCode::BadRequest,
                ErrorKind::Input,
                "param-out-of-range",
            ),
            (ResolveError::CatalogJson { line: 1, column: 2 }.into(), ErrorCode::Protocol, ErrorKind::Protocol, "catalog-json"),
            (SessionError::AndGateLimit { limit: 10, requested: Some(11) }, ErrorCode::Limit, ErrorKind::Protocol, "and-gate-limit"),
            (SessionError::PreparedLimit { limit: 10, parked: 6, requested: 6 }, ErrorCode::Limit, ErrorKind::Protocol, "prepared-limit"),
            (SessionError::ClientPreparedLimit { limit: 10, parked: 6, requested: 6 }, ErrorCode::Limit, ErrorKind::Input, "prepared-limit"),
            (SessionError::NothingPrepared { service: "s".into() }, ErrorCode::BadRequest, ErrorKind::Input, "nothing-prepared"),
            (SessionError::PhaseNotOffered { security: Security::Standard, phase: "prepare" }, ErrorCode::BadRequest, ErrorKind::Input, "phase-not-offered"),
            (SessionError::PreparedMismatch { expected: 1, got: 2 }, ErrorCode::Protocol, ErrorKind::Protocol, "prepared-mismatch"),
            (SessionError::SlotLimit { service: "s".into(), slots: 9, limit: 8 }, ErrorCode::Limit, ErrorKind::Input, "slot-limit"),
            (SessionError::Random(getrandom::Error::UNSUPPORTED), ErrorCode::Internal, ErrorKind::Protocol, "random"),
            (SessionError::Remote { code: 6, message: "full".into(), retry_after_ms: None }, ErrorCode::Busy, ErrorKind::Remote, "remote"),
            (SessionError::Remote { code: 999, message: "new".into(), retry_after_ms: None }, ErrorCode::Protocol, ErrorKind::Remote, "remote"),
        ];
        for (error, code, kind, reason) in cases {
            let report = error.report();
            assert_eq!((report.code, report.kind, report.reason), (code, kind, reason), "{error}");
            assert_eq!(error.code(), code);
        }
        let report = SessionError::from(ResolveError::ParamOutOfRange { service: "s".into(), param: "n".into(), value: 0, min: 1, max: 9 }).report();
        assert_eq!(report.fields["param"], "n");
        assert_eq!((report.fields["value"].as_u64(), report.fields["min"].as_u64(), report.fields["max"].as_u64()), (Some(0), Some(1), Some(9)));
        let report = SessionError::Remote { code: 999, message: "new".into(), retry_after_ms: None }.report();
        assert_eq!((report.wire_code, report.message.as_str()), (999, "new"), "the peer's code and words, as sent");
        let json: Value = serde_json::from_str(&SessionError::AndGateLimit { limit: 10, requested: None }.report().to_json()).unwrap();
        assert_eq!((json["kind"].as_str(), json["code"].as_str(), json["wireCode"].as_u64()), (Some("protocol"), Some("limit"), Some(4)));
        assert_eq!(json["fields"]["limit"], 10);
        assert!(json["fields"].get("requested").is_none());
    }
}
