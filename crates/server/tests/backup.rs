//! Backups of a served world: copies made while clients edit, the first when the server
//! starts, each a whole world that loads to the server's field as of its last op, the oldest
//! beyond `keep` deleted.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use loam_bench::{BenchConfig, bench_net};
use loam_field::{Field, FieldSettings};
use loam_server::{BackupPlan, ServerConfig, serve};
use loam_store::Store;

use crate::util::{config, factory, new_world, start};

/// The finished copies of the world at `world` in `dir`, oldest first.
fn copies_of(world: &Path, dir: &Path) -> Vec<PathBuf> {
    let prefix = format!("{}-", BackupPlan::prefix_of(world));
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(&prefix) && n.ends_with("Z.loam")
        })
        .collect();
    v.sort();
    v
}

/// The last op and field hash of the world file at `path`.
fn load(path: &Path) -> (u64, loam_field::FieldHash) {
    let mut store = Store::open(path).unwrap();
    let info = store.info().unwrap();
    let generator = factory()(&info.generator_json).unwrap();
    let field = Field::new(FieldSettings::default(), Arc::new(generator)).unwrap();
    (info.last_seq, store.load(field).unwrap().field.hash())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_world_is_backed_up_while_clients_edit() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let backups = dir.path().join("backups");
    let plan = BackupPlan {
        dir: backups.clone(),
        every: Duration::from_secs(1),
        keep: 2,
    };
    let copies = |dir: &Path| copies_of(&world, dir);
    // A part a killed server left is removed; other files stay, among them the copies and
    // parts of another world of the same file name sharing the folder (another path: another
    // tag; a fresh-user trial saw one server's backups prune another world's only copy),
    // and copies named as before the tag.
    std::fs::create_dir_all(&backups).unwrap();
    let prefix = BackupPlan::prefix_of(&world);
    assert!(prefix.starts_with("world-") && prefix.len() == "world-".len() + 8);
    let stale = backups.join(format!("{prefix}-20200101T000000.000Z.loam.part"));
    let notes = backups.join("world-notes.txt");
    let elsewhere = dir.path().join("elsewhere").join("world.loam");
    let other = BackupPlan::prefix_of(&elsewhere);
    assert_ne!(other, prefix);
    let others = [
        backups.join(format!("{other}-20200101T000000.000Z.loam")),
        backups.join(format!("{other}-20200101T000000.000Z.loam.part")),
        backups.join("world-20200101T000000.000Z.loam"),
    ];
    std::fs::write(&stale, b"half a copy").unwrap();
    std::fs::write(&notes, b"mine").unwrap();
    for o in &others {
        std::fs::write(o, b"another world's").unwrap();
    }
    let server = start(&world, |c| c.backups = Some(plan.clone())).await;
    assert!(!stale.exists() && notes.exists());
    // The first copy is of the world as the server opened it: no ops.
    let deadline = Instant::now() + Duration::from_secs(20);
    while copies(&backups).is_empty() {
        assert!(Instant::now() < deadline, "no backup at the start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(load(&copies(&backups)[0]).0, 0);
    let mut cfg = BenchConfig::new(server.url(), 2, 20.0, 1.0, factory());
    cfg.warmup_s = 0.2;
    let report = bench_net(cfg).await.unwrap();
    assert!(report.converged && report.sent > 10, "{report:?}");
    let (seq, hash) = server.hash(None).await.unwrap();
    assert_eq!(seq, server.status().await.unwrap().seq);
    // A later copy holds every op, and loads to the server's field.
    let found = loop {
        let newest = copies(&backups).last().cloned();
        if let Some(p) = newest {
            let (s, h) = load(&p);
            if s == seq {
                break h;
            }
        }
        assert!(Instant::now() < deadline, "no backup holds op {seq}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(found, hash);
    // Two kept, however many were made; none made while nothing changes (it would push
    // an older, different copy out); no part left over once the server is shut down.
    let newest = copies(&backups).last().cloned();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    server.shutdown().await.unwrap();
    assert_eq!(copies(&backups).len(), 2);
    assert_eq!(copies(&backups).last().cloned(), newest);
    let names: Vec<String> = std::fs::read_dir(&backups)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with(&prefix) && n.ends_with(".part")),
        "{names:?}"
    );
    // The world itself is untouched by its backups, and the other world's files too.
    assert_eq!(load(&world), (seq, hash));
    for o in &others {
        assert_eq!(std::fs::read(o).unwrap(), b"another world's", "{o:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_backup_plans_are_refused_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let plans = [
        (Duration::from_millis(999), 2, dir.path().join("b")),
        (Duration::from_secs(31 * 86_400), 2, dir.path().join("b")),
        (Duration::from_secs(60), 0, dir.path().join("b")),
        (Duration::from_secs(60), 2, file.join("under-a-file")),
    ];
    for (every, keep, d) in plans {
        let mut c: ServerConfig = config(&world);
        c.backups = Some(BackupPlan {
            dir: d,
            every,
            keep,
        });
        let Err(e) = serve(c).await else {
            panic!("served with a bad backup plan");
        };
        assert!(
            matches!(
                e,
                loam_server::ServerError::Config {
                    name: "backups",
                    ..
                }
            ),
            "{e}"
        );
    }
    assert!(!dir.path().join("b").exists());
}
