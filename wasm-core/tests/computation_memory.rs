//! The server's estimate of a computation's memory (`GarblerSession::memory`), which its budget
//! for the computations' memory charges, against the heap the garbler really holds: this
//! test's allocator counts every live allocation for the party whose call made it, wherever it
//! is freed, and the peak of the garbler's must stay under the estimate — and, for the
//! computations of several MiB that the budget is there for, within twice it, so that the
//! estimate does not refuse what would fit.

// The server's concern, with its threads: native only.
#![cfg(not(target_arch = "wasm32"))]

mod support;

use garblet_core::garble::Garbling;
use garblet_core::protocol::catalog::ParamInfo;
use garblet_core::protocol::{EvaluatorConfig, EvaluatorEvent, EvaluatorSession, GarblerConfig, GarblerSession, NoClock, Security};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::sync::Mutex;
use support::{builtin_service, Pair, TestServices};

/// The system allocator, each allocation tagged with the party whose call made it.
struct Tagged;

const GARBLER: usize = 0;
const EVALUATOR: usize = 1;

/// The party whose call is under way (helper threads a call spreads over allocate for it too).
static PARTY: AtomicUsize = AtomicUsize::new(EVALUATOR);
/// Bytes allocated and not freed, by party.
static LIVE: [AtomicIsize; 2] = [AtomicIsize::new(0), AtomicIsize::new(0)];
/// The garbler's highest `LIVE` since it was last reset.
static PEAK: AtomicIsize = AtomicIsize::new(0);
/// The tests share the counters: one runs at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The tag's room ahead of each allocation: a word, and the allocation's own alignment.
fn widened(layout: Layout) -> (Layout, usize) {
    let offset = layout.align().max(size_of::<usize>());
    (Layout::from_size_align(layout.size() + offset, layout.align().max(align_of::<usize>())).expect("a layout the caller could make, plus a word"), offset)
}

// SAFETY: each allocation is the system allocator's, `offset` bytes larger, and the pointer
// handed out is `offset` into it, so it keeps the caller's alignment (`offset` is a multiple of
// it) and its size; the word before it holds the tag, inside the allocation and aligned (the
// allocation is aligned to at least a word, and `offset` a multiple of one). `dealloc` undoes
// exactly what `alloc` did, with the same layout arithmetic. The default `realloc` goes through
// these two.
unsafe impl GlobalAlloc for Tagged {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (wide, offset) = widened(layout);
        // SAFETY: `wide` has a non-zero size (it adds a word).
        let base = unsafe { System.alloc(wide) };
        if base.is_null() {
            return base;
        }
        let party = PARTY.load(Ordering::Relaxed);
        // SAFETY: see the impl's note: the word before the returned pointer is ours.
        unsafe {
            let user = base.add(offset);
            (user.sub(size_of::<usize>()) as *mut usize).write(party);
            let live = LIVE[party].fetch_add(layout.size() as isize, Ordering::Relaxed) + layout.size() as isize;
            if party == GARBLER {
                PEAK.fetch_max(live, Ordering::Relaxed);
            }
            user
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let (wide, offset) = widened(layout);
        // SAFETY: `ptr` came from `alloc` with this layout: its tag is the word before it, and
        // the system's allocation starts `offset` before it, with layout `wide`.
        unsafe {
            let party = (ptr.sub(size_of::<usize>()) as *const usize).read();
            LIVE[party].fetch_sub(layout.size() as isize, Ordering::Relaxed);
            System.dealloc(ptr.sub(offset), wide);
        }
    }
}

#[global_allocator]
static ALLOCATOR: Tagged = Tagged;

/// Runs `call` as `party`'s.
fn as_party<R>(party: usize, call: impl FnOnce() -> R) -> R {
    PARTY.store(party, Ordering::Relaxed);
    let r = call();
    PARTY.store(EVALUATOR, Ordering::Relaxed);
    r
}

/// What the garbler held at its peak over the computation `start` begins, above what it held
/// before, and the estimate it gave at the computation's start.
fn measure(pair: &mut Pair, start: impl FnOnce(&mut Pair)) -> (u64, u64) {
    let before = LIVE[GARBLER].load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    start(pair);
    let mut estimate = None;
    loop {
        let mut moved = false;
        for frame in support::drain(&mut pair.evaluator).unwrap() {
            moved = true;
            as_party(GARBLER, || pair.garbler.handle(&frame)).unwrap();
            // The server charges the computation once the request started it.
            if estimate.is_none() && !pair.garbler.is_idle() {
                estimate = Some(pair.garbler.memory());
            }
        }
        while let Some(frame) = as_party(GARBLER, || pair.garbler.poll_transmit()).unwrap() {
            moved = true;
            pair.evaluator.handle(&frame).unwrap();
        }
        if !moved {
            break;
        }
    }
    assert!(matches!(pair.evaluator.poll_event(), Some(EvaluatorEvent::Finished(_))));
    ((PEAK.load(Ordering::Relaxed) - before) as u64, estimate.expect("the computation started"))
}

/// Test services and a wide circuit: edit distance, whose rows of cells are live at once.
fn services() -> std::sync::Arc<TestServices> {
    let mut all = support::service_list();
    let m = ParamInfo { name: "m".into(), doc: String::new(), default: 100, min: 1, max: 200, length_of: None };
    all.push(builtin_service("levenshtein", "levenshtein", &[("n", 100), ("m", 100), ("sigma", 2)], vec![m], vec![false; 200]).offering(Security::Authenticated));
    TestServices::new(all)
}

fn pair(threads: usize) -> Pair {
    let config = GarblerConfig { threads: support::threads(threads), max_window: 64 << 20, ..GarblerConfig::default() };
    let services = services();
    let mut pair = Pair {
        garbler: GarblerSession::with_garbling(config, Garbling::Auto, Box::new(NoClock), services.clone()).unwrap(),
        evaluator: EvaluatorSession::with_garbling(EvaluatorConfig { window: 4 << 20, ..EvaluatorConfig::default() }, Garbling::Auto, Box::new(NoClock)).unwrap(),
        services,
    };
    pair.pump().unwrap();
    assert_eq!(pair.evaluator.poll_event(), Some(EvaluatorEvent::Ready));
    pair
}

/// A computation measured: a service, its parameters and the client's input bits.
struct Computation {
    service: &'static str,
    params: Vec<(String, u64)>,
    input: Vec<bool>,
}

impl Computation {
    fn new(service: &'static str, params: &[(&str, u64)], input: Vec<bool>) -> Self {
        Computation { service, params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(), input }
    }
}

fn computations() -> Vec<Computation> {
    let synthetic = |n: u64| Computation::new("synthetic_protected", &[("and_gates", n)], vec![true; 128]);
    vec![
        Computation::new("aes128", &[], vec![false; 128]),
        Computation::new("millionaires", &[], vec![true; 32]),
        Computation::new("levenshtein", &[], vec![false; 200]),
        Computation::new("levenshtein", &[("m", 200)], vec![false; 400]),
        synthetic(1),
        synthetic(20_000),
        synthetic(65_536),
        synthetic(200_000),
    ]
}

/// Checks one measurement: under the estimate, and for a computation of 4 MiB or more not
/// under half of it (a small one is charged the fixed part, a few MiB, whatever it holds).
fn check(what: &str, (peak, estimate): (u64, u64)) {
    println!("{what}: peak {} KiB, estimate {} KiB ({:.2})", peak >> 10, estimate >> 10, peak as f64 / estimate as f64);
    assert!(peak <= estimate, "{what}: the garbler held {peak} bytes, more than the {estimate} its estimate said");
    assert!(peak < 4 << 20 || 2 * peak >= estimate, "{what}: the estimate, {estimate} bytes, is more than twice the {peak} the garbler held");
}

/// Checks every computation of [`computations`], run whole in `security` on `pair`.
fn check_each(pair: &mut Pair, security: Security, label: &str) {
    for Computation { service, params, input } in computations() {
        let measured = measure(pair, |pair| pair.evaluator.start_with(service, params.clone(), input, security).unwrap());
        check(&format!("{label} {service} {params:?}"), measured);
    }
}

#[test]
fn the_estimate_bounds_what_an_authenticated_garbler_holds() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for threads in [1, 2, 4] {
        check_each(&mut pair(threads), Security::Authenticated, &format!("{threads} threads:"));
    }
}

#[test]
fn the_estimate_bounds_preparations_and_their_computations() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut pair = pair(1);
    for Computation { service, params, input } in computations() {
        let parked_before = pair.garbler.memory();
        let live_before = LIVE[GARBLER].load(Ordering::Relaxed);
        let prepared = measure(&mut pair, |pair| pair.evaluator.prepare(service, params.clone()).unwrap());
        check(&format!("preparing {service} {params:?}"), (prepared.0, prepared.1 - parked_before));
        // What stays parked is charged until a computation takes it…
        let parked = pair.garbler.memory() - parked_before;
        let held = (LIVE[GARBLER].load(Ordering::Relaxed) - live_before) as u64;
        check(&format!("{service} {params:?} parked"), (held, parked));
        // …and covers that computation too, which so never waits for the budget.
        let online = measure(&mut pair, |pair| pair.evaluator.start_prepared(service, params.clone(), input, Security::Authenticated).unwrap());
        assert_eq!(online.1, parked_before + parked, "a computation on a preparation is charged what the preparation was");
        check(&format!("computing {service} {params:?} on its preparation"), (held + online.0, parked));
        assert_eq!(pair.garbler.memory(), parked_before, "nothing charged once the preparation is used");
    }
}

#[test]
fn the_estimate_bounds_what_a_cut_and_choose_garbler_holds() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    check_each(&mut pair(1), Security::CutAndChoose, "cut-and-choose");
}

#[test]
fn a_standard_computation_is_charged_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut pair = pair(1);
    pair.evaluator.start_with("synthetic", vec![("and_gates".into(), 10_000)], vec![true; 128], Security::Standard).unwrap();
    for frame in support::drain(&mut pair.evaluator).unwrap() {
        pair.garbler.handle(&frame).unwrap();
    }
    assert!(!pair.garbler.is_idle());
    assert_eq!(pair.garbler.memory(), 0);
    pair.pump().unwrap();
}
