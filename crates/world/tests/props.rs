//! Property test: random interleavings of edits, viewer moves, mesher switches, frames and
//! job completions never leave a batch waiting and never deliver a stale mesh.

use std::time::Duration;

use loam_field::{CsgMode, EditOp};
use loam_mesh::Mesher;
use loam_world::{PullBudget, Shown, Viewer, World, WorldSettings};
use proptest::prelude::*;

use crate::util::*;

#[derive(Debug, Clone)]
enum Action {
    Edit {
        at: [f64; 3],
        radius: f64,
        build: bool,
    },
    Move {
        dx: f64,
        dz: f64,
    },
    Mesher(usize),
    Frame {
        pull: usize,
    },
    /// Let the workers run for a while (job completions land in between frames).
    Sleep(u64),
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        4 => (-40.0..40.0f64, -8.0..8.0f64, -40.0..40.0f64, 1.0..6.0f64, any::<bool>())
            .prop_map(|(x, y, z, radius, build)| Action::Edit { at: [x, y, z], radius, build }),
        2 => (-70.0..70.0f64, -70.0..70.0f64).prop_map(|(dx, dz)| Action::Move { dx, dz }),
        1 => (0..4usize).prop_map(Action::Mesher),
        4 => (0..6usize).prop_map(|pull| Action::Frame { pull }),
        2 => (0..4u64).prop_map(Action::Sleep),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn no_batch_waits_forever_and_no_stale_mesh_is_shown(
        actions in prop::collection::vec(action(), 1..40),
        threads in 1..4usize,
        merge in any::<bool>(),
    ) {
        let base = flat_field(10.0, 2.0);
        // Without a merge window every overlapping edit releases the older batch's chunks.
        let window = if merge { Duration::from_millis(250) } else { Duration::ZERO };
        let settings = WorldSettings { merge_window: window, ..small(threads) };
        let mut world = World::new(base.clone(), settings).unwrap();
        let mut shown = Shown::default();
        let mut viewer = Viewer::at([0.0, 12.0, 0.0]);
        let mut ops = Vec::new();
        for a in actions {
            match a {
                Action::Edit { at, radius, build } => {
                    let mode = if build { CsgMode::Union } else { CsgMode::Subtract };
                    let c = [viewer.position[0] + at[0], 10.0 + at[1], viewer.position[2] + at[2]];
                    let op = EditOp::Sphere { mode, center: c, radius, material: 2, blend: 0.0 };
                    world.apply(&op).unwrap();
                    ops.push(op);
                }
                Action::Move { dx, dz } => {
                    viewer.position[0] += dx;
                    viewer.position[2] += dz;
                }
                Action::Mesher(i) => world.set_mesher(Mesher::ALL[i]),
                Action::Frame { pull } => {
                    world.update(&[viewer]);
                    let u = world.pull(PullBudget::chunks(pull));
                    check_current(&world, &u);
                    shown.apply(u).unwrap();
                }
                Action::Sleep(ms) => std::thread::sleep(Duration::from_millis(ms)),
            }
        }
        settle(&mut world, &[viewer], &mut shown);
        prop_assert_eq!(world.waiting(), 0);
        assert_matches_scratch(&world, &shown, &base, &ops);
    }
}
