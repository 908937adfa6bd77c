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
//! 4. `Done` with the garbler's statistics, right behind the stream and the last correction;
//!    then `GarblerOutputs` from the evaluator, if the garbler learns outputs. Nothing waits on
//!    a reply within a computation, so the evaluator has its result one round trip after its
//!    request (`tests/round_trips.rs` counts them).
//!
//! Several computations may follow on one connection: they reuse the base OTs, Δ and the AND
//! counter (so hash tweaks stay unique under Δ). A fresh connection gets a fresh Δ.
//!
//! Both sessions keep the contract of the [`Session`] trait: the same verbs (`handle`,
//! `poll_transmit`, `poll_event`, `abort`, `is_idle`, `is_closed`) with the same meaning, and one
//! path for failures. Errors are [`SessionError`]s: data, a wire code and a kind.

mod authenticated;
pub mod catalog;
mod cut_and_choose;
mod dispatch;
mod error;
mod evaluator_session;
pub mod frame;
mod garbler_session;
mod mode;
pub mod plan;
mod session;
mod standard;
pub mod stats;
pub mod topology;

pub use authenticated::DEFAULT_MAX_PREPARED_AND_GATES;
pub use catalog::{Catalog, ResolveError, Security, ServiceInfo};
pub use error::{ErrorKind, ErrorReport, ServiceError, ServiceFailure, SessionError};
pub use evaluator_session::{EvaluatorConfig, EvaluatorEvent, EvaluatorSession};
pub use mode::{ComputationResult, OutputValue, Parked, Progress};
pub use frame::{ComputeRequest, ErrorCode, Frame, FrameError, Phase};
pub use garbler_session::{GarblerConfig, GarblerEvent, GarblerSession, PreparedOt};
pub use plan::{GateSource, Plan, RecordedCircuit, Services};
pub use session::Session;
pub use stats::{Clock, NoClock, Stats};
