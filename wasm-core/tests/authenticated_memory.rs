//! The authenticated mode streams in bounded memory: the heap both parties hold live (one
//! process, both sessions, counted by this test's allocator) is the same after each segment as
//! after the one before — nothing accumulates per segment.

mod support;

use garblet_core::auth::segment::SEGMENT_AND_GATES;
use garblet_core::protocol::Security;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use support::Pair;

/// The system allocator, counting the bytes allocated and not yet freed.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call goes to the system allocator with the caller's own arguments, which meet
// its contract as they meet this one's; the counter only observes sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator (so from `System`) with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as for `dealloc`, and `new_size` is the caller's, as `realloc` requires.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn the_live_heap_does_not_grow_with_the_segments() {
    let segments = 10u64;
    let and_gates = segments * SEGMENT_AND_GATES as u64;
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start_with("synthetic_protected", vec![("and_gates".into(), and_gates)], vec![true; 128], Security::Authenticated).unwrap();
    // The least live heap between the ends of two segments (after every frame either side
    // takes), so that the frames queued at one moment or another do not count: what each
    // segment leaves behind.
    let mut trough = vec![isize::MAX; segments as usize + 1];
    let mut note = |evaluated: u64| {
        let i = (evaluated / SEGMENT_AND_GATES as u64) as usize;
        trough[i] = trough[i].min(LIVE.load(Ordering::Relaxed));
    };
    loop {
        let mut moved = false;
        for frame in support::drain(&mut pair.evaluator).unwrap() {
            moved = true;
            pair.garbler.handle(&frame).unwrap();
            note(pair.evaluator.progress().and_gates);
        }
        while let Some(frame) = pair.garbler.poll_transmit().unwrap() {
            moved = true;
            pair.evaluator.handle(&frame).unwrap();
            note(pair.evaluator.progress().and_gates);
        }
        if !moved {
            break;
        }
    }
    // From the second segment's tables to the ninth's, both sides hold the same: the slots, a
    // segment waiting for its tables on the client, the next one's preprocessing in flight.
    let steady = &trough[2..segments as usize - 1];
    println!("least live heap after each of segments 2 to 8 (KB): {:?}", steady.iter().map(|b| *b >> 10).collect::<Vec<_>>());
    let (least, most) = (steady.iter().min().unwrap(), steady.iter().max().unwrap());
    // A few KB a segment would be tens of MB over 10^8 AND gates; allow 64 KiB in all.
    assert!(most - least <= 64 << 10, "the live heap grew with the segments: {steady:?}");
}
