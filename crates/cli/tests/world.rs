//! `loam world` and `loam replay --world` end to end.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn loam(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loam"))
        .args(args)
        .output()
        .unwrap()
}

fn hash(o: &Output) -> String {
    let s = String::from_utf8_lossy(&o.stdout);
    s.lines()
        .find_map(|l| l.strip_prefix("field-hash: "))
        .unwrap_or_else(|| panic!("no hash in {s}"))
        .to_string()
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn replay_writes_a_world_that_reloads_exports_and_compacts_to_the_same_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let session = root().join("examples/sculpt.json");
    let replayed = ok(loam(&[
        "replay",
        session.to_str().unwrap(),
        "--out",
        &d("out"),
        "--fast",
        "--world",
        &d("w.loam"),
    ]));
    let want = hash(&replayed);
    let info = ok(loam(&["world", "info", &d("w.loam")]));
    assert_eq!(hash(&info), want);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("34 terrain and 0 block ops in the log"),
        "{text}"
    );
    // When the file was last written, besides the bake's time: the file's own time.
    let mtime = std::fs::metadata(d("w.loam"))
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let created = text
        .lines()
        .find_map(|l| l.strip_prefix("created     "))
        .unwrap_or_else(|| panic!("no created line: {text}"));
    let written: u64 = created
        .rsplit_once("written ")
        .and_then(|(_, t)| t.parse().ok())
        .unwrap_or_else(|| panic!("no written time: {created}"));
    assert!(
        written >= mtime && written <= mtime + 2,
        "{written} vs {mtime}"
    );
    // Export, replay the export: the same field.
    ok(loam(&[
        "world",
        "export",
        &d("w.loam"),
        "--out",
        &d("x.json"),
    ]));
    let again = ok(loam(&[
        "replay",
        &d("x.json"),
        "--out",
        &d("out2"),
        "--fast",
    ]));
    assert_eq!(hash(&again), want);
    // Exported over itself (a slip of `--out`), the world file is refused and kept; it used
    // to become the session's JSON, the world lost.
    let e = loam(&["world", "export", &d("w.loam"), "--out", &d("w.loam")]);
    assert!(!e.status.success());
    assert!(
        String::from_utf8_lossy(&e.stderr).contains("is a world file"),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );
    assert_eq!(hash(&ok(loam(&["world", "info", &d("w.loam")]))), want);
    // Compact: the ops go, the field stays, the file does not grow (it did before the
    // VACUUM: the bake's replaced pages stayed in it); export is refused then.
    let disk = |f: &str| {
        let w = std::fs::metadata(dir.path().join(format!("{f}-wal"))).map_or(0, |m| m.len());
        std::fs::metadata(dir.path().join(f)).unwrap().len() + w
    };
    let size = disk("w.loam");
    let c = ok(loam(&["world", "compact", &d("w.loam")]));
    assert!(String::from_utf8_lossy(&c.stdout).contains("dropped 34 ops"));
    assert!(disk("w.loam") <= size, "{} > {size}", disk("w.loam"));
    assert_eq!(hash(&ok(loam(&["world", "info", &d("w.loam")]))), want);
    let e = loam(&["world", "export", &d("w.loam"), "--out", &d("y.json")]);
    assert!(!e.status.success());
    assert!(String::from_utf8_lossy(&e.stderr).contains("compacted"));
    // A world file is never overwritten.
    let e = loam(&[
        "replay",
        session.to_str().unwrap(),
        "--out",
        &d("o3"),
        "--fast",
        "--world",
        &d("w.loam"),
    ]);
    assert!(!e.status.success());
    assert!(String::from_utf8_lossy(&e.stderr).contains("already exists"));
}

#[test]
fn world_new_and_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let session = root().join("examples/jacksboro.json");
    ok(loam(&[
        "world",
        "new",
        &d("new.loam"),
        "--session",
        session.to_str().unwrap(),
    ]));
    let info = ok(loam(&["world", "info", &d("new.loam")]));
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("0 terrain and 0 block ops in the log")
            && text.contains("heightmap   blake3"),
        "{text}"
    );
    std::fs::write(d("text.loam"), "not a database").unwrap();
    for (file, needle) in [
        (d("text.loam"), "not an SQLite database"),
        (d("missing.loam"), "no such world file"),
    ] {
        let o = loam(&["world", "info", &file]);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(d("text.loam")).unwrap(),
        "not a database"
    );
}

/// A world carries its DEM: it loads to the same field after the DEM file changed, went
/// away, and the world itself moved to another folder; `world info` shows the generator
/// without the DEM's bytes.
#[test]
fn a_world_carries_its_heightmap() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let data = root().join("data/heightmaps");
    for f in ["jacksboro_3arcsec.png", "jacksboro_3arcsec.json"] {
        std::fs::copy(data.join(f), dir.path().join(f)).unwrap();
    }
    // One dig, so the hash covers bricks sampled from the DEM.
    let session = HEIGHTMAP_SESSION.replace(
        "\"ops\": []",
        r#""ops": [{"kind": "sphere", "mode": "dig", "center": [0, 33.2, 0], "radius": 5.0}]"#,
    );
    std::fs::write(d("s.json"), session).unwrap();
    let replayed = ok(loam(&[
        "replay",
        &d("s.json"),
        "--out",
        &d("out"),
        "--fast",
        "--world",
        &d("w.loam"),
    ]));
    let before = hash(&replayed);
    let info = ok(loam(&["world", "info", &d("w.loam")]));
    assert_eq!(hash(&info), before);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("\"extension\":\"png\"")
            && text.contains("<288272 base64 characters>")
            && text.len() < 4096,
        "{text}"
    );
    // Changed: another DEM's bytes under the same name.
    let png = dir.path().join("jacksboro_3arcsec.png");
    let mut bytes = std::fs::read(&png).unwrap();
    let n = bytes.len();
    bytes[n - 20] ^= 0x55;
    std::fs::write(&png, &bytes).unwrap();
    assert_eq!(hash(&ok(loam(&["world", "info", &d("w.loam")]))), before);
    // Gone, and the world moved.
    std::fs::remove_file(&png).unwrap();
    let other = tempfile::tempdir().unwrap();
    let moved = other.path().join("moved.loam");
    std::fs::rename(d("w.loam"), &moved).unwrap();
    let info = ok(loam(&["world", "info", moved.to_str().unwrap()]));
    assert_eq!(hash(&info), before);
    // Exported as a session, it carries the DEM too, and replays to the same field.
    ok(loam(&[
        "world",
        "export",
        moved.to_str().unwrap(),
        "--out",
        &d("export.json"),
    ]));
    let out = other.path().join("replay");
    let again = ok(loam(&[
        "replay",
        &d("export.json"),
        "--out",
        out.to_str().unwrap(),
        "--fast",
    ]));
    assert_eq!(hash(&again), before);
    // A damaged embedded DEM is named as such, not as the file it came from (not read).
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("export.json")).unwrap()).unwrap();
    s["generator"]["embedded"]["extension"] = "tif".into();
    std::fs::write(d("bad.json"), s.to_string()).unwrap();
    let o = loam(&["replay", &d("bad.json"), "--out", &d("o4"), "--fast"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the DEM embedded in the generator (made from ")
            && err.contains("unknown heightmap extension"),
        "{err}"
    );
}

/// A small Jacksboro world (0.1 m per DEM sample horizontally and vertically).
const HEIGHTMAP_SESSION: &str = r#"{"format": "loam-session", "version": 2,
    "field": {"voxel_size": 1.0},
    "generator": {"kind": "heightmap", "path": "jacksboro_3arcsec.png",
                  "placement": {"horizontal_scale": 0.1, "vertical_scale": 0.1}},
    "ops": []}"#;

/// A world made before worlds carried their DEM (its generator names the file) reads the
/// file, and one whose DEM was changed or moved away gives an error naming it.
#[test]
fn a_world_without_its_heightmap_inside_needs_the_file_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let data = root().join("data/heightmaps");
    for f in ["jacksboro_3arcsec.png", "jacksboro_3arcsec.json"] {
        std::fs::copy(data.join(f), dir.path().join(f)).unwrap();
    }
    let png = dir.path().join("jacksboro_3arcsec.png");
    let mut bytes = std::fs::read(&png).unwrap();
    let generator = serde_json::json!({
        "kind": "heightmap",
        "path": png,
        "placement": {"horizontal_scale": 0.1, "vertical_scale": 0.1},
    });
    let settings = serde_json::from_value(serde_json::json!({"voxel_size": 1.0})).unwrap();
    let blake3 = blake3::hash(&bytes).to_hex().to_string();
    drop(
        loam_store::Store::create(
            Path::new(&d("w.loam")),
            &generator.to_string(),
            &settings,
            Some(&blake3),
        )
        .unwrap(),
    );
    ok(loam(&["world", "info", &d("w.loam")]));
    // Changed: another DEM's bytes under the same name.
    let n = bytes.len();
    bytes[n - 20] ^= 0x55;
    std::fs::write(&png, &bytes).unwrap();
    let o = loam(&["world", "info", &d("w.loam")]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.contains("heightmap") && !err.contains("panicked"),
        "{err}"
    );
    // Gone.
    std::fs::remove_file(&png).unwrap();
    let o = loam(&["world", "info", &d("w.loam")]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.contains("jacksboro_3arcsec.png") && !err.contains("panicked"),
        "{err}"
    );
}

/// A session whose op is rejected part-way fails and leaves no world file (it left one with
/// the ops before, and the next run with that path was refused: "already exists").
#[test]
fn a_replay_that_fails_leaves_no_world_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("examples/generated.json")).unwrap();
    let mut session: serde_json::Value = serde_json::from_str(&text).unwrap();
    session["ops"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"kind": "undo", "stroke": 99}));
    let path = dir.path().join("bad.json");
    std::fs::write(&path, serde_json::to_string(&session).unwrap()).unwrap();
    let world = dir.path().join("w.loam");
    let args = |out: &str| {
        loam(&[
            "replay",
            path.to_str().unwrap(),
            "--out",
            dir.path().join(out).to_str().unwrap(),
            "--fast",
            "--world",
            world.to_str().unwrap(),
        ])
    };
    for out in ["o1", "o2"] {
        let e = args(out);
        assert!(!e.status.success());
        let err = String::from_utf8_lossy(&e.stderr);
        assert!(
            err.contains("stroke 99") && err.contains("was not kept"),
            "{err}"
        );
        assert!(!err.contains("already exists"), "{err}");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("w.loam"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

/// A world with blocks is exported whole only as its terrain, on request: the session's
/// terrain is the world's bit for bit (block ops never write terrain). Served worlds usually
/// have blocks (lumps the server's digs cut loose), and could not be exported at all.
#[test]
fn a_world_with_blocks_exports_its_terrain_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let session = root().join("examples/sculpt.json");
    let want = hash(&ok(loam(&[
        "replay",
        session.to_str().unwrap(),
        "--out",
        &d("out"),
        "--fast",
        "--world",
        &d("w.loam"),
    ])));
    {
        let mut store = loam_store::Store::open(Path::new(&d("w.loam"))).unwrap();
        let place: loam_blocks::BlockOp = serde_json::from_str(
            r#"{"kind": "place", "at": {"size": "full", "cell": [0, 60, 0]}, "material": 1}"#,
        )
        .unwrap();
        store
            .append_records(&[loam_store::LogRecord::Block(loam_store::BlockLogEntry {
                seq: 35,
                step: 0,
                op: place.encode(),
            })])
            .unwrap();
    }
    let info = ok(loam(&["world", "info", &d("w.loam")]));
    assert_eq!(hash(&info), want);
    assert!(String::from_utf8_lossy(&info.stdout).contains("34 terrain and 1 block ops"));
    let e = loam(&["world", "export", &d("w.loam"), "--out", &d("x.json")]);
    assert!(!e.status.success());
    let why = String::from_utf8_lossy(&e.stderr);
    assert!(
        why.contains("has blocks") && why.contains("--terrain-only"),
        "{why}"
    );
    assert!(!dir.path().join("x.json").exists());
    let x = ok(loam(&[
        "world",
        "export",
        &d("w.loam"),
        "--out",
        &d("x.json"),
        "--terrain-only",
    ]));
    let said = String::from_utf8_lossy(&x.stdout);
    assert!(
        said.contains("exported 34 ops") && said.contains("blocks left out: 1 block ops"),
        "{said}"
    );
    let again = ok(loam(&[
        "replay",
        &d("x.json"),
        "--out",
        &d("out2"),
        "--fast",
    ]));
    assert_eq!(hash(&again), want);
}

/// A world named `file:x.loam` is that file: SQLite's URI names are never read into a path
/// (the bundled SQLite took `file:x.loam` for `x.loam`, and `world compact file:x.loam`
/// compacted the other world).
#[test]
fn a_world_named_like_a_uri_is_that_file() {
    let dir = tempfile::tempdir().unwrap();
    let session = root().join("examples/sculpt.json");
    let in_dir = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_loam"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let s = session.to_str().unwrap();
    ok(in_dir(&[
        "replay", s, "--out", "out", "--fast", "--world", "x.loam",
    ]));
    let before = std::fs::read(dir.path().join("x.loam")).unwrap();
    ok(in_dir(&["world", "new", "file:x.loam", "--session", s]));
    ok(in_dir(&["world", "compact", "file:x.loam"]));
    let info = ok(in_dir(&["world", "info", "file:x.loam"]));
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("0 terrain and 0 block ops"), "{text}");
    assert_eq!(
        std::fs::read(dir.path().join("x.loam")).unwrap(),
        before,
        "x.loam untouched"
    );
    assert!(dir.path().join("file:x.loam").is_file());
}

/// `world new FILE` without `--session` makes the world `loam edit` makes: the generated
/// terrain of `examples/generated.json` (it used to refuse to run without `--session`), also
/// from a folder without that file.
#[test]
fn world_new_without_a_session_makes_the_generated_world() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let in_dir = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_loam"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    ok(in_dir(&["world", "new", "plain.loam"]));
    let generated = root().join("examples/generated.json");
    ok(loam(&[
        "world",
        "new",
        &d("named.loam"),
        "--session",
        generated.to_str().unwrap(),
    ]));
    let info = |f: &str| {
        let o = ok(loam(&["world", "info", &d(f)]));
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        let line = |key: &str| {
            text.lines()
                .find(|l| l.starts_with(key))
                .unwrap_or_else(|| panic!("no {key} line: {text}"))
                .to_string()
        };
        (line("generator"), line("voxel"), hash(&o))
    };
    let plain = info("plain.loam");
    assert!(plain.0.contains("\"noise\""), "{plain:?}");
    assert_eq!(plain, info("named.loam"));
}

/// A start of the editor refused for a bad setting leaves the world file byte for byte as it
/// was (opened writable first, SQLite's header change counter moved).
#[test]
fn a_refused_editor_start_leaves_the_world_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let session = root().join("examples/sculpt.json");
    ok(loam(&[
        "replay",
        session.to_str().unwrap(),
        "--out",
        &d("out"),
        "--fast",
        "--world",
        &d("w.loam"),
    ]));
    let before = std::fs::read(d("w.loam")).unwrap();
    // A display named, so that the editor (not the headless fallback) is what starts; the
    // setting is refused before any window is asked for.
    let o = Command::new(env!("CARGO_BIN_EXE_loam"))
        .args(["edit", &d("w.loam"), "--threads", "100000"])
        .env("DISPLAY", ":1999")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`threads` = 100000"), "{err}");
    assert!(
        std::fs::read(d("w.loam")).unwrap() == before,
        "the world file changed"
    );
    for extra in ["w.loam-wal", "w.loam-shm", "w.loam-journal"] {
        assert!(!dir.path().join(extra).exists(), "{extra} left behind");
    }
}
