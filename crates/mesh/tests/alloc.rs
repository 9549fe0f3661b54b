//! "No allocation per call once the buffer has grown" (issue 3), counted: a global allocator
//! that counts allocations around a second call on the same buffer. A binary of its own, so
//! that no other test's allocations are counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use loam_mesh::{Grid, MeshBuffer, Mesher};

struct Counting;

thread_local! {
    /// Counting on this thread (the test's; the harness's threads allocate too).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
    }
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f`.
fn allocations(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

/// A grid of −1, 0 and 1 inside a border of air (many touching sheets on exact zeros: the
/// pinch splitter runs), from a fixed seed.
fn grid_values(seed: u64, n: usize) -> Vec<f32> {
    let mut z = seed;
    let mut next = || {
        z = z
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (z >> 33) % 3
    };
    let mut v = vec![1.0; n * n * n];
    for k in 1..n - 1 {
        for j in 1..n - 1 {
            for i in 1..n - 1 {
                v[i + n * (j + n * k)] = next() as f32 - 1.0;
            }
        }
    }
    v
}

/// Whether two vertices share a position: a split pinch (or a dual vertex's copy).
fn has_copies(b: &MeshBuffer) -> bool {
    let mut p: Vec<[u32; 3]> = b.positions.iter().map(|q| q.map(f32::to_bits)).collect();
    p.sort_unstable();
    p.windows(2).any(|w| w[0] == w[1])
}

/// On some of these grids (seed 21 with Dual Contouring) the clean-up splits zero-area
/// slivers, whose edge table lives in the scratch too.
#[test]
fn a_second_call_on_the_same_buffer_allocates_nothing() {
    let n = 9;
    for m in [
        Mesher::MarchingCubes,
        Mesher::Mc33,
        Mesher::SurfaceNets,
        Mesher::DualContouring,
    ] {
        let mut split = 0;
        for seed in 0..40 {
            let values = grid_values(seed, n);
            let grid = Grid::volume(&values, [n as u32; 3], 1.0);
            let mut b = MeshBuffer::default();
            m.mesh(&grid, &mut b);
            let first = b.clone();
            split += usize::from(has_copies(&b));
            let count = allocations(|| m.mesh(&grid, &mut b));
            assert_eq!(
                count, 0,
                "{m:?}, seed {seed}: allocations on the second call"
            );
            assert_eq!(b.positions, first.positions, "{m:?}, seed {seed}");
            assert_eq!(b.indices, first.indices, "{m:?}, seed {seed}");
        }
        assert!(split > 0, "{m:?}: no grid had a split pinch");
    }
}
