//! `loam replay` end to end: the shipped examples, pinned hashes, and bad sessions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn replay(session: &Path, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loam"))
        .arg("replay")
        .arg(session)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn hash_line(o: &Output) -> String {
    let stdout = String::from_utf8(o.stdout.clone()).unwrap();
    let line = stdout.lines().last().unwrap().to_string();
    assert!(
        line.starts_with("field-hash: ") && line.len() == 12 + 64,
        "{line}"
    );
    line
}

/// The field hashes of the shipped examples, pinned: they must be the same on every machine
/// and in every later version that keeps the field's definition (DESIGN.md, invariant 2).
#[test]
fn examples_replay_to_pinned_hashes() {
    let pinned = [
        (
            "examples/generated.json",
            "650f5ac000e57dc2e279c2c64f2bcb90bf104b4f19da9e4ae9187898c2228827",
        ),
        (
            "examples/jacksboro.json",
            "6b485db2d9116184969d192559fdc5ee76b3d8b3d9f1602b59317c7c1b5238f5",
        ),
    ];
    for (session, hash) in pinned {
        let dir = tempfile::tempdir().unwrap();
        let o = replay(&root().join(session), dir.path());
        assert!(
            o.status.success(),
            "{session}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(hash_line(&o), format!("field-hash: {hash}"), "{session}");
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["field_hash"], hash);
        assert!(summary["samples_changed"].as_u64().unwrap() > 10_000);
        assert!(summary["bricks"].as_u64().unwrap() > 10);
        // Twice gives the same.
        let again = replay(&root().join(session), dir.path());
        assert_eq!(hash_line(&again), hash_line(&o));
    }
}

fn write_session(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("s.json");
    std::fs::write(&p, text).unwrap();
    p
}

/// A bad session fails with a clear message and writes nothing.
#[test]
fn bad_sessions_fail_cleanly() {
    let dem = root().join("data/heightmaps/jacksboro_3arcsec.f32");
    let dem = dem.to_str().unwrap();
    let cases = [
        (r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise"}, "opz": []}"#.to_string(), "unknown field `opz`"),
        (r#"{"format": "loam-session", "version": 9, "generator": {"kind": "noise"}}"#.to_string(), "session version 9"),
        (
            r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise"}, "ops": [{"kind": "sphere", "mode": "dig", "center": [0, 0, 0], "radius": 1}, {"kind": "sphere", "mode": "build", "center": [0, 0, 0], "radius": 500}]}"#.to_string(),
            "op 1",
        ),
        (
            r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise"}, "ops": [{"kind": "sphere", "mode": "dig", "center": [0, 0, 0], "radius": -2}]}"#.to_string(),
            "must be > 0",
        ),
        (r#"{"format": "loam-session", "version": 1, "generator": {"kind": "heightmap", "path": "nope.png"}}"#.to_string(), "nope.png"),
        (r#"{"format": "loam-session", "version": 1, "field": {"voxel_size": -1}, "generator": {"kind": "noise"}}"#.to_string(), "voxel_size"),
        (format!(r#"{{"format": "loam-session", "version": 1, "generator": {{"kind": "heightmap", "path": "{dem}", "placement": {{"vertical_scale": -1}}}}}}"#), "vertical_scale"),
        ("not json".to_string(), "not a valid session"),
    ];
    for (text, needle) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = replay(&write_session(dir.path(), &text), &out);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{text}");
        assert!(stderr.contains(needle), "{text}: stderr was {stderr}");
        assert!(
            !out.join("summary.json").exists(),
            "{text}: wrote a summary"
        );
    }
}

/// The raw f32 DEM loads too and gives nearly the same world as the PNG.
#[test]
fn raw_dem_session() {
    let dir = tempfile::tempdir().unwrap();
    let dem = root().join("data/heightmaps/jacksboro_3arcsec.f32");
    let text = format!(
        r#"{{"format": "loam-session", "version": 1, "generator": {{"kind": "heightmap", "path": "{}", "placement": {{"horizontal_scale": 0.1, "vertical_scale": 0.1}}}}, "ops": [{{"kind": "sphere", "mode": "dig", "center": [0, 33.2, 0], "radius": 4}}]}}"#,
        dem.display()
    );
    let o = replay(&write_session(dir.path(), &text), &dir.path().join("out"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    hash_line(&o);
    let s: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["generator"], "heightmap");
    assert_eq!(s["heightmap_blake3"].as_str().unwrap().len(), 64);
    assert!(s["samples_changed"].as_u64().unwrap() > 200);
}
