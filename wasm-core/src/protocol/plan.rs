//! What a server agrees to run, as the sessions need it: the [`Services`] it offers and, per
//! computation, a [`Plan`] — the circuit's shape, where its gates come from, the garbler's input.
//! Both kinds of computation take it: the standard mode's and cut-and-choose's, which runs the
//! gates twice.

use super::frame::ComputeRequest;
use super::SessionError;
use garblet_circuits::{Batch, Program, Shape};
use std::sync::Arc;

/// A circuit built once and kept by whoever serves it, replayed by every computation that uses
/// it: the session neither builds it nor encodes its topology again. (The server keeps its
/// small Bristol circuits this way, parsed once instead of once per session.)
pub trait RecordedCircuit {
    /// Batch `index` and its topology record (written by one
    /// [`TopologyWriter`](super::topology::TopologyWriter) for the whole circuit, in order: a
    /// record refers back to earlier ones); `None` past the last batch (the end record is
    /// implied).
    fn batch(&self, index: usize) -> Option<(&Batch, &[u8])>;
}

/// Where a computation's gates come from.
pub enum GateSource {
    /// One run of a program: enough for a standard computation, which garbles once.
    Program(Box<dyn Program>),
    Recorded(Arc<dyn RecordedCircuit>),
    /// A program built afresh for each pass: a cut-and-choose computation garbles its circuits
    /// twice, once to commit to them and once to stream them.
    Factory(Box<dyn Fn() -> Result<Box<dyn Program>, SessionError>>),
}

/// A computation the server agreed to run.
pub struct Plan {
    pub gates: GateSource,
    /// The circuit's inputs and outputs.
    pub shape: Shape,
    /// The garbler's input bits, in circuit order.
    pub garbler_inputs: Vec<bool>,
    /// Whether the evaluator needs the circuit itself in the stream (it has no program).
    pub stream_topology: bool,
    /// The circuit's identity, which the client's request must name.
    pub circuit_id: [u8; 32],
    /// AND gates, if known in advance (to refuse oversized requests up front).
    pub and_gates: Option<u64>,
}

/// The server's services, as the session needs them.
pub trait Services {
    fn catalog_json(&self) -> &str;
    /// A plan for `request`, or why it is refused: [`SessionError::Resolve`] for a request that
    /// fits no service, [`SessionError::Service`] for the server's own failure.
    fn plan(&self, request: &ComputeRequest) -> Result<Plan, SessionError>;
}
