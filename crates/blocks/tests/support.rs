//! Support rules: bridges, pillars, towers on dug terrain, and incremental equals from
//! scratch.

use loam_blocks::{BlockPos, BlockSize, BlockStore, FieldGround, WorldBox};
use loam_field::{CsgMode, EditOp};
use loam_physics::PhysicsSettings;

use crate::util::*;

/// Two pillars 3 high at x = 0 and x = 6, a beam at y = 3 from x = 0 to 6.
fn bridge() -> Vec<BlockPos> {
    let mut cells = Vec::new();
    for y in 0..3 {
        cells.push(full(0, y, 0));
        cells.push(full(6, y, 0));
    }
    for x in 0..=6 {
        cells.push(full(x, 3, 0));
    }
    cells
}

#[test]
fn a_bridge_held_at_both_ends_stays() {
    let s = store_of(&bridge());
    assert!(s.unsupported_all().is_empty());
    let mut s2 = s.clone();
    // Cut the middle of the beam: each half still hangs on its own pillar.
    let mid = full(3, 3, 0);
    s2.remove(mid);
    assert!(s2.unsupported(s.face_neighbours(mid)).is_empty());
    // Knock out the foot of the left pillar: it hangs from the beam, held by the right
    // pillar (all or nothing: no stress limit).
    let foot = full(0, 0, 0);
    let mut s3 = s.clone();
    s3.remove(foot);
    assert!(s3.unsupported(s.face_neighbours(foot)).is_empty());
    // Both cuts: the left half of the beam and what is left of its pillar fall as one.
    s3.remove(mid);
    let pieces = s3.unsupported(s.face_neighbours(mid));
    assert_eq!(
        pieces,
        vec![vec![
            full(0, 1, 0),
            full(0, 2, 0),
            full(0, 3, 0),
            full(1, 3, 0),
            full(2, 3, 0)
        ]]
    );
    assert_eq!(pieces, s3.unsupported_all());
}

#[test]
fn removing_a_pillar_drops_the_beam_it_held() {
    // A pillar 3 high carrying a beam 4 long at y = 3, reaching out to +x; the ground is a
    // physics floor at y = 0.
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    let mut cells: Vec<BlockPos> = (0..3).map(|y| full(0, y, 0)).collect();
    cells.extend((0..4).map(|x| full(x, 3, 0)));
    build(&mut w, &mut physics, &cells, stone());
    assert_eq!(physics.fixed_count(), 7);
    let rev = w.store().revision();

    // Break the pillar's middle block: its foot stays, the rest falls as one piece.
    let changes = w.break_block(&mut physics, full(0, 1, 0)).unwrap();
    assert_eq!(changes.broken.len(), 1);
    assert_eq!(changes.new_pieces.len(), 1);
    let piece = changes.new_pieces[0];
    let mut expected = vec![full(0, 2, 0)];
    expected.extend((0..4).map(|x| full(x, 3, 0)));
    assert_eq!(piece_cells(&w, piece), expected);
    assert_eq!(w.store().len(), 1, "only the foot is left");
    assert_eq!(physics.fixed_count(), 1);
    assert!(w.store().revision() > rev);
    assert!((physics.body_mass(w.piece_body(piece).unwrap()).unwrap() - 5.0 * 2400.0).abs() < 1.0);

    // It falls: after a second its frame is lower than where it started (y = 2).
    let start = w.piece(piece).unwrap().pose.position[1];
    run(&mut w, &mut physics, 60);
    let now = w.piece(piece).unwrap().pose.position[1];
    assert!(now < start - 0.5, "fell from {start} to {now}");
}

#[test]
fn a_tower_on_terrain_falls_when_the_terrain_under_it_is_dug() {
    let mut field = flat_field(0.0);
    let cells: Vec<BlockPos> = (0..4).map(|y| full(0, y, 0)).collect();
    let mut s = BlockStore::new();
    let materials = loam_blocks::MaterialTable::standard();
    let settings = loam_blocks::BlockSettings::default();
    for &p in &cells {
        s.place(p, &stone(), &materials, &FieldGround(&field), &settings)
            .unwrap();
    }
    assert!(s.get(full(0, 0, 0)).unwrap().on_ground);
    assert!(s.unsupported_all().is_empty());

    // A dig 6 m away changes nothing.
    let far = field
        .apply(&EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [8.0, 0.0, 0.5],
            radius: 1.5,
            material: 0,
            blend: 0.0,
        })
        .unwrap();
    let region = WorldBox::from_samples(far.changed.unwrap(), 1.0);
    assert!(
        s.update_ground(&FieldGround(&field), region, settings.ground_probe)
            .is_empty()
    );

    // Dig a pit under the tower.
    let out = field
        .apply(&EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [0.5, -1.0, 0.5],
            radius: 2.5,
            material: 0,
            blend: 0.0,
        })
        .unwrap();
    let region = WorldBox::from_samples(out.changed.unwrap(), 1.0);
    let lost = s.update_ground(&FieldGround(&field), region, settings.ground_probe);
    assert_eq!(lost, vec![full(0, 0, 0)]);
    let pieces = s.unsupported(lost);
    assert_eq!(pieces, vec![cells.clone()]);
    assert_eq!(pieces, s.unsupported_all());
}

#[test]
fn a_tower_falls_into_a_dug_pit_in_the_physics_world() {
    // The same, end to end: Loam terrain meshed into chunk colliders, a dig, the chunks
    // swapped, `terrain_changed`, and the tower falling into the pit.
    let mut field = flat_field(0.0);
    let mut physics = loam_physics::PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    load_chunks(&mut physics, &field);
    let mut w = block_world();
    let cells: Vec<BlockPos> = (0..4).map(|y| full(0, y, 0)).collect();
    for &p in &cells {
        let c = w
            .place(&mut physics, &FieldGround(&field), p, stone())
            .unwrap();
        assert!(c.new_pieces.is_empty());
    }
    run(&mut w, &mut physics, 10);
    assert_eq!(w.store().len(), 4);

    let out = field
        .apply(&EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [0.5, -1.0, 0.5],
            radius: 2.5,
            material: 0,
            blend: 0.0,
        })
        .unwrap();
    load_chunks(&mut physics, &field);
    let region = WorldBox::from_samples(out.changed.unwrap(), 1.0);
    let changes = w
        .terrain_changed(&mut physics, &FieldGround(&field), region)
        .unwrap();
    assert_eq!(changes.new_pieces.len(), 1);
    let piece = changes.new_pieces[0];
    assert_eq!(piece_cells(&w, piece), cells);
    settle(&mut w, &mut physics, 600);
    let y = w.piece(piece).unwrap().pose.position[1];
    // The pit reaches 3.5 m down at its centre; the tower's foot ends well below 0.
    assert!(y < -1.0, "the tower's foot rests at {y}");
}

/// A deterministic pseudo-random sequence (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn incremental_support_equals_support_from_scratch() {
    // Random structures of mixed sizes on flat ground; remove random blocks one at a time,
    // detach what the local search finds, and compare with a full recomputation.
    let mut detached = 0;
    for seed in 1..=20u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut s = BlockStore::new();
        let materials = loam_blocks::MaterialTable::standard();
        let settings = loam_blocks::BlockSettings::default();
        for _ in 0..400 {
            let size = BlockSize::ALL[rng.next(3) as usize];
            let q = 4 / size.quarters();
            let cell = [
                rng.next(6 * q as u64) as i32,
                rng.next(5 * q as u64) as i32,
                rng.next(3 * q as u64) as i32,
            ];
            let p = BlockPos::new(size, cell).unwrap();
            let _ = s.place(p, &stone(), &materials, &flat, &settings);
        }
        // Start from a consistent state: drop whatever floats.
        for piece in s.unsupported_all() {
            for p in piece {
                s.remove(p);
            }
        }
        for _ in 0..40 {
            let all: Vec<BlockPos> = s.iter().map(|(p, _)| p).collect();
            if all.is_empty() {
                break;
            }
            let victim = all[rng.next(all.len() as u64) as usize];
            let seeds = s.face_neighbours(victim);
            s.remove(victim);
            let local = s.unsupported(seeds);
            let mut scratch = s.unsupported_all();
            let mut sorted_local = local.clone();
            sorted_local.sort();
            scratch.sort();
            assert_eq!(sorted_local, scratch, "seed {seed}, removed {victim:?}");
            for piece in local {
                detached += 1;
                for p in piece {
                    s.remove(p);
                }
            }
        }
    }
    assert!(
        detached > 50,
        "the removals should cut pieces loose: {detached}"
    );
}
