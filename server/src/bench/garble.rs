//! `garblet bench garble`: garbling and evaluation speed in one process, beside raw AES, for
//! each garbling scheme (half-gates, three-halves).
//!
//! Garbles and evaluates the built-in `synthetic` circuit (wide, one XOR per AND), building it
//! on both sides as the two parties would, and times each side separately, batch by batch. The
//! schemes take turns, six rounds each, and each reports its fastest round (the least
//! disturbed by other processes); the top-level rates are half-gates'.
//! The evaluator's input labels come from a local dealer: OT has its own benchmark.
//!
//! Each scheme runs twice per round: with the garbling hash sessions use (keys per instance,
//! re-keyed every 64 tweaks) and with the fixed-key hash it replaced, the two pipelines taking
//! turns batch by batch so that another process's burst falls on both alike. The report gives
//! what the instance keys cost in the same run (`*_vs_fixed_key`: time with ÷ time without,
//! the median of the rounds' ratios).
//! The hash is also timed alone on the inputs of full groups, each side's layout
//! (`*_hash_ns_per_and`, with the fixed key `*_hash_fixed_key_ns_per_and`) in short interleaved
//! rounds, and its extra time per AND gate reported as a fraction of the fixed-key pipeline's
//! (`*_hash_extra_vs_fixed_key`): the instance keys' cost with far less of the machine's noise
//! than the whole pipeline's ratio, which moves by several percent from run to run on a shared
//! VM.
//!
//! The topology of a streamed circuit (`protocol::topology`, the bundled AES-128) is timed too:
//! the garbler writing it and the evaluator reading it, per gate (`topology_*_ns_per_gate`),
//! which the evaluator does for every gate of a streamed circuit, before its evaluation. And
//! building a library program (edit distance of 100 × 100 symbols, `build_ns_per_gate`), which
//! both parties do for every computation of one.
//!
//! Times are the thread's CPU time, so that rates measured in the same run compare fairly even
//! when other processes share the machine (wall-clock rates would charge one measurement for
//! another process's burst).

use super::report::{rate, Report};
use super::{synthetic_circuit, BundledBristol, SYNTHETIC_INPUTS};
use garblet_core::aes::{encrypt_runs, keys_per_pass, Aes128, FixedKeyAes, KeySchedule, KeySchedules};
use garblet_core::garble::{evaluator_hash_group, garbler_hash_group, random_delta, Evaluator, Garbler, GarblingHash, Scheme, TweakLayout};
use garblet_core::Block;
use crate::clock::thread_cpu_ms;
use garblet_circuits::Runner;
use garblet_core::protocol::topology::{self, TopologyError, TopologyReader, TopologyWriter, WholeStream};

/// CPU seconds of this thread since some fixed point (wall time where CPU time is unknown).
fn cpu_seconds(start: std::time::Instant) -> f64 {
    thread_cpu_ms().map_or_else(|| start.elapsed().as_secs_f64(), |ms| ms / 1e3)
}

/// Interleaved rounds per scheme and hash: the fastest of each is kept, so more rounds let
/// both hashes' figures settle on an undisturbed round.
const ROUNDS: usize = 6;

pub struct Options {
    pub and_gates: u64,
}

pub fn run(options: &Options, json: bool) -> Result<(), String> {
    let mut report = Report::new();
    let aes = aes_crate_blocks_per_s();
    let pi = FixedKeyAes::pi();
    let pi_rate = fixed_key_blocks_per_s(&pi);
    // Interleaved rounds: (garble s, eval s, bytes) per scheme and hash, the fastest of each
    // side kept; and each round's ratios of the two hashes' times, which ran side by side.
    let mut best = [(f64::INFINITY, f64::INFINITY, 0usize); Scheme::ALL.len()];
    let mut fixed = best;
    let mut ratios: Vec<[Vec<f64>; 2]> = Scheme::ALL.iter().map(|_| [Vec::new(), Vec::new()]).collect();
    for _ in 0..ROUNDS {
        for (k, scheme) in Scheme::ALL.into_iter().enumerate() {
            let [(g, e, bytes), (fixed_g, fixed_e, _)] = garble_and_evaluate_side_by_side(scheme, options.and_gates, [Hash::Instance, Hash::FixedKey])?;
            best[k] = (best[k].0.min(g), best[k].1.min(e), bytes);
            fixed[k] = (fixed[k].0.min(fixed_g), fixed[k].1.min(fixed_e), bytes);
            ratios[k][0].push(g / fixed_g);
            ratios[k][1].push(e / fixed_e);
        }
    }
    let and_gates = options.and_gates as f64;
    let (garble_s, eval_s, bytes) = best[0];
    let garble = rate(and_gates, garble_s);
    report
        .set("and_gates", options.and_gates)
        .set("garble_and_per_s", garble)
        .set("eval_and_per_s", rate(and_gates, eval_s))
        .set("aes_blocks_per_s", aes)
        .set("garble_vs_aes_bound", garble / (aes / 4.0))
        .set("pi_engine", pi.engine_name())
        .set("hash_engine", GarblingHash::new(Block::ZERO).engine_name())
        .set("pi_blocks_per_s", pi_rate)
        .set("bytes_per_and", bytes as f64 / and_gates);
    for (((scheme, (garble_s, eval_s, bytes)), (fixed_garble_s, fixed_eval_s, _)), [garble_ratios, eval_ratios]) in Scheme::ALL.into_iter().zip(best).zip(fixed).zip(ratios) {
        let key = scheme.name().replace('-', "_");
        report
            .set(&format!("{key}_bytes_per_and"), bytes as f64 / and_gates)
            .set(&format!("{key}_garble_ns_per_and"), garble_s * 1e9 / and_gates)
            .set(&format!("{key}_eval_ns_per_and"), eval_s * 1e9 / and_gates)
            .set(&format!("{key}_garble_and_per_s"), rate(and_gates, garble_s))
            .set(&format!("{key}_eval_and_per_s"), rate(and_gates, eval_s))
            .set(&format!("{key}_fixed_key_garble_ns_per_and"), fixed_garble_s * 1e9 / and_gates)
            .set(&format!("{key}_fixed_key_eval_ns_per_and"), fixed_eval_s * 1e9 / and_gates)
            .set(&format!("{key}_garble_vs_fixed_key"), median(garble_ratios))
            .set(&format!("{key}_eval_vs_fixed_key"), median(eval_ratios));
        // The hash alone on full groups' inputs: what the instance keys add per AND gate, as a
        // fraction of the fixed-key pipeline's time on the same side.
        for (side, fixed_side_s, (layout, ands)) in [("garble", fixed_garble_s, garbler_hash_group(scheme)), ("eval", fixed_eval_s, evaluator_hash_group(scheme))] {
            let (instance, fixed_key) = hash_ns_per_and(layout, ands);
            report
                .set(&format!("{key}_{side}_hash_ns_per_and"), instance)
                .set(&format!("{key}_{side}_hash_fixed_key_ns_per_and"), fixed_key)
                .set(&format!("{key}_{side}_hash_extra_vs_fixed_key"), (instance - fixed_key) / (fixed_side_s * 1e9 / and_gates));
        }
    }
    let keyed = keyed_aes_ns_per_block();
    report
        .set("fixed_key_aes_ns_per_block", keyed.fixed)
        .set("keyed_aes_aligned_ns_per_block", keyed.aligned)
        .set("keyed_aes_unaligned_ns_per_block", keyed.unaligned)
        .set("keyed_aes_aligned_vs_fixed_key", keyed.aligned / keyed.fixed)
        .set("keyed_aes_unaligned_vs_fixed_key", keyed.unaligned / keyed.fixed)
        .set("key_schedule_ns", key_schedule_ns());
    let topology = topology_ns_per_gate()?;
    report
        .set("topology_gates", topology.gates)
        .set("topology_bytes_per_gate", topology.bytes as f64 / topology.gates as f64)
        .set("topology_write_ns_per_gate", topology.write_ns)
        .set("topology_read_ns_per_gate", topology.read_ns);
    let (build_gates, build_ns) = build_ns_per_gate()?;
    report.set("build_gates", build_gates as u64).set("build_ns_per_gate", build_ns);
    let (hg, th) = (best[0], best[1]);
    report
        .set("three_halves_vs_half_gates_garble", hg.0 / th.0)
        .set("three_halves_vs_half_gates_eval", hg.1 / th.1)
        .set("max_rss_mb", super::max_rss_mb())
        .set("timing", format!("thread CPU time, fastest of {ROUNDS} interleaved rounds; the instance keys' ratios the median of the rounds', both hashes side by side batch by batch"));
    report.print(json);
    Ok(())
}

/// The library's edit distance of 100 × 100 symbols (`levenshtein`, its default cell) built
/// gate by gate as each party builds it for every computation: its gates, and the CPU per gate,
/// the fastest of [`ROUNDS`] builds.
fn build_ns_per_gate() -> Result<(usize, f64), String> {
    let spec = garblet_circuits::registry::find("levenshtein").ok_or("the levenshtein program is missing")?;
    let params = spec.resolve([("n", 100), ("m", 100)]).map_err(|e| e.to_string())?;
    let (mut gates, mut best) = (0, f64::INFINITY);
    let origin = std::time::Instant::now();
    for _ in 0..ROUNDS {
        let start = cpu_seconds(origin);
        let mut runner = Runner::new(spec.instantiate(&params).map_err(|e| e.to_string())?);
        gates = 0;
        while let Some(batch) = runner.next_batch().map_err(|e| e.to_string())? {
            gates += batch.gates.len();
        }
        best = best.min(cpu_seconds(origin) - start);
    }
    Ok((gates, best * 1e9 / gates as f64))
}

/// A streamed topology's gates and bytes, and the CPU its writing and reading take per gate.
struct TopologyTimes {
    gates: usize,
    bytes: usize,
    write_ns: f64,
    read_ns: f64,
}

/// The bundled AES-128's streamed topology, timed as the fastest of [`ROUNDS`] runs each of
/// writing it (the garbler, once per circuit it keeps) and reading it (the evaluator, checking
/// every reference and the circuit's hash).
fn topology_ns_per_gate() -> Result<TopologyTimes, String> {
    let mut runner = Runner::new(Box::new(BundledBristol::find("aes_128")?.program()?));
    let mut batches = Vec::new();
    let id = topology::circuit_id(&mut runner, |batch, _| batches.push(batch.clone())).map_err(|e| e.to_string())?;
    let gates: usize = batches.iter().map(|b| b.gates.len()).sum();
    let (mut write_s, mut read_s, mut stream) = (f64::INFINITY, f64::INFINITY, Vec::new());
    let origin = std::time::Instant::now();
    for _ in 0..ROUNDS {
        let start = cpu_seconds(origin);
        let mut writer = TopologyWriter::new();
        stream.clear();
        for batch in &batches {
            writer.record(batch, &mut stream);
        }
        stream.extend_from_slice(&topology::end_record());
        write_s = write_s.min(cpu_seconds(origin) - start);
    }
    for _ in 0..ROUNDS {
        let start = cpu_seconds(origin);
        let mut read = 0;
        let walk = TopologyReader::new(id, u32::MAX).read_whole(&stream, |batch| {
            read += batch.gates.len();
            Ok::<_, TopologyError>(())
        });
        read_s = read_s.min(cpu_seconds(origin) - start);
        if walk.map_err(|e| e.to_string())? != WholeStream::Ended(stream.len()) {
            return Err("the topology does not end at its end record".into());
        }
        if read != gates {
            return Err(format!("read {read} gates of the topology, not {gates}"));
        }
    }
    Ok(TopologyTimes { gates, bytes: stream.len(), write_ns: write_s * 1e9 / gates as f64, read_ns: read_s * 1e9 / gates as f64 })
}

/// The median of the rounds' ratios (of an even number, the mean of the middle two).
fn median(mut ratios: Vec<f64>) -> f64 {
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    if n % 2 == 1 {
        ratios[n / 2]
    } else {
        (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0
    }
}

/// Which garbling hash a measurement runs with.
#[derive(Clone, Copy)]
pub enum Hash {
    /// The sessions' hash: keys from a fresh instance seed.
    Instance,
    /// The fixed-key hash, for comparison only.
    FixedKey,
}

impl Hash {
    fn make(self, seed: Block) -> GarblingHash {
        match self {
            Hash::Instance => GarblingHash::new(seed),
            Hash::FixedKey => GarblingHash::fixed_key(),
        }
    }
}

/// Seconds spent garbling and evaluating (each side: building its batches plus its engine),
/// and the payload bytes.
pub fn garble_and_evaluate(scheme: Scheme, and_gates: u64, hash: Hash) -> Result<(f64, f64, usize), String> {
    let [times] = garble_and_evaluate_side_by_side(scheme, and_gates, [hash])?;
    Ok(times)
}

/// [`garble_and_evaluate`] for each of `hashes`, their pipelines taking turns batch by batch,
/// so that a burst of another process's work falls on all of them alike.
fn garble_and_evaluate_side_by_side<const N: usize>(scheme: Scheme, and_gates: u64, hashes: [Hash; N]) -> Result<[(f64, f64, usize); N], String> {
    let mut pipelines = Vec::with_capacity(N);
    for hash in hashes {
        pipelines.push(Pipeline::new(scheme, and_gates, hash)?);
    }
    let mut payload = Vec::with_capacity(1 << 20);
    let origin = std::time::Instant::now();
    // Each batch in turn, the order turning too: none always runs right after another.
    let mut turn = 0;
    while !pipelines.iter().all(|p| p.done) {
        pipelines.rotate_left(1);
        turn += 1;
        for pipeline in pipelines.iter_mut().filter(|p| !p.done) {
            pipeline.step(&mut payload, origin)?;
        }
    }
    pipelines.rotate_right(turn % N.max(1));
    let mut times = [(0.0, 0.0, 0); N];
    for (t, p) in times.iter_mut().zip(&pipelines) {
        *t = (p.garble_s, p.eval_s, p.bytes);
    }
    Ok(times)
}

/// A garbler and an evaluator of the `synthetic` circuit, with the time each side has taken.
struct Pipeline {
    garbler: Garbler,
    evaluator: Evaluator,
    g_runner: garblet_circuits::Runner<'static>,
    e_runner: garblet_circuits::Runner<'static>,
    garble_s: f64,
    eval_s: f64,
    bytes: usize,
    done: bool,
}

impl Pipeline {
    fn new(scheme: Scheme, and_gates: u64, hash: Hash) -> Result<Self, String> {
        let delta = random_delta().map_err(|e| e.to_string())?;
        let seed = Block::random().map_err(|e| e.to_string())?;
        let mut garbler = Garbler::new(scheme, delta, hash.make(seed)).map_err(|e| e.to_string())?;
        let mut evaluator = Evaluator::new(scheme, hash.make(seed));
        let choices: Vec<bool> = (0..SYNTHETIC_INPUTS).map(|i| i % 3 == 0).collect();
        let zero: Vec<Block> = choices.iter().map(|_| Block::random().expect("OS randomness")).collect();
        let active: Vec<Block> = zero.iter().zip(&choices).map(|(&q, &r)| q ^ delta.select(r)).collect();
        garbler.start_computation(vec![false; SYNTHETIC_INPUTS], zero);
        evaluator.start_computation(active);
        let (g_runner, e_runner) = (synthetic_circuit(and_gates), synthetic_circuit(and_gates));
        Ok(Pipeline { garbler, evaluator, g_runner, e_runner, garble_s: 0.0, eval_s: 0.0, bytes: 0, done: false })
    }

    /// Garbles and evaluates the next batch (`payload` is scratch).
    fn step(&mut self, payload: &mut Vec<u8>, origin: std::time::Instant) -> Result<(), String> {
        payload.clear();
        let t0 = cpu_seconds(origin);
        let Some(batch) = self.g_runner.next_batch().map_err(|e| e.to_string())? else {
            self.done = true;
            return Ok(());
        };
        self.garbler.garble(batch, payload).map_err(|e| e.to_string())?;
        let t1 = cpu_seconds(origin);
        let batch = self.e_runner.next_batch().map_err(|e| e.to_string())?.ok_or("the evaluator's program ended early")?;
        self.evaluator.evaluate(batch, payload).map_err(|e| e.to_string())?;
        self.garble_s += t1 - t0;
        self.eval_s += cpu_seconds(origin) - t1;
        self.bytes += payload.len();
        Ok(())
    }
}

/// The `aes` crate, AES-128 on batches of 1024 blocks.
pub fn aes_crate_blocks_per_s() -> f64 {
    let aes = Aes128::new([7; 16]);
    let mut blocks = vec![Block::ZERO; 1024];
    time_blocks(|| aes.encrypt_blocks(&mut blocks), 1024)
}

fn fixed_key_blocks_per_s(pi: &FixedKeyAes) -> f64 {
    let mut blocks = vec![Block::ZERO; 1024];
    time_blocks(|| pi.encrypt_blocks(&mut blocks), 1024)
}

/// The garbling hash's AES alone, nanoseconds per block: the fixed-key kernel, and the
/// instance keys' engine on the runs one group of hash inputs gives — aligned (a key every 64
/// blocks, as a full group of half-gates' evaluator has) and not (three keys of 128 blocks
/// starting mid-key, as a group that follows a partial flush has).
struct KeyedAes {
    fixed: f64,
    aligned: f64,
    unaligned: f64,
}

fn keyed_aes_ns_per_block() -> KeyedAes {
    let keys: Vec<Block> = (0..4u128).map(|i| Block(0x5eed ^ i)).collect();
    let schedules = KeySchedules::of(&keys);
    let pi = FixedKeyAes::pi();
    let shapes: [&[usize]; 2] = [&[64, 64], &[50, 128, 128, 78]];
    let runs: Vec<Vec<(KeySchedule, usize)>> = shapes.iter().map(|shape| shape.iter().enumerate().map(|(key, &len)| (schedules.get(key), len)).collect()).collect();
    let mut blocks = vec![Block::ZERO; 384];
    // Fastest of interleaved rounds, each 500 calls: the three measure under the same load.
    let mut best = [f64::INFINITY; 3];
    for _ in 0..15 {
        for (variant, best) in best.iter_mut().enumerate() {
            let len = if variant == 0 { 128 } else { shapes[variant - 1].iter().sum() };
            let origin = std::time::Instant::now();
            let start = cpu_seconds(origin);
            for _ in 0..500 {
                match variant {
                    0 => pi.encrypt_blocks(&mut blocks[..len]),
                    v => encrypt_runs(&mut blocks[..len], runs[v - 1].iter().copied()),
                }
            }
            *best = best.min((cpu_seconds(origin) - start) * 1e9 / (500 * len) as f64);
        }
    }
    KeyedAes { fixed: best[0], aligned: best[1], unaligned: best[2] }
}

/// The garbling hash on the inputs of full groups of `ands` AND gates in `layout`, one group
/// after the next (tweaks moving on as a session's do, so the instance keys' schedules are
/// counted), nanoseconds per AND gate: with instance keys, and with the fixed key. Fastest of
/// interleaved rounds, each short, so that the two measure under the same load and a burst of
/// other work spoils a round, not the figure.
fn hash_ns_per_and(layout: TweakLayout, ands: usize) -> (f64, f64) {
    const GROUPS: usize = 4096;
    let mut y = vec![Block(0x5eed); layout.blocks * ands];
    let per_group = layout.tweaks() * ands as u128;
    let mut best = [f64::INFINITY; 2];
    let mut first = 0u128;
    let mut instance = GarblingHash::new(Block(0x5eed));
    let mut fixed_key = GarblingHash::fixed_key();
    for _ in 0..15 {
        for (hash, best) in [&mut instance, &mut fixed_key].into_iter().zip(best.iter_mut()) {
            let origin = std::time::Instant::now();
            let start = cpu_seconds(origin);
            for _ in 0..GROUPS {
                hash.permute(&mut y, first, layout);
                first += per_group;
            }
            *best = best.min((cpu_seconds(origin) - start) * 1e9 / (GROUPS * ands) as f64);
        }
    }
    (best[0], best[1])
}

/// The instance keys' schedules, nanoseconds per key, expanded a pass of the engine's at a time
/// as the garbling hash does (one key serves 64 tweaks: 32 AND gates of half-gates).
fn key_schedule_ns() -> f64 {
    let pass = keys_per_pass();
    let mut keys: Vec<Block> = (0..pass as u128).map(|i| Block(0x5eed ^ i)).collect();
    let mut schedules = KeySchedules::new();
    let keys_per_s = time_blocks(
        || {
            schedules.clear();
            schedules.expand(&keys);
            keys[0] = Block(keys[0].0 ^ schedules.get(pass - 1).round_key(10)[0] as u128);
        },
        pass,
    );
    1e9 / keys_per_s
}

/// Calls `f` (which processes `per_call` blocks) for about 0.3 s of CPU time; blocks per second.
fn time_blocks(mut f: impl FnMut(), per_call: usize) -> f64 {
    for _ in 0..100 {
        f();
    }
    let origin = std::time::Instant::now();
    let start = cpu_seconds(origin);
    let mut calls = 0u64;
    while cpu_seconds(origin) - start < 0.3 {
        for _ in 0..100 {
            f();
        }
        calls += 100;
    }
    rate((calls * per_call as u64) as f64, cpu_seconds(origin) - start)
}
