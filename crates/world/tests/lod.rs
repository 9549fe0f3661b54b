//! Level of detail (issue 11): chunks of every level meshed from scratch weld with no open
//! edge inside the view, and edits show at every level that resolves them.

use std::collections::BTreeSet;

use loam_field::{CsgMode, EditOp, Field};
use loam_mesh::MeshBuffer;
use loam_world::lod::{
    LodBuilder, LodKey, LodSettings, OpenEdges, open_edges, proven_uniform, select, transition_mask,
};

use crate::util::noise_field;

/// Every chunk of `view` with a surface, meshed from scratch: (key, origin, mesh).
pub fn scene(field: &Field, view: &BTreeSet<LodKey>) -> Vec<(LodKey, [f64; 3], MeshBuffer)> {
    let vs = field.settings().voxel_size;
    let mut b = LodBuilder::default();
    view.iter()
        .filter(|&&k| !proven_uniform(field, k))
        .map(|&k| {
            (
                k,
                k.origin(vs),
                b.build(field, k, transition_mask(view, k)).clone(),
            )
        })
        .filter(|(_, _, m)| !m.is_empty())
        .collect()
}

pub fn cracks(field: &Field, view: &BTreeSet<LodKey>) -> OpenEdges {
    let s = scene(field, view);
    open_edges(
        s.iter().map(|(_, o, m)| (*o, m)),
        view,
        field.settings().voxel_size,
    )
}

fn lod() -> LodSettings {
    LodSettings {
        levels: 3,
        lod0_radius: 40.0,
        view_distance: 200.0,
        hysteresis: 0.25,
    }
}

#[test]
fn all_levels_weld_without_open_edges_inside_the_view() {
    let field = noise_field(7);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 1000) as f64 / 1000.0
    };
    for _ in 0..3 {
        let (x, z) = (next() * 400.0 - 200.0, next() * 400.0 - 200.0);
        let y = field.generator().surface_height(x, z) + 2.0 + next() * 30.0;
        let view = select(&[[x, y, z]], 1.0, &lod(), &BTreeSet::new());
        let c = cracks(&field, &view);
        eprintln!("viewer {x:.1} {y:.1} {z:.1}: {} chunks, {c:?}", view.len());
        assert!(c.triangles > 10_000, "{c:?}");
        assert!(c.outer > 0, "the view's outer edge is open: {c:?}");
        assert_eq!(c.inside, 0, "{c:?}");
        // The scene has surface at every level and transition faces.
        let sc = scene(&field, &view);
        let levels: BTreeSet<u8> = sc.iter().map(|(k, _, _)| k.level).collect();
        assert_eq!(levels, BTreeSet::from([0, 1, 2]));
        let with_transitions = sc
            .iter()
            .filter(|(k, _, _)| transition_mask(&view, *k) != 0)
            .count();
        assert!(with_transitions > 5, "{with_transitions}");
        // Control: without transition cells the same chunks crack where levels meet.
        let mut b = LodBuilder::default();
        let plain: Vec<([f64; 3], MeshBuffer)> = sc
            .iter()
            .map(|(k, o, _)| (*o, b.build(&field, *k, 0).clone()))
            .collect();
        let c0 = open_edges(plain.iter().map(|(o, m)| (*o, m)), &view, 1.0);
        assert!(c0.inside > 100, "no transitions: {c0:?}");
    }
}

/// An edit 1.5 km from the viewer changes the mesh of the chunk that covers it there, a chunk
/// of a coarse level.
#[test]
fn an_edit_far_away_shows_at_the_level_that_covers_it() {
    let mut field = noise_field(3);
    let st = LodSettings {
        levels: 5,
        lod0_radius: 64.0,
        view_distance: 1600.0,
        hysteresis: 0.25,
    };
    let y0 = field.generator().surface_height(0.0, 0.0) + 2.0;
    let view = select(&[[0.0, y0, 0.0]], 1.0, &st, &BTreeSet::new());
    let (x, z) = (1500.0, 10.0);
    let h = field.generator().surface_height(x, z);
    let c = [x, h, z].map(|v: f64| (v / 32.0).floor() as i32);
    let key = loam_world::lod::covering(&view, LodKey::new(0, c), 4).expect("in view");
    assert!(key.level >= 3, "{key:?}");
    let mask = transition_mask(&view, key);
    let mut b = LodBuilder::default();
    let before = b.build(&field, key, mask).clone();
    assert!(!before.is_empty());
    let op = EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, h, z],
        radius: 30.0,
        material: 0,
        blend: 0.0,
    };
    field.apply(&op).expect("dig");
    let after = b.build(&field, key, mask).clone();
    assert!(
        !loam_world::same_mesh(&before, &after),
        "{key:?} did not change"
    );
    eprintln!(
        "{key:?}: {} -> {} vertices",
        before.positions.len(),
        after.positions.len()
    );
}
