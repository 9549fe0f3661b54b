//! The walking character: standing, walking across chunks, steps, walls, slopes, jumps,
//! ceilings and holes.

use loam_physics::{CharacterSettings, HitTarget, MoveInput, RayMask};

use crate::util::*;

/// Tolerance on standing height: the controller keeps a `skin` (1 cm) gap.
const STAND: f32 = 0.02;

#[test]
fn stands_still_on_a_flat_floor_for_5_s() {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.7);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.3, 1.2, -0.2]);
    settle(&mut w, me);
    let states = drive(&mut w, me, 300, |_| idle());
    for s in &states {
        assert!(s.grounded, "{s:?}");
        assert!((s.position[1] - 0.7).abs() < STAND, "{s:?}");
        assert!((s.position[0] - 0.3).abs() < 1e-4 && (s.position[2] + 0.2).abs() < 1e-4);
    }
}

#[test]
fn scene_queries_see_a_new_chunk_before_any_step() {
    // No `step` at all: the floor set a moment ago must hold the character at once.
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0);
    let mut w = world();
    w.set_chunk([0, 0, 0], Some(m.shape([0.0; 3])));
    let me = spawn(&mut w, [0.0, 0.5, 0.0]);
    let mut s = None;
    for _ in 0..60 {
        s = Some(w.move_character(me, idle(), DT).unwrap());
    }
    let s = s.unwrap();
    assert!(s.grounded && s.position[1].abs() < STAND, "{s:?}");
    // Rays see the capsule at once too.
    let hit = w
        .cast_ray([0.0, 5.0, 0.0], [0.0, -1.0, 0.0], 10.0, RayMask::ALL)
        .unwrap();
    let hit = hit.unwrap();
    assert_eq!(hit.target, HitTarget::Character(me));
    assert!(
        (hit.point[1] - (s.position[1] + 1.8)).abs() < 1e-3,
        "{hit:?}"
    );
}

#[test]
fn walks_10_m_across_two_chunks_without_snagging() {
    // Two chunks of 0.5 m cells meeting at x = 8, each in its own local coordinates.
    let mut m = Mesh::default();
    m.floor([0.0, 8.0], [-4.0, 4.0], 0.0);
    let mut w = world();
    w.set_chunks([
        ([0, 0, 0], Some(m.shape([0.0, 0.0, 0.0]))),
        ([1, 0, 0], Some(m.shape([8.0, 0.0, 0.0]))),
    ]);
    let me = spawn(&mut w, [1.0, 0.1, 0.3]);
    let start = settle(&mut w, me).position;
    let states = drive(&mut w, me, 150, |_| walk(1.0, 0.0));
    let mut prev = states[0].position;
    for s in &states[1..] {
        assert!(s.grounded, "{s:?}");
        assert!(s.position[1].abs() < STAND, "left the floor: {s:?}");
        let dx = s.position[0] - prev[0];
        assert!(
            (dx - 4.5 * DT).abs() < 0.02 * 4.5 * DT,
            "snagged or jerked: dx = {dx} at {s:?}"
        );
        prev = s.position;
    }
    let end = states.last().unwrap().position;
    assert!(end[0] - start[0] > 10.0 && end[0] > 9.0, "{end:?}");
    assert!(
        (end[2] - start[2]).abs() < 1e-3,
        "drifted sideways: {end:?}"
    );
}

#[test]
fn walks_across_loam_chunk_seams() {
    let field = flat_field(5.0);
    let mut w = world();
    load_chunks(&mut w, &field, &keys([0, 0, 0], [1, 0, 1]));
    let me = spawn(&mut w, [26.0, 5.2, 29.5]);
    let start = settle(&mut w, me).position;
    // Diagonally across x = 32 and z = 32, 12 m at walking pace.
    let d = std::f32::consts::FRAC_1_SQRT_2;
    let states = drive(&mut w, me, 160, |_| walk(d, d));
    for (f, pair) in states.windows(2).enumerate() {
        let (a, s) = (pair[0].position, pair[1]);
        assert!(s.grounded && (s.position[1] - 5.0).abs() < STAND, "{s:?}");
        let step = ((s.position[0] - a[0]).powi(2) + (s.position[2] - a[2]).powi(2)).sqrt();
        assert!(
            (step - 4.5 * DT).abs() < 0.02 * 4.5 * DT,
            "frame {f}: moved {step} m instead of {} at {s:?}",
            4.5 * DT
        );
    }
    let end = states.last().unwrap().position;
    let moved = ((end[0] - start[0]).powi(2) + (end[2] - start[2]).powi(2)).sqrt();
    assert!((moved - 4.5 * 160.0 * DT).abs() < 0.1, "moved {moved} m");
}

#[test]
fn walks_over_loam_noise_terrain_without_falling_through() {
    let field = noise_field(3);
    let mut w = world();
    load_chunks(&mut w, &field, &keys([0, -1, 0], [1, 3, 1]));
    let (g, _) = ground_y(&w, 20.0, 20.0, 200.0).unwrap();
    let me = spawn(&mut w, [20.0, g + 0.3, 20.0]);
    drive(&mut w, me, 30, |_| idle());
    let mut lowest_gap = f32::MAX;
    let r = CharacterSettings::default().radius;
    let mut path = 0.0;
    let mut prev = w.character_position(me).unwrap();
    for f in 0..600 {
        // A slow turn, running half the time.
        let a = f as f32 * 0.01;
        let input = MoveInput {
            wish: [a.cos(), a.sin()],
            run: f % 200 < 100,
            jump: f % 97 == 0,
        };
        let s = w.move_character(me, input, DT).unwrap();
        w.step(DT).unwrap();
        // The vertical gap from the centre of the capsule's lower hemisphere to the
        // ground below it is at least the radius (equal on flat ground, more on slopes).
        let [x, y, z] = s.position;
        path += ((x - prev[0]).powi(2) + (z - prev[2]).powi(2)).sqrt();
        prev = s.position;
        let c = y + r;
        match ground_y(&w, x, z, c) {
            Some((g, _)) => lowest_gap = lowest_gap.min(c - g),
            None => panic!("no ground under the feet at {:?} (frame {f})", s.position),
        }
    }
    assert!(
        lowest_gap > r - 0.02,
        "the capsule went {} m into the ground",
        r - lowest_gap
    );
    // It really went places: 10 s at 4.5–8.1 m/s, less what hills and walls took.
    assert!(path > 35.0, "walked only {path} m");
}

#[test]
fn climbs_a_0_3_m_step() {
    let mut m = Mesh::default();
    m.floor([-3.0, 12.0], [-3.0, 3.0], 0.0)
        .cuboid([2.0, 0.0, -3.0], [12.0, 0.3, 3.0]);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    settle(&mut w, me);
    let states = drive(&mut w, me, 90, |_| walk(1.0, 0.0));
    let end = *states.last().unwrap();
    assert!(end.position[0] > 5.0, "stopped at the step: {end:?}");
    assert!((end.position[1] - 0.3).abs() < STAND + 0.01, "{end:?}");
    assert!(end.grounded);
}

#[test]
fn is_stopped_by_a_1_m_wall() {
    let mut m = Mesh::default();
    m.floor([-3.0, 8.0], [-3.0, 3.0], 0.0)
        .cuboid([2.0, 0.0, -3.0], [3.0, 1.0, 3.0]);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    settle(&mut w, me);
    let states = drive(&mut w, me, 120, |_| walk(1.0, 0.0));
    let r = CharacterSettings::default().radius;
    for s in &states {
        assert!(s.position[1].abs() < STAND, "climbed the wall: {s:?}");
        assert!(s.position[0] < 2.0 - r + 0.01, "went into the wall: {s:?}");
    }
    let end = states.last().unwrap();
    assert!(
        end.position[0] > 2.0 - r - 0.05,
        "did not reach the wall: {end:?}"
    );
}

/// Walks 4 s towards a ramp of `deg` degrees rising from x = 2 to a 3 m plateau; returns the
/// final feet position.
fn walk_up_ramp(deg: f32) -> [f32; 3] {
    let (h, x0) = (3.0f32, 2.0f32);
    let x1 = x0 + h / deg.to_radians().tan();
    let mut m = Mesh::default();
    m.floor([-3.0, x0], [-3.0, 3.0], 0.0)
        .quad(
            [[x0, 0.0, -3.0], [x1, h, -3.0], [x1, h, 3.0], [x0, 0.0, 3.0]],
            [0.0, 1.0, 0.0],
        )
        .floor([x1, x1 + 20.0], [-3.0, 3.0], h);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    settle(&mut w, me);
    drive(&mut w, me, 240, |_| walk(1.0, 0.0))
        .last()
        .unwrap()
        .position
}

#[test]
fn walks_up_a_30_degree_ramp() {
    let p = walk_up_ramp(30.0);
    assert!(
        (p[1] - 3.0).abs() < STAND + 0.01,
        "did not reach the top: {p:?}"
    );
}

#[test]
fn cannot_walk_up_a_60_degree_ramp() {
    let p = walk_up_ramp(60.0);
    assert!(p[1] < 0.3, "climbed a 60° slope: {p:?}");
    assert!(p[0] < 2.3, "{p:?}");
}

#[test]
fn jump_reaches_v2_over_2g() {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    settle(&mut w, me);
    // Jump held for 0.5 s: one jump, no second one in the air.
    let states = drive(&mut w, me, 120, |f| MoveInput {
        jump: f < 30,
        ..Default::default()
    });
    let s = CharacterSettings::default();
    let expected = s.jump_speed * s.jump_speed / (2.0 * s.gravity);
    let top = states
        .iter()
        .map(|s| s.position[1])
        .fold(f32::MIN, f32::max);
    assert!(
        (top - expected).abs() < 0.1 * expected,
        "apex {top} m, expected {expected} m"
    );
    assert!(!states[10].grounded);
    let end = states.last().unwrap();
    assert!(end.grounded && end.position[1].abs() < STAND, "{end:?}");
    // Only one jump: after the first landing (≈ 1.12 s) the character stays down.
    let air_frames = states.iter().filter(|s| !s.grounded).count();
    assert!(
        (60..=72).contains(&air_frames),
        "{air_frames} frames in the air"
    );
}

#[test]
fn no_jump_in_mid_air() {
    // Walk off a 2 m ledge pressing jump only while falling: no upward motion.
    let mut m = Mesh::default();
    m.cuboid([-3.0, -2.0, -3.0], [1.0, 0.0, 3.0])
        .floor([-3.0, 8.0], [-3.0, 3.0], -2.0);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    settle(&mut w, me);
    // Jump is held from the moment the feet leave the ledge until they are 1.5 m down
    // (no ground within reach there).
    let mut prev = w.character_state(me).unwrap();
    let mut pressed = 0;
    for _ in 0..90 {
        let jump = !prev.grounded && prev.position[1] > -1.5;
        pressed += usize::from(jump);
        let s = w
            .move_character(
                me,
                MoveInput {
                    wish: [1.0, 0.0],
                    jump,
                    ..Default::default()
                },
                DT,
            )
            .unwrap();
        w.step(DT).unwrap();
        if jump {
            assert!(
                s.position[1] <= prev.position[1] + 1e-4,
                "rose in mid-air: {s:?}"
            );
        }
        prev = s;
    }
    assert!(pressed > 5, "jump pressed in {pressed} frames only");
    let end = w.character_state(me).unwrap();
    assert!((end.position[1] + 2.0).abs() < STAND, "{end:?}");
}

#[test]
fn a_ceiling_stops_a_jump() {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0)
        .cuboid([-2.0, 2.3, -2.0], [2.0, 2.6, 2.0]);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    settle(&mut w, me);
    let states = drive(&mut w, me, 60, |f| MoveInput {
        jump: f == 0,
        ..Default::default()
    });
    let height = CharacterSettings::default().centre_height() * 2.0;
    let top = states
        .iter()
        .map(|s| s.position[1])
        .fold(f32::MIN, f32::max);
    assert!(
        top + height < 2.3 + 0.001,
        "head went through the ceiling: {top}"
    );
    assert!(top > 0.4, "did not jump: {top}");
    // Vertical speed is zeroed at the ceiling: back down well before a free jump would be.
    let landed = states.iter().skip(5).position(|s| s.grounded).unwrap() + 5;
    assert!(landed < 40, "landed after {landed} frames");
}

#[test]
fn falls_into_a_hole_swapped_in_under_it() {
    let mut floor = Mesh::default();
    floor.floor([0.0, 8.0], [0.0, 8.0], 0.0);
    let mut holed = Mesh::default();
    holed.grid(
        [0.0, 8.0],
        [0.0, 8.0],
        0.5,
        |_, _| 0.0,
        |x, z| !((3.0..5.0).contains(&x) && (3.0..5.0).contains(&z)),
    );
    let mut below = Mesh::default();
    below.floor([0.0, 8.0], [0.0, 8.0], -3.0);
    let mut w = world();
    w.set_chunks([
        ([0, 0, 0], Some(floor.shape([0.0; 3]))),
        ([0, -1, 0], Some(below.shape([0.0; 3]))),
    ]);
    let me = spawn(&mut w, [4.0, 0.05, 4.0]);
    let s = settle(&mut w, me);
    assert!(s.position[1].abs() < STAND);
    w.set_chunk([0, 0, 0], Some(holed.shape([0.0; 3])));
    let end = *drive(&mut w, me, 90, |_| idle()).last().unwrap();
    assert!(
        end.grounded && (end.position[1] + 3.0).abs() < STAND,
        "{end:?}"
    );
}

#[test]
fn a_batch_swap_never_drops_the_character() {
    // One edit moves the floor under the character from chunk A's collider to chunk B's:
    // swapped as a batch, the character keeps standing.
    let mut floor = Mesh::default();
    floor.floor([0.0, 8.0], [0.0, 8.0], 0.0);
    let mut w = world();
    w.set_chunk([0, 0, 0], Some(floor.shape([0.0; 3])));
    let me = spawn(&mut w, [4.0, 0.05, 4.0]);
    settle(&mut w, me);
    w.set_chunks([
        ([0, 0, 0], None),
        ([0, 1, 0], Some(floor.shape([0.0; 3]))),
        // A key given twice ends with its last shape.
        ([5, 5, 5], Some(floor.shape([40.0, 40.0, 40.0]))),
        ([5, 5, 5], None),
    ]);
    assert_eq!(w.chunk_keys().collect::<Vec<_>>(), vec![[0, 1, 0]]);
    for s in drive(&mut w, me, 60, |_| idle()) {
        assert!(s.grounded && s.position[1].abs() < STAND, "{s:?}");
    }
}

#[test]
fn teleport_moves_and_resets() {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    settle(&mut w, me);
    let s = w.teleport_character(me, [2.0, 1.0, -1.0]).unwrap();
    assert_eq!(s.position, [2.0, 1.0, -1.0]);
    assert!(!s.grounded && s.velocity == [0.0; 3]);
    assert_eq!(w.character_position(me), Some([2.0, 1.0, -1.0]));
    let end = settle(&mut w, me);
    assert!((end.position[0] - 2.0).abs() < 1e-4 && end.position[1].abs() < STAND);
    assert!(w.remove_character(me));
    assert!(!w.remove_character(me));
    assert_eq!(w.character_position(me), None);
    assert_eq!(w.character_count(), 0);
}
