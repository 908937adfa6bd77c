//! The in-memory two-party driver and the tests of aBits and triples, honest and under attack.

use super::*;
use crate::ot::{OtError, OtReceiver, OtSender, MAX_CHUNK};
use crate::spread::Threads;
use state::TripleState;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

/// A session's correlated OT, its base OTs done: A's sender (with a Δ_s of its own), B's
/// receiver.
fn session_ot(k: usize) -> (OtSender, OtReceiver) {
    let (mut sender, points) = OtSender::new(Block(Block::random().unwrap().0 | 1)).unwrap();
    let (mut receiver, point) = OtReceiver::new().unwrap();
    sender.receive_base_ot(&point, k).unwrap();
    receiver.finish_base_ot(&points, k).unwrap();
    (sender, receiver)
}

/// The set-up of computation `index` on a session's OT, `tamper(sender, message)` between the
/// steps: B's chunk of the session's extension, then A's of direction 1.
fn set_up(session: &mut (OtSender, OtReceiver), index: u64, k: usize, mut tamper: impl FnMut(Role, &mut Vec<u8>)) -> Result<(AuthParty, AuthParty), (Role, AuthError)> {
    let garbler = GarblerSetup::new(&mut session.0, index, k).unwrap();
    let (evaluator, mut to_a) = EvaluatorSetup::new(&mut session.1, index, k).unwrap();
    assert_eq!(to_a.len(), garbler.reply_len());
    tamper(Role::Evaluator, &mut to_a);
    let (garbler, mut to_b) = garbler.finish(&mut session.0, &to_a).map_err(|e| (Role::Garbler, e))?;
    tamper(Role::Garbler, &mut to_b);
    let evaluator = evaluator.finish(&to_b).map_err(|e| (Role::Evaluator, e))?;
    assert_eq!(garbler.session_id(), evaluator.session_id());
    Ok((garbler, evaluator))
}

/// Both parties after the set-up, messages passed in memory, on a session of their own.
fn connect(k: usize) -> (AuthParty, AuthParty) {
    set_up(&mut session_ot(k), 0, k, |_, _| {}).unwrap()
}

/// What a run of a batch ended with on a side: `None` if it was still waiting for a message
/// when the other side failed.
type Outcome = Option<Result<Vec<AuthTriple>, AuthError>>;

/// Runs a batch of `n` triples; `tamper(round, sender, message)` may alter a message in
/// transit (round 1 … 5). A party that failed stops; the other then waits for nothing more.
fn run_batch(g: &mut AuthParty, e: &mut AuthParty, n: usize, mut tamper: impl FnMut(usize, Role, &mut Vec<u8>)) -> (Outcome, Outcome) {
    let mut to_e = g.start_triples(n).unwrap();
    let mut to_g = e.start_triples(n).unwrap();
    let (mut g_out, mut e_out) = (None, None);
    for round in 1..=5 {
        tamper(round, Role::Garbler, &mut to_e);
        tamper(round, Role::Evaluator, &mut to_g);
        let (next_e, next_g) = (step(g, &to_g, &mut g_out), step(e, &to_e, &mut e_out));
        if g_out.is_some() || e_out.is_some() {
            break;
        }
        (to_e, to_g) = (next_e, next_g);
    }
    (g_out, e_out)
}

fn step(party: &mut AuthParty, message: &[u8], out: &mut Outcome) -> Vec<u8> {
    if out.is_some() {
        return Vec::new();
    }
    match party.triples_step(message) {
        Ok(Progress::Send(next)) => next,
        Ok(Progress::Done(triples, _)) => {
            *out = Some(Ok(triples));
            Vec::new()
        }
        Err(e) => {
            *out = Some(Err(e));
            Vec::new()
        }
    }
}

fn honest(_: usize, _: Role, _: &mut Vec<u8>) {}

/// The MAC of `mine` (held by the party whose global key is not `peer_delta`) against the
/// peer's key, and the key's lsb pinned to 0 (a MAC's lsb is its bit by construction).
fn mac_holds(mine: AuthShare, peers: AuthShare, peer_delta: Block) -> bool {
    mine.mac == peers.key ^ peer_delta.select(mine.bit()) && !peers.key.lsb()
}

fn authenticated(a: AuthShare, b: AuthShare, delta_a: Block, delta_b: Block) -> bool {
    mac_holds(a, b, delta_b) && mac_holds(b, a, delta_a)
}

/// Counts the triples that are not AND triples or not authenticated on both sides.
fn bad_triples(g: &[AuthTriple], e: &[AuthTriple], delta_a: Block, delta_b: Block) -> usize {
    assert_eq!(g.len(), e.len());
    g.iter()
        .zip(e)
        .filter(|(g, e)| {
            let (x, y, z) = (g.x.bit() ^ e.x.bit(), g.y.bit() ^ e.y.bit(), g.z.bit() ^ e.z.bit());
            z != (x & y)
                || !authenticated(g.x, e.x, delta_a, delta_b)
                || !authenticated(g.y, e.y, delta_a, delta_b)
                || !authenticated(g.z, e.z, delta_a, delta_b)
        })
        .count()
}

fn random_bits(n: usize) -> Vec<bool> {
    crate::aes::AesCtr::from_os_rng().unwrap().bits(n)
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn abits_in_both_directions_carry_macs_under_the_other_delta() {
    for k in [2, 4] {
        let (mut g, mut e) = connect(k);
        // Twice, the second time across a chunk boundary: the streams continue.
        for count in [100, MAX_CHUNK + 77] {
            let (bits_a, bits_b) = (random_bits(count), random_bits(count));
            let (mut msg_a, mut macs_a, mut keys_b) = (Vec::new(), Vec::new(), Vec::new());
            let (mut msg_b, mut macs_b, mut keys_a) = (Vec::new(), Vec::new(), Vec::new());
            g.send_abits(&bits_a, &mut msg_a, &mut macs_a).unwrap();
            e.send_abits(&bits_b, &mut msg_b, &mut macs_b).unwrap();
            e.receive_abits(count, &msg_a, &mut keys_b).unwrap();
            g.receive_abits(count, &msg_b, &mut keys_a).unwrap();
            for i in 0..count {
                assert_eq!(macs_a[i], keys_b[i] ^ e.delta().select(bits_a[i]), "A's bit {i} under Δ_B");
                assert_eq!(macs_b[i], keys_a[i] ^ g.delta().select(bits_b[i]), "B's bit {i} under Δ_A");
            }
        }
        assert!(g.delta().lsb() && e.delta().lsb());
        assert_ne!(g.delta(), e.delta());
    }
}

/// Computations on one session's OT: each set-up draws fresh global keys and derives an id of
/// its own, and its aBits carry MACs under them; the session's extension goes on serving its
/// own chunks after them.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn each_computation_on_a_session_has_fresh_keys_and_an_id_of_its_own() {
    let mut session = session_ot(4);
    let mut seen = Vec::new();
    for index in 0..3 {
        let (mut g, mut e) = set_up(&mut session, index, 4, |_, _| {}).unwrap();
        let bits = random_bits(300);
        let (mut message, mut macs, mut keys) = (Vec::new(), Vec::new(), Vec::new());
        e.send_abits(&bits, &mut message, &mut macs).unwrap();
        g.receive_abits(300, &message, &mut keys).unwrap();
        assert!((0..300).all(|i| macs[i] == keys[i] ^ g.delta().select(bits[i])));
        seen.push((g.delta(), e.delta(), g.session_id()));
    }
    for (i, a) in seen.iter().enumerate() {
        for b in &seen[i + 1..] {
            assert!(a.0 != b.0 && a.1 != b.1 && a.2 != b.2, "two computations share a key or an id");
        }
    }
    // The session's own chunks still correlate.
    let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
    session.1.extend(&[true, false], &mut message, &mut t).unwrap();
    session.0.extend(2, &message, &mut q).unwrap();
    assert!(t[0] != q[0] && (t[0] ^ q[0]).lsb(), "t = q ⊕ Δ_s for choice 1");
    assert_eq!(t[1], q[1], "t = q for choice 0");
}

/// Either set-up chunk altered (a check value: the check fails whatever Δ is) is refused by
/// its receiver's peer with the OT's typed error, before any key is used; and a chunk meant
/// for another computation of the session fails the check too.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn an_altered_set_up_chunk_is_refused() {
    for victim in [Role::Evaluator, Role::Garbler] {
        let mut session = session_ot(4);
        let err = set_up(&mut session, 0, 4, |from, m| {
            if from == victim {
                *m.last_mut().unwrap() ^= 1;
            }
        })
        .err()
        .expect("an altered chunk goes through");
        assert_eq!(err.0, victim.peer());
        assert!(matches!(err.1, AuthError::Ot(OtError::CheckFailed { .. })), "{victim:?}: {:?}", err.1);
    }
    // B's chunk for computation 1 where A set up computation 0: bound to another direction
    // transcript of the session's, so its hashed keys would differ — but the check runs first
    // on the session's binding, so the chunk itself passes; A's answer on direction 1 then
    // fails B's check, as its transcripts are computation 0's.
    let mut session = session_ot(4);
    let garbler = GarblerSetup::new(&mut session.0, 0, 4).unwrap();
    let (evaluator, to_a) = EvaluatorSetup::new(&mut session.1, 1, 4).unwrap();
    let (_, to_b) = garbler.finish(&mut session.0, &to_a).unwrap();
    assert!(matches!(evaluator.finish(&to_b), Err(AuthError::Ot(_))));
    // Lengths: refused before anything moves.
    let mut session = session_ot(4);
    let garbler = GarblerSetup::new(&mut session.0, 0, 4).unwrap();
    let (_, to_a) = EvaluatorSetup::new(&mut session.1, 0, 4).unwrap();
    assert!(matches!(garbler.finish(&mut session.0, &to_a[1..]), Err(AuthError::WrongLength { .. })));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn triples_are_and_triples_authenticated_on_both_sides() {
    let (mut g, mut e) = connect(4);
    // Batches of several bucket sizes on one session (the hash tweaks continue).
    for n in [1, 9, 200, 4000] {
        let (tg, te) = run_batch(&mut g, &mut e, n, honest);
        let (tg, te) = (tg.unwrap().unwrap(), te.unwrap().unwrap());
        assert_eq!(tg.len(), n);
        assert_eq!(bad_triples(&tg, &te, g.delta(), e.delta()), 0, "n = {n}");
        // x and y are random: not all equal in a large batch.
        if n >= 200 {
            let ones = tg.iter().zip(&te).filter(|(g, e)| g.x.bit() ^ e.x.bit()).count();
            assert!(ones > n / 4 && ones < 3 * n / 4, "{ones} of {n} x bits are 1");
        }
    }
}

/// A finished batch hands its two arrays (MACs, keys) to the next batch, larger or smaller, whose
/// triples are as good; once released, nothing is kept.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn batches_hand_their_arrays_on_until_released() {
    let (mut g, mut e) = connect(4);
    let places = |p: &AuthParty| {
        let mut places: Vec<*const Block> = p.spare_arrays.iter().map(|a| a.as_ptr()).collect();
        places.sort();
        places
    };
    run_batch(&mut g, &mut e, 4000, honest);
    let kept = places(&g);
    assert_eq!(kept.len(), 2, "a batch's MACs and keys kept");
    for n in [9, 3000] {
        let (tg, te) = run_batch(&mut g, &mut e, n, honest);
        let (tg, te) = (tg.unwrap().unwrap(), te.unwrap().unwrap());
        assert_eq!(bad_triples(&tg, &te, g.delta(), e.delta()), 0, "n = {n}");
        assert_eq!(places(&g), kept, "the same arrays handed on (n = {n})");
    }
    g.release_arrays();
    assert!(g.spare_arrays.is_empty());
}

/// Each party's steps spread over threads, as many or as few as it likes: the triples are the
/// same kind, and a lie in a share far into the batch is still caught.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn triples_spread_over_threads_are_authenticated_and_triples() {
    for threads in [[3, 1], [1, 2], [4, 4]] {
        let (mut g, mut e) = connect(4);
        g.spread_over(Threads::in_turn(threads[0]));
        e.spread_over(Threads::in_turn(threads[1]));
        for n in [9, 4000, 30_000] {
            let (tg, te) = run_batch(&mut g, &mut e, n, honest);
            let (tg, te) = (tg.unwrap().unwrap(), te.unwrap().unwrap());
            assert_eq!(bad_triples(&tg, &te, g.delta(), e.delta()), 0, "{threads:?}, n = {n}");
        }
        let (mut g, mut e) = connect(4);
        g.spread_over(Threads::in_turn(threads[0]));
        e.spread_over(Threads::in_turn(threads[1]));
        g.lie_in_triple_share(15_000);
        let (tg, te) = run_batch(&mut g, &mut e, 4000, honest);
        assert_eq!(te.unwrap().unwrap_err(), AuthError::EqualityCheckFailed, "{threads:?}");
        assert_eq!(tg.unwrap().unwrap_err(), AuthError::EqualityCheckFailed, "{threads:?}");
    }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn bucket_sizes_for_2_to_the_minus_40() {
    let rows = [
        (1, 40),
        (2, 21),
        (3, 17),
        (5, 13),
        (8, 11),
        (10, 11),
        (11, 10),
        (14, 10),
        (15, 9),
        (23, 9),
        (24, 8),
        (45, 8),
        (46, 7),
        (111, 7),
        (112, 6),
        (430, 6),
        (431, 5),
        (4_095, 5),
        (4_096, 4),
        (370_727, 4),
        (370_728, 3),
        (1 << 20, 3),
    ];
    for (n, b) in rows {
        assert_eq!(triples::bucket_size(n), b, "n = {n}");
    }
    // One batch of several: each gets 2^−40 / batches. Eight batches of 2^20 stay at B = 3
    // (2^−43 each); ten need 4; 153 segments of 65,536 (10^7 AND gates) stay at 4, as do 4,096
    // (2.7·10^8 AND gates), and 4,097 need 5.
    for (n, batches, b) in [(1 << 20, 8, 3), (1 << 20, 10, 4), (65_536, 153, 4), (65_536, 4_096, 4), (65_536, 4_097, 5), (4_096, 1, 4)] {
        assert_eq!(triples::bucket_size_of(n, batches), b, "n = {n}, {batches} batches");
    }
}

/// A party that lies in its share of a leaky triple: the equality check catches it; with the
/// check off, the wrong triple is accepted.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_lie_in_a_triple_share_fails_the_equality_check() {
    let n = 100;
    let (mut g, mut e) = connect(4);
    g.lie_in_triple_share(17);
    let (tg, te) = run_batch(&mut g, &mut e, n, honest);
    assert_eq!(te.unwrap().unwrap_err(), AuthError::EqualityCheckFailed);
    assert_eq!(tg.unwrap().unwrap_err(), AuthError::EqualityCheckFailed);
    assert!(matches!(e.triples_step(&[]), Err(AuthError::OutOfOrder { .. })), "a failed party stays failed");

    let (mut g, mut e) = connect(4);
    g.lie_in_triple_share(17);
    g.skip_equality_check();
    e.skip_equality_check();
    let (tg, te) = run_batch(&mut g, &mut e, n, honest);
    assert_eq!(bad_triples(&tg.unwrap().unwrap(), &te.unwrap().unwrap(), g.delta(), e.delta()), 1, "the lie survives in its bucket");
}

/// Check values altered in transit (a party cheating in the leaky AND's check): refused.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_failing_equality_check_ends_the_batch() {
    let (mut g, mut e) = connect(4);
    let (tg, te) = run_batch(&mut g, &mut e, 50, |round, from, m| {
        // Every U of the garbler's round 2 changed: the check fails where x_B = 1.
        if round == 2 && from == Role::Garbler {
            let leaky = 50 * triples::bucket_size(50);
            m[2 * leaky.div_ceil(8)..].iter_mut().for_each(|b| *b ^= 0x5a);
        }
    });
    assert_eq!(te.unwrap().unwrap_err(), AuthError::EqualityCheckFailed);
    assert_eq!(tg.unwrap().unwrap_err(), AuthError::EqualityCheckFailed);

    // An opening that is not the committed value.
    let (mut g, mut e) = connect(4);
    let (_, te) = run_batch(&mut g, &mut e, 50, |round, from, m| {
        if round == 5 && from == Role::Garbler {
            m[40] ^= 1;
        }
    });
    assert_eq!(te.unwrap().unwrap_err(), AuthError::CommitmentMismatch { what: "leaky-AND check" });
}

/// Bucketing openings with flipped bits and the MACs that went with the true ones: refused; with
/// the MAC check off, the triples come out wrong.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_forged_opening_fails_the_mac_check() {
    let flip = |round: usize, from: Role, m: &mut Vec<u8>| {
        // Round 5's bucketing bits, past the check opening (64 bytes), all but the last byte.
        if round == 5 && from == Role::Garbler {
            let bits = m.len() - 32;
            m[64..bits - 1].iter_mut().for_each(|b| *b ^= 0xff);
        }
    };
    let (mut g, mut e) = connect(4);
    let (tg, te) = run_batch(&mut g, &mut e, 200, flip);
    assert_eq!(te.unwrap().unwrap_err(), AuthError::MacCheckFailed { what: "bucketing openings" });
    assert!(tg.unwrap().is_ok(), "the garbler's view was not altered");

    let (mut g, mut e) = connect(4);
    e.skip_mac_check();
    let (tg, te) = run_batch(&mut g, &mut e, 200, flip);
    assert!(bad_triples(&tg.unwrap().unwrap(), &te.unwrap().unwrap(), g.delta(), e.delta()) > 0);
}

/// Messages of another session: refused by the OT check (round 1) and by the commitments.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn messages_of_another_session_are_refused() {
    let (mut g1, _e1) = connect(4);
    let (_g2, mut e2) = connect(4);
    let from_other_session = g1.start_triples(20).unwrap();
    e2.start_triples(20).unwrap();
    assert!(matches!(e2.triples_step(&from_other_session), Err(AuthError::Ot(_))));

    // Rounds 1–3 of a second pair, round 4 (the coin opening) from the first pair's garbler.
    let (mut g1, mut e1) = connect(4);
    let (mut g2, mut e2) = connect(4);
    let mut foreign = Vec::new();
    let _ = run_batch(&mut g1, &mut e1, 20, |round, from, m| {
        if round == 4 && from == Role::Garbler {
            foreign = m.clone();
        }
    });
    let (_, te) = run_batch(&mut g2, &mut e2, 20, |round, from, m| {
        if round == 4 && from == Role::Garbler {
            m[32..].copy_from_slice(&foreign[32..]);
        }
    });
    assert_eq!(te.unwrap().unwrap_err(), AuthError::CommitmentMismatch { what: "coin toss" });

    // aBits of another session.
    let (mut g1, _) = connect(4);
    let (_, mut e2) = connect(4);
    let (mut message, mut macs, mut keys) = (Vec::new(), Vec::new(), Vec::new());
    g1.send_abits(&[true; 10], &mut message, &mut macs).unwrap();
    assert!(matches!(e2.receive_abits(10, &message, &mut keys), Err(AuthError::Ot(_))));
    assert!(keys.is_empty());
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn wrong_lengths_and_order_are_typed_errors() {
    let (mut g, mut e) = connect(4);
    assert!(matches!(g.triples_step(&[]), Err(AuthError::OutOfOrder { expected: "a new batch", .. })));
    assert_eq!(g.start_triples(0).unwrap_err(), AuthError::BatchSize { count: 0, max: triples::MAX_TRIPLES });
    let to_e = g.start_triples(30).unwrap();
    let to_g = e.start_triples(30).unwrap();
    assert!(matches!(g.start_triples(30), Err(AuthError::OutOfOrder { .. })));
    assert!(matches!(g.send_abits(&[true], &mut Vec::new(), &mut Vec::new()), Err(AuthError::OutOfOrder { .. })));
    // Wrong lengths change nothing: the right message still goes through.
    assert!(matches!(g.triples_step(&to_g[1..]), Err(AuthError::WrongLength { .. })));
    let mut longer = to_g.clone();
    longer.push(0);
    assert!(matches!(g.triples_step(&longer), Err(AuthError::WrongLength { .. })));
    let Progress::Send(to_e2) = g.triples_step(&to_g).unwrap() else { panic!("round 2 expected") };
    let Progress::Send(to_g2) = e.triples_step(&to_e).unwrap() else { panic!("round 2 expected") };
    g.triples_step(&to_g2).unwrap();
    let Progress::Send(to_g3) = e.triples_step(&to_e2).unwrap() else { panic!("round 3 expected") };
    assert!(matches!(g.triples_step(&to_g3[..5]), Err(AuthError::WrongLength { .. })));
    assert!(matches!(g.triples_step(&to_g3), Ok(Progress::Send(_))));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn nonzero_padding_is_refused() {
    // 5 triples at B = 13: 65 leaky ones, seven padding bits after round 3's d bits.
    assert_eq!(triples::bucket_size(5), 13);
    let (mut g, mut e) = connect(4);
    let (_, te) = run_batch(&mut g, &mut e, 5, |round, from, m| {
        if round == 3 && from == Role::Garbler {
            m[65 / 8] |= 0x80;
        }
    });
    assert_eq!(te.unwrap().unwrap_err(), AuthError::Padding { what: "round 3: d bits" });
}

#[test]
fn unpack_round_trips() {
    let bits = random_bits(77);
    assert_eq!(unpack(&pack(&bits), 77, "test").unwrap(), bits);
}

/// Bits written in turn are the bits packed, at every length around the writer's words, and the
/// bytes after them are left alone.
#[test]
fn bits_written_in_turn_are_the_bits_packed() {
    for n in [0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 200] {
        let bits = random_bits(n);
        let mut bytes = vec![0u8; n.div_ceil(8)];
        bytes.push(0xa5);
        let mut writer = BitWriter::new(&mut bytes);
        bits.iter().for_each(|&b| writer.push(b));
        writer.finish();
        assert_eq!(bytes.pop(), Some(0xa5), "{n} bits");
        assert_eq!(bytes, pack(&bits), "{n} bits");
    }
}

/// A run of ANDs: both parties, their masks (pair i is masks 2i, 2i + 1) and their products
/// (the evaluator's as it ended).
struct AndRun {
    g: AuthParty,
    e: AuthParty,
    masks_g: Vec<AuthShare>,
    masks_e: Vec<AuthShare>,
    products_g: Vec<AuthShare>,
    products_e: Result<Vec<AuthShare>, AuthError>,
}

impl AndRun {
    /// The ANDs whose bits are wrong or whose MACs do not hold.
    fn wrong(&self) -> usize {
        let products_e = self.products_e.as_ref().unwrap();
        let bit = |i: usize| self.masks_g[i].bit() ^ self.masks_e[i].bit();
        (0..self.products_g.len())
            .filter(|&i| {
                let (pg, pe) = (self.products_g[i], products_e[i]);
                pg.bit() ^ pe.bit() != bit(2 * i) & bit(2 * i + 1) || !authenticated(pg, pe, self.g.delta(), self.e.delta())
            })
            .count()
    }
}

/// Masks and triples from a fresh session, then `m` ANDs of random masks; `tamper` may alter
/// the garbler's openings in transit, and `skip` turns the evaluator's MAC check off.
fn ands(m: usize, tamper: impl FnOnce(&mut Vec<u8>), skip: bool) -> AndRun {
    let (mut g, mut e) = connect(4);
    let (to_e, to_g) = (g.start_masks(2 * m).unwrap(), e.start_masks(2 * m).unwrap());
    let (masks_g, masks_e) = (g.finish_masks(&to_g).unwrap(), e.finish_masks(&to_e).unwrap());
    let (tg, te) = run_batch(&mut g, &mut e, m, honest);
    let (tg, te) = (tg.unwrap().unwrap(), te.unwrap().unwrap());
    let pairs = |masks: &[AuthShare]| -> Vec<(AuthShare, AuthShare)> { (0..m).map(|i| (masks[2 * i], masks[2 * i + 1])).collect() };
    if skip {
        e.skip_mac_check();
    }
    let mut to_e = g.start_ands(&pairs(&masks_g), tg).unwrap();
    let to_g = e.start_ands(&pairs(&masks_e), te).unwrap();
    tamper(&mut to_e);
    let products_g = g.finish_ands(&to_g).unwrap();
    let products_e = e.finish_ands(&to_e);
    AndRun { g, e, masks_g, masks_e, products_g, products_e }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn masks_and_their_ands_are_authenticated() {
    let run = ands(300, |_| {}, false);
    for i in 0..600 {
        assert!(authenticated(run.masks_g[i], run.masks_e[i], run.g.delta(), run.e.delta()), "mask {i}");
    }
    assert_eq!(run.wrong(), 0);
}

/// Masks that ride with a batch of triples come out authenticated under both Δs, random on
/// each side, and leave the triples as they were; a peer that expects a batch without them
/// refuses the longer first message.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn masks_that_ride_with_a_batch_are_authenticated() {
    let (n, m) = (300, 1000);
    let (mut g, mut e) = connect(4);
    let mut to_e = g.start_triples_of(n, 1, m).unwrap();
    let mut to_g = e.start_triples_of(n, 1, m).unwrap();
    let (mut out_g, mut out_e) = (None, None);
    while out_g.is_none() || out_e.is_none() {
        let next_e = match g.triples_step(&to_g).unwrap() {
            Progress::Send(next) => next,
            Progress::Done(triples, masks) => {
                out_g = Some((triples, masks));
                Vec::new()
            }
        };
        let next_g = match e.triples_step(&to_e).unwrap() {
            Progress::Send(next) => next,
            Progress::Done(triples, masks) => {
                out_e = Some((triples, masks));
                Vec::new()
            }
        };
        (to_e, to_g) = (next_e, next_g);
    }
    let ((triples_g, masks_g), (triples_e, masks_e)) = (out_g.unwrap(), out_e.unwrap());
    assert_eq!(triples_g.len(), n);
    assert_eq!(bad_triples(&triples_g, &triples_e, g.delta(), e.delta()), 0);
    assert_eq!((masks_g.len(), masks_e.len()), (m, m));
    for i in 0..m {
        assert!(authenticated(masks_g[i], masks_e[i], g.delta(), e.delta()), "mask {i}");
    }
    // Each side's shares random: 1,000 fair bits fall outside 350 … 650 ones with probability
    // below 2^-60 (Hoeffding).
    for masks in [&masks_g, &masks_e] {
        let ones = masks.iter().filter(|s| s.bit()).count();
        assert!((350..=650).contains(&ones), "{ones} ones of {m}");
    }

    let (mut g, mut e) = connect(4);
    let with_masks = g.start_triples_of(n, 1, m).unwrap();
    e.start_triples(n).unwrap();
    assert!(matches!(e.triples_step(&with_masks), Err(AuthError::WrongLength { .. })));
}

/// Flipped shares of d in the ANDs' openings: refused; with the MAC check off, wrong ANDs.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_forged_and_opening_fails_the_mac_check() {
    let run = ands(64, |m| m[0] ^= 0xff, false);
    assert_eq!(run.products_e.unwrap_err(), AuthError::MacCheckFailed { what: "AND openings" });
    let run = ands(64, |m| m[0] ^= 0xff, true);
    assert!(run.wrong() > 0, "eight flipped d shares went through");
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn ands_refuse_the_wrong_triple_count_and_order() {
    let (mut g, _) = connect(4);
    assert_eq!(
        g.start_ands(&[(AuthShare::default(), AuthShare::default())], Vec::new()).unwrap_err(),
        AuthError::TripleCount { needed: 1, given: 0 }
    );
    assert!(matches!(g.finish_ands(&[0; 33]), Err(AuthError::OutOfOrder { .. })));
    assert!(matches!(g.finish_masks(&[]), Err(AuthError::OutOfOrder { .. })));
    g.start_masks(5).unwrap();
    assert!(matches!(g.finish_masks(&[0; 3]), Err(AuthError::WrongLength { .. })));
    assert!(matches!(g.start_masks(5), Err(AuthError::OutOfOrder { .. })), "one set of input masks in flight at a time");
    // A batch may start beside them (a computation's first round goes ahead of the peer's
    // masks), but not a second one.
    g.start_triples(5).unwrap();
    assert!(matches!(g.start_triples(5), Err(AuthError::OutOfOrder { .. })));
}

/// The leak the bucketing bound accounts for: a check value U altered for one leaky triple is
/// caught exactly when the honest party's x share of that triple is 1 — one chance in two — and
/// when it is not caught, the triples are still correct.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn an_altered_check_value_is_caught_half_the_time() {
    let runs = 30;
    let mut caught = 0;
    for _ in 0..runs {
        let (mut g, mut e) = connect(2);
        // One triple: B = 40 leaky ones; U of leaky triple 0 changed by a nonzero block.
        let (tg, te) = run_batch(&mut g, &mut e, 1, |round, from, m| {
            if round == 2 && from == Role::Garbler {
                m[2 * 40usize.div_ceil(8)] ^= 0x10;
            }
        });
        match (tg.unwrap(), te.unwrap()) {
            (Err(AuthError::EqualityCheckFailed), Err(AuthError::EqualityCheckFailed)) => caught += 1,
            (Ok(tg), Ok(te)) => assert_eq!(bad_triples(&tg, &te, g.delta(), e.delta()), 0),
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    // Binomial(30, 1/2): outside 3 … 27 with probability below 10^−6.
    assert!((3..=27).contains(&caught), "caught {caught} of {runs}");
}

/// One hash call per input serves the half-AND (its lsb) and the check (bits 1 … 127). The
/// evaluator's guess of each of the garbler's y shares from round 2 alone — lsb U ⊕ h₀ ⊕ h₁ ⊕
/// lsb M[y'] ⊕ y' ⊕ lsb K'[y], the module docs' attack — is right every time when the check's
/// hash keeps bit 0, and about half the time (a coin flip) as the protocol has it.
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn the_check_value_hides_the_half_and_bit() {
    // How many of the garbler's y shares the evaluator guesses right out of the leaky triples
    // of a batch of `n`.
    let guessed = |leak: bool, n: usize| -> (usize, usize) {
        let (mut g, mut e) = connect(4);
        if leak {
            g.leave_hash_lsb_in_check();
        }
        let (to_e, to_g) = (g.start_triples(n).unwrap(), e.start_triples(n).unwrap());
        let Ok(Progress::Send(half_and)) = g.triples_step(&to_g) else { panic!("round 2") };
        let Ok(Progress::Send(_)) = e.triples_step(&to_e) else { panic!("round 2") };
        let (TripleState::AwaitingHalfAnd(gb), TripleState::AwaitingHalfAnd(eb)) = (&g.state, &e.state) else { panic!("both after round 2") };
        let leaky = gb.leaky_count();
        let bits_len = leaky.div_ceil(8);
        let right = (0..leaky)
            .filter(|&i| {
                let u = Block::read(&half_and[2 * bits_len + 16 * i..]).unwrap();
                let (h0, h1) = (bit(&half_and[..bits_len], i), bit(&half_and[bits_len..], i));
                // The evaluator's own: its y share with its MAC, its key of the garbler's y.
                let mine = eb.share(leaky + i);
                let guess = u.lsb() ^ h0 ^ h1 ^ mine.mac.lsb() ^ mine.bit() ^ mine.key.lsb();
                guess == gb.bits[leaky + i]
            })
            .count();
        (right, leaky)
    };
    let (right, leaky) = guessed(true, 1000);
    assert_eq!(right, leaky, "with bit 0 in the check, every y share is read off the message");
    let (right, leaky) = guessed(false, 1000);
    // 1,000 triples at B = 5. Binomial(5000, 1/2): outside 2,250 … 2,750 with probability
    // below 10^−11.
    assert_eq!(leaky, 5000);
    assert!((2250..=2750).contains(&right), "{right} of {leaky} guessed right");
}

mod computations {
    use super::*;
    use crate::auth::garble::{InputMaterial, SegmentMaterial};
    use crate::auth::segment::{Segment, Segmenter, SEGMENT_AND_GATES};
    use garblet_circuits::program::{Program, Runner};
    use garblet_circuits::testing::{bristol_corpus, run_plain, RandomCircuit, TestRng};
    use garblet_circuits::{value, Gate, Party, Reveal};

    /// AND gates of a segment in these tests: small, so that most circuits here have several.
    const SEGMENT: usize = 97;

    /// A circuit for the driver: its gates in order.
    struct Circuit {
        gates: Vec<Gate>,
    }

    impl Circuit {
        fn of(program: Box<dyn Program + '_>) -> Circuit {
            let mut runner = Runner::new(program);
            let mut gates = Vec::new();
            while let Some(batch) = runner.next_batch().unwrap() {
                gates.extend_from_slice(&batch.gates);
            }
            Circuit { gates }
        }

        fn ands(&self) -> usize {
            self.gates.iter().filter(|g| matches!(g, Gate::And { .. })).count()
        }

        fn inputs(&self) -> [usize; 2] {
            let count = |party| self.gates.iter().filter(|g| matches!(g, Gate::Input { party: p, .. } if *p == party)).count();
            [count(Party::Garbler), count(Party::Evaluator)]
        }

        fn segments(&self, max_ands: usize) -> Vec<Segment> {
            let mut cutter = Segmenter::new(max_ands);
            cutter.push(&self.gates);
            cutter.end();
            std::iter::from_fn(|| cutter.pop()).collect()
        }
    }

    /// Which message a test alters: A's input-mask opening, or a segment's tables.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Message {
        InputMasks,
        Tables,
    }

    struct Ended {
        garbler: Option<Result<Vec<bool>, AuthError>>,
        evaluator: Result<Vec<bool>, AuthError>,
    }

    /// Both parties after their preprocessing: the input masks, and each segment with its
    /// material on either side.
    struct Prepared {
        g: AuthParty,
        e: AuthParty,
        inputs: (InputMaterial, InputMaterial),
        segments: Vec<(Segment, SegmentMaterial, SegmentMaterial)>,
    }

    /// Passes the two preprocessors' messages across until both wait for none.
    fn cross(g: &mut AuthParty, e: &mut AuthParty, pg: &mut Preprocessor, pe: &mut Preprocessor, mut to_e: Vec<u8>, mut to_g: Vec<u8>) {
        loop {
            assert_eq!(pg.awaited_len(g), Some(to_g.len()), "A's expected length");
            assert_eq!(pe.awaited_len(e), Some(to_e.len()), "B's expected length");
            match (pg.step(g, &to_g).unwrap(), pe.step(e, &to_e).unwrap()) {
                (Some(a), Some(b)) => (to_e, to_g) = (a, b),
                (None, None) => return,
                _ => panic!("the two sides' sequences differ"),
            }
        }
    }

    /// The preprocessing for `circuit` cut at `max_ands`, its messages crossing in memory.
    fn prepare(circuit: &Circuit, max_ands: usize) -> Prepared {
        prepare_over(circuit, max_ands, [1, 1])
    }

    /// [`prepare`] with A's and B's heavy steps spread over `threads`.
    fn prepare_over(circuit: &Circuit, max_ands: usize, threads: [usize; 2]) -> Prepared {
        let (mut g, mut e) = connect(4);
        g.spread_over(Threads::in_turn(threads[0]));
        e.spread_over(Threads::in_turn(threads[1]));
        let (inputs, ands) = (circuit.inputs(), circuit.ands() as u64);
        let (mut pg, to_e) = Preprocessor::start(&mut g, inputs, ands, max_ands).unwrap();
        let (mut pe, to_g) = Preprocessor::start(&mut e, inputs, ands, max_ands).unwrap();
        cross(&mut g, &mut e, &mut pg, &mut pe, to_e, to_g);
        let inputs = (pg.take_inputs().unwrap(), pe.take_inputs().unwrap());
        let mut segments = Vec::new();
        for segment in circuit.segments(max_ands) {
            match (pg.start_segment(&mut g, segment.clone()).unwrap(), pe.start_segment(&mut e, segment).unwrap()) {
                (Some(to_e), Some(to_g)) => cross(&mut g, &mut e, &mut pg, &mut pe, to_e, to_g),
                (None, None) => {}
                _ => panic!("the two sides' sequences differ"),
            }
            let ((segment, mg), (_, me)) = (pg.take_segment().unwrap(), pe.take_segment().unwrap());
            segments.push((segment, mg, me));
        }
        assert!(pg.all_started() && pe.all_started());
        Prepared { g, e, inputs, segments }
    }

    /// Preprocessing and one computation of `circuit`, in memory, segments of `max_ands`.
    #[allow(clippy::too_many_arguments)]
    fn compute_in(
        circuit: &Circuit,
        max_ands: usize,
        threads: [usize; 2],
        x: &[bool],
        y: &[bool],
        mut tamper: impl FnMut(Message, &mut Vec<u8>),
        skip_check: bool,
        skip_macs: bool,
    ) -> Ended {
        let Prepared { mut g, mut e, inputs, segments } = prepare_over(circuit, max_ands, threads);
        let mut gc = g.garbler_computation(inputs.0, x.to_vec()).unwrap();
        let mut g1 = gc.input_opening();
        let (mut ec, e1) = e.evaluator_computation(inputs.1, y.to_vec()).unwrap();
        if skip_check {
            ec.switches().skip_consistency_check = true;
        }
        if skip_macs {
            ec.switches().skip_mac_check = true;
        }
        tamper(Message::InputMasks, &mut g1);
        let e2 = match ec.mask_inputs(&g1) {
            Ok(m) => m,
            Err(err) => return Ended { garbler: None, evaluator: Err(err) },
        };
        let g2 = gc.inputs(&e1, &e2).unwrap();
        ec.inputs(&g2).unwrap();
        for (segment, mg, me) in segments {
            let mut tables = gc.garble(&segment, mg).unwrap();
            tamper(Message::Tables, &mut tables);
            if let Err(err) = ec.evaluate(&segment, me, &tables) {
                return Ended { garbler: None, evaluator: Err(err) };
            }
        }
        let closing = gc.close().unwrap();
        match ec.finish(&closing) {
            Ok((outputs, e3)) => Ended { garbler: Some(gc.finish(&e3)), evaluator: Ok(outputs) },
            Err(err) => Ended { garbler: None, evaluator: Err(err) },
        }
    }

    fn compute(circuit: &Circuit, x: &[bool], y: &[bool], tamper: impl FnMut(Message, &mut Vec<u8>), skip_check: bool, skip_macs: bool) -> Ended {
        compute_in(circuit, SEGMENT, [1, 1], x, y, tamper, skip_check, skip_macs)
    }

    fn untouched(_: Message, _: &mut Vec<u8>) {}

    #[test]
    fn random_circuits_match_plaintext_evaluation() {
        let mut rng = TestRng::new(7);
        for (seed, reveal) in [(1, Reveal::Both), (2, Reveal::Evaluator), (3, Reveal::Garbler)] {
            let make = || Box::new(RandomCircuit::new(seed, 12, 9, 600, 20, reveal)) as Box<dyn Program>;
            let circuit = Circuit::of(make());
            let (x, y) = (rng.bits(12), rng.bits(9));
            let plain = run_plain(make(), x.clone(), y.clone());
            let ended = compute(&circuit, &x, &y, untouched, false, false);
            let (to_g, to_e) = (reveal.to_garbler(), reveal.to_evaluator());
            assert_eq!(ended.evaluator.unwrap(), if to_e { plain.clone() } else { vec![] }, "seed {seed}");
            assert_eq!(ended.garbler.unwrap().unwrap(), if to_g { plain } else { vec![] }, "seed {seed}");
        }
    }

    /// However the circuit is cut — one AND gate a segment, a few, or one segment — the outputs
    /// are the plaintext ones.
    #[test]
    fn every_cut_gives_the_plaintext_outputs() {
        let make = || Box::new(RandomCircuit::new(5, 10, 10, 300, 16, Reveal::Both)) as Box<dyn Program>;
        let circuit = Circuit::of(make());
        let mut rng = TestRng::new(9);
        let (x, y) = (rng.bits(10), rng.bits(10));
        let plain = run_plain(make(), x.clone(), y.clone());
        for max_ands in [1, 2, 64, circuit.ands() - 1, circuit.ands(), SEGMENT_AND_GATES] {
            assert_eq!(circuit.segments(max_ands).len(), circuit.ands().div_ceil(max_ands), "{max_ands} a segment");
            let ended = compute_in(&circuit, max_ands, [1, 1], &x, &y, untouched, false, false);
            assert_eq!(ended.evaluator.unwrap(), plain, "{max_ands} a segment");
            assert_eq!(ended.garbler.unwrap().unwrap(), plain, "{max_ands} a segment");
        }
    }

    #[test]
    fn bundled_bristol_circuits_match_plaintext_evaluation() {
        let mut rng = TestRng::new(2018);
        for circuit in bristol_corpus().iter().filter(|c| !c.name.starts_with("sha256")) {
            let (x, y) = circuit.inputs(&mut rng);
            let plain = run_plain(circuit.program(), x.clone(), y.clone());
            let ended = compute_in(&Circuit::of(circuit.program()), SEGMENT_AND_GATES, [1, 1], &x, &y, untouched, false, false);
            assert_eq!(ended.evaluator.unwrap(), plain, "{}", circuit.name);
            assert_eq!(ended.garbler.unwrap().unwrap(), plain, "{}", circuit.name);
        }
    }

    /// The plaintext outputs of `circuit` split by who learns them: (the evaluator's, the
    /// garbler's), each in gate order with the constant outputs.
    fn split_plain(circuit: &Circuit, plain: &[bool]) -> (Vec<bool>, Vec<bool>) {
        let (mut to_e, mut to_g) = (Vec::new(), Vec::new());
        let mut bits = plain.iter().copied();
        for gate in &circuit.gates {
            if let Gate::Output { to, .. } | Gate::OutputConst { to, .. } = *gate {
                let bit = bits.next().expect("as many plaintext outputs as output gates");
                if to.to_evaluator() {
                    to_e.push(bit);
                }
                if to.to_garbler() {
                    to_g.push(bit);
                }
            }
        }
        (to_e, to_g)
    }

    /// Every library program with its default parameters, each party learns exactly its plaintext
    /// outputs. But `synthetic`'s size: its default, 10⁶ AND gates, is a benchmark's, and took half
    /// of this test's time; here it fills four segments and part of a fifth.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn every_library_program_gives_both_parties_their_plaintext_outputs() {
        const SEGMENT_ANDS: u64 = 4096;
        let mut rng = TestRng::new(2017);
        for spec in garblet_circuits::registry::builtins() {
            let sized: &[(&str, u64)] = if spec.name == "synthetic" { &[("and_gates", 5 * SEGMENT_ANDS - 7)] } else { &[] };
            let params = spec.resolve(sized.iter().copied()).unwrap();
            let make = || spec.instantiate(&params).unwrap();
            let shape = make().shape().clone();
            let (x, y) = (rng.bits(shape.input_bits(Party::Garbler)), rng.bits(shape.input_bits(Party::Evaluator)));
            let circuit = Circuit::of(make());
            let (want_e, want_g) = split_plain(&circuit, &run_plain(make(), x.clone(), y.clone()));
            let ended = compute_in(&circuit, SEGMENT_ANDS as usize, [1, 1], &x, &y, untouched, false, false);
            assert_eq!(ended.evaluator.unwrap(), want_e, "{}: the evaluator's outputs", spec.name);
            assert_eq!(ended.garbler.unwrap().unwrap(), want_g, "{}: the garbler's outputs", spec.name);
        }
    }

    /// FIPS-197 appendix C.1: AES-128 of 00112233…ff under key 00010203…0f, in one segment and
    /// in segments of 97 AND gates, and with each party's steps spread over threads (counts
    /// that differ: the messages do not depend on them).
    #[test]
    fn aes_128_gives_the_fips_197_ciphertext() {
        let aes = bristol_corpus().into_iter().find(|c| c.name == "aes_128.txt").unwrap();
        let key: Vec<u8> = (0..16).collect();
        let block: Vec<u8> = (0..16).map(|i| i * 0x11).collect();
        for (max_ands, threads) in [(SEGMENT_AND_GATES, [1, 1]), (SEGMENT, [1, 1]), (SEGMENT_AND_GATES, [3, 2]), (SEGMENT, [1, 4])] {
            let ended = compute_in(&Circuit::of(aes.program()), max_ands, threads, &value::from_bytes(&key), &value::from_bytes(&block), untouched, false, false);
            let out = ended.evaluator.unwrap();
            assert_eq!(value::to_bytes(&out), [0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a]);
            assert_eq!(ended.garbler.unwrap().unwrap(), out);
        }
    }

    fn small() -> (Circuit, Vec<bool>, Vec<bool>, Vec<bool>) {
        let make = || Box::new(RandomCircuit::new(11, 16, 16, 800, 24, Reveal::Both)) as Box<dyn Program>;
        let mut rng = TestRng::new(3);
        let (x, y) = (rng.bits(16), rng.bits(16));
        let plain = run_plain(make(), x.clone(), y.clone());
        (Circuit::of(make()), x, y, plain)
    }

    /// AND gates of a segment's tables message of `len` bytes (48 bytes each and a p bit).
    fn tables_ands(len: usize) -> usize {
        (0..=len / 48).find(|&a| crate::auth::garble::tables_len(a) == len).expect("a tables message")
    }

    /// A garbled row flipped (every AND gate's G₀ and G₁ in every segment): the consistency
    /// check catches it; with the check off, the evaluator's outputs come out wrong.
    #[test]
    fn a_corrupted_garbled_row_fails_the_consistency_check() {
        let (circuit, x, y, plain) = small();
        let corrupt = |m: Message, bytes: &mut Vec<u8>| {
            if m == Message::Tables {
                for gate in 0..tables_ands(bytes.len()) {
                    bytes[48 * gate..48 * gate + 32].iter_mut().for_each(|b| *b ^= 0x01);
                }
            }
        };
        let ended = compute(&circuit, &x, &y, corrupt, false, false);
        assert_eq!(ended.evaluator.unwrap_err(), AuthError::ConsistencyCheckFailed);
        assert!(ended.garbler.is_none(), "nothing went back to the garbler");
        let ended = compute(&circuit, &x, &y, corrupt, true, false);
        assert_ne!(ended.evaluator.unwrap(), plain, "without the check the corrupted tables give a wrong output");
    }

    /// Only the last segment's tables altered (each of its AND gates' G₀ and G₁, so that some
    /// altered row is read): the check, over all segments, still catches it.
    #[test]
    fn a_corrupted_last_segment_fails_the_consistency_check() {
        let (circuit, x, y, _) = small();
        let segments = circuit.segments(SEGMENT).len();
        let mut seen = 0;
        let corrupt = |m: Message, bytes: &mut Vec<u8>| {
            if m == Message::Tables {
                seen += 1;
                if seen == segments {
                    for gate in 0..tables_ands(bytes.len()) {
                        bytes[48 * gate..48 * gate + 32].iter_mut().for_each(|b| *b ^= 0x01);
                    }
                }
            }
        };
        assert_eq!(compute(&circuit, &x, &y, corrupt, false, false).evaluator.unwrap_err(), AuthError::ConsistencyCheckFailed);
    }

    /// An evaluator that forges the garbler's output: a flipped bit in its opening of its mask
    /// shares of the garbler's outputs (the true MACs) is refused, and so is a label that is
    /// neither of the wire's two; with the garbler's MAC check off, the flipped share goes
    /// through and the garbler takes a wrong output.
    #[test]
    fn an_evaluator_that_forges_the_garblers_output_is_refused() {
        let (circuit, x, y, plain) = small();
        let outputs_to_garbler = circuit.gates.iter().filter(|g| matches!(g, Gate::Output { to, .. } if to.to_garbler())).count();
        let run = |alter: &dyn Fn(&mut Vec<u8>), skip_macs: bool| {
            let Prepared { mut g, mut e, inputs, segments } = prepare(&circuit, SEGMENT);
            let mut gc = g.garbler_computation(inputs.0, x.clone()).unwrap();
            let g1 = gc.input_opening();
            let (mut ec, e1) = e.evaluator_computation(inputs.1, y.clone()).unwrap();
            gc.switches().skip_mac_check = skip_macs;
            let e2 = ec.mask_inputs(&g1).unwrap();
            ec.inputs(&gc.inputs(&e1, &e2).unwrap()).unwrap();
            for (segment, mg, me) in segments {
                ec.evaluate(&segment, me, &gc.garble(&segment, mg).unwrap()).unwrap();
            }
            let (_, mut reply) = ec.finish(&gc.close().unwrap()).unwrap();
            alter(&mut reply);
            gc.finish(&reply)
        };
        let bits_at = 16 * outputs_to_garbler;
        let flip_share = |reply: &mut Vec<u8>| reply[bits_at] ^= 1;
        assert_eq!(run(&flip_share, false), Err(AuthError::MacCheckFailed { what: "output-mask opening" }));
        let forged = run(&flip_share, true).unwrap();
        assert_ne!(forged, plain, "without the MAC check the forged share flips the garbler's output");
        assert_eq!(forged.iter().zip(&plain).filter(|(a, b)| a != b).count(), 1);
        let other_label = |reply: &mut Vec<u8>| reply[5] ^= 0x40;
        assert_eq!(run(&other_label, false), Err(AuthError::OutputLabel));
        assert_eq!(run(&|_: &mut Vec<u8>| {}, false).unwrap(), plain);
    }

    /// The garbler's opening of its mask shares of the evaluator's inputs with flipped bits (and
    /// the true MACs): refused; with the MAC check off, the evaluator's input is effectively
    /// changed and the output is wrong.
    #[test]
    fn a_forged_mac_on_an_input_share_is_refused() {
        let (circuit, x, y, plain) = small();
        let forge = |m: Message, bytes: &mut Vec<u8>| {
            if m == Message::InputMasks {
                bytes[0] ^= 0xff;
            }
        };
        let ended = compute(&circuit, &x, &y, forge, false, false);
        assert_eq!(ended.evaluator.unwrap_err(), AuthError::MacCheckFailed { what: "input-mask opening" });
        let ended = compute(&circuit, &x, &y, forge, false, true);
        assert_ne!(ended.evaluator.unwrap(), plain);
    }

    /// A's opening of its masks of B's inputs, made while its masks are in flight (as the
    /// sessions send it), is the message its computation makes once the masks are in; only A
    /// makes it, and only then.
    #[test]
    fn the_opening_sent_with_the_input_masks_is_the_computations() {
        let (circuit, x, _, _) = small();
        let (mut g, mut e) = connect(4);
        let (inputs, ands) = (circuit.inputs(), circuit.ands() as u64);
        let (mut pg, to_e) = Preprocessor::start(&mut g, inputs, ands, SEGMENT).unwrap();
        let early = g.garbler_input_opening(inputs[0]).unwrap();
        assert!(matches!(e.garbler_input_opening(inputs[0]), Err(AuthError::OutOfOrder { .. })), "B opens nothing ahead");
        let (mut pe, to_g) = Preprocessor::start(&mut e, inputs, ands, SEGMENT).unwrap();
        cross(&mut g, &mut e, &mut pg, &mut pe, to_e, to_g);
        assert!(matches!(g.garbler_input_opening(inputs[0]), Err(AuthError::OutOfOrder { .. })), "not once the masks are in");
        let computation = g.garbler_computation(pg.take_inputs().unwrap(), x).unwrap();
        assert_eq!(early, computation.input_opening());
    }

    /// Steps out of order, messages of the wrong length, material of another computation or
    /// segment, and an opening from another session.
    #[test]
    fn computation_steps_refuse_order_lengths_and_other_sessions() {
        let (circuit, x, y, plain) = small();
        let Prepared { mut g, mut e, inputs, segments } = prepare(&circuit, SEGMENT);
        let mut gc = g.garbler_computation(inputs.0, x.clone()).unwrap();
        let g1 = gc.input_opening();
        let (mut ec, e1) = e.evaluator_computation(inputs.1, y.clone()).unwrap();
        let empty = |segment| SegmentMaterial { masks: vec![], sigma: vec![], computation: 0, segment };
        let first = &segments[0].0;
        assert!(matches!(ec.evaluate(first, empty(0), &[]), Err(AuthError::OutOfOrder { .. })));
        assert!(matches!(gc.garble(first, empty(0)), Err(AuthError::OutOfOrder { .. })));
        assert!(matches!(gc.close(), Err(AuthError::OutOfOrder { .. })));
        assert!(matches!(gc.finish(&[]), Err(AuthError::OutOfOrder { .. })));
        assert_eq!(ec.inputs(&[]), Err(AuthError::OutOfOrder { expected: "the garbler's input-mask opening", got: "the garbler's inputs" }));
        assert!(matches!(ec.mask_inputs(&g1[1..]), Err(AuthError::WrongLength { .. })));
        assert!(matches!(gc.inputs(&e1, &[]), Err(AuthError::WrongLength { .. })));
        let no_inputs = |computation| InputMaterial { masks: [vec![], vec![]], computation };
        assert!(g.evaluator_computation(no_inputs(1), vec![]).is_err());
        // Material is for one computation: the next computation refuses any other's.
        assert_eq!(e.evaluator_computation(no_inputs(0), vec![]).err(), Some(AuthError::MaterialReuse { made_for: 0, computation: 1 }));

        // Each segment's material is for its place: the second segment's is refused first, and
        // a segment's tables of the wrong length are refused.
        let e2 = ec.mask_inputs(&g1).unwrap();
        ec.inputs(&gc.inputs(&e1, &e2).unwrap()).unwrap();
        let mut segments = segments.into_iter();
        let (s0, mg0, me0) = segments.next().unwrap();
        let (s1, mg1, _) = segments.next().unwrap();
        assert!(matches!(gc.garble(&s1, mg1), Err(AuthError::OutOfOrder { .. })));
        let tables = gc.garble(&s0, mg0).unwrap();
        assert!(matches!(ec.evaluate(&s0, me0, &tables[1..]), Err(AuthError::WrongLength { .. })));

        // The same step of another session: its MACs are under other keys, its digest bound
        // to another session id.
        let Prepared { g: mut g_other, inputs: inputs_other, .. } = prepare(&circuit, SEGMENT);
        let g1_other = g_other.garbler_computation(inputs_other.0, x.clone()).unwrap().input_opening();
        let Prepared { e: mut e_fresh, inputs: inputs_fresh, .. } = prepare(&circuit, SEGMENT);
        let (mut ec_fresh, _) = e_fresh.evaluator_computation(inputs_fresh.1, y.clone()).unwrap();
        assert_eq!(ec_fresh.mask_inputs(&g1_other).unwrap_err(), AuthError::MacCheckFailed { what: "input-mask opening" });
        assert!(matches!(ec_fresh.mask_inputs(&g1_other), Err(AuthError::OutOfOrder { .. })), "a failed check ends the computation");

        // The honest computation of another pair still gives the plaintext result.
        assert_eq!(compute(&circuit, &x, &y, untouched, false, false).evaluator.unwrap(), plain);
    }

    /// The AND gates a computation announces fix its number of segments, and with it every
    /// batch's bucket size: a segment past them is refused on both sides before its
    /// preprocessing starts.
    #[test]
    fn a_segment_past_the_announced_and_gates_is_refused() {
        let (circuit, ..) = small();
        let (mut g, mut e) = connect(4);
        let announced = SEGMENT as u64;
        let (mut pg, to_e) = Preprocessor::start(&mut g, circuit.inputs(), announced, SEGMENT).unwrap();
        let (mut pe, to_g) = Preprocessor::start(&mut e, circuit.inputs(), announced, SEGMENT).unwrap();
        assert!(matches!(pg.start_segment(&mut g, Segment::default()), Err(AuthError::OutOfOrder { .. })), "the inputs' masks come first");
        cross(&mut g, &mut e, &mut pg, &mut pe, to_e, to_g);
        pg.take_inputs().unwrap();
        pe.take_inputs().unwrap();
        let mut segments = circuit.segments(SEGMENT).into_iter();
        let first = segments.next().unwrap();
        let (to_e, to_g) = (pg.start_segment(&mut g, first.clone()).unwrap().unwrap(), pe.start_segment(&mut e, first).unwrap().unwrap());
        cross(&mut g, &mut e, &mut pg, &mut pe, to_e, to_g);
        assert!(pg.take_segment().is_some() && pe.take_segment().is_some());
        assert!(pg.all_started());
        let second = segments.next().unwrap();
        assert!(matches!(pg.start_segment(&mut g, second.clone()), Err(AuthError::MaterialCount { .. })));
        assert!(matches!(pe.start_segment(&mut e, second), Err(AuthError::MaterialCount { .. })));
    }
}
