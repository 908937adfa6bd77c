//! The correlated-OT extension alone, both roles in one thread, for a profiler:
//! `cargo build --release -p garblet-core --example ot_profile`, then
//! `perf record target/release/examples/ot_profile [K] [checked|bare] [CHUNKS]` (defaults 4,
//! checked, 64 chunks of 2^14 OTs). Rates are `garblet bench ot`'s business.

use garblet_core::ot::bench::ExtensionBench;
use garblet_core::ot::MAX_CHUNK;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let k: usize = args.get(1).map_or(4, |s| s.parse().expect("K: 1, 2, 4 or 8"));
    let checked = args.get(2).is_none_or(|s| s == "checked");
    let chunks: usize = args.get(3).map_or(64, |s| s.parse().expect("CHUNKS: a number"));
    let mut bench = ExtensionBench::new(k, checked).expect("the extension's set-up");
    for _ in 0..chunks {
        bench.choose(MAX_CHUNK);
        bench.receive().expect("the receiver");
        bench.send().expect("the sender");
    }
}
