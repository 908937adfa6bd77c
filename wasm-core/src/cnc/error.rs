//! What can go wrong in the cut-and-choose parts: a caller's lengths and counts.

/// A length or a count that does not fit. These come from the caller (a peer's message or the
/// session's parameters), never from chance: each is a bug or a deviation, reported, not a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CncError {
    #[error("{what}: expected {expected}, got {actual}")]
    WrongLength { what: &'static str, expected: usize, actual: usize },
    #[error("{what} {index} asked for; there are {count}")]
    OutOfRange { what: &'static str, index: usize, count: usize },
    #[error("{what} {index} given twice")]
    Repeated { what: &'static str, index: usize },
    #[error("{checks} check circuits of {circuits}: at least one circuit must be evaluated")]
    InvalidCheckCount { circuits: usize, checks: usize },
    #[error("cut-and-choose needs at least one circuit")]
    NoCircuits,
}
