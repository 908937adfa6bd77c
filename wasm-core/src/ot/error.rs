//! What can go wrong in OT: its own module, below the protocols that report it.

use core::fmt;

/// Everything that can go wrong in OT. Any error ends the session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OtError {
    #[error("{what}: expected {expected} bytes, got {actual}")]
    WrongLength { what: &'static str, expected: usize, actual: usize },
    #[error("{point} is not a valid Ristretto255 encoding")]
    InvalidPoint { point: BasePoint },
    #[error("{point} is the identity element")]
    IdentityPoint { point: BasePoint },
    #[error("out of order: expected {expected}, got {got}")]
    OutOfOrder { expected: &'static str, got: &'static str },
    #[error("{count} OTs in one chunk; at most {max} are allowed")]
    ChunkTooLarge { count: usize, max: usize },
    #[error("base OTs {start}..{end} asked for; there are {count}")]
    OtRange { start: usize, end: usize, count: usize },
    #[error("Δ must have its least significant bit set (point-and-permute)")]
    DeltaLsbNotSet,
    /// The receiver's OT-extension chunk failed the per-column consistency check: it did not use
    /// one choice vector in every group of columns (or its message was altered, or replayed from
    /// elsewhere).
    #[error("OT-extension chunk {chunk} failed the consistency check")]
    CheckFailed { chunk: u64 },
    /// The receiver's trees failed their consistency check at set-up: its corrections are not
    /// those of the trees it committed to.
    #[error("the OT extension's set-up failed its consistency check")]
    SetupCheckFailed,
    /// Ferret's consistency check failed: the sender's trees are not those of one GGM forest
    /// and Δ (or a message was altered, or replayed from elsewhere).
    #[error("Ferret iteration {iteration} failed its consistency check")]
    FerretCheckFailed { iteration: u64 },
    /// A Ferret parameter set without room for output (or out of range).
    #[error("Ferret parameters t = {trees}, depth {depth}, k = {k} are not usable")]
    FerretParams { trees: usize, depth: usize, k: usize },
    /// A SoftSpoken parameter that this side does not run.
    #[error("SoftSpoken k = {k} is not supported (1, 2, 4 or 8)")]
    UnsupportedK { k: usize },
    #[error("the operating system's random number generator failed: {0}")]
    Random(getrandom::Error),
}

/// Which point of the base OTs an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BasePoint {
    /// R, the base-OT sender's (evaluator's) point.
    SenderKey,
    /// P_j, the base-OT receiver's (garbler's) point of OT j.
    ReceiverKey(usize),
}

impl fmt::Display for BasePoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BasePoint::SenderKey => write!(f, "base-OT point R"),
            BasePoint::ReceiverKey(j) => write!(f, "base-OT point P_{j}"),
        }
    }
}
