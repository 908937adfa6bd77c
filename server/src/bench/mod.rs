//! `garblet bench …`: benchmarks that print numbers (never timed assertions).

pub mod report;
