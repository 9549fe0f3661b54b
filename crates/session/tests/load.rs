//! The one loader ([`loam_session::load`]) against live sessions that simulate as the
//! server does: terrain ops through the field, block ops applied with the physics step
//! they were taken at, physics stepped at its fixed timestep on colliders from the field.

mod common;

use common::flat_field;
use loam_blocks::{
    BlockOp, BlockPos, BlockSize, BlockWorld, ChiselShape, FieldGround, MaterialTable, PieceState,
};
use loam_field::{CsgMode, EditOp, Field, History, LogEntry};
use loam_physics::{PhysicsSettings, PhysicsWorld};
use loam_session::{TerrainColliders, load, pieces_awake, step_replay, terrain_changed};
use loam_store::{BlockLogEntry, Store};

/// A live session writing every op to its store, stepping as the server does.
struct Live {
    store: Store,
    field: Field,
    history: History,
    physics: PhysicsWorld,
    blocks: BlockWorld,
    colliders: TerrainColliders,
    stroke: u64,
    /// The file's physics step of `physics`' step 0.
    step_base: u64,
}

impl Live {
    fn new(path: &std::path::Path) -> Self {
        let field = flat_field(0.0);
        Self {
            store: Store::create(path, "flat", field.settings(), None).unwrap(),
            field,
            history: History::default(),
            physics: PhysicsWorld::new(PhysicsSettings::default()).unwrap(),
            blocks: BlockWorld::new(MaterialTable::standard(), Default::default()).unwrap(),
            colliders: TerrainColliders::default(),
            stroke: 0,
            step_base: 0,
        }
    }

    fn terrain(&mut self, op: EditOp) {
        self.stroke += 1;
        let out = self
            .history
            .apply(&mut self.field, self.stroke, &op)
            .unwrap();
        let seq = self.store.last_seq() + 1;
        self.store
            .append(&LogEntry::new(seq, self.stroke, op))
            .unwrap();
        if let Some(c) = out.changed {
            terrain_changed(
                &mut self.blocks,
                &mut self.physics,
                &mut self.colliders,
                &self.field,
                c,
            )
            .unwrap();
        }
    }

    fn block(&mut self, op: BlockOp) {
        if let BlockOp::Place { at, .. } = &op {
            self.colliders.ensure(&self.field, at.min_corner());
        }
        self.blocks
            .apply(&mut self.physics, &FieldGround(&self.field), &op)
            .unwrap();
        for p in self.blocks.pieces() {
            self.colliders
                .ensure(&self.field, p.pose.position.map(f64::from));
        }
        let entry = BlockLogEntry {
            seq: self.store.last_seq() + 1,
            step: self.step_base + self.physics.step_count(),
            op: op.encode(),
        };
        self.store.append_block(&entry).unwrap();
    }

    /// `frames` frames of the server's clock: a step each while a piece is awake.
    fn frames(&mut self, frames: usize) {
        for _ in 0..frames {
            if pieces_awake(&self.blocks, &self.physics) {
                self.idle_step();
            }
        }
    }

    /// One step whether or not anything is awake (the editor before this crate stepped
    /// every frame).
    fn idle_step(&mut self) {
        step_replay(
            &mut self.blocks,
            &mut self.physics,
            &mut self.colliders,
            &self.field,
        )
        .unwrap();
    }
}

fn place(x: i32, y: i32, z: i32) -> BlockOp {
    BlockOp::Place {
        at: BlockPos::new(BlockSize::Full, [x, y, z]).unwrap(),
        material: MaterialTable::BRICK,
        shape: ChiselShape::SHARP,
        paint: None,
    }
}

fn dig(center: [f64; 3], radius: f64) -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center,
        radius,
        material: 0,
        blend: 0.0,
    }
}

/// A tower on the ground, dug out from under (it falls as one piece), then more blocks on
/// the ground beside where it lands; `idle` steps between the ops when nothing is awake.
fn session(path: &std::path::Path, idle: usize) -> Live {
    let mut s = Live::new(path);
    for y in 0..6 {
        s.block(place(4, y, 4));
    }
    for _ in 0..idle {
        s.idle_step();
    }
    s.terrain(dig([4.5, 0.0, 4.5], 2.5));
    assert!(
        s.blocks
            .pieces()
            .any(|p| matches!(p.state, PieceState::Falling)),
        "the undermined tower falls"
    );
    s.frames(600);
    assert!(
        !pieces_awake(&s.blocks, &s.physics),
        "the tower came to rest"
    );
    for _ in 0..idle {
        s.idle_step();
    }
    for x in 10..13 {
        s.block(place(x, 0, 4));
    }
    s.terrain(dig([11.5, 0.0, 4.5], 1.5));
    s.frames(600);
    s
}

/// Opens `path` with the one loader and goes on stepping, as a server that opened it would,
/// up to the world step `step` (a log ends at its last op; the falls after it are the live
/// world's own): the field's hash and the blocks as bytes then.
fn load_to(path: &std::path::Path, step: u64) -> (loam_field::FieldHash, Vec<u8>) {
    let mut store = Store::open(path).unwrap();
    let loaded = load(&mut store, flat_field(0.0)).unwrap();
    assert!(
        loaded.blocks.skipped.is_empty(),
        "{:?}",
        loaded.blocks.skipped
    );
    let field = loaded.world.field;
    let mut b = loaded.blocks;
    assert!(
        b.step() <= step,
        "the replay stops at the last op ({} > {step})",
        b.step()
    );
    while b.step() < step {
        step_replay(&mut b.world, &mut b.physics, &mut b.colliders, &field).unwrap();
    }
    (field.hash(), blocks_bytes(&b.world))
}

/// The blocks a world holds, as bytes (held blocks, shapes, pieces' poses exactly).
fn blocks_bytes(w: &BlockWorld) -> Vec<u8> {
    w.save().encode()
}

/// Opening a file replays the falls of the log's ops at their steps, and going on from
/// there ends, bit for bit, where the live session did: the same held blocks, the same
/// pieces at the same poses, the same field.
#[test]
fn a_load_ends_where_the_live_session_did() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let live = session(&path, 0);
    let (field_hash, bytes, step) = (
        live.field.hash(),
        blocks_bytes(&live.blocks),
        live.physics.step_count(),
    );
    assert!(step > 30, "the falls took steps ({step})");
    assert!(
        live.blocks.pieces().count() >= 2,
        "both falls lie as rubble"
    );
    drop(live);
    assert_eq!(load_to(&path, step), (field_hash, bytes));
}

/// The editor used to step its physics every frame, the server only while a piece is
/// awake, so the same ops were logged at different steps; the one loader opens both files
/// to the same field and the same blocks (steps with nothing awake change nothing).
#[test]
fn worlds_stepped_while_idle_and_not_load_to_the_same_hash() {
    let dir = tempfile::tempdir().unwrap();
    let (server_path, editor_path) = (dir.path().join("s.loam"), dir.path().join("e.loam"));
    let server = session(&server_path, 0);
    let editor = session(&editor_path, 500);
    assert!(editor.physics.step_count() >= server.physics.step_count() + 1000);
    let live_bytes = blocks_bytes(&server.blocks);
    assert_eq!(blocks_bytes(&editor.blocks), live_bytes);
    let ends = [server.physics.step_count(), editor.physics.step_count()];
    drop((server, editor));
    let server = load_to(&server_path, ends[0]);
    let editor = load_to(&editor_path, ends[1]);
    assert_eq!(server, editor);
    assert_eq!(server.1, live_bytes);
}

/// A file baked mid-session and reopened goes on like any other: the session resumed from
/// the load and a second load of the file end at the same field and blocks.
#[test]
fn a_session_resumed_from_a_bake_loads_to_where_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.loam");
    let mut s = Live::new(&path);
    for y in 0..6 {
        s.block(place(4, y, 4));
    }
    s.terrain(dig([4.5, 0.0, 4.5], 2.5));
    s.frames(600);
    let step = s.physics.step_count();
    let what = loam_session::Bake {
        log: &[],
        field: &s.field,
        history: &s.history,
        blocks: &s.blocks,
        step,
    };
    loam_session::bake(&mut s.store, what, &mut Vec::new()).unwrap();
    let rubble = blocks_bytes(&s.blocks);
    drop(s);
    // Go on from the file, as an editor reopening it would, and finish the session.
    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store, flat_field(0.0)).unwrap();
    let b = loaded.blocks;
    assert_eq!(
        (b.step_base, b.step()),
        (step, step),
        "nothing after the bake to replay"
    );
    assert_eq!(
        blocks_bytes(&b.world),
        rubble,
        "the snapshot keeps rubble poses exactly"
    );
    let mut s = Live {
        store,
        field: loaded.world.field,
        history: loaded.world.history,
        physics: b.physics,
        blocks: b.world,
        colliders: b.colliders,
        stroke: 10,
        step_base: b.step_base,
    };
    for x in 10..13 {
        s.block(place(x, 0, 4));
    }
    s.terrain(dig([11.5, 0.0, 4.5], 1.5));
    s.frames(600);
    let want = (s.field.hash(), blocks_bytes(&s.blocks));
    let end = s.step_base + s.physics.step_count();
    drop(s);
    assert_eq!(load_to(&path, end), want);
}
