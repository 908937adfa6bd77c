//! BLAKE3 digests of long runs of blocks — the MACs of a batch's openings, the leaky ANDs'
//! check values — spread over a party's threads.
//!
//! BLAKE3 is a tree hash (O'Connor–Aumasson–Neves–Wilcox-O'Hearn 2020, §2.1): its input is cut
//! into chunks of 1 KiB, and a run of 2^k chunks at an offset that is a multiple of 2^k chunks
//! is a subtree whose chaining value depends only on those bytes, their offset and the key. A
//! digest here cuts its input into pieces of [`PIECE`] bytes, hashes the pieces as subtrees at
//! their offsets on the threads, and merges their chaining values along the tree BLAKE3 itself
//! builds (the left subtree of n > 1 KiB bytes holds the largest power of two of chunks below
//! n, [`blake3::hazmat::left_subtree_len`]): the digest is the one a single `Hasher` gives,
//! byte for byte, whatever the number of threads. So the peers need not agree on their
//! threads, and nothing on the wire changes. The tests check both against `blake3::Hasher`.
//!
//! The blocks are made as they are hashed, a piece at a time, from a function of their index,
//! straight as the bytes BLAKE3 reads: the run is never held whole, nor copied.

use crate::spread::Threads;
use blake3::hazmat::{hash_derive_key_context, left_subtree_len, merge_subtrees_non_root, merge_subtrees_root, ChainingValue, ContextKey, HasherExt, Mode};
use blake3::Hasher;

/// Bytes of a piece: 256 chunks, a power of two as a subtree must be. About 0.1 ms of hashing
/// and as much making the blocks.
const PIECE: usize = 256 << 10;

/// The fewest pieces a part takes: about half a millisecond of work, well above what handing a
/// part to another thread costs, and small enough that the common digests (2, 3 and 4 MiB: 8,
/// 12 and 16 pieces) cut into parts that two threads share evenly, where four pieces a part
/// cut 12 pieces into three parts, one thread taking two of them.
const MIN_PIECES: usize = 2;

/// Blocks made at a time for a sequential digest: 64 KiB, long enough for BLAKE3 to hash the
/// chunks of each `update` side by side.
const RUN: usize = 4096;

/// BLAKE3 in key-derivation mode under `context` over `header` and then the 16 bytes of each of
/// `count` blocks, which `fill(first, out)` makes: `out[i]` is the bytes of block `first + i`
/// ([`crate::block::Block::to_bytes`]). Computed in pieces over `threads` when the run is long
/// enough to be worth it.
pub(crate) fn blocks(threads: &Threads, context: &str, header: &[&[u8]], count: usize, fill: impl Fn(usize, &mut [[u8; 16]]) + Sync) -> [u8; 32] {
    let header = header.concat();
    debug_assert!(header.len() < PIECE, "the header lies in the first piece");
    let key = hash_derive_key_context(context);
    let len = header.len() + 16 * count;
    let pieces = len.div_ceil(PIECE);
    if threads.ranges(pieces, MIN_PIECES).len() < 2 {
        let mut hasher = Hasher::new_from_context_key(&key);
        hasher.update(&header);
        feed(&mut hasher, &fill, 0, 0, 16 * count);
        return *hasher.finalize().as_bytes();
    }
    let (header, key_ref, fill) = (&header[..], &key, &fill);
    let pieces: Vec<ChainingValue> = threads
        .map(pieces, MIN_PIECES, |range| range.map(|p| piece(key_ref, header, count, fill, p)).collect::<Vec<_>>())
        .into_iter()
        .flatten()
        .collect();
    let mode = Mode::DeriveKeyMaterial(&key);
    let (left, right) = children(&pieces, len, mode);
    *merge_subtrees_root(&left, &right, mode).as_bytes()
}

/// The chaining value of piece `p` (bytes p·PIECE onwards, PIECE of them or to the end) of
/// `header` ‖ the blocks: the header lies in the first piece, as it is shorter than a piece.
fn piece(key: &ContextKey, header: &[u8], count: usize, fill: &(impl Fn(usize, &mut [[u8; 16]]) + Sync), p: usize) -> ChainingValue {
    let (start, end) = (p * PIECE, ((p + 1) * PIECE).min(header.len() + 16 * count));
    let mut hasher = Hasher::new_from_context_key(key);
    hasher.set_input_offset(start as u64);
    if p == 0 {
        hasher.update(header);
    }
    // The blocks' bytes from `start` (or the header's end) to `end`.
    let from = start.max(header.len()) - header.len();
    feed(&mut hasher, fill, from / 16, from % 16, end - header.len() - from);
    hasher.finalize_non_root()
}

/// Feeds `hasher` `len` bytes of the blocks `fill` makes, starting `skip` bytes into block
/// `first`, [`RUN`] blocks at a time (a working set that stays in the core's caches).
fn feed(hasher: &mut Hasher, fill: &(impl Fn(usize, &mut [[u8; 16]]) + Sync), mut first: usize, mut skip: usize, mut len: usize) {
    let mut run = vec![[0u8; 16]; RUN.min((skip + len).div_ceil(16))];
    while len > 0 {
        let run = &mut run[..RUN.min((skip + len).div_ceil(16))];
        fill(first, run);
        let take = (16 * run.len() - skip).min(len);
        hasher.update(&run.as_flattened()[skip..skip + take]);
        (first, skip, len) = (first + run.len(), 0, len - take);
    }
}

/// The chaining value of the subtree over `pieces` (`len` bytes, every piece but the last
/// whole).
fn subtree(pieces: &[ChainingValue], len: usize, mode: Mode<'_>) -> ChainingValue {
    if pieces.len() == 1 {
        return pieces[0];
    }
    let (left, right) = children(pieces, len, mode);
    merge_subtrees_non_root(&left, &right, mode)
}

/// The chaining values of the two children of the node over `pieces` (more than one, `len`
/// bytes), split as BLAKE3 splits it: the left child's length is a power of two of chunks and at
/// least a piece, so the split falls between pieces.
fn children(pieces: &[ChainingValue], len: usize, mode: Mode<'_>) -> (ChainingValue, ChainingValue) {
    let split = left_subtree_len(len as u64) as usize;
    (subtree(&pieces[..split / PIECE], split, mode), subtree(&pieces[split / PIECE..], len - split, mode))
}

/// Feeds 64-bit values to `hasher` as their little-endian bytes in order, gathered into large
/// pieces: the same digest as one `update` per value, at BLAKE3's speed on long inputs.
pub(crate) fn update_words(hasher: &mut Hasher, values: impl Iterator<Item = u64>) {
    // 64 KiB at a time: BLAKE3 hashes the chunks of a long input side by side, all but the last
    // chunk of each `update`, which it keeps in case more follows and compresses on its own.
    const GATHER: usize = 64 << 10;
    let mut buffer = vec![0u8; GATHER];
    let mut n = 0;
    for value in values {
        buffer[n..n + 8].copy_from_slice(&value.to_le_bytes());
        n += 8;
        if n == GATHER {
            hasher.update(&buffer);
            n = 0;
        }
    }
    hasher.update(&buffer[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::Block;

    fn block(i: usize) -> Block {
        Block((i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ 0x0123_4567)
    }

    /// What one `blake3::Hasher` gives over the same bytes.
    fn reference(context: &str, header: &[u8], count: usize) -> [u8; 32] {
        let mut bytes = header.to_vec();
        for i in 0..count {
            bytes.extend_from_slice(&block(i).to_bytes());
        }
        blake3::derive_key(context, &bytes)
    }

    /// Spread or not, cut into any number of parts, at every kind of length — one piece or
    /// several, a header that shifts the blocks across the pieces' edges or none, the last
    /// piece whole or short, a tree whose sizes are powers of two or not — the digest is
    /// BLAKE3's.
    #[test]
    fn the_digest_is_blake3s_whatever_the_threads() {
        let per_piece = PIECE / 16;
        let counts = [0, 1, 4095, 4096, 4097, per_piece - 1, per_piece, 8 * per_piece - 2, 8 * per_piece, 8 * per_piece + 1, 9 * per_piece + 7, 13 * per_piece + 3, 16 * per_piece];
        for header in [&b""[..], &[7u8; 33][..], &[9u8; 41][..]] {
            for &count in &counts {
                let want = reference("garblet test digest", header, count);
                for threads in [Threads::ONE, Threads::in_turn(2), Threads::in_turn(3), Threads::in_turn(8)] {
                    let got = blocks(&threads, "garblet test digest", &[header], count, |first, out| {
                        for (k, b) in out.iter_mut().enumerate() {
                            *b = block(first + k).to_bytes();
                        }
                    });
                    assert_eq!(got, want, "{count} blocks after {} header bytes, {} threads", header.len(), threads.count());
                }
            }
        }
    }

    /// A header in parts is the same as whole, and a different context is another digest.
    #[test]
    fn the_header_and_context_enter_the_digest() {
        let fill = |first: usize, out: &mut [[u8; 16]]| out.iter_mut().enumerate().for_each(|(k, b)| *b = block(first + k).to_bytes());
        let whole = blocks(&Threads::in_turn(4), "a", &[b"session role"], 20 * PIECE / 16, fill);
        assert_eq!(blocks(&Threads::in_turn(4), "a", &[b"session", b" role"], 20 * PIECE / 16, fill), whole);
        assert_ne!(blocks(&Threads::in_turn(4), "b", &[b"session role"], 20 * PIECE / 16, fill), whole);
    }
}
