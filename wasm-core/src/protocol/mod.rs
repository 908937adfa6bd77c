//! The session protocol, sans-IO (docs/architecture.md): pure state machines, bytes in and bytes
//! out, no sockets and no clocks of their own — like rustls or quinn-proto. The server wraps the
//! [`GarblerSession`] in tokio + WebSockets, the browser the [`EvaluatorSession`] in a Web
//! Worker, the tests in memory.
//!
//! 1. Hellos, crossing: `ServerHello` (version, largest window, base-OT points, service
//!    catalog) and `ClientHello` (version, wished window, base-OT point), each sent as soon as
//!    the connection is open. The base OTs need no further message ([`crate::ot::base`]).
//! 2. Per computation: `Compute` (service, parameters, circuit id, input length). The garbler
//!    starts garbling at once; the evaluator meanwhile does its base OTs (the first time) and
//!    sends the OT-extension chunks, which the garbler answers with `LabelCorrections` that
//!    turn the correlated-OT outputs into the evaluator's input labels.
//! 3. `Data` frames carry the garbled stream (see [`crate::garble`], and [`topology`] for
//!    circuits the evaluator does not have); `Credit` frames acknowledge consumed bytes, and
//!    the garbler never has more than the window unacknowledged.
//! 4. `GarblerOutputs` (only if the garbler learns outputs), then `Done` with its statistics.
//!
//! Several computations may follow on one connection: they reuse the base OTs, Δ and the AND
//! counter (so hash tweaks stay unique under Δ). A fresh connection gets a fresh Δ.

pub mod catalog;
mod evaluator_session;
pub mod frame;
mod garbler_session;
pub mod service;
pub mod stats;
pub mod topology;

pub use catalog::{Catalog, ResolveError, ServiceInfo};
pub use evaluator_session::{ComputationResult, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, OutputValue, Progress};
pub use frame::{ComputeRequest, ErrorCode, Frame, FrameError};
pub use garbler_session::{CachedCircuit, GarblerConfig, GarblerEvent, GarblerSession, GateSource, Plan, Services};
pub use service::{BristolText, CircuitSource, ServiceDef, ServiceTable};
pub use stats::{Clock, NoClock, Stats};

use crate::garble::{GarbleError, OutputError};
use crate::ot::OtError;
use garblet_circuits::BuildError;
use thiserror::Error;
use topology::TopologyError;

/// Why a session ended. Every variant maps to an [`ErrorCode`] for the `Error` frame.
#[derive(Debug, Error)]
pub enum SessionError {
    #[error("malformed frame: {0}")]
    Frame(#[from] FrameError),
    #[error("protocol violation: {0}")]
    Protocol(String),
    #[error("unexpected {frame} frame while {state}")]
    Unexpected { frame: &'static str, state: &'static str },
    #[error("protocol version {theirs} is not supported (this side speaks version {ours})")]
    Version { ours: u16, theirs: u16 },
    #[error("oblivious transfer failed: {0}")]
    Ot(#[from] OtError),
    #[error("garbling failed: {0}")]
    Garble(#[from] GarbleError),
    #[error("the garbler's outputs were refused: {0}")]
    Output(#[from] OutputError),
    #[error("building the circuit failed: {0}")]
    Build(#[from] BuildError),
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error("{message}")]
    Refused { code: ErrorCode, message: String },
    #[error("the other side ended the session: {message}")]
    Remote { code: u16, message: String },
    #[error("the random number generator failed: {0}")]
    Random(String),
    #[error("bad input: {0}")]
    Input(String),
}

impl SessionError {
    /// The code to report this error with.
    pub fn code(&self) -> ErrorCode {
        match self {
            SessionError::Refused { code, .. } => *code,
            SessionError::Version { .. } => ErrorCode::Version,
            SessionError::Resolve(ResolveError::UnknownService(_)) => ErrorCode::UnknownService,
            SessionError::Resolve(_) | SessionError::Input(_) => ErrorCode::BadRequest,
            SessionError::Random(_) | SessionError::Build(_) => ErrorCode::Internal,
            SessionError::Ot(OtError::CheckFailed { .. }) => ErrorCode::OtCheckFailed,
            SessionError::Output(OutputError::Forged { .. }) => ErrorCode::OutputForged,
            SessionError::Remote { code, .. } => ErrorCode::from_u16(*code).unwrap_or(ErrorCode::Protocol),
            _ => ErrorCode::Protocol,
        }
    }
}
