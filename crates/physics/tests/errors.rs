//! Bad input gives typed errors and leaves everything as it was.

use loam_physics::{
    CharacterSettings, MoveInput, PhysicsError, PhysicsSettings, PhysicsWorld, RayMask,
    TerrainShape,
};

use crate::util::*;

fn quad() -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut m = Mesh::default();
    m.floor([0.0, 1.0], [0.0, 1.0], 0.0);
    (m.positions, m.indices)
}

#[test]
fn bad_meshes_give_typed_errors() {
    let (p, i) = quad();
    assert_eq!(
        TerrainShape::build(&p, &i[..4], [0.0; 3]).unwrap_err(),
        PhysicsError::IndicesNotTriangles { len: 4 }
    );
    let mut bad = i.clone();
    bad[4] = 99;
    assert_eq!(
        TerrainShape::build(&p, &bad, [0.0; 3]).unwrap_err(),
        PhysicsError::IndexOutOfRange {
            triangle: 1,
            index: 99,
            vertex_count: p.len()
        }
    );
    let mut nan = p.clone();
    nan[2][1] = f32::NAN;
    assert!(matches!(
        TerrainShape::build(&nan, &i, [0.0; 3]).unwrap_err(),
        PhysicsError::NonFinitePosition { vertex: 2, .. }
    ));
    let mut inf = p.clone();
    inf[0][0] = f32::INFINITY;
    assert!(TerrainShape::build(&inf, &i, [0.0; 3]).is_err());
    assert_eq!(
        TerrainShape::build(&p, &i, [0.0, f32::NAN, 0.0]).unwrap_err(),
        PhysicsError::NonFinite { what: "origin" }
    );
    // Empty input is not an error: there is nothing to collide with.
    assert!(TerrainShape::build(&[], &[], [0.0; 3]).unwrap().is_none());
    assert!(TerrainShape::build(&p, &[], [0.0; 3]).unwrap().is_none());
    let e = TerrainShape::build(&p, &bad, [0.0; 3]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "triangle 1 names vertex 99, but the mesh has {} vertices",
            p.len()
        )
    );
}

#[test]
fn bad_calls_change_nothing() {
    let mut m = Mesh::default();
    m.floor([-5.0, 5.0], [-5.0, 5.0], 0.0);
    let mut w = world_with(&m);
    let me = spawn(&mut w, [0.0, 0.05, 0.0]);
    let before = settle(&mut w, me);
    let steps = w.step_count();

    assert!(w.step(f32::NAN).is_err());
    assert!(w.step(-DT).is_err());
    assert!(w.step(f32::INFINITY).is_err());
    assert_eq!(w.step_count(), steps);

    let nan_wish = MoveInput {
        wish: [f32::NAN, 0.0],
        ..Default::default()
    };
    assert_eq!(
        w.move_character(me, nan_wish, DT).unwrap_err(),
        PhysicsError::NonFinite { what: "wish" }
    );
    assert!(w.move_character(me, idle(), f32::NAN).is_err());
    assert!(w.move_character(me, idle(), -1.0).is_err());
    assert!(w.teleport_character(me, [f32::NAN, 0.0, 0.0]).is_err());
    assert_eq!(w.character_state(me), Some(before));

    assert!(matches!(
        w.spawn_character([0.0, f32::NAN, 0.0], CharacterSettings::default()),
        Err(PhysicsError::NonFinite { .. })
    ));
    let thin = CharacterSettings {
        radius: 0.0,
        ..Default::default()
    };
    assert!(matches!(
        w.spawn_character([0.0; 3], thin),
        Err(PhysicsError::OutOfRange { what: "radius", .. })
    ));
    let steep = CharacterSettings {
        max_slope_climb_deg: 120.0,
        ..Default::default()
    };
    assert!(w.spawn_character([0.0; 3], steep).is_err());
    assert_eq!(w.character_count(), 1);

    assert!(w.spawn_dynamic_ball([0.0; 3], -1.0, 1000.0).is_err());
    assert!(w.spawn_dynamic_ball([0.0; 3], 0.5, 0.0).is_err());
    assert!(w.spawn_dynamic_ball([f32::NAN; 3], 0.5, 1.0).is_err());
    assert!(
        w.spawn_dynamic_cuboid([0.0; 3], [1.0, 0.0, 1.0], 1.0)
            .is_err()
    );
    assert_eq!(w.body_count(), 0);

    assert!(w.cast_ray([0.0; 3], [0.0; 3], 1.0, RayMask::ALL).is_err());
    assert!(
        w.cast_ray([0.0; 3], [0.0, -1.0, 0.0], f32::NAN, RayMask::ALL)
            .is_err()
    );
    assert_eq!(w.chunk_count(), 1);
    // The world still works.
    let after = w.move_character(me, idle(), DT).unwrap();
    assert!(after.grounded && (after.position[1] - before.position[1]).abs() < 1e-3);
}

#[test]
fn unknown_ids_are_errors_or_none() {
    let mut a = world();
    let mut b = world();
    let me = spawn(&mut a, [0.0; 3]);
    let ball = a.spawn_dynamic_ball([0.0; 3], 0.5, 1.0).unwrap();
    assert!(a.remove_character(me));
    assert_eq!(
        a.move_character(me, idle(), DT).unwrap_err(),
        PhysicsError::UnknownCharacter(me)
    );
    assert!(a.teleport_character(me, [0.0; 3]).is_err());
    assert!(a.remove_body(ball));
    assert_eq!(
        a.set_body_velocity(ball, [0.0; 3], [0.0; 3]).unwrap_err(),
        PhysicsError::UnknownBody(ball)
    );
    // Ids of another world (none there) are unknown too.
    assert_eq!(b.body_position(ball), None);
    assert!(!b.remove_body(ball));
    assert!(b.move_character(me, idle(), DT).is_err());
}

#[test]
fn bad_world_settings_are_rejected() {
    let s = PhysicsSettings {
        timestep: -1.0,
        ..Default::default()
    };
    assert!(matches!(
        PhysicsWorld::new(s),
        Err(PhysicsError::OutOfRange {
            what: "timestep",
            ..
        })
    ));
    for bad in [-0.1, f32::NAN, 2.5] {
        let s = PhysicsSettings {
            sleep_speed: bad,
            ..Default::default()
        };
        assert!(
            matches!(
                PhysicsWorld::new(s),
                Err(PhysicsError::OutOfRange {
                    what: "sleep_speed",
                    ..
                } | PhysicsError::NonFinite {
                    what: "sleep_speed",
                    ..
                })
            ),
            "{bad}"
        );
    }
}
