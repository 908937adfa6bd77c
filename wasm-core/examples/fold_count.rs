//! Profiling aid for the OT check's row fold (`Challenge::fold_rows`, the engine WebAssembly
//! runs): folds one chunk of 130 blocks of rows N times (default 100). Run it under
//! `valgrind --tool=callgrind` at two values of N; the difference divided by the extra folds
//! and by 130 is the instructions per block of 128 rows, which do not depend on machine load.
use garblet_core::ot::check::{Challenge, ChunkId};
use garblet_core::Block;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    // A chunk of 2^14 OTs and the padding's two blocks.
    let blocks = 130;
    let rows: Vec<Block> = (0..128 * blocks as u128).map(|i| Block(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))).collect();
    let transcript = [3u8; 32];
    let challenge = Challenge::new(ChunkId { transcript: &transcript, direction: 0, k: 4, index: 0, count: 1 << 14 }, blocks, b"message");
    let mut sum = Block::ZERO;
    for _ in 0..n {
        sum ^= challenge.fold_rows(&rows)[5];
    }
    println!("{n} folds of {blocks} blocks (column 5's sums XORed: {:032x})", sum.0);
}
