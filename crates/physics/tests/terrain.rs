//! Terrain colliders: bodies rest on chunk trimeshes (hand-built and Loam terrain), chunks
//! are swapped and removed.

use loam_physics::{HitTarget, RayMask};

use crate::util::*;

const R: f32 = 0.25;

/// Steps `secs` seconds at 60 Hz.
fn run(w: &mut loam_physics::PhysicsWorld, secs: f32) {
    for _ in 0..(secs * 60.0).round() as usize {
        w.step(DT).unwrap();
    }
}

#[test]
fn ball_rests_on_a_flat_grid() {
    // 1 m cells, so the ball lands on internal edges and vertices, not mid-triangle.
    let mut m = Mesh::default();
    m.grid([-10.0, 10.0], [-10.0, 10.0], 1.0, |_, _| 1.5, |_, _| true);
    let mut w = world_with(&m);
    let balls = [[0.0, 4.0, 0.0], [3.0, 3.0, 4.0], [-2.5, 5.0, 1.0]]
        .map(|p| w.spawn_dynamic_ball(p, R, 1000.0).unwrap());
    run(&mut w, 3.0);
    for b in balls {
        let s = w.body_state(b).unwrap();
        assert!(
            (s.position[1] - (1.5 + R)).abs() < 0.03,
            "ball centre {:?}, expected y = {}",
            s.position,
            1.5 + R
        );
        let v = s.linear_velocity;
        assert!(v.iter().all(|c| c.abs() < 0.05), "still moving: {v:?}");
    }
}

#[test]
fn ball_and_box_rest_on_loam_flat_terrain() {
    // Surface Nets chunks of a flat Loam field, ground at 10.3 m, 2 × 2 chunks meeting at
    // x = 32, z = 32: bodies dropped on the chunk seams.
    let field = flat_field(10.3);
    let mut w = world();
    assert_eq!(load_chunks(&mut w, &field, &keys([0, 0, 0], [1, 0, 1])), 4);
    let ball = w.spawn_dynamic_ball([32.0, 14.0, 20.0], R, 1000.0).unwrap();
    let corner = w.spawn_dynamic_ball([32.0, 13.0, 32.0], R, 1000.0).unwrap();
    let cube = w
        .spawn_dynamic_cuboid([20.5, 15.0, 32.0], [0.5, 0.5, 0.5], 2000.0)
        .unwrap();
    run(&mut w, 3.0);
    for (id, half) in [(ball, R), (corner, R), (cube, 0.5)] {
        let p = w.body_position(id).unwrap();
        assert!(
            (p[1] - (10.3 + half)).abs() < 0.03,
            "centre {p:?}, expected y = {}",
            10.3 + half
        );
    }
    let (g, n) = ground_y(&w, 5.0, 5.0, 30.0).unwrap();
    assert!(
        (g - 10.3).abs() < 1e-3 && n[1] > 0.999,
        "ground {g} normal {n:?}"
    );
}

#[test]
fn balls_stay_on_loam_noise_terrain() {
    // The default hills (no caves), 3 × 3 chunk columns; balls dropped over the middle.
    let field = noise_field(7);
    let mut w = world();
    let loaded = load_chunks(&mut w, &field, &keys([0, -1, 0], [2, 3, 2]));
    assert!(loaded >= 9, "only {loaded} chunks have a surface");
    let mut balls = Vec::new();
    for i in 0..4 {
        for j in 0..4 {
            let (x, z) = (36.0 + 7.0 * i as f32, 37.0 + 7.0 * j as f32);
            let (g, _) = ground_y(&w, x, z, 200.0).expect("terrain under the drop point");
            balls.push(w.spawn_dynamic_ball([x, g + 3.0, z], R, 1000.0).unwrap());
        }
    }
    run(&mut w, 3.0);
    let last: Vec<[f32; 3]> = balls.iter().map(|&b| w.body_position(b).unwrap()).collect();
    for &b in &balls {
        assert!(w.remove_body(b));
    }
    for p in last {
        let (g, n) = ground_y(&w, p[0], p[2], 200.0).expect("ball left the terrain");
        let above = p[1] - g;
        // Touching the surface: the centre is `R` from it along the normal, so between
        // about `R` and `R / n.y` above the ground below the centre.
        assert!(
            above > 0.9 * R && above < R / n[1].max(0.3) + 0.1,
            "ball at {p:?}: {above} m above ground {g} (normal {n:?})"
        );
    }
}

#[test]
fn removing_a_chunk_removes_its_collider_and_drops_what_rested_on_it() {
    let mut m = Mesh::default();
    m.floor([0.0, 8.0], [0.0, 8.0], 0.0);
    let mut w = world();
    w.set_chunk([0, 0, 0], Some(m.shape([0.0; 3])));
    w.set_chunk([1, 0, 0], Some(m.shape([8.0, 0.0, 0.0])));
    assert_eq!(w.chunk_count(), 2);
    let hit = w
        .cast_ray([4.0, 5.0, 4.0], [0.0, -1.0, 0.0], 10.0, RayMask::ALL)
        .unwrap()
        .unwrap();
    assert_eq!(hit.target, HitTarget::Terrain([0, 0, 0]));
    assert!((hit.distance - 5.0).abs() < 1e-4);

    let ball = w.spawn_dynamic_ball([4.0, 1.0, 4.0], R, 1000.0).unwrap();
    run(&mut w, 4.0);
    let rest = w.body_state(ball).unwrap();
    assert!((rest.position[1] - R).abs() < 0.03, "{rest:?}");

    assert!(w.remove_chunk([0, 0, 0]));
    assert!(!w.remove_chunk([0, 0, 0]));
    assert_eq!(w.chunk_count(), 1);
    assert!(!w.has_chunk([0, 0, 0]));
    assert_eq!(w.chunk_keys().collect::<Vec<_>>(), vec![[1, 0, 0]]);
    // The ray now passes where the floor was (hitting only the ball); the other chunk is
    // still there.
    let down = [0.0, -1.0, 0.0];
    assert_eq!(
        w.cast_ray([4.0, 5.0, 4.0], down, 10.0, RayMask::TERRAIN)
            .unwrap(),
        None
    );
    let ball_hit = w
        .cast_ray([4.0, 5.0, 4.0], down, 10.0, RayMask::ALL)
        .unwrap();
    assert_eq!(ball_hit.unwrap().target, HitTarget::Body(ball));
    let other = w
        .cast_ray([12.0, 5.0, 4.0], [0.0, -1.0, 0.0], 10.0, RayMask::ALL)
        .unwrap();
    assert_eq!(other.unwrap().target, HitTarget::Terrain([1, 0, 0]));
    run(&mut w, 1.0);
    let y = w.body_position(ball).unwrap()[1];
    assert!(
        y < -3.0,
        "the ball should fall once its floor is gone: y = {y}"
    );
}

#[test]
fn a_swapped_chunk_wakes_and_drops_a_resting_box() {
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
    let mut w = world_with(&floor);
    let cube = w
        .spawn_dynamic_cuboid([4.0, 0.6, 4.0], [0.4, 0.4, 0.4], 500.0)
        .unwrap();
    run(&mut w, 5.0);
    let s = w.body_state(cube).unwrap();
    assert!((s.position[1] - 0.4).abs() < 0.02, "{s:?}");
    assert!(s.sleeping, "the box should be asleep after 5 s at rest");
    w.set_chunk([0, 0, 0], Some(holed.shape([0.0; 3])));
    run(&mut w, 1.0);
    let y = w.body_position(cube).unwrap()[1];
    assert!(
        y < -2.0,
        "the box should fall through the new hole: y = {y}"
    );
}

/// A chunk swapped for one whose new surface lies wholly below a sleeping body (a dig that
/// lowered the whole chunk) or for nothing at all: the body wakes and falls. The new
/// collider's bounds miss the body; the old one's held it.
#[test]
fn a_chunk_lowered_or_emptied_under_a_sleeping_box_drops_it() {
    for lowered in [true, false] {
        let mut floor = Mesh::default();
        floor.floor([0.0, 8.0], [0.0, 8.0], 0.0);
        let mut low = Mesh::default();
        low.floor([0.0, 8.0], [0.0, 8.0], -3.0);
        let mut w = world_with(&floor);
        let cube = w
            .spawn_dynamic_cuboid([4.0, 0.6, 4.0], [0.4, 0.4, 0.4], 500.0)
            .unwrap();
        run(&mut w, 5.0);
        let s = w.body_state(cube).unwrap();
        assert!(s.sleeping, "the box should be asleep after 5 s at rest");
        if lowered {
            w.set_chunk([0, 0, 0], Some(low.shape([0.0; 3])));
        } else {
            w.set_chunk([0, 0, 0], None);
        }
        assert!(
            !w.body_state(cube).unwrap().sleeping,
            "lowered {lowered}: the swap wakes the box"
        );
        run(&mut w, 1.0);
        let y = w.body_position(cube).unwrap()[1];
        assert!(y < -1.0, "lowered {lowered}: the box should fall: y = {y}");
        if lowered {
            run(&mut w, 3.0);
            let y = w.body_position(cube).unwrap()[1];
            assert!((y + 2.6).abs() < 0.05, "it rests on the new floor: y = {y}");
        }
    }
}

#[test]
fn shapes_build_on_worker_threads() {
    let field = flat_field(3.0);
    let handles: Vec<_> = keys([0, 0, 0], [1, 0, 1])
        .into_iter()
        .map(|k| {
            let field = field.clone();
            std::thread::spawn(move || (k, chunk_shape(&field, k)))
        })
        .collect();
    let batch: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mut w = world();
    w.set_chunks(batch);
    assert_eq!(w.chunk_count(), 4);
    let (g, _) = ground_y(&w, 40.0, 40.0, 20.0).unwrap();
    assert!((g - 3.0).abs() < 1e-3);
}
