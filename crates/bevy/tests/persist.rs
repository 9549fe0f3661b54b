//! The editor's world file with blocks (issue 8, persistence): terrain and block ops reach
//! the op log in the order they were applied under one numbering, a save keeps the block
//! world exactly (held blocks, shapes, paint, a piece in mid-fall), and a load restores the
//! save and replays the ops after it.

mod common;

use loam_bevy::{LoamBlocks, Physics, persist};
use loam_blocks::{BlockOp, BlockPos, BlockSize, ChiselShape, Edge, MaterialTable, PieceState};
use loam_field::{CsgMode, EditOp, Field};
use loam_store::{LogRecord, Store};
use loam_world::{World, WorldSettings};

use common::cuboid;

fn base() -> Field {
    common::noise_field_without_caves()
}

fn settings() -> WorldSettings {
    WorldSettings {
        view_radius: 1,
        view_depth: 1,
        threads: 1,
        ..Default::default()
    }
}

fn place(at: BlockPos, paint: Option<[u8; 3]>) -> BlockOp {
    BlockOp::Place {
        at,
        material: MaterialTable::BRICK,
        shape: ChiselShape::SHARP,
        paint,
    }
}

/// A live editor session without the app: the world, the blocks and the file.
struct Live {
    world: World,
    blocks: LoamBlocks,
    physics: Physics,
    store: Store,
}

impl Live {
    fn terrain(&mut self, op: EditOp) {
        let stroke = self.world.next_stroke();
        let out = self.world.apply_in_stroke(stroke, &op).unwrap();
        // As the app's step_blocks does after every terrain op.
        if let Some(c) = out.changed {
            let region = loam_blocks::WorldBox::from_samples(c, 1.0);
            self.blocks
                .world
                .terrain_changed(
                    &mut self.physics.world,
                    &loam_blocks::FieldGround(self.world.field()),
                    region,
                )
                .unwrap();
        }
    }

    fn block(&mut self, op: BlockOp) {
        self.blocks
            .apply(&mut self.physics, &mut self.world, &op)
            .unwrap();
    }

    fn frames(&mut self, n: usize) {
        for _ in 0..n {
            self.blocks
                .world
                .step(&mut self.physics.world, 1.0 / 60.0)
                .unwrap();
        }
    }
}

#[test]
fn ops_are_logged_in_order_saved_exactly_and_restored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let field = base();
    // A flat pad at y = top with air above, then a two-block pillar holding a beam, a painted
    // chiselled block beside it.
    let top = field.generator().surface_height(0.5, 0.5).round();
    let store = Store::create(&path, "{}", field.settings(), None).unwrap();
    let mut blocks = LoamBlocks::new();
    blocks.journaling = true;
    let mut s = Live {
        world: World::new(field, settings()).unwrap(),
        blocks,
        physics: Physics::new(),
        store,
    };
    s.terrain(cuboid(
        CsgMode::Union,
        [0.5, top - 3.0, 0.5],
        [6.0, 3.0, 6.0],
    ));
    s.terrain(cuboid(
        CsgMode::Subtract,
        [0.5, top + 8.0, 0.5],
        [6.0, 8.0, 6.0],
    ));
    let y = top as i32;
    let at = |x, dy| BlockPos::new(BlockSize::Full, [x, y + dy, 0]).unwrap();
    s.block(place(at(0, 0), None));
    s.block(place(at(0, 1), None));
    s.block(place(at(1, 1), None));
    s.block(place(at(3, 0), Some([200, 30, 40])));
    s.block(BlockOp::Chisel {
        at: at(3, 0),
        shape: ChiselShape::SHARP.with_round(Edge::new(0, true, true)),
    });
    let written = persist::flush(&mut s.store, &s.world, &mut s.blocks.journal).unwrap();
    assert_eq!(written, 7);
    assert!(s.blocks.journal.is_empty());
    // One numbering: two terrain ops, then five block ops, 1..=7 in order.
    let kinds: Vec<(u64, bool)> = s
        .store
        .log_after(0)
        .unwrap()
        .iter()
        .map(|r| (r.seq(), matches!(r, LogRecord::Block(_))))
        .collect();
    let expected: Vec<(u64, bool)> = (1..=7).map(|q| (q, q > 2)).collect();
    assert_eq!(kinds, expected);
    // The next terrain op is numbered after the block ops.
    s.terrain(cuboid(CsgMode::Subtract, [5.5, top - 1.0, 5.5], [1.0; 3]));
    assert_eq!(s.world.log().last().unwrap().seq, 8);

    // Knock out the pillar's foot: the pillar's top and the beam fall as one piece. Save in
    // mid-fall.
    s.block(BlockOp::Break { at: at(0, 0) });
    s.frames(12);
    let falling: Vec<_> = s.blocks.world.pieces().map(|p| p.id).collect();
    assert_eq!(
        falling.len(),
        1,
        "the pillar's top and the beam, as one piece"
    );
    let baked_bricks = persist::bake(&mut s.store, &s.world, &mut s.blocks, &s.physics).unwrap();
    assert!(baked_bricks > 0);
    let at_bake = s.blocks.world.save();
    let bake_step = s.blocks.step(&s.physics);
    assert_eq!(bake_step, 12);

    // Ops after the save: a block on the pad, and a dig under the painted block, which
    // then falls too.
    s.frames(5);
    // The replay steps the falling piece up to this op's step (17), as it fell live.
    let at_place = s.blocks.world.save();
    s.block(place(at(-2, 0), None));
    s.terrain(cuboid(
        CsgMode::Subtract,
        [3.5, top - 1.0, 0.5],
        [1.5, 1.5, 1.5],
    ));
    assert_eq!(s.blocks.world.pieces().count(), 2);
    persist::flush(&mut s.store, &s.world, &mut s.blocks.journal).unwrap();
    let last_seq = s.store.last_seq();
    assert_eq!(last_seq, 11);
    let live_hash = s.world.field().hash();
    let live_held = s.blocks.world.save().blocks;
    drop(s);

    // Reopen: the field bit for bit, the held blocks exactly, the piece that was falling at
    // the save stepped from the save to the next block op's step as it fell live
    // (`loam_session::load`), the dig's piece created again by the replay.
    let mut store = Store::open(&path).unwrap();
    let saved = store.blocks().unwrap().unwrap();
    assert_eq!((saved.seq, saved.step), (9, 12));
    let (loaded, restored) = persist::load(&mut store, base()).unwrap();
    assert!(restored.skipped.is_empty(), "{:?}", restored.skipped);
    assert_eq!(loaded.last_seq, last_seq);
    assert_eq!(loaded.field.hash(), live_hash);
    let file = restored.blocks.world.save();
    assert_eq!(file.blocks, live_held);
    let mid_fall = file.pieces.iter().find(|p| p.id == falling[0]).unwrap();
    let saved_piece = at_bake.pieces.iter().find(|p| p.id == falling[0]).unwrap();
    let live_piece = at_place.pieces.iter().find(|p| p.id == falling[0]).unwrap();
    assert_ne!(mid_fall, saved_piece, "stepped on from the save");
    assert_eq!(
        mid_fall, live_piece,
        "the piece as it was live at the next op, bit for bit"
    );
    assert!(matches!(mid_fall.state, PieceState::Falling));
    assert_eq!(file.pieces.len(), 2);
    // Steps go on from the last logged op's step: the bake's, and the five replayed.
    assert_eq!(restored.blocks.step_base, 12);
    assert_eq!(restored.blocks.step(&restored.physics), 17);
    assert!(restored.blocks.journaling);
    // A world resumed at the loaded sequence numbers its next ops after it.
    let mut world =
        World::resume(loaded.field, loaded.history, loaded.last_seq, settings()).unwrap();
    assert_eq!(world.reserve_seq(), last_seq + 1);
}

#[test]
fn a_failed_append_keeps_the_rest_for_the_next_flush() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let field = base();
    let top = field.generator().surface_height(0.5, 0.5).round();
    let mut store = Store::create(&path, "{}", field.settings(), None).unwrap();
    let mut world = World::new(field, settings()).unwrap();
    let mut blocks = LoamBlocks::new();
    blocks.journaling = true;
    let mut physics = Physics::new();
    world
        .apply(&cuboid(
            CsgMode::Union,
            [0.5, top - 3.0, 0.5],
            [6.0, 3.0, 6.0],
        ))
        .unwrap();
    let at = BlockPos::new(BlockSize::Full, [0, top as i32 + 8, 0]).unwrap();
    // A block in the air: it falls at once, but the op is logged all the same.
    blocks
        .apply(&mut physics, &mut world, &place(at, None))
        .unwrap();
    // Another writer takes numbers 1 and 2 first (a world opened twice cannot happen with
    // the store's lock; this stands for any failed write).
    for seq in 1..=2 {
        store
            .append(&loam_field::LogEntry::new(
                seq,
                seq,
                cuboid(CsgMode::Union, [0.0; 3], [1.0; 3]),
            ))
            .unwrap();
    }
    let err = persist::flush(&mut store, &world, &mut blocks.journal).unwrap_err();
    assert!(
        matches!(err, loam_store::StoreError::OutOfOrder { .. }),
        "{err}"
    );
    assert_eq!(
        blocks.journal.len(),
        1,
        "the block op waits for the next flush"
    );
}

mod app {
    //! The same in an app: rubble saved by the editor is where it lay after a load, not
    //! fallen through ground whose colliders did not exist yet.

    use std::time::Duration;

    use bevy::prelude::*;
    use bevy::time::TimeUpdateStrategy;
    use loam_bevy::{
        BlocksPlugin, LoamBlocks, LoamPlugin, LoamViewer, LoamWorld, Physics, persist,
    };
    use loam_blocks::{BlockOp, BlockPos, BlockSize, MaterialTable, PieceState};
    use loam_field::CsgMode;
    use loam_store::Store;
    use loam_world::World;

    use crate::common::run_until;

    fn app(world: World, y: f32) -> App {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
            .init_asset::<Mesh>()
            .init_asset::<Image>()
            .init_asset::<StandardMaterial>()
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
                50,
            )))
            .add_plugins((LoamPlugin, BlocksPlugin))
            .insert_resource(LoamWorld::new(world));
        app.world_mut().spawn((
            Transform::from_xyz(0.0, y + 6.0, 12.0),
            GlobalTransform::from_xyz(0.0, y + 6.0, 12.0),
            LoamViewer,
        ));
        app
    }

    fn resting(app: &App) -> bool {
        let b = &app.world().resource::<LoamBlocks>().world;
        app.world().resource::<Physics>().building() == 0
            && b.pieces().count() == 1
            && b.pieces()
                .all(|p| matches!(p.state, PieceState::Rubble { .. }))
    }

    #[test]
    fn saved_rubble_lies_where_it_lay_after_a_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.loam");
        let field = super::base();
        let top = field.generator().surface_height(0.5, 0.5).round();
        let mut store = Store::create(&path, "{}", field.settings(), None).unwrap();
        let mut a = app(World::new(field, super::settings()).unwrap(), top as f32);
        a.world_mut().resource_mut::<LoamBlocks>().journaling = true;
        {
            let mut w = a.world_mut().resource_mut::<LoamWorld>();
            w.apply(
                None,
                &super::cuboid(CsgMode::Union, [0.5, top - 3.0, 0.5], [4.0, 3.0, 4.0]),
            )
            .unwrap();
            w.apply(
                None,
                &super::cuboid(CsgMode::Subtract, [0.5, top + 6.0, 0.5], [4.0, 6.0, 4.0]),
            )
            .unwrap();
        }
        // A block dropped from 3 m onto the pad.
        let at = BlockPos::new(BlockSize::Full, [0, top as i32 + 3, 0]).unwrap();
        a.world_mut()
            .resource_scope(|world, mut blocks: Mut<LoamBlocks>| {
                world.resource_scope(|world, mut physics: Mut<Physics>| {
                    let mut lw = world.resource_mut::<LoamWorld>();
                    blocks
                        .apply(
                            &mut physics,
                            &mut lw.world,
                            &BlockOp::Place {
                                at,
                                material: MaterialTable::STONE,
                                shape: Default::default(),
                                paint: None,
                            },
                        )
                        .unwrap();
                });
            });
        let mut n = 0;
        assert!(run_until(&mut a, 90, |app| {
            n += 1;
            let b = &app.world().resource::<LoamBlocks>().world;
            if n % 40 == 0 && std::env::var_os("LOAM_DEBUG").is_some() {
                let w = &app.world().resource::<LoamWorld>().world;
                let ph = app.world().resource::<Physics>();
                for p in b.pieces() {
                    let key = loam_bevy::chunk_of(Vec3::from_array(p.pose.position), 1.0);
                    eprintln!(
                        "frame {n}: {:?} {:?} key {key:?} current {} ready {} building {} held {}",
                        p.pose.position,
                        p.state,
                        w.is_current(key),
                        ph.ready_around(key),
                        ph.building(),
                        b.store().len()
                    );
                }
            }
            b.pieces().count() == 1 && resting(app)
        }));
        let rest = a
            .world()
            .resource::<LoamBlocks>()
            .world
            .pieces()
            .next()
            .unwrap()
            .pose;
        assert!(
            (rest.position[1] as f64 - top).abs() < 1.0,
            "on the pad: {rest:?}"
        );
        a.world_mut()
            .resource_scope(|world, mut blocks: Mut<LoamBlocks>| {
                let physics = world.resource::<Physics>();
                let w = &world.resource::<LoamWorld>().world;
                persist::bake(&mut store, w, &mut blocks, physics).unwrap();
            });
        drop(a);
        drop(store);

        let mut store = Store::open(&path).unwrap();
        let (loaded, restored) = persist::load(&mut store, super::base()).unwrap();
        let world = World::resume(
            loaded.field,
            loaded.history,
            loaded.last_seq,
            super::settings(),
        )
        .unwrap();
        let mut b = app(world, top as f32);
        b.insert_resource(restored.blocks)
            .insert_resource(restored.physics);
        // The terrain loads, its colliders are built, a second passes.
        let mut frames = 0;
        assert!(run_until(&mut b, 90, |app| {
            let w = &app.world().resource::<LoamWorld>().world;
            if w.waiting() == 0 && w.pending_batches() == 0 && resting(app) {
                frames += 1;
            }
            frames > 20
        }));
        let after = b
            .world()
            .resource::<LoamBlocks>()
            .world
            .pieces()
            .next()
            .unwrap()
            .pose;
        let drop_m = rest.position[1] - after.position[1];
        assert!(
            drop_m.abs() < 0.05,
            "moved {drop_m} m: {rest:?} → {after:?}"
        );
    }
}

/// A game's world file ([`loam_bevy::WorldFile`]): created on the first open; an op applied
/// through `LoamWorld` is in the log at the end of its frame; exiting bakes; the next open
/// gives the field as it was left; a file of another generator or field is refused.
#[test]
fn a_world_file_in_the_app_keeps_its_ops_and_reopens_as_left() {
    use bevy::prelude::*;
    use loam_bevy::{LoamPlugins, LoamWorld, WorldFile, WorldFileError};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.loam");
    let json = r#"{"kind": "noise"}"#;
    let opened = WorldFile::open_or_create(&path, base(), json, settings()).unwrap();
    assert!(opened.created);
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
        .init_asset::<Mesh>()
        .init_asset::<Image>()
        .init_asset::<StandardMaterial>()
        .add_plugins(LoamPlugins);
    opened.insert_into(&mut app);
    app.update();
    let file_seq = |app: &App| app.world().resource::<WorldFile>().last_seq().unwrap();
    assert_eq!(file_seq(&app), 0);
    let top = base().generator().surface_height(0.5, 0.5);
    let dig = cuboid(CsgMode::Subtract, [0.5, top, 0.5], [2.0; 3]);
    app.world_mut()
        .resource_mut::<LoamWorld>()
        .apply(None, &dig)
        .unwrap();
    app.update();
    assert_eq!(file_seq(&app), 1, "appended at the end of the frame");
    app.world_mut().write_message(AppExit::Success);
    app.update();
    let live = app.world().resource::<LoamWorld>().world.field().hash();
    assert_ne!(live, base().hash());
    drop(app);
    {
        let store = Store::open_read_only(&path).unwrap();
        assert_eq!(store.blocks().unwrap().unwrap().seq, 1, "baked at exit");
        let ops = store.ops_after(0).unwrap();
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].op, dig);
    }
    let reopened = WorldFile::open_or_create(&path, base(), json, settings()).unwrap();
    assert!(!reopened.created);
    assert_eq!(reopened.world.world.field().hash(), live);
    drop(reopened);
    let other = WorldFile::open_or_create(&path, base(), r#"{"kind": "other"}"#, settings());
    assert!(matches!(other, Err(WorldFileError::OtherGenerator { .. })));
    let coarse = Field::new(
        loam_field::FieldSettings {
            voxel_size: 2.0,
            ..*base().settings()
        },
        base().generator_arc().clone(),
    )
    .unwrap();
    let other = WorldFile::open_or_create(&path, coarse, json, settings());
    assert!(matches!(
        other,
        Err(WorldFileError::OtherFieldSettings { .. })
    ));
}

/// Block edits made before the world was closed are undone after it is opened again, in
/// their order among the terrain strokes, from what the file's op log holds
/// (`undo::Journal::from_store`); a block undone before the close is there to redo.
#[test]
fn block_edits_are_undone_after_a_reopen() {
    use loam_bevy::editor::{Journal, Step};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let field = base();
    let top = field.generator().surface_height(0.5, 0.5).round();
    let store = Store::create(&path, "{}", field.settings(), None).unwrap();
    let mut blocks = LoamBlocks::new();
    blocks.journaling = true;
    let mut s = Live {
        world: World::new(field, settings()).unwrap(),
        blocks,
        physics: Physics::new(),
        store,
    };
    // A flat pad with air above.
    s.terrain(cuboid(
        CsgMode::Union,
        [0.5, top - 3.0, 0.5],
        [6.0, 3.0, 6.0],
    ));
    s.terrain(cuboid(
        CsgMode::Subtract,
        [0.5, top + 8.0, 0.5],
        [6.0, 8.0, 6.0],
    ));
    let y = top as i32;
    let at = |x| BlockPos::new(BlockSize::Full, [x, y, 0]).unwrap();
    let round = ChiselShape::SHARP.with_round(Edge::new(0, true, true));
    s.block(place(at(0), None));
    s.terrain(cuboid(CsgMode::Subtract, [5.5, top - 1.0, 5.5], [1.0; 3]));
    s.block(place(at(2), Some([200, 30, 40])));
    s.block(BlockOp::Chisel {
        at: at(2),
        shape: round,
    });
    // Placed, then undone in the session (the editor logs the undo as the inverse op).
    s.block(place(at(-2), None));
    s.block(BlockOp::Break { at: at(-2) });
    persist::bake(&mut s.store, &s.world, &mut s.blocks, &s.physics).unwrap();
    drop(s);

    let mut store = Store::open(&path).unwrap();
    let (loaded, mut restored) = persist::load(&mut store, base()).unwrap();
    let mut world =
        World::resume(loaded.field, loaded.history, loaded.last_seq, settings()).unwrap();
    let mut journal = Journal::from_store(&store).unwrap();
    // Three terrain strokes and three block edits to undo, the undone place to redo.
    assert_eq!(journal.counts(), (6, 1));
    let held = |b: &LoamBlocks, x| b.world.store().get(at(x)).map(|b| b.shape);
    assert_eq!(held(&restored.blocks, 2), Some(round));
    assert_eq!(held(&restored.blocks, 0), Some(ChiselShape::SHARP));
    let mut undo_block = |journal: &mut Journal, restored: &mut persist::Restored| {
        let action = journal.undo(true).unwrap();
        let [Step::Block { inverse, .. }] = action.as_slice() else {
            panic!("not a block edit: {action:?}");
        };
        restored
            .blocks
            .apply(&mut restored.physics, &mut world, inverse)
            .unwrap();
    };
    // The chisel, then the place of the painted block, are undone.
    undo_block(&mut journal, &mut restored);
    assert_eq!(held(&restored.blocks, 2), Some(ChiselShape::SHARP));
    undo_block(&mut journal, &mut restored);
    assert_eq!(held(&restored.blocks, 2), None, "the block is gone");
    // Then the dig between, a terrain stroke, then the first block.
    assert_eq!(journal.undo(true), Some(vec![Step::Terrain]));
    undo_block(&mut journal, &mut restored);
    assert_eq!(held(&restored.blocks, 0), None, "the block is gone");
    assert_eq!(journal.counts(), (2, 5));
}

/// Saving a world file that holds blocks without the app's blocks is refused (the bake would
/// replace them with an empty block world, which a crash before the next save made final);
/// with them it bakes them.
#[test]
fn a_save_without_the_blocks_never_drops_them() {
    use loam_bevy::{WorldFile, WorldFileError};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.loam");
    let json = r#"{"kind": "noise"}"#;
    let mut opened = WorldFile::open_or_create(&path, base(), json, settings()).unwrap();
    let top = base().generator().surface_height(0.5, 0.5).round();
    // A pad, and a block on it.
    opened
        .world
        .apply(
            None,
            &cuboid(CsgMode::Union, [0.5, top - 2.0, 0.5], [4.0, 2.0, 4.0]),
        )
        .unwrap();
    opened
        .world
        .apply(
            None,
            &cuboid(CsgMode::Subtract, [0.5, top + 6.0, 0.5], [4.0, 6.0, 4.0]),
        )
        .unwrap();
    let at = BlockPos::new(BlockSize::Full, [0, top as i32, 0]).unwrap();
    opened
        .blocks
        .apply(
            &mut opened.physics,
            &mut opened.world.world,
            &place(at, None),
        )
        .unwrap();
    let file = &opened.file;
    file.append(&opened.world.world, Some(&mut opened.blocks))
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    match file.save(&opened.world.world, None, None) {
        Err(WorldFileError::BlocksNotGiven { block_ops: 1, .. }) => {}
        r => panic!("a save without the blocks: {r:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing written");
    let saved = file
        .save(
            &opened.world.world,
            Some(&mut opened.blocks),
            Some(&opened.physics),
        )
        .unwrap();
    assert_eq!(saved.blocks, 1);
    // Baked with its block, a save without the blocks is still refused.
    assert!(matches!(
        file.save(&opened.world.world, None, None),
        Err(WorldFileError::BlocksNotGiven { held: 1, .. })
    ));
}

/// A game's DEM world: the generator named by a `GeneratorSpec` with its DEM carried, kept
/// by `WorldFile` with the DEM's BLAKE3 beside it (what `loam edit` checks before it
/// rebuilds the terrain), and reopened with its edit.
#[test]
fn a_dem_world_file_records_the_dem_it_rebuilds_from() {
    use loam_bevy::prelude::{GeneratorSpec, WorldFile};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dem = root.join("data/heightmaps/jacksboro_3arcsec.png");
    let spec = GeneratorSpec::from_json(&format!(
        r#"{{"kind": "heightmap", "path": {:?},
            "placement": {{"horizontal_scale": 0.1, "vertical_scale": 0.1}}}}"#,
        dem.to_str().unwrap()
    ))
    .unwrap()
    .embedded()
    .unwrap();
    let (generator, built_hash) = spec.build(std::path::Path::new("")).unwrap();
    let expected = blake3::hash(&std::fs::read(&dem).unwrap())
        .to_hex()
        .to_string();
    assert_eq!(built_hash.as_deref(), Some(expected.as_str()));
    assert_eq!(
        spec.dem_blake3(std::path::Path::new("")).unwrap(),
        built_hash
    );
    let generator = std::sync::Arc::new(generator);
    let field = || Field::new(Default::default(), generator.clone()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dem.loam");
    let json = spec.to_json();
    let mut opened = WorldFile::open_or_create(&path, field(), &json, settings()).unwrap();
    assert!(opened.created);
    let y = generator.surface_height(0.0, 0.0);
    let op = EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [0.0, y, 0.0],
        radius: 3.0,
        material: 0,
        blend: 0.0,
    };
    opened.world.apply(None, &op).unwrap();
    opened.file.append(&opened.world.world, None).unwrap();
    let dug = opened.world.world.field().hash();
    drop(opened);
    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(store.heightmap_blake3().unwrap(), built_hash);
    assert_eq!(
        GeneratorSpec::from_json(&store.generator_json().unwrap())
            .unwrap()
            .to_json(),
        json
    );
    drop(store);
    let reopened = WorldFile::open_or_create(&path, field(), &json, settings()).unwrap();
    assert!(!reopened.created);
    assert_eq!(reopened.world.world.field().hash(), dug);
    // A DEM that cannot be read: a typed error, and no file.
    let missing =
        GeneratorSpec::from_json(r#"{"kind": "heightmap", "path": "/nonexistent/dem.png"}"#)
            .unwrap()
            .to_json();
    let other = dir.path().join("missing.loam");
    assert!(matches!(
        WorldFile::open_or_create(&other, field(), &missing, settings()),
        Err(loam_bevy::WorldFileError::Dem(_))
    ));
    assert!(!other.exists());
}
