//! What `loam edit --connect` does with a client's field: a chunk pipeline (loam-world)
//! made from the joined field takes the client's bricks after each op, and the chunks it
//! rebuilds equal a pipeline built from scratch on the same field.

use std::collections::BTreeSet;
use std::time::Duration;

use loam_client::{Client, ClientConfig, ClientEvent};
use loam_field::{BrickKey, CsgMode, EditOp};
use loam_world::{PullBudget, Update, Viewer, World, WorldSettings};

use crate::util::{factory, new_world, start, viewer};

fn settings() -> WorldSettings {
    WorldSettings {
        view_radius: 2,
        view_depth: 1,
        threads: 2,
        ..Default::default()
    }
}

/// Every chunk mesh shown after settling, by chunk.
fn settle(
    world: &mut World,
    v: &[Viewer],
    shown: &mut std::collections::BTreeMap<[i32; 3], Vec<f32>>,
) {
    world.update(v);
    assert!(world.wait_idle(Duration::from_secs(120)));
    for u in world.pull(PullBudget::ALL) {
        match u {
            Update::Group(g) => {
                for m in g.meshes {
                    let k = [m.key.x, m.key.y, m.key.z];
                    shown.insert(k, m.mesh.positions.iter().flatten().copied().collect());
                }
            }
            Update::Removed(k) => {
                shown.remove(&[k.x, k.y, k.z]);
            }
        }
    }
}

#[test]
fn a_world_made_from_the_joined_field_shows_the_clients_ops() {
    let dir = tempfile::tempdir().unwrap();
    let path = new_world(dir.path());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(start(&path, |_| {}));
    let mut client = rt
        .block_on(Client::connect(ClientConfig::new(
            server.url(),
            viewer(0.0, 0.0, 0.0, 96.0),
            factory(),
        )))
        .unwrap();
    let joined = client.field().clone();
    let h = joined.generator().surface_height(0.0, 0.0);
    let v = [Viewer::at([0.0, h + 10.0, 20.0])];
    let mut world = World::new(joined, settings()).unwrap();
    let mut shown = Default::default();
    settle(&mut world, &v, &mut shown);
    let before = shown.clone();
    for (i, x) in [0.0, 3.0, -20.0].into_iter().enumerate() {
        rt.block_on(client.send_op(
            i as u64 + 1,
            EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: [x, h, 0.0],
                radius: 3.0,
                material: 0,
                blend: 0.0,
            },
        ))
        .unwrap();
        // Predicted: shown at once.
        assert!(!world.replace_bricks(client.field()).unwrap().is_empty());
        settle(&mut world, &v, &mut shown);
        loop {
            match rt.block_on(client.next_event()).unwrap() {
                ClientEvent::Op { own: true, .. } => break,
                _ => continue,
            }
        }
        world.replace_bricks(client.field()).unwrap();
        settle(&mut world, &v, &mut shown);
    }
    assert_ne!(shown, before, "the digs changed the shown meshes");
    // From scratch on the client's field: the same meshes.
    let mut fresh = World::new(client.field().clone(), settings()).unwrap();
    let mut fresh_shown = Default::default();
    settle(&mut fresh, &v, &mut fresh_shown);
    let keys: Vec<_> = fresh_shown.keys().collect();
    assert_eq!(shown.keys().collect::<Vec<_>>(), keys);
    for (k, m) in &fresh_shown {
        assert!(
            shown[k] == *m,
            "chunk {k:?} differs from a from-scratch build"
        );
    }
    rt.block_on(server.shutdown()).unwrap();
}

/// A brick's samples and materials in `f` (the generator's where `f` holds none).
fn brick_content(f: &loam_field::Field, k: loam_field::BrickKey) -> (Vec<f32>, Vec<u8>) {
    let s = f.settings();
    let generated;
    let b = match f.brick(k) {
        Some(b) => &**b,
        None => {
            generated = loam_field::Brick::generate(f.generator(), k, s.voxel_size, s.band());
            &generated
        }
    };
    (b.values(), b.materials())
}

/// Checks that `keys` (a client's `take_changed_bricks`) names every brick whose samples
/// differ between the field shown before (`old`) and now (`new`); returns how many differed.
fn check_named(
    old: &loam_field::Field,
    new: &loam_field::Field,
    keys: &BTreeSet<BrickKey>,
) -> usize {
    let held: BTreeSet<BrickKey> = old.bricks().chain(new.bricks()).map(|(k, _)| k).collect();
    let mut differ = 0;
    for k in held {
        let (a, b) = (old.brick(k).map(|b| b.id()), new.brick(k).map(|b| b.id()));
        if a == b || brick_content(old, k) == brick_content(new, k) {
            continue;
        }
        differ += 1;
        assert!(keys.contains(&k), "brick {k:?} changed but was not named");
    }
    differ
}

/// What a joined editor relies on to remesh only what changed: after every change a client
/// sees — its own predicted ops, their confirmations, another client's ops over them, its
/// undos and redos (patched by the server), its ops refused (an edit budget small enough
/// to run out: the prediction takes them back), ops out of order — the bricks
/// `take_changed_bricks` names hold every brick whose samples differ from the field shown
/// at the previous call. 300 random steps of two clients digging and building in one place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_changed_bricks_a_client_names_hold_every_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = new_world(dir.path());
    let server = start(&path, |c| {
        c.limits.edit_samples_per_second = 2_000.0;
        c.limits.edit_samples_burst = 5_000.0;
    })
    .await;
    let connect = |name: &str| {
        let mut c = ClientConfig::new(server.url(), viewer(0.0, 0.0, 0.0, 64.0), factory());
        c.name = name.into();
        Client::connect(c)
    };
    let mut a = connect("a").await.unwrap();
    let mut b = connect("b").await.unwrap();
    let h = a.field().generator().surface_height(0.0, 0.0);
    assert_eq!(a.take_changed_bricks(), None, "the first call: any brick");
    let mut shown = a.field().clone();
    // The editor's copy, taking only patches of the named bricks (as a joined editor's
    // world does): it must equal the client's field after every step.
    let mut editor = shown.clone();
    let mut rng = crate::util::Rng(0x5eed);
    let mut named = 0;
    let mut differed = 0;
    let mut stroke = 0;
    let mut refused = 0;
    for step in 0..300 {
        let pick = rng.next() % 10;
        let x = (rng.next() % 24) as f64 - 12.0;
        let z = (rng.next() % 24) as f64 - 12.0;
        let op = EditOp::Sphere {
            mode: if rng.next().is_multiple_of(2) {
                CsgMode::Subtract
            } else {
                CsgMode::Union
            },
            center: [x, h + (rng.next() % 4) as f64 - 2.0, z],
            radius: 1.0 + (rng.next() % 30) as f64 / 10.0,
            material: 0,
            blend: 0.0,
        };
        match pick {
            0..=4 => {
                stroke += 1;
                a.send_op(stroke, op).await.unwrap();
            }
            5..=7 => {
                b.send_op(step as u64 + 1, op).await.unwrap();
            }
            8 => {
                // Undo waits for the client's own ops to come back (else: Unsettled).
                if a.pending_ops() == 0 {
                    a.undo().await.unwrap();
                }
            }
            _ => {
                if a.pending_ops() == 0 {
                    a.redo().await.unwrap();
                }
            }
        }
        // Take in what came (a few events each, not always all: predictions stay pending
        // across steps).
        for _ in 0..(rng.next() % 6) {
            for c in [&mut a, &mut b] {
                let e = tokio::time::timeout(Duration::from_millis(20), c.next_event()).await;
                if let Ok(Ok(ClientEvent::Refused { .. })) = e {
                    refused += 1;
                }
            }
        }
        let keys = a.take_changed_bricks().expect("no reconnect");
        let now = a.field().clone();
        differed += check_named(&shown, &now, &keys);
        editor
            .apply_patch(&now.patch(keys.iter().copied()))
            .unwrap();
        assert_eq!(editor.hash(), now.hash(), "step {step}: the patched copy");
        named += keys.len();
        shown = now;
    }
    // Everything in: the last changes named too.
    for _ in 0..200 {
        if a.pending_ops() == 0 && b.pending_ops() == 0 {
            break;
        }
        for c in [&mut a, &mut b] {
            let e = tokio::time::timeout(Duration::from_millis(20), c.next_event()).await;
            if let Ok(Ok(ClientEvent::Refused { .. })) = e {
                refused += 1;
            }
        }
    }
    let keys = a.take_changed_bricks().expect("no reconnect");
    let now = a.field().clone();
    differed += check_named(&shown, &now, &keys);
    editor
        .apply_patch(&now.patch(keys.iter().copied()))
        .unwrap();
    assert_eq!(editor.hash(), now.hash(), "the patched copy at the end");
    assert!(differed > 100, "the steps changed bricks: {differed}");
    assert!(refused > 0, "no op was refused");
    // Named bricks are about the changed ones, not the world: a dig of radius ≤ 4 m meets
    // at most 8 bricks, and a step names a few digs' worth at most.
    assert!(named < 300 * 64, "{named} named");
    server.shutdown().await.unwrap();
}
