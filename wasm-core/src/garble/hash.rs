//! The garbling hash: a tweakable circular-correlation-robust hash whose security holds across
//! instances — every session, circuit copy and connection of every server at once.
//!
//! H_S(x, j) = π_{S ⊕ ⌊j / 64⌋}(σ(x) ⊕ j) ⊕ σ(x), with π_k AES-128 under key k, σ a linear
//! orthomorphism (the scheme's: half-gates' σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL, Guo–Katz–Wang–Yu 2019;
//! three-halves' per-half one, `three_halves.rs`) and S a 128-bit *instance seed* drawn for each
//! instance: by the garbler from the OS for a session, and from each circuit's seed in
//! cut-and-choose. The key changes every 64 tweaks.
//!
//! # Why keys that change
//!
//! With one fixed public key for every instance (Guo–Katz–Wang–Yu 2019's fixed-key hash), an
//! evaluator that collects C hash targets H(A ⊕ Δ, j) over many sessions and evaluates π offline
//! at p points finds some session's Δ with probability about C·p / 2^127 (Guo–Katz–Wang–Weng–Yu
//! 2020, ePrint 2019/1168): 2^-7 for C = 2^40, p = 2^80 — and one Δ opens that session's server
//! input. Their answer, MITCCRH (emp-tool's `mitccrh.h`), keys AES by S ⊕ a gate counter with S
//! random per instance, so each offline AES evaluation, which is under one key, can only hit the
//! targets under that key. We re-key every 64 tweaks: a tweak serves at most two calls under an
//! instance (the garbler hashes X and X ⊕ Δ under it), so a key serves at most
//! [`MAX_CALLS_PER_KEY`] = 128 calls, and an attacker with p offline evaluations succeeds with
//! probability at most about p · 128 / 2^127 however many instances and gates it collects — 2^-40
//! for p = 2^80, with Δ's 127 random bits (its lsb is 1 for point-and-permute). Keys of two
//! instances collide only if their seeds differ by a difference of key indices: over all the
//! keys K ever used, probability at most K² / 2^129, and a collision only doubles the calls under
//! one key. docs/architecture.md states the bound with its parameters.
//!
//! What it costs: one key schedule per 64 tweaks, expanded a pass at a time (sixteen keys on
//! VAES-512, eight on VAES or with AES-NI, one bitsliced pass of eight in WebAssembly) — a few
//! percent of the hashing it serves. A group's runs under one key come from an iterator that
//! computes them as the AES engine takes them, so that finding them costs next to nothing.

use crate::aes::{encrypt_runs, keys_per_pass, FixedKeyAes, KeySchedules};
use crate::block::Block;

/// log2 of the tweaks that share a key.
const TWEAK_BITS_PER_KEY: u32 = 6;

/// Hash calls one key serves at most in an instance: 64 tweaks, each hashed at most twice (X
/// and X ⊕ Δ on the garbler's side).
pub const MAX_CALLS_PER_KEY: usize = 2 << TWEAK_BITS_PER_KEY;

/// The instance seed of a part of an instance that hashes under its own keys (a
/// cut-and-choose computation, one of its circuits, the chosen-message OT): BLAKE3 in
/// key-derivation mode over the parent seed, the purpose and an index. Pseudorandom and
/// independent for distinct (purpose, index), so the parts' keys collide with each other's
/// and the parent's no more often than independent seeds' would.
pub fn derive_seed(seed: Block, purpose: &str, index: u64) -> Block {
    let mut h = blake3::Hasher::new_derive_key("garblet garbling hash instance seed v1");
    h.update(&seed.to_bytes());
    h.update(&(purpose.len() as u64).to_le_bytes());
    h.update(purpose.as_bytes());
    h.update(&index.to_le_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    Block::from_bytes(out)
}

/// The key index of tweak `j`: the key is S ⊕ this.
#[inline(always)]
fn key_index(tweak: u128) -> u128 {
    tweak >> TWEAK_BITS_PER_KEY
}

/// Where the tweaks of a run of hash inputs come from: each tweak serves `per_tweak`
/// consecutive inputs (one where the evaluator hashes the label it holds, two where the garbler
/// hashes a label and the label ⊕ Δ), so input `i` of a run from `first` has tweak
/// `first + ⌊i / per_tweak⌋`; `blocks` inputs are one AND gate's hashes.
#[derive(Clone, Copy, Debug)]
pub struct TweakLayout {
    pub blocks: usize,
    pub per_tweak: usize,
}

impl TweakLayout {
    /// Tweaks first, first + 1, … one input each.
    pub const CONSECUTIVE: TweakLayout = TweakLayout { blocks: 1, per_tweak: 1 };

    /// The tweaks one AND gate's hashes take.
    pub const fn tweaks(&self) -> u128 {
        (self.blocks / self.per_tweak) as u128
    }

    /// The tweak of an AND gate's input `q` relative to the gate's first.
    pub const fn offset(&self, q: usize) -> u128 {
        (q / self.per_tweak) as u128
    }

    #[inline(always)]
    fn tweak(&self, first: u128, i: usize) -> u128 {
        first + (i / self.per_tweak) as u128
    }
}

/// The garbling hash of one instance ([`GarblingHash::new`]), or — for benchmarks that compare
/// the two, never in a protocol — the fixed-key hash it replaces ([`GarblingHash::fixed_key`]).
#[derive(Clone)]
pub struct GarblingHash {
    keying: Keying,
}

#[derive(Clone)]
enum Keying {
    /// Keys S ⊕ ⌊j / 64⌋; the schedules of keys `first..first + schedules.len()` are held.
    MultiInstance { seed: Block, first: u128, schedules: KeySchedules, counts: CallCounts },
    /// One public fixed key for every tweak (Guo–Katz–Wang–Yu 2019): secure for one instance,
    /// C·p / 2^127 across instances. Only for measuring what the instance keys cost (boxed:
    /// its round keys are the larger part).
    Fixed(Box<FixedKeyAes>),
}

impl GarblingHash {
    /// The hash of the instance with seed `seed` (S).
    pub fn new(seed: Block) -> Self {
        GarblingHash { keying: Keying::MultiInstance { seed, first: 0, schedules: KeySchedules::new(), counts: CallCounts::default() } }
    }

    /// The fixed-key hash H(x, j) = π(σ(x) ⊕ j) ⊕ σ(x) with π under [`crate::aes::FIXED_KEY`]:
    /// what the benchmarks compare the instance keys against. No session uses it.
    pub fn fixed_key() -> Self {
        GarblingHash { keying: Keying::Fixed(Box::new(FixedKeyAes::pi())) }
    }

    /// The instance seed S; `None` for the fixed-key hash.
    pub fn seed(&self) -> Option<Block> {
        match &self.keying {
            Keying::MultiInstance { seed, .. } => Some(*seed),
            Keying::Fixed(_) => None,
        }
    }

    /// Which AES engine runs the permutations.
    pub fn engine_name(&self) -> &'static str {
        match &self.keying {
            Keying::MultiInstance { .. } => crate::aes::multi_key_engine_name(),
            Keying::Fixed(pi) => pi.engine_name(),
        }
    }

    /// One hash, for tests and references: σ applied to `x` here is half-gates'.
    pub fn hash(&mut self, x: Block, tweak: u128) -> Block {
        let mut one = [x];
        self.hash_in_place(&mut one, tweak);
        one[0]
    }

    /// H(x_i, first_tweak + i) in place for every x_i (half-gates' σ), many at a time.
    pub fn hash_in_place(&mut self, xs: &mut [Block], first_tweak: u128) {
        // Chunks of up to 512 inputs span at most nine keys: the permutation runs on long
        // batches and the keys held stay few.
        const CHUNK: usize = 512;
        let mut sigma = [Block::ZERO; CHUNK];
        for (c, chunk) in xs.chunks_mut(CHUNK).enumerate() {
            let sigma = &mut sigma[..chunk.len()];
            let first = first_tweak + (c * CHUNK) as u128;
            for (k, (x, s)) in chunk.iter_mut().zip(sigma.iter_mut()).enumerate() {
                *s = x.sigma();
                *x = *s ^ Block(first + k as u128);
            }
            self.permute(chunk, first, TweakLayout::CONSECUTIVE);
            for (x, &s) in chunk.iter_mut().zip(sigma.iter()) {
                *x ^= s;
            }
        }
    }

    /// π applied in place to hash inputs `σ(x) ⊕ j`, input `i` under the key of its tweak in
    /// `layout` from `first` (the caller XORs σ(x) into each result to finish H(x, j), often
    /// folded into what it computes next). Inlined into each caller, so that its layout is a
    /// constant and finding the runs divides by none.
    #[inline(always)]
    pub fn permute(&mut self, y: &mut [Block], first: u128, layout: TweakLayout) {
        if let Keying::Fixed(pi) = &self.keying {
            pi.encrypt_blocks(y);
            return;
        }
        // Pieces of at most 512 inputs span at most nine keys: the keys held stay few.
        const PIECE: usize = 512;
        for (p, piece) in y.chunks_mut(PIECE).enumerate() {
            let start = p * PIECE;
            self.hold_keys(first, start, piece.len(), layout);
            let Keying::MultiInstance { first: held, schedules, .. } = &self.keying else {
                unreachable!("checked above");
            };
            let len = piece.len();
            encrypt_runs(piece, runs(first, start, len, layout).map(|(key, n)| (schedules.get((key - held) as usize), n)));
        }
    }

    /// π on the hash inputs of several instances side by side, for lock-step garbling: `y` is
    /// each part's `len` inputs in turn, part `p` hashed by `parts[p].0` with tweaks from
    /// `parts[p].1` in `layout`. All parts are multi-instance hashes, or all fixed-key ones.
    pub fn permute_side_by_side<'a>(y: &mut [Block], len: usize, layout: TweakLayout, parts: impl Iterator<Item = (&'a mut GarblingHash, u128)>) {
        let mut parts: Vec<(&'a mut GarblingHash, u128)> = parts.collect();
        let Some((head, _)) = parts.first() else {
            return;
        };
        if let Keying::Fixed(pi) = &head.keying {
            pi.encrypt_blocks(y);
            return;
        }
        for (hash, first) in parts.iter_mut() {
            hash.hold_keys(*first, 0, len, layout);
        }
        let all = parts.iter().flat_map(|(hash, first)| {
            let Keying::MultiInstance { first: held, schedules, .. } = &hash.keying else {
                unreachable!("the parts are all multi-instance hashes");
            };
            runs(*first, 0, len, layout).map(move |(key, n)| (schedules.get((key - held) as usize), n))
        });
        encrypt_runs(y, all);
    }

    /// Makes sure the schedules of every key that inputs `start..start + len` need are held,
    /// expanding those missing (and, in test builds, counts the calls they will serve).
    #[inline(always)]
    fn hold_keys(&mut self, first_tweak: u128, start: usize, len: usize, layout: TweakLayout) {
        let Keying::MultiInstance { first, schedules, counts, .. } = &mut self.keying else {
            return;
        };
        if len == 0 {
            return;
        }
        #[cfg(any(test, feature = "insecure-switches"))]
        for (key, n) in runs(first_tweak, start, len, layout) {
            counts.add(key, n);
        }
        #[cfg(not(any(test, feature = "insecure-switches")))]
        let _ = counts;
        let (lo, hi) = (key_index(layout.tweak(first_tweak, start)), key_index(layout.tweak(first_tweak, start + len - 1)));
        let held = *first..*first + schedules.len() as u128;
        if held.contains(&lo) && held.contains(&hi) {
            return;
        }
        self.expand_from(lo, hi);
    }

    /// Holds the schedules of keys `lo..=hi`: those already held are kept (a group of three
    /// tweaks an AND straddles the held keys' end every other time), and the rest expanded in
    /// whole passes of the engine's ([`keys_per_pass`]: fewer cost about as much). Out of line:
    /// it runs once per 512 tweaks or so.
    #[inline(never)]
    fn expand_from(&mut self, lo: u128, hi: u128) {
        let Keying::MultiInstance { seed, first, schedules, counts } = &mut self.keying else {
            return;
        };
        let held_end = *first + schedules.len() as u128;
        let from = if (*first..held_end).contains(&lo) {
            schedules.drop_front((lo - *first) as usize);
            held_end
        } else {
            schedules.clear();
            lo
        };
        let pass = keys_per_pass();
        let end = from + (hi + 1 - from).next_multiple_of(pass as u128);
        // A pass's keys (sixteen at most) from the stack: nothing allocated once `schedules` has
        // grown.
        let mut keys = [Block::ZERO; 16];
        for at in (from..end).step_by(pass) {
            let keys = &mut keys[..pass];
            for (i, key) in keys.iter_mut().enumerate() {
                *key = Block(seed.0 ^ (at + i as u128));
            }
            schedules.expand(keys);
        }
        *first = lo;
        #[cfg(any(test, feature = "insecure-switches"))]
        counts.retire_below(lo);
        #[cfg(not(any(test, feature = "insecure-switches")))]
        let _ = counts;
    }

    /// The most hash calls any one key has served in this instance, with the key's index:
    /// what the multi-instance bound counts (test builds only).
    #[cfg(any(test, feature = "insecure-switches"))]
    pub fn most_calls_per_key(&self) -> Option<(u128, usize)> {
        match &self.keying {
            Keying::MultiInstance { counts, .. } => counts.most(),
            Keying::Fixed(_) => None,
        }
    }
}

/// The runs of inputs `start..start + len` under one key, in order: (key index, length). A run
/// ends at the first input of the next key's tweaks: with `per_tweak` inputs a tweak, the input
/// (next key's first tweak − `first_tweak`) · `per_tweak` (this runs for every group of hash
/// inputs, so it divides by nothing but the layout's constant).
#[inline(always)]
fn runs(first_tweak: u128, start: usize, len: usize, layout: TweakLayout) -> impl Iterator<Item = (u128, usize)> {
    let end = start + len;
    let mut at = start;
    core::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let key = key_index(layout.tweak(first_tweak, at));
        // Past the input at `at`, whose tweak is at least `first_tweak`: no underflow, and the
        // result is past `at`. One beyond a usize lies past `end`.
        let distance = ((key + 1) << TWEAK_BITS_PER_KEY) - first_tweak;
        let next = usize::try_from(distance).ok().and_then(|d| d.checked_mul(layout.per_tweak)).map_or(end, |i| i.min(end));
        let run = (key, next - at);
        at = next;
        Some(run)
    })
}

/// Calls served per key, counted in test builds only (a run at a time), for the test that no
/// key serves more than [`MAX_CALLS_PER_KEY`]; empty in other builds.
///
/// A protocol's tweaks only go up, so once the held keys move past a key it serves no more
/// calls: its count is folded into the most so far and dropped, which keeps a streamed
/// computation's test builds in bounded memory too. A call under a dropped key (the hash allows
/// any tweak; the protocols never go back) would be counted afresh, so asking for the most then
/// panics: the answer is exact or none.
#[derive(Clone, Default)]
struct CallCounts {
    #[cfg(any(test, feature = "insecure-switches"))]
    per_key: std::collections::HashMap<u128, usize>,
    /// Keys below this one are dropped.
    #[cfg(any(test, feature = "insecure-switches"))]
    floor: u128,
    #[cfg(any(test, feature = "insecure-switches"))]
    most: Option<(u128, usize)>,
    /// A dropped key was hashed under again.
    #[cfg(any(test, feature = "insecure-switches"))]
    went_back: bool,
}

#[cfg(any(test, feature = "insecure-switches"))]
impl CallCounts {
    fn add(&mut self, key: u128, calls: usize) {
        self.went_back |= key < self.floor;
        let n = self.per_key.entry(key).or_default();
        *n += calls;
        if self.most.is_none_or(|(_, most)| *n > most) {
            self.most = Some((key, *n));
        }
    }

    /// The held keys moved on to `lo`: the keys below it are done.
    fn retire_below(&mut self, lo: u128) {
        if lo > self.floor {
            self.floor = lo;
            self.per_key.retain(|&k, _| k >= lo);
        }
    }

    fn most(&self) -> Option<(u128, usize)> {
        assert!(!self.went_back, "the instance went back to a key it had moved past: its calls are not counted exactly");
        self.most
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::Aes128;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// H_S(x, j) from its definition, with the `aes` crate under the key S ⊕ ⌊j/64⌋.
    fn reference(seed: Block, x: Block, tweak: u128) -> Block {
        let s = x.sigma();
        let mut y = [s ^ Block(tweak)];
        Aes128::new(Block(seed.0 ^ (tweak >> 6)).to_bytes()).encrypt_blocks(&mut y);
        y[0] ^ s
    }

    fn random_blocks() -> impl FnMut() -> Block {
        let mut seed = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835u128;
        move || {
            seed = seed.wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645).wrapping_add(1);
            Block(seed ^ (seed >> 61))
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn hashing_in_place_is_the_definition_across_key_changes() {
        let mut next = random_blocks();
        let seed = next();
        let mut hash = GarblingHash::new(seed);
        for (len, first) in [(0, 0), (1, 63), (7, 60), (64, 0), (65, 64), (200, 1000), (1300, 5), (90, (7 << 64) | 30)] {
            let xs: Vec<Block> = (0..len).map(|_| next()).collect();
            let mut batch = xs.clone();
            hash.hash_in_place(&mut batch, first);
            let expect: Vec<Block> = xs.iter().enumerate().map(|(i, &x)| reference(seed, x, first + i as u128)).collect();
            assert_eq!(batch, expect, "length {len} from tweak {first}");
        }
    }

    /// The garbling layouts (two and four inputs an AND, three and six), hashed in groups that
    /// straddle key changes, against the definition.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn layouts_take_each_input_s_key_from_its_tweak() {
        let mut next = random_blocks();
        let seed = next();
        let layouts = [
            TweakLayout { blocks: 2, per_tweak: 1 },
            TweakLayout { blocks: 4, per_tweak: 2 },
            TweakLayout { blocks: 3, per_tweak: 1 },
            TweakLayout { blocks: 6, per_tweak: 2 },
        ];
        for layout in layouts {
            let mut hash = GarblingHash::new(seed);
            let mut first_and = 0u128;
            for ands in [1, 2, 64, 13, 40, 64, 1, 64] {
                let y: Vec<Block> = (0..ands * layout.blocks).map(|_| next()).collect();
                let first = first_and * layout.tweaks();
                let mut ours = y.clone();
                hash.permute(&mut ours, first, layout);
                for (i, (&got, &y)) in ours.iter().zip(&y).enumerate() {
                    let tweak = layout.tweak(first, i);
                    let mut expect = [y];
                    Aes128::new(Block(seed.0 ^ (tweak >> 6)).to_bytes()).encrypt_blocks(&mut expect);
                    assert_eq!(got, expect[0], "{layout:?}, AND {first_and}, input {i}");
                }
                first_and += ands as u128;
            }
        }
    }

    /// The runs found in closed form against a walk that compares every input's key, for each
    /// garbling layout, from tweaks that start mid-key, at a key's start and far out.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn runs_are_the_maximal_stretches_under_one_key() {
        let layouts = [
            TweakLayout::CONSECUTIVE,
            TweakLayout { blocks: 2, per_tweak: 1 },
            TweakLayout { blocks: 4, per_tweak: 2 },
            TweakLayout { blocks: 3, per_tweak: 1 },
            TweakLayout { blocks: 6, per_tweak: 2 },
        ];
        for layout in layouts {
            for first in [0u128, 1, 2, 62, 63, 64, 125, 6 * 64 + 3, (1 << 64) - 1, u128::MAX >> 8] {
                for (start, len) in [(0, 1), (0, 5), (3, 200), (0, 512), (37, 475), (512, 512), (1000, 24)] {
                    let ours: Vec<(u128, usize)> = runs(first, start, len, layout).collect();
                    let mut walk: Vec<(u128, usize)> = Vec::new();
                    for i in start..start + len {
                        let key = key_index(layout.tweak(first, i));
                        match walk.last_mut() {
                            Some((k, n)) if *k == key => *n += 1,
                            _ => walk.push((key, 1)),
                        }
                    }
                    assert_eq!(ours, walk, "{layout:?} from tweak {first}, inputs {start}..{}", start + len);
                }
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn side_by_side_is_each_instance_alone() {
        let mut next = random_blocks();
        let layout = TweakLayout { blocks: 2, per_tweak: 1 };
        let mut hashes: Vec<GarblingHash> = (0..5).map(|_| GarblingHash::new(next())).collect();
        let mut alone = hashes.clone();
        for (ands, first_and) in [(1u128, 0u128), (3, 31), (1, 32), (20, 60)] {
            let len = (ands as usize) * 2;
            let y: Vec<Block> = (0..len * hashes.len()).map(|_| next()).collect();
            let mut together = y.clone();
            GarblingHash::permute_side_by_side(&mut together, len, layout, hashes.iter_mut().map(|h| (h, 2 * first_and)));
            for (p, hash) in alone.iter_mut().enumerate() {
                let mut own = y[p * len..(p + 1) * len].to_vec();
                hash.permute(&mut own, 2 * first_and, layout);
                assert_eq!(together[p * len..(p + 1) * len], own[..], "part {p}");
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn fixed_key_hash_is_the_fixed_key_definition() {
        let mut next = random_blocks();
        let mut hash = GarblingHash::fixed_key();
        let xs: Vec<Block> = (0..70).map(|_| next()).collect();
        let mut ours = xs.clone();
        hash.hash_in_place(&mut ours, 500);
        for (i, (&got, &x)) in ours.iter().zip(&xs).enumerate() {
            let s = x.sigma();
            let mut y = [s ^ Block(500 + i as u128)];
            Aes128::new(crate::aes::FIXED_KEY).encrypt_blocks(&mut y);
            assert_eq!(got, y[0] ^ s);
        }
    }
}
