//! The `garblet` binary's library: the server (`serve`) and its services (`service_table`), the
//! native client (`client`), the plaintext circuit tools (`circuit_cmd`) and the benchmarks
//! (`bench`). The integration tests drive the real binary and use [`client`] as their client.

pub mod bench;
pub mod circuit_cmd;
pub mod client;
pub mod clock;
pub mod link;
pub mod serve;
pub mod service_table;
pub mod threads;
pub mod ws;
