//! A malicious receiver against the correlated OT extension's sender, for every SoftSpoken k:
//! an honest receiver whose messages are altered on their way. Each attack is refused by its
//! check, and shown to succeed with that check switched off (the `insecure-switches` test
//! build). The session-level attacks are in tests/attacks.rs.

use garblet_core::aes::AesCtr;
use garblet_core::ot::check::{Challenge, ChunkId};
use garblet_core::ot::extension::{chunk_blocks, message_len, setup_len, Binding, CheckedReceiver, CheckedSender, SUPPORTED_K};
use garblet_core::ot::OtError;
use garblet_core::Block;

const BINDING: Binding = Binding { transcript: [9; 32], direction: 0 };

/// Made-up base OTs: Δ, both keys of each of the 128, and the ones Δ chooses.
struct BaseOts {
    delta: Block,
    both: Vec<[Block; 2]>,
    chosen: [Block; 128],
}

impl BaseOts {
    fn new(prg: &mut AesCtr) -> Self {
        let delta = Block(prg.next_block().0 | 1);
        let both: Vec<[Block; 2]> = (0..128).map(|_| [prg.next_block(), prg.next_block()]).collect();
        let chosen = core::array::from_fn(|j| both[j][((delta.0 >> j) & 1) as usize]);
        BaseOts { delta, both, chosen }
    }

    fn receiver(&self, k: usize, binding: Binding) -> CheckedReceiver {
        CheckedReceiver::new(k, &self.both, binding).unwrap()
    }

    fn sender(&self, k: usize, binding: Binding) -> CheckedSender {
        CheckedSender::new(k, self.delta, &self.chosen, binding)
    }
}

/// A receiver and a sender of SoftSpoken⟨k⟩ over base-OT keys made up locally, and the sender's Δ.
fn pair(k: usize, prg: &mut AesCtr) -> (CheckedReceiver, CheckedSender, Block) {
    let base = BaseOts::new(prg);
    (base.receiver(k, BINDING), base.sender(k, BINDING), base.delta)
}

/// Runs one honest chunk of `count` OTs (the set-up rides with the first).
fn honest_chunk(receiver: &mut CheckedReceiver, sender: &mut CheckedSender, count: usize) {
    let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
    receiver.extend(&vec![false; count], &mut message, &mut t).unwrap();
    sender.extend(count, &message, &mut q).unwrap();
}

/// Δ's bits of group `group` of SoftSpoken⟨k⟩, in place.
fn group_bits(delta: Block, k: usize, group: usize) -> Block {
    Block(delta.0 & (((1u128 << k) - 1) << (group * k)))
}

/// Flips the choice bit of OT `row` in group `group` of a message for `count` OTs: the
/// receiver's effective choice for that OT differs in that group alone.
fn flip_choice(message: &mut [u8], k: usize, count: usize, group: usize, row: usize) {
    let setup = message.len() - message_len(k, count);
    let bit = (setup + group * chunk_blocks(count) * 16) * 8 + row;
    message[bit / 8] ^= 1 << (bit % 8);
}

/// With the check, a receiver that uses another choice bit in one group (whose Δ bits are not
/// all zero) is refused, for every k, and nothing is released.
#[test]
fn inconsistent_groups_fail_the_check_for_every_k() {
    let mut prg = AesCtr::new([1; 16]);
    for k in SUPPORTED_K {
        let (mut receiver, mut sender, _) = pair(k, &mut prg);
        let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
        receiver.extend(&[true; 200], &mut message, &mut t).unwrap();
        // Group 0 holds Δ's lsb, which is 1.
        flip_choice(&mut message, k, 200, 0, 7);
        assert_eq!(sender.extend(200, &message, &mut q), Err(OtError::CheckFailed { chunk: 0 }), "k {k}");
        assert!(q.is_empty());
    }
}

/// Without the check the same receiver learns Δ: with its choice flipped in group i for OT 0,
/// the sender's zero-label of that OT moves by Δ's bits of group i, and the receiver's label
/// plus a guess G of those bits is right — which a garbled circuit's outcome tells it — exactly
/// when G is them. 2^k chunks at most recover a group; here every k recovers group 1, as the
/// receiver would, and compares with Δ.
#[test]
fn without_the_check_inconsistent_groups_recover_delta_bits_for_every_k() {
    let mut prg = AesCtr::new([2; 16]);
    for k in SUPPORTED_K {
        let (mut receiver, mut sender, delta) = pair(k, &mut prg);
        sender.skip_check();
        let group = 1;
        let mut recovered = None;
        for guess in 0..1u128 << k {
            let guess = Block(guess << (group * k));
            let choices = [false; 128];
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend(&choices, &mut message, &mut t).unwrap();
            flip_choice(&mut message, k, 128, group, 0);
            sender.extend(128, &message, &mut q).expect("no check: every chunk passes");
            // The selective-failure oracle: is the receiver's (adjusted) label the sender's label
            // of its choice bit (0)?
            if t[0] ^ guess == q[0] {
                recovered = Some(guess);
                break;
            }
        }
        assert_eq!(recovered, Some(group_bits(delta, k, group)), "k {k}: the attack recovers Δ's bits of the group when the check is off");
    }
}

/// A receiver whose set-up corrections are those of no tree it committed to — the sum the
/// sender opens at tree 0's first level changed — is refused at set-up, before a leaf is used.
/// With the trees' check switched off (and the chunks', so that nothing else stands in the way)
/// the sender accepts it and extends with leaves of no committed tree: its rows no longer match
/// the receiver's.
#[test]
fn corrections_of_no_committed_tree_are_refused_at_setup() {
    let mut prg = AesCtr::new([3; 16]);
    for k in SUPPORTED_K {
        for check in [true, false] {
            let (mut receiver, mut sender, delta) = pair(k, &mut prg);
            if !check {
                sender.skip_setup_check();
                sender.skip_check();
            }
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            let choices: Vec<bool> = (0..300).map(|i| i % 3 == 0).collect();
            receiver.extend(&choices, &mut message, &mut t).unwrap();
            assert_eq!(message.len(), setup_len(k) + message_len(k, 300));
            // Tree 0, level 1: the sender opens the side off its branch, the top bit of α_0.
            let opened = 1 - ((delta.0 >> (k - 1)) & 1) as usize;
            message[16 * opened] ^= 1;
            let result = sender.extend(300, &message, &mut q);
            if check {
                assert_eq!(result, Err(OtError::SetupCheckFailed), "k {k}");
                assert!(q.is_empty());
            } else {
                assert_eq!(result, Ok(()), "k {k}: accepted");
                let broken = (0..300).filter(|&i| t[i] != q[i] ^ delta.select(choices[i])).count();
                assert!(broken > 100, "k {k}: the sender's rows are those of another tree ({broken} of 300 differ)");
            }
        }
    }
}

/// XORs `pattern` into block `block` of d^{(group)} in a message for `count` OTs (no set-up in
/// it): the receiver's effective choices of those 128 OTs change by `pattern` in that group
/// alone.
fn xor_choices(message: &mut [u8], count: usize, group: usize, block: usize, pattern: Block) {
    let at = (group * chunk_blocks(count) + block) * 16;
    let old = Block::from_bytes(message[at..at + 16].try_into().unwrap());
    message[at..at + 16].copy_from_slice(&(old ^ pattern).to_bytes());
}

/// Why the challenge must hash the chunk's message (Fiat–Shamir): in a protocol whose challenge
/// leaves the message out (both parties switched to it), a receiver that knows χ before it
/// fixes its message moves its choices in one group by e with Σ_j χ_j·e_j = 0 —
/// e_0 = χ_1, e_1 = χ_0 — and the check cannot see it; every moved OT's label then differs from
/// the sender's by that group's Δ bits, which the receiver recovers by guessing them, as without
/// the check. With the message hashed, χ changes with the message and the same move is refused.
#[test]
fn a_challenge_known_before_the_message_lets_an_inconsistency_through() {
    let mut prg = AesCtr::new([4; 16]);
    let (count, group) = (256, 1);
    for k in SUPPORTED_K {
        for bound in [true, false] {
            let (mut receiver, mut sender, delta) = pair(k, &mut prg);
            if !bound {
                receiver.unbind_challenge();
                sender.unbind_challenge();
            }
            honest_chunk(&mut receiver, &mut sender, 1);
            // The second chunk's χ as an unbound sender draws it: from what both know already.
            let chi = Challenge::new(ChunkId { transcript: &BINDING.transcript, direction: BINDING.direction, k, index: 1, count }, chunk_blocks(count), &[]);
            let (chi0, chi1) = (chi.chi()[0], chi.chi()[1]);
            let choices = vec![false; count];
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend(&choices, &mut message, &mut t).unwrap();
            xor_choices(&mut message, count, group, 0, chi1);
            xor_choices(&mut message, count, group, 1, chi0);
            let result = sender.extend(count, &message, &mut q);
            if bound {
                assert_eq!(result, Err(OtError::CheckFailed { chunk: 1 }), "k {k}: the check refuses the move once χ hashes the message");
                continue;
            }
            result.unwrap_or_else(|e| panic!("k {k}: with χ known in advance the move passes the check: {e}"));
            // A moved OT: the first bit set in e_0 = χ_1.
            let row = chi1.0.trailing_zeros() as usize;
            let recovered = (0..1u128 << k).map(|g| Block(g << (group * k))).find(|&guess| t[row] ^ guess == q[row]);
            assert_eq!(recovered, Some(group_bits(delta, k, group)), "k {k}: the receiver recovers the group's Δ bits");
        }
    }
}

/// A chunk, or only its check values, taken from another chunk, direction or session (another
/// transcript: another connection's base OTs) does not verify: the challenge hashes all of them,
/// and the trees are bound to the transcript and the direction.
#[test]
fn messages_and_check_values_from_elsewhere_do_not_verify() {
    let mut prg = AesCtr::new([5; 16]);
    let count = 300;
    for k in SUPPORTED_K {
        let base = BaseOts::new(&mut prg);
        let mut receiver = base.receiver(k, BINDING);
        let (mut first, mut second, mut t) = (Vec::new(), Vec::new(), Vec::new());
        receiver.extend(&vec![true; count], &mut first, &mut t).unwrap();
        receiver.extend(&vec![true; count], &mut second, &mut t).unwrap();
        let setup = setup_len(k);

        // The honest order passes.
        let mut sender = base.sender(k, BINDING);
        let mut q = Vec::new();
        sender.extend(count, &first, &mut q).unwrap();
        sender.extend(count, &second, &mut q).unwrap();

        // The first chunk again in the second place.
        let mut sender = base.sender(k, BINDING);
        sender.extend(count, &first, &mut q).unwrap();
        assert_eq!(sender.extend(count, &first[setup..], &mut q), Err(OtError::CheckFailed { chunk: 1 }), "k {k}: a chunk replayed");

        // The second chunk with the first chunk's check values.
        let mut sender = base.sender(k, BINDING);
        sender.extend(count, &first, &mut q).unwrap();
        let mut spliced = second.clone();
        let checks = spliced.len() - garblet_core::ot::check::CHECK_BYTES;
        spliced[checks..].copy_from_slice(&first[first.len() - garblet_core::ot::check::CHECK_BYTES..]);
        assert_eq!(sender.extend(count, &spliced, &mut q), Err(OtError::CheckFailed { chunk: 1 }), "k {k}: check values replayed");

        // The same base OTs bound to the other direction, or to another session's transcript.
        for binding in [Binding { direction: 1, ..BINDING }, Binding { transcript: [8; 32], ..BINDING }] {
            let mut sender = base.sender(k, binding);
            assert_eq!(sender.extend(count, &first, &mut q), Err(OtError::SetupCheckFailed), "k {k}: {binding:?}");
            // With the trees' check off, the chunk's own check still refuses it.
            let mut sender = base.sender(k, binding);
            sender.skip_setup_check();
            assert_eq!(sender.extend(count, &first, &mut q), Err(OtError::CheckFailed { chunk: 0 }), "k {k}: {binding:?}");
        }
    }
}
