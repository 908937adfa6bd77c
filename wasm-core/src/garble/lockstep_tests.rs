//! The lock-step engines against the one-circuit ones: circuits garbled together give, batch by
//! batch, the very bytes and labels each gives alone (both schemes; random circuits, a wide
//! synthetic one whose groups fill up, and Bristol's AES-128, whose groups are mostly one or
//! two ANDs), and evaluating them together gives each circuit's outputs as evaluating it alone
//! does — the plaintext's.

use super::*;
use crate::aes::AesCtr;
use garblet_circuits::bristol::{self, BristolInput, BristolOutput, BristolProgram, InputSource};
use garblet_circuits::testing::{RandomCircuit, TestRng};
use garblet_circuits::{Encoding, Party, Plaintext, Program, Reveal, Runner};
use std::sync::Arc;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

const AES_128: &[u8] = include_bytes!("../../../circuits/bristol/aes_128.txt");

fn aes_128() -> Box<dyn Program> {
    let info = Arc::new(bristol::scan(AES_128).unwrap());
    let inputs = vec![
        BristolInput { name: "key".into(), source: InputSource::Party(Party::Garbler), encoding: Encoding::Bytes },
        BristolInput { name: "block".into(), source: InputSource::Party(Party::Evaluator), encoding: Encoding::Bytes },
    ];
    let outputs = vec![BristolOutput { name: "ciphertext".into(), reveal: Reveal::Evaluator, signed: false, bytes: false }];
    Box::new(BristolProgram::new(AES_128, info, inputs, outputs).unwrap())
}

/// Garbles `make`'s circuit from `circuits` seeds twice — each circuit alone, and all in lock
/// step — and checks them equal; then evaluates the lock-step garbling both ways and checks the
/// outputs against the plaintext.
fn check(scheme: Scheme, make: &dyn Fn() -> Box<dyn Program>, circuits: usize, rng: &mut TestRng) {
    let shape = make().shape().clone();
    let (gx, ey) = (shape.input_bits(Party::Garbler), shape.input_bits(Party::Evaluator));
    let (x, y) = (rng.bits(gx), rng.bits(ey));
    let seeds: Vec<[u8; 16]> = (0..circuits).map(|_| core::array::from_fn(|_| rng.next_u64() as u8)).collect();
    let garblers = || -> Vec<Garbler> {
        seeds
            .iter()
            .enumerate()
            .map(|(j, &seed)| {
                let mut g = Garbler::from_seed(scheme, seed, GarblingHash::new(Block::from_bytes(seed) ^ Block(j as u128)));
                g.set_and_index(j as u64 * 1_000_000);
                let zero = AesCtr::new(seed).bits(ey).iter().map(|&b| Block(b as u128 | 0x5a5a << 64 | (j as u128) << 100)).collect();
                g.start_computation(Vec::new(), zero);
                g
            })
            .collect()
    };
    let (mut alone, mut together) = (garblers(), garblers());
    let mut detached_alone = vec![Detached::default(); circuits];
    let mut detached_together = vec![Detached::default(); circuits];
    let mut stream: Vec<(garblet_circuits::Batch, Vec<Vec<u8>>)> = Vec::new();
    let mut runner = Runner::new(make());
    while let Some(batch) = runner.next_batch().unwrap() {
        let mut tables_alone = vec![Vec::new(); circuits];
        for ((g, t), d) in alone.iter_mut().zip(&mut tables_alone).zip(&mut detached_alone) {
            g.garble_detached(batch, t, d).unwrap();
        }
        let mut tables_together = vec![Vec::new(); circuits];
        let mut jobs: Vec<LockstepGarbling<'_>> = together.iter_mut().zip(&mut tables_together).zip(&mut detached_together).map(|((garbler, tables), detached)| LockstepGarbling { garbler, tables, detached }).collect();
        Garbler::garble_detached_lockstep(&mut jobs, batch).unwrap();
        assert_eq!(tables_alone, tables_together, "{scheme}: tables of a batch");
        stream.push((garblet_circuits::Batch { gates: batch.gates.clone(), slots: batch.slots, counts: batch.counts }, tables_together));
    }
    assert_eq!(detached_alone, detached_together, "{scheme}: input and output labels");
    for (a, t) in alone.iter().zip(&together) {
        assert_eq!(a.and_gates(), t.and_gates());
    }

    // Evaluation, from the active labels of x and y.
    let want = {
        let mut plain = Plaintext::new(x.clone(), y.clone());
        Runner::new(make()).run(&mut plain).unwrap();
        plain.into_outputs()
    };
    let evaluators = || -> Vec<Evaluator> {
        together
            .iter()
            .enumerate()
            .map(|(j, g)| {
                let mut e = Evaluator::new(scheme, GarblingHash::new(g.hash_seed().expect("a seeded garbler's instance")));
                e.set_and_index(j as u64 * 1_000_000);
                e.start_computation(g.evaluator_zero_labels().iter().zip(&y).map(|(&z, &b)| z ^ g.delta().select(b)).collect());
                e
            })
            .collect()
    };
    let garbler_labels: Vec<Vec<Block>> = together.iter().zip(&detached_together).map(|(g, d)| d.garbler_inputs.iter().zip(&x).map(|(&z, &b)| z ^ g.delta().select(b)).collect()).collect();
    let (mut alone, mut together_e) = (evaluators(), evaluators());
    let (mut out_alone, mut out_together) = (vec![Vec::new(); circuits], vec![Vec::new(); circuits]);
    let mut used = 0;
    for (batch, tables) in &stream {
        let n = batch.counts.inputs[Party::Garbler.index()] as usize;
        for (j, e) in alone.iter_mut().enumerate() {
            e.evaluate_detached(batch, &tables[j], &garbler_labels[j][used..used + n], &mut out_alone[j]).unwrap();
        }
        let mut jobs: Vec<LockstepEvaluation<'_>> = together_e
            .iter_mut()
            .zip(tables)
            .zip(&garbler_labels)
            .zip(&mut out_together)
            .map(|(((evaluator, material), labels), outputs)| LockstepEvaluation { evaluator, material, garbler_labels: &labels[used..used + n], outputs })
            .collect();
        Evaluator::evaluate_detached_lockstep(&mut jobs, batch).unwrap();
        used += n;
    }
    assert_eq!(out_alone, out_together, "{scheme}: evaluated outputs");
    for (j, outputs) in out_together.iter().enumerate() {
        let decoded: Vec<bool> = outputs
            .iter()
            .zip(&detached_together[j].outputs)
            .map(|(o, z)| match (o, z) {
                (WireOutput::Label(active), WireOutput::Label(zero)) => active.lsb() ^ zero.lsb(),
                (WireOutput::Public(v), _) => *v,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(decoded, want, "{scheme}: circuit {j} against the plaintext");
    }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn circuits_in_lock_step_are_each_circuit_alone() {
    let mut rng = TestRng::new(42);
    for scheme in Scheme::ALL {
        for (gates, outputs) in [(1, 4), (300, 2), (3000, 6), (20_000, 64)] {
            let seed = rng.next_u64();
            let make = move || Box::new(RandomCircuit::new(seed, 12, 20, gates, outputs, Reveal::Evaluator)) as Box<dyn Program>;
            for circuits in [1, 2, 5] {
                check(scheme, &make, circuits, &mut rng);
            }
        }
        // Wide: groups of 64 ANDs, flushed because they are full.
        let synthetic = || Box::new(garblet_circuits::library::synthetic::Synthetic::new(3000, 1, 512, 7)) as Box<dyn Program>;
        check(scheme, &synthetic, 3, &mut rng);
        check(scheme, &aes_128, 3, &mut rng);
    }
}
