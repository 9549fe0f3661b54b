//! What `loam edit --connect` does with a client's field: a chunk pipeline (loam-world)
//! made from the joined field takes the client's bricks after each op, and the chunks it
//! rebuilds equal a pipeline built from scratch on the same field.

use std::time::Duration;

use loam_client::{Client, ClientConfig, ClientEvent};
use loam_field::{CsgMode, EditOp};
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
