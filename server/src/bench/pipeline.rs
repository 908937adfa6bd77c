//! The ceiling `bench session` is measured against: the same garbling and evaluation in two
//! processes joined by loopback TCP, with none of the protocol — no WebSocket, no frames, no
//! credit, no OT (the evaluator's labels are dealt in the clear) — and the best thread layout
//! we found: a garbling thread, a writer thread doing 1 MiB writes, and the evaluator reading
//! into one large buffer. On a two-core machine the four stages (garble, send, receive,
//! evaluate) share two cores, and this says how fast they can go there at all.
//!
//! Not a protocol: the labels travel unprotected. It exists to be measured.

use super::{synthetic_circuit as circuit, CpuWatch, SYNTHETIC_INPUTS as INPUTS};
use garblet_core::garble::{payload_len, random_delta, Evaluator, Garbler, GarblingHash, Scheme};
use garblet_core::Block;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

const WRITE_BYTES: usize = 1 << 20;

/// What the pipeline did: AND gates per second, and the CPU time of each side meanwhile (in
/// milliseconds, where the platform can tell).
pub struct PipelineRun {
    pub and_per_s: f64,
    pub garbler_cpu_ms: Option<f64>,
    pub evaluator_cpu_ms: Option<f64>,
}

/// AND gates per second of garbler → TCP → evaluator, from the first byte sent to the
/// evaluator's word that it has evaluated everything. The evaluator is this executable again
/// (`garblet bench pipeline-peer`), a process of its own like a real client.
pub fn run(and_gates: u64) -> Result<PipelineRun, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("pipeline: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut peer = Command::new(exe)
        .args(["bench", "pipeline-peer", "--connect", &addr.to_string(), "--and-gates", &and_gates.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("pipeline: starting the evaluator: {e}"))?;
    let (mut socket, _) = listener.accept().map_err(|e| format!("pipeline: {e}"))?;
    socket.set_nodelay(true).map_err(|e| e.to_string())?;

    let delta = random_delta().map_err(|e| e.to_string())?;
    let hash_seed = Block::random().map_err(|e| e.to_string())?;
    let mut garbler = Garbler::new(Scheme::HalfGates, delta, GarblingHash::new(hash_seed)).map_err(|e| e.to_string())?;
    let zero = garbler.fresh_labels(INPUTS);
    // The garbling hash's instance seed, then the evaluator's labels: its inputs are all 0, so
    // its labels are the zero-labels.
    let dealt: Vec<u8> = hash_seed.to_bytes().into_iter().chain(zero.iter().flat_map(|l| l.to_bytes())).collect();
    garbler.start_computation(vec![false; INPUTS], zero);

    let start = Instant::now();
    let (garbler_cpu, evaluator_cpu) = (CpuWatch::start(std::process::id()), CpuWatch::start(peer.id()));
    socket.write_all(&dealt).map_err(|e| e.to_string())?;
    // Garbled chunks go to a writer thread; spent buffers come back, so nothing is allocated
    // in the steady state.
    let (to_writer, chunks) = mpsc::sync_channel::<Vec<u8>>(4);
    let (recycle, recycled) = mpsc::channel::<Vec<u8>>();
    let mut writer_socket = socket.try_clone().map_err(|e| e.to_string())?;
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        for chunk in chunks {
            writer_socket.write_all(&chunk)?;
            let _ = recycle.send(chunk);
        }
        Ok(())
    });
    let mut runner = circuit(and_gates);
    let mut chunk = Vec::with_capacity(2 * WRITE_BYTES);
    while let Some(batch) = runner.next_batch().map_err(|e| e.to_string())? {
        garbler.garble(batch, &mut chunk).map_err(|e| e.to_string())?;
        if chunk.len() >= WRITE_BYTES {
            let next = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(2 * WRITE_BYTES));
            to_writer.send(std::mem::replace(&mut chunk, next)).map_err(|_| "pipeline: the writer stopped")?;
            chunk.clear();
        }
    }
    to_writer.send(chunk).map_err(|_| "pipeline: the writer stopped")?;
    drop(to_writer);
    writer.join().map_err(|_| "pipeline: the writer panicked")?.map_err(|e| e.to_string())?;
    let mut done = [0u8; 1];
    socket.read_exact(&mut done).map_err(|e| format!("pipeline: the evaluator did not finish: {e}"))?;
    let seconds = start.elapsed().as_secs_f64();
    let (garbler_cpu_ms, evaluator_cpu_ms) = (garbler_cpu.spent_ms(), evaluator_cpu.spent_ms());

    let mut line = String::new();
    if let Some(out) = peer.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    let _ = peer.wait();
    if line.trim() != "ok" {
        return Err(format!("pipeline: the evaluator said {:?}", line.trim()));
    }
    Ok(PipelineRun { and_per_s: and_gates as f64 / seconds, garbler_cpu_ms, evaluator_cpu_ms })
}

/// The evaluator's side (`garblet bench pipeline-peer`): reads and evaluates, says one byte
/// back when done, prints `ok`.
pub fn peer(connect: &str, and_gates: u64) -> Result<(), String> {
    let mut socket = TcpStream::connect(connect).map_err(|e| format!("pipeline peer: {e}"))?;
    socket.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut dealt = vec![0u8; (1 + INPUTS) * Block::BYTES];
    socket.read_exact(&mut dealt).map_err(|e| e.to_string())?;
    let mut blocks = dealt.as_chunks::<16>().0.iter().map(|b| Block::from_bytes(*b));
    let hash_seed = blocks.next().ok_or("pipeline peer: no hash seed")?;
    let mut evaluator = Evaluator::new(Scheme::HalfGates, GarblingHash::new(hash_seed));
    let labels = blocks.collect();
    evaluator.start_computation(labels);

    let mut buffer = vec![0u8; 8 << 20];
    let (mut filled, mut read) = (0, 0);
    let mut runner = circuit(and_gates);
    while let Some(batch) = runner.next_batch().map_err(|e| e.to_string())? {
        let need = payload_len(Scheme::HalfGates, &batch.counts);
        while filled - read < need {
            if read > 0 {
                buffer.copy_within(read..filled, 0);
                filled -= read;
                read = 0;
            }
            let n = socket.read(&mut buffer[filled..]).map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("pipeline peer: the garbler stopped early".into());
            }
            filled += n;
        }
        evaluator.evaluate(batch, &buffer[read..read + need]).map_err(|e| e.to_string())?;
        read += need;
    }
    socket.write_all(&[1]).map_err(|e| e.to_string())?;
    println!("ok");
    std::io::stdout().flush().map_err(|e| e.to_string())
}
