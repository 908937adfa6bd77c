//! The crate's one random source: the operating system's CSPRNG (`crypto.getRandomValues` in
//! the browser). Every secret the crate draws — Δ, labels, base-OT scalars, generator keys —
//! comes through [`fill`].
//!
//! In a fuzzing build only (`cfg(fuzzing)`, which cargo-fuzz sets for every crate it builds) the
//! source is a generator that the harness seeds before each input ([`reseed`]): an input then
//! runs the same way every time, so libFuzzer's coverage of it is stable and a crash replays.
//! Such a build is no use for anything else — its base OT is insecure too
//! (`ot/fuzzing_group.rs`) — and the programs that could serve or evaluate with it refuse to
//! compile (`server/src/main.rs`, `src/wasm.rs`).

/// Fills `bytes` with random bytes.
#[cfg(not(fuzzing))]
pub(crate) fn fill(bytes: &mut [u8]) -> Result<(), getrandom::Error> {
    getrandom::fill(bytes)
}

/// Fills `bytes` from the seeded stream (fuzzing builds only).
#[cfg(fuzzing)]
pub(crate) fn fill(bytes: &mut [u8]) -> Result<(), getrandom::Error> {
    seeded::fill(bytes);
    Ok(())
}

#[cfg(fuzzing)]
pub use seeded::reseed;

/// The fuzzing build's stand-in for the OS source: SplitMix64 (Steele, Lea and Flood 2014), one
/// stream for the process (libFuzzer runs one input at a time). Predictable by design.
#[cfg(fuzzing)]
mod seeded {
    use core::sync::atomic::{AtomicU64, Ordering};

    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

    static STATE: AtomicU64 = AtomicU64::new(0);

    /// Restarts the stream from `seed`: what follows repeats for the same seed.
    pub fn reseed(seed: u64) {
        STATE.store(seed, Ordering::Relaxed);
    }

    pub(super) fn fill(bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let x = STATE.fetch_add(GAMMA, Ordering::Relaxed).wrapping_add(GAMMA);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
    }
}
