//! Dynamic bodies: boxes and balls rest, stack, get removed and collide with characters.

use loam_physics::{HitTarget, RayMask};

use crate::util::*;

#[test]
fn boxes_stack_and_come_to_rest() {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0);
    let mut w = world_with(&m);
    let low = w
        .spawn_dynamic_cuboid([0.0, 0.6, 0.0], [0.5, 0.5, 0.5], 2000.0)
        .unwrap();
    let high = w
        .spawn_dynamic_cuboid([0.1, 2.0, -0.1], [0.25, 0.25, 0.25], 2000.0)
        .unwrap();
    assert_eq!(w.body_count(), 2);
    assert_eq!(w.body_ids().collect::<Vec<_>>(), vec![low, high]);
    for _ in 0..240 {
        w.step(DT).unwrap();
    }
    let a = w.body_state(low).unwrap();
    let b = w.body_state(high).unwrap();
    assert!((a.position[1] - 0.5).abs() < 0.02, "{a:?}");
    assert!((b.position[1] - 1.25).abs() < 0.03, "{b:?}");
    // Upright: the rotation stays near identity.
    assert!(a.rotation[3].abs() > 0.999, "{a:?}");
    assert!(a.linear_velocity.iter().all(|v| v.abs() < 0.02));
}

#[test]
fn remove_body_removes_it_and_wakes_what_it_held() {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0);
    let mut w = world_with(&m);
    let low = w
        .spawn_dynamic_cuboid([0.0, 0.5, 0.0], [0.5, 0.5, 0.5], 1000.0)
        .unwrap();
    let top = w.spawn_dynamic_ball([0.0, 1.3, 0.0], 0.3, 1000.0).unwrap();
    // The ball sits on top of the box (balanced exactly, so it stays).
    for _ in 0..300 {
        w.step(DT).unwrap();
    }
    assert!((w.body_position(top).unwrap()[1] - 1.3).abs() < 0.02);
    let hit = w
        .cast_ray([0.0, 5.0, 0.0], [0.0, -1.0, 0.0], 10.0, RayMask::ALL)
        .unwrap()
        .unwrap();
    assert_eq!(hit.target, HitTarget::Body(top));

    assert!(w.remove_body(low));
    assert!(!w.remove_body(low));
    assert_eq!(w.body_position(low), None);
    assert_eq!(w.body_state(low), None);
    assert_eq!(w.body_count(), 1);
    for _ in 0..120 {
        w.step(DT).unwrap();
    }
    let y = w.body_position(top).unwrap()[1];
    assert!(
        (y - 0.3).abs() < 0.02,
        "the ball should drop to the floor: y = {y}"
    );
}

#[test]
fn a_ball_does_not_pass_through_a_character() {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    settle(&mut w, me);
    let r = 0.2;
    let ball = w.spawn_dynamic_ball([0.05, 4.0, 0.0], r, 1000.0).unwrap();
    let capsule = loam_physics::CharacterSettings::default();
    let mut bounced = false;
    for _ in 0..120 {
        w.move_character(me, idle(), DT).unwrap();
        w.step(DT).unwrap();
        let p = w.body_position(ball).unwrap();
        let feet = w.character_position(me).unwrap();
        // Distance from the ball's centre to the capsule's axis segment.
        let lo = feet[1] + capsule.radius;
        let hi = lo + 2.0 * capsule.half_height;
        let dy = p[1] - p[1].clamp(lo, hi);
        let d = (dy * dy + (p[0] - feet[0]).powi(2) + (p[2] - feet[2]).powi(2)).sqrt();
        assert!(
            d > capsule.radius + r - 0.05,
            "ball inside the capsule: {p:?}"
        );
        bounced |= p[0].abs() > 0.3;
    }
    assert!(bounced, "the ball should roll off the head");
}

#[test]
fn set_body_velocity_throws_a_body() {
    let mut w = world();
    let b = w.spawn_dynamic_ball([0.0, 0.0, 0.0], 0.1, 1000.0).unwrap();
    w.set_body_velocity(b, [3.0, 0.0, 0.0], [0.0; 3]).unwrap();
    for _ in 0..60 {
        w.step(DT).unwrap();
    }
    let p = w.body_position(b).unwrap();
    // One second of free flight: x = 3 m, y = −g/2 (within the step scheme's error).
    assert!((p[0] - 3.0).abs() < 0.01, "{p:?}");
    assert!((p[1] + 9.81 / 2.0).abs() < 0.1, "{p:?}");
}
