//! Compound bodies, fixed colliders and impacts.

use loam_physics::{
    FixedId, HitTarget, Part, PartShape, PhysicsError, PhysicsSettings, PhysicsWorld, Pose, RayMask,
};

use crate::util::*;

fn cube(offset: [f32; 3], half: f32, density: f32) -> Part {
    Part {
        offset,
        shape: PartShape::Cuboid {
            half_extents: [half; 3],
        },
        density,
    }
}

fn floor_world(settings: PhysicsSettings) -> PhysicsWorld {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0);
    let mut w = PhysicsWorld::new(settings).unwrap();
    w.set_chunk([0, 0, 0], Some(m.shape([0.0; 3])));
    w
}

#[test]
fn compound_mass_comes_from_parts_and_it_rests_on_its_parts() {
    let mut w = floor_world(PhysicsSettings::default());
    // An L of three 1 m cubes: two stone (2400 kg/m³) on the floor, one wood (600) on top.
    let parts = [
        cube([0.5, 0.5, 0.5], 0.5, 2400.0),
        cube([1.5, 0.5, 0.5], 0.5, 2400.0),
        cube([0.5, 1.5, 0.5], 0.5, 600.0),
    ];
    let b = w
        .spawn_compound(Pose::at([0.0, 0.2, 0.0]), &parts, false)
        .unwrap();
    assert!((w.body_mass(b).unwrap() - 5400.0).abs() < 1.0);
    for _ in 0..120 {
        w.step(DT).unwrap();
    }
    let p = w.body_pose(b).unwrap();
    assert!(p.position[1].abs() < 0.02, "{p:?}");
    assert!(p.rotation[3].abs() > 0.999, "stays upright: {p:?}");
    // The landing was an impact on the terrain (0.2 m drop: ≈ 2 m/s is not enough, so
    // none was reported on the last frames).
    assert!(w.impacts().is_empty());
}

#[test]
fn a_convex_hull_part_has_its_own_volume() {
    let mut w = world();
    // A wedge: half of a 1 m cube, cut along a diagonal plane.
    let points = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 1.0],
        [0.0, 1.0, 0.0],
        [0.0, 1.0, 1.0],
    ];
    let part = Part {
        offset: [0.0; 3],
        shape: PartShape::ConvexHull { points },
        density: 1000.0,
    };
    let b = w
        .spawn_compound(Pose::at([0.0; 3]), &[part], false)
        .unwrap();
    assert!((w.body_mass(b).unwrap() - 500.0).abs() < 0.5);
    let flat = Part {
        offset: [0.0; 3],
        shape: PartShape::ConvexHull {
            points: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0]],
        },
        density: 1000.0,
    };
    assert!(
        w.spawn_compound(Pose::at([0.0; 3]), &[flat], false)
            .is_err()
    );
}

#[test]
fn bad_compounds_are_refused_and_add_nothing() {
    let mut w = world();
    let ok = cube([0.0; 3], 0.5, 1000.0);
    let bad_rot = Pose {
        position: [0.0; 3],
        rotation: [0.0, 0.0, 0.0, 2.0],
    };
    assert!(matches!(
        w.spawn_compound(bad_rot, std::slice::from_ref(&ok), false),
        Err(PhysicsError::OutOfRange {
            what: "pose.rotation",
            ..
        })
    ));
    assert!(w.spawn_compound(Pose::at([0.0; 3]), &[], false).is_err());
    let mut neg = ok.clone();
    neg.density = -1.0;
    assert!(
        w.spawn_compound(Pose::at([0.0; 3]), &[ok.clone(), neg], false)
            .is_err()
    );
    assert!(
        w.spawn_compound(Pose::at([f32::NAN, 0.0, 0.0]), &[ok], false)
            .is_err()
    );
    assert_eq!(w.body_count(), 0);
}

#[test]
fn fixed_colliders_hold_bodies_and_are_named_by_rays() {
    let mut w = world();
    let id = FixedId(42);
    w.set_fixed(id, [0.0, 0.0, 0.0], &cube([0.5; 3], 0.5, 0.0))
        .unwrap();
    assert!(w.has_fixed(id));
    let b = w
        .spawn_compound(
            Pose::at([0.0, 1.5, 0.0]),
            &[cube([0.5; 3], 0.5, 1000.0)],
            false,
        )
        .unwrap();
    for _ in 0..90 {
        w.step(DT).unwrap();
    }
    let y = w.body_pose(b).unwrap().position[1];
    assert!((y - 1.0).abs() < 0.02, "rests on the fixed cube: {y}");
    let hit = w
        .cast_ray([0.5, -3.0, 0.5], [0.0, 1.0, 0.0], 10.0, RayMask::ALL)
        .unwrap()
        .unwrap();
    assert_eq!(hit.target, HitTarget::Fixed(id));
    assert!(
        w.cast_ray([0.5, -3.0, 0.5], [0.0, 1.0, 0.0], 2.0, RayMask::TERRAIN)
            .unwrap()
            .is_none()
    );
    assert_eq!(
        w.dynamic_bodies_in_box([0.5, 1.5, 0.5], [0.1; 3]).unwrap(),
        vec![b]
    );
    assert!(
        w.dynamic_bodies_in_box([0.5, 0.5, 0.5], [0.1; 3])
            .unwrap()
            .is_empty()
    );
    assert!(w.body_sleeping(b).unwrap(), "asleep on the fixed cube");
    // Removing the fixed collider wakes the body, which falls.
    assert!(w.remove_fixed(id));
    assert!(!w.remove_fixed(id));
    assert_eq!(w.fixed_count(), 0);
    for _ in 0..30 {
        w.step(DT).unwrap();
    }
    assert!(w.body_pose(b).unwrap().position[1] < 0.0);
}

/// A 1 m cube sent at the floor at `speed` m/s without gravity: the impacts reported.
fn launch(speed: f32) -> Vec<loam_physics::Impact> {
    let mut w = floor_world(PhysicsSettings {
        gravity: [0.0; 3],
        ..Default::default()
    });
    let b = w
        .spawn_compound(
            Pose::at([0.0, 0.3, 0.0]),
            &[cube([0.0, 0.5, 0.0], 0.5, 1000.0)],
            false,
        )
        .unwrap();
    w.set_body_velocity(b, [0.0, -speed, 0.0], [0.0; 3])
        .unwrap();
    let mut all = Vec::new();
    for _ in 0..60 {
        w.step(DT).unwrap();
        all.extend_from_slice(w.impacts());
    }
    all
}

#[test]
fn impact_threshold_is_two_metres_per_second() {
    assert!(launch(1.9).is_empty());
    let hits = launch(2.1);
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = hits[0];
    assert!((hit.speed - 2.1).abs() < 0.01, "{hit:?}");
    assert!(matches!(hit.other, HitTarget::Terrain([0, 0, 0])));
    assert!(
        hit.normal[1] < -0.99,
        "the normal points down into the floor: {hit:?}"
    );
    assert!(hit.point[1].abs() < 0.01, "{hit:?}");
    assert_eq!(hit.part, 0);
}

#[test]
fn a_body_reports_one_impact_per_frame_its_hardest() {
    let mut w = floor_world(PhysicsSettings {
        gravity: [0.0; 3],
        ..Default::default()
    });
    // Two parts on one body, tilted so that one corner lands first: one report per step
    // call, however many points touch.
    let parts = [
        cube([0.0, 0.5, 0.0], 0.5, 1000.0),
        cube([1.0, 0.5, 0.0], 0.5, 1000.0),
    ];
    let b = w
        .spawn_compound(Pose::at([0.0, 0.3, 0.0]), &parts, false)
        .unwrap();
    w.set_body_velocity(b, [0.0, -5.0, 0.0], [0.0, 0.0, 0.3])
        .unwrap();
    let other = w
        .spawn_compound(
            Pose::at([3.0, 0.3, 0.0]),
            &[cube([0.0, 0.5, 0.0], 0.5, 1000.0)],
            false,
        )
        .unwrap();
    w.set_body_velocity(other, [0.0, -3.0, 0.0], [0.0; 3])
        .unwrap();
    let mut frames_with_hits = 0;
    for _ in 0..30 {
        // Four steps in one call: the hardest of all of them is kept.
        w.step(4.0 * DT).unwrap();
        let hits = w.impacts();
        let mut bodies: Vec<_> = hits.iter().map(|h| h.body).collect();
        bodies.dedup();
        assert_eq!(bodies.len(), hits.len(), "one per body: {hits:?}");
        assert!(hits.windows(2).all(|p| p[0].body < p[1].body));
        frames_with_hits += usize::from(!hits.is_empty());
        for h in hits {
            if h.body == b {
                assert!(h.speed > 4.5, "{h:?}");
            } else {
                assert!((h.speed - 3.0).abs() < 0.01, "{h:?}");
            }
        }
    }
    assert!(frames_with_hits >= 1);
}

#[test]
fn a_body_spawned_asleep_keeps_its_pose_and_its_contacts() {
    for warmup in [0, 1, 5] {
        let mut w = floor_world(PhysicsSettings::default());
        let pose = Pose {
            position: [0.25, 0.0, -0.5],
            rotation: [0.0, 0.6, 0.0, 0.8],
        };
        let b = w
            .spawn_compound(pose, &[cube([0.0, 0.5, 0.0], 0.5, 1000.0)], true)
            .unwrap();
        for _ in 0..warmup {
            w.step(DT).unwrap();
        }
        if warmup > 0 {
            assert_eq!(w.body_sleeping(b), Some(true));
            assert_eq!(w.body_pose(b), Some(pose), "bit for bit");
        }
        // Woken, it rests on the floor (without contacts it would sink 5 cm first).
        w.wake_body(b);
        for _ in 0..10 {
            w.step(DT).unwrap();
            let y = w.body_pose(b).unwrap().position[1];
            assert!(y.abs() < 1e-3, "warmup {warmup}: y = {y}");
        }
    }
}
