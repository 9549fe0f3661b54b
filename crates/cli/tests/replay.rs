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

/// The field hashes of the shipped examples, pinned: they must be the same on every machine and in
/// every later version that keeps the field's definition (docs/architecture.md, invariant 2).
#[test]
fn examples_replay_to_pinned_hashes() {
    let pinned = [
        (
            "examples/generated.json",
            "d5d394e0d448889f7d86a1a7df17797992ceccaadc2641d4e2655969f5377560",
        ),
        (
            "examples/jacksboro.json",
            "fc585de8fe9b50ad823044563e97cdd72b298490adf998b63aa6a9e1e356832c",
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

/// The version-2 example (two viewers, one walking; timed ops: a trench, a tower into unloaded
/// air, digs on chunk corners and faces) through the pipeline with 1, 2 and 8 workers: the
/// same pinned field hash, every chunk equal to its from-scratch mesh (--verify), and the
/// metrics file with the documented keys.
#[test]
fn pipeline_replay_is_the_same_with_any_thread_count() {
    let hash = "f85176560fb534ea6570f03b6e53f68f9fb0e07d2d3e3d88507c0c8a31ec85d4";
    let session = root().join("examples/walk.json");
    let mut shown = Vec::new();
    for threads in ["1", "2", "8"] {
        let dir = tempfile::tempdir().unwrap();
        let metrics = dir.path().join("metrics.json");
        let m = metrics.to_str().unwrap();
        let args = [
            "--fast",
            "--verify",
            "--threads",
            threads,
            "--metrics-json",
            m,
        ];
        let o = replay_args(&args, &session, dir.path());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            hash_line(&o),
            format!("field-hash: {hash}"),
            "{threads} threads"
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("every chunk equals its from-scratch mesh"),
            "{stdout}"
        );
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&metrics).unwrap()).unwrap();
        for key in [
            "edit_latency_ms",
            "mesh_ms_per_chunk",
            "samples_changed_per_edit",
        ] {
            for p in ["p50", "p99"] {
                assert!(m[key][p].as_f64().unwrap() > 0.0, "{key}.{p}: {m}");
            }
        }
        for key in [
            "stale_dropped",
            "queue_depth_max",
            "chunks_loaded",
            "chunks_waiting",
        ] {
            assert!(m[key].is_u64(), "{key}: {m}");
        }
        assert_eq!(m["chunks_waiting"], 0);
        assert_eq!(m["open_edges"], 0, "a level-0 view has no crack: {m}");
        // Not 0 yet at level 0: exact zeros on a flat build leave one edge of four
        // triangles (issue 48).
        assert!(m["nonmanifold_edges"].is_u64(), "{m}");
        assert_eq!(m["shown_meshers"], serde_json::json!(["mc"]), "{m}");
        assert!(m["chunks_loaded"].as_u64().unwrap() > 500, "{m}");
        assert!(m["initial_load_s"].as_f64().unwrap() > 0.0);
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        for key in ["open_edges", "nonmanifold_edges", "shown_meshers"] {
            assert_eq!(summary[key], m[key], "{key}");
        }
        let mut pipeline = m.clone();
        for key in ["open_edges", "nonmanifold_edges", "shown_meshers"] {
            pipeline.as_object_mut().unwrap().remove(key);
        }
        assert_eq!(summary["metrics"], pipeline);
        assert_eq!(summary["threads"], threads.parse::<u64>().unwrap());
        shown.push(summary["chunks_shown"].clone());
    }
    assert!(shown[0] == shown[1] && shown[1] == shown[2], "{shown:?}");
}

/// The sculpting example on the real DEM: every brush and shape, strokes, undo and redo.
/// Each run is its own process; 1 and 8 workers; the pinned hash on every machine; every
/// chunk equal to a from-scratch mesh and the op log replayed equal to the live field
/// (--verify).
#[test]
fn sculpt_example_replays_to_its_pinned_hash_in_any_process() {
    let hash = "aa272618d7cd3b0d530ce07c8b67dc0b95411f938a4cbf1ddeba01cf2fa2526d";
    let session = root().join("examples/sculpt.json");
    let text = std::fs::read_to_string(&session).unwrap();
    for kind in loam_kinds() {
        assert!(
            text.contains(&format!("\"kind\": \"{kind}\"")),
            "sculpt.json lacks {kind}"
        );
    }
    for threads in ["1", "8"] {
        let dir = tempfile::tempdir().unwrap();
        let o = replay_args(
            &["--fast", "--verify", "--threads", threads],
            &session,
            dir.path(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            hash_line(&o),
            format!("field-hash: {hash}"),
            "{threads} threads"
        );
    }
}

/// Every op kind (what `EditOp::KINDS` lists); kept here so the test names them.
fn loam_kinds() -> [&'static str; 13] {
    [
        "sphere", "box", "capsule", "cylinder", "torus", "raise", "lower", "smooth", "flatten",
        "noise", "paint", "undo", "redo",
    ]
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
        // Huge times, far viewers, a late bad op (refused before the timeline runs), version 2
        // fields in a version 1 file, a missing format, a bad undo.
        (r#"{"format": "loam-session", "version": 2, "generator": {"kind": "noise"}, "ops": [{"kind": "sphere", "mode": "dig", "center": [0, 0, 0], "radius": 1, "t": 1e20}]}"#.to_string(), "longest timeline"),
        (r#"{"format": "loam-session", "version": 2, "generator": {"kind": "noise"}, "viewers": [{"path": [{"t": 0, "position": [1e12, 0, 0]}]}]}"#.to_string(), "beyond"),
        (r#"{"format": "loam-session", "version": 2, "generator": {"kind": "noise"}, "ops": [{"kind": "raise", "center": [0, 0, 0], "radius": 4, "strength": 1, "t": 300}, {"kind": "box", "mode": "dig", "center": [0, 0, 0], "half_extents": [1, 1, 1], "rotation": [0, 0, 0, 0], "t": 300}]}"#.to_string(), "op 1 (box)"),
        (r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise"}, "viewers": [{"path": [{"t": 0, "position": [0, 0, 0]}]}]}"#.to_string(), "version\": 2"),
        (r#"{"version": 2, "generator": {"kind": "noise"}}"#.to_string(), "missing field `format`"),
        (r#"{"format": "loam-session", "version": 2, "generator": {"kind": "noise"}, "ops": [{"kind": "undo", "stroke": 4}]}"#.to_string(), "stroke 4 is not in the history"),
    ];
    for (text, needle) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let started = std::time::Instant::now();
        let o = replay(&write_session(dir.path(), &text), &out);
        assert!(
            started.elapsed().as_secs() < 60,
            "{text}: took {:?}",
            started.elapsed()
        );
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

/// `--mesher` meshes the chunks the edits changed into `chunks.glb`; Marching Cubes chunks
/// weld into a crack-free, manifold surface.
#[test]
fn replay_with_mesher_writes_chunk_meshes() {
    for mesher in ["mc", "mc33", "sn", "dc"] {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_loam"))
            .args(["replay", "--mesher", mesher, "--out"])
            .arg(dir.path())
            .arg(root().join("examples/generated.json"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let glb = std::fs::read(dir.path().join("chunks.glb")).unwrap();
        assert_eq!(&glb[..4], b"glTF");
        assert_eq!(
            u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize,
            glb.len()
        );
        let s: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        let m = &s["meshes"];
        assert_eq!(m["mesher"], mesher);
        assert!(m["chunks"].as_u64().unwrap() >= 8, "{m}");
        assert!(m["triangles"].as_u64().unwrap() > 10_000, "{m}");
        if mesher.starts_with("mc") {
            assert_eq!(m["welded_nonmanifold_edges"], 0, "{m}");
        }
    }
    // With levels of detail MC33 is drawn by Marching Cubes (it has no level seams of its
    // own): the statistics and the shown meshers say so, and a note says why, instead of
    // carrying the asked name. Surface Nets draws every level itself.
    for (asked, drawn) in [("mc33", "mc"), ("sn", "sn")] {
        let dir = tempfile::tempdir().unwrap();
        let o = replay_args(
            &["--mesher", asked, "--fast", "--view-distance", "1024"],
            &root().join("examples/collapse.json"),
            dir.path(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let note = String::from_utf8_lossy(&o.stderr).contains("no level seams of its own");
        assert_eq!(note, asked != drawn, "{asked}");
        let s: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(s["mesher"], asked, "what was asked");
        assert_eq!(s["meshes"]["mesher"], drawn, "what built them");
        assert_eq!(s["shown_meshers"], serde_json::json!([drawn]));
        assert_eq!(s["open_edges"], 0, "{asked}: {s}");
    }
    // A view distance inside the level-0 view adds no level: a note says so.
    let dir = tempfile::tempdir().unwrap();
    let o = replay_args(
        &["--fast", "--view-distance", "16"],
        &root().join("examples/collapse.json"),
        dir.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no level of detail"));
    // --metrics-json naming the run's own summary or meshes is refused before anything runs.
    for own in ["summary.json", "chunks.glb"] {
        let dir = tempfile::tempdir().unwrap();
        let clash = dir.path().join(own);
        let o = replay_args(
            &[
                "--fast",
                "--mesher",
                "sn",
                "--metrics-json",
                clash.to_str().unwrap(),
            ],
            &root().join("examples/collapse.json"),
            dir.path(),
        );
        assert!(!o.status.success());
        assert!(String::from_utf8_lossy(&o.stderr).contains("own"), "{own}");
        assert!(!clash.exists());
    }
    let dir = tempfile::tempdir().unwrap();
    let o = replay_args(
        &["--mesher", "xx"],
        &root().join("examples/generated.json"),
        dir.path(),
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown mesher"));
}

fn replay_args(extra: &[&str], session: &Path, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loam"))
        .arg("replay")
        .args(extra)
        .arg(session)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// `mesh-volume` on the real scans: Loam's Marching Cubes gives VTK's figures (data/README.md).
#[test]
fn mesh_volume_matches_vtk_on_real_scans() {
    let run_with = |sidecar: &str, mesher: &str, extra: &[&str]| -> serde_json::Value {
        let o = Command::new(env!("CARGO_BIN_EXE_loam"))
            .args(["mesh-volume", "--mesher", mesher, "--sidecar"])
            .arg(root().join(sidecar))
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let line = String::from_utf8(o.stdout).unwrap();
        assert_eq!(line.lines().count(), 1);
        serde_json::from_str(&line).unwrap()
    };
    let run = |sidecar: &str, mesher: &str| run_with(sidecar, mesher, &[]);
    let head = run("data/volumes/head_mr_48x62x42_uint8.json", "mc");
    assert_eq!(head["triangles"], 47206);
    assert_eq!(head["boundary_edges"], 68);
    assert!(
        (head["area"].as_f64().unwrap() / 231_739.0 - 1.0).abs() < 1e-4,
        "{head}"
    );
    assert!(head["volume"].is_null());
    let h = run(
        "data/volumes/hydrogen_orbital_64x64x64_float32le.json",
        "mc",
    );
    assert_eq!(
        (h["triangles"].as_u64(), h["boundary_edges"].as_u64()),
        (Some(19672), Some(0))
    );
    assert!(
        (h["area"].as_f64().unwrap() / 6584.2 - 1.0).abs() < 1e-4,
        "{h}"
    );
    assert!(h["volume"].as_f64().unwrap() > 0.0);
    let keys: Vec<&String> = h.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "area",
            "boundary_edges",
            "degenerate_triangles",
            "nonmanifold_edges",
            "seconds",
            "triangles",
            "vertices",
            "volume"
        ]
    );
    // Timed three times in one process: the same mesh and figures, the best time.
    let mut h3 = run_with(
        "data/volumes/hydrogen_orbital_64x64x64_float32le.json",
        "mc",
        &["--runs", "3"],
    );
    assert!(h3["seconds"].as_f64().unwrap() > 0.0);
    let mut h1 = h.clone();
    for v in [&mut h1, &mut h3] {
        v.as_object_mut().unwrap().remove("seconds");
    }
    assert_eq!(h1, h3);
    for m in ["mc33", "sn", "dc"] {
        let v = run("data/volumes/hydrogen_orbital_64x64x64_float32le.json", m);
        assert_eq!(v["degenerate_triangles"], 0, "{m}");
        assert!(
            (v["area"].as_f64().unwrap() / 6584.2 - 1.0).abs() < 0.01,
            "{m}: {v}"
        );
    }
}

/// A sidecar naming several iso values asks for --iso, and --iso then chooses (it was refused
/// with the same message, which asked for the --iso just given).
#[test]
fn mesh_volume_iso_chooses_among_a_sidecars_iso_values() {
    let dir = tempfile::tempdir().unwrap();
    let raw = root().join("data/volumes/head_mr_48x62x42_uint8.raw");
    let sidecar = dir.path().join("head.json");
    let text = serde_json::json!({"file": raw, "dims_xyz": [48, 62, 42], "dtype": "uint8",
        "spacing_xyz": [4.0, 4.0, 4.0], "iso_values": {"skin": 49.5, "bone": 120.5}});
    std::fs::write(&sidecar, text.to_string()).unwrap();
    let run = |iso: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_loam"))
            .args(["mesh-volume", "--sidecar"])
            .arg(&sidecar)
            .args(iso)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("choose one with --iso"), "{e}");
    let o = run(&["--iso", "49.5"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["triangles"], 47206, "VTK's figure at 49.5: {v}");
}

/// Signed 16-bit samples (CT in Hounsfield units): the head scan shifted by −1024, meshed at
/// the iso level shifted alike, is the same field, so the same mesh as the 8-bit scan's
/// (VTK's triangle count at 49.5), through `--type i16le` and a sidecar's `int16le`.
#[test]
fn mesh_volume_reads_signed_16_bit_samples() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(root().join("data/volumes/head_mr_48x62x42_uint8.raw")).unwrap();
    let raw = dir.path().join("head_hu.raw");
    let hu: Vec<u8> = bytes
        .iter()
        .flat_map(|&b| (i16::from(b) - 1024).to_le_bytes())
        .collect();
    std::fs::write(&raw, hu).unwrap();
    let sidecar = dir.path().join("head_hu.json");
    let text = serde_json::json!({"file": "head_hu.raw", "dims_xyz": [48, 62, 42],
        "dtype": "int16le", "spacing_xyz": [4.0, 4.0, 4.0], "iso_values": {"skin": -974.5}});
    std::fs::write(&sidecar, text.to_string()).unwrap();
    let u8_run = Command::new(env!("CARGO_BIN_EXE_loam"))
        .args([
            "mesh-volume",
            "--dims",
            "48,62,42",
            "--type",
            "u8",
            "--iso",
            "49.5",
        ])
        .args(["--spacing", "4,4,4"])
        .arg(root().join("data/volumes/head_mr_48x62x42_uint8.raw"))
        .output()
        .unwrap();
    assert!(
        u8_run.status.success(),
        "{}",
        String::from_utf8_lossy(&u8_run.stderr)
    );
    let want: serde_json::Value = serde_json::from_slice(&u8_run.stdout).unwrap();
    let runs: [Vec<std::ffi::OsString>; 2] = [
        vec!["--sidecar".into(), sidecar.into_os_string()],
        vec![
            raw.into_os_string(),
            "--dims".into(),
            "48,62,42".into(),
            "--type".into(),
            "i16le".into(),
            "--iso".into(),
            "-974.5".into(),
            "--spacing".into(),
            "4,4,4".into(),
        ],
    ];
    for args in runs {
        let o = Command::new(env!("CARGO_BIN_EXE_loam"))
            .arg("mesh-volume")
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["triangles"], 47206, "VTK's figure at 49.5: {v}");
        for key in ["vertices", "triangles", "area", "volume"] {
            assert_eq!(v[key], want[key], "{key}: {v} vs the 8-bit scan's {want}");
        }
    }
}

/// A float volume whose air is stored as −3.4e38 (a common no-data fill) is refused with a
/// clear message: the meshers' f32 arithmetic (gradients squared, neighbours subtracted)
/// overflowed on it and Surface Nets wrote NaN vertices with exit status 0. Samples 1e18
/// from the iso level are still meshed.
#[test]
fn mesh_volume_refuses_samples_too_far_from_the_iso_level() {
    let dir = tempfile::tempdir().unwrap();
    for (air, ok) in [(-f32::MAX, false), (-1e18, true)] {
        // A 7³ volume: a 3³ block of samples in the middle solid (1), the rest air. With air
        // this far away the crossings lie on the block's samples: a 2 × 2 × 2 cube.
        let raw = dir.path().join("v.raw");
        let solid = |i: usize| {
            [i % 7, i / 7 % 7, i / 49]
                .iter()
                .all(|c| (2..=4).contains(c))
        };
        let values: Vec<u8> = (0..343)
            .flat_map(|i| if solid(i) { 1.0f32 } else { air }.to_le_bytes())
            .collect();
        std::fs::write(&raw, values).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_loam"))
            .args([
                "mesh-volume",
                "--dims",
                "7,7,7",
                "--type",
                "f32le",
                "--iso",
                "0",
            ])
            .args(["--mesher", "sn"])
            .arg(&raw)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.success(), ok, "air {air}: {e}");
        if ok {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let area = v["area"].as_f64().expect("a finite area");
            assert!((area - 24.0).abs() < 1e-3, "air {air}: {v}");
        } else {
            assert!(e.contains("no-data fill"), "{e}");
        }
    }
}

/// Bad volumes and options are clear errors.
#[test]
fn mesh_volume_bad_input() {
    let raw = root().join("data/volumes/head_mr_48x62x42_uint8.raw");
    let cases: [(&[&str], &str); 13] = [
        (
            &["--dims", "48,62,41", "--type", "u8", "--iso", "49.5"],
            "bytes",
        ),
        (
            &["--dims", "48,62", "--type", "u8", "--iso", "49.5"],
            "dims",
        ),
        (
            &["--dims", "48,62,42", "--type", "u8", "--iso", "nan"],
            "finite",
        ),
        (
            &[
                "--dims", "48,62,42", "--type", "u8", "--iso", "49.5", "--mesher", "qq",
            ],
            "unknown mesher",
        ),
        (
            &["--dims", "1,62,42", "--type", "u8", "--iso", "49.5"],
            "at least 2",
        ),
        (
            &[
                "--dims", "48,62,42", "--type", "u8", "--iso", "49.5", "--runs", "0",
            ],
            "--runs",
        ),
        (
            &["--dims", "48,62,42", "--type", "u8"],
            "give --iso (the iso level",
        ),
        // A huge iso is shown with an exponent (it was printed as 301 digits).
        (
            &["--dims", "48,62,42", "--type", "u8", "--iso", "1e300"],
            "--iso 1e300 is out of range",
        ),
        // Negative numbers reach the checks instead of being taken for options.
        (
            &[
                "--dims",
                "48,62,42",
                "--type",
                "u8",
                "--iso",
                "49.5",
                "--spacing",
                "-1,1,1",
            ],
            "spacing must be in",
        ),
        (
            &["--dims", "48,-62,42", "--type", "u8", "--iso", "49.5"],
            "not a number of samples",
        ),
        (
            &[
                "--dims",
                "4294967295,4294967295,4294967295",
                "--type",
                "u8",
                "--iso",
                "49.5",
            ],
            "the number of samples overflows",
        ),
        // A bad output is refused before the volume is read and meshed.
        (
            &[
                "--dims", "48,62,42", "--type", "u8", "--iso", "49.5", "--out", "x.stl",
            ],
            "must end in .glb or .obj",
        ),
        (
            &[
                "--dims",
                "48,62,42",
                "--type",
                "u8",
                "--iso",
                "49.5",
                "--out",
                "no-such-folder/x.glb",
            ],
            "the folder \"no-such-folder\" does not exist",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_loam"))
            .current_dir(dir.path())
            .arg("mesh-volume")
            .arg(&raw)
            .args(args)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(needle), "{args:?}: {e}");
    }
    // Nothing was written, not even a temporary file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // The output is checked first: with a missing volume too, the output is what is refused.
    let o = Command::new(env!("CARGO_BIN_EXE_loam"))
        .current_dir(dir.path())
        .args([
            "mesh-volume",
            "missing.raw",
            "--dims",
            "2,2,2",
            "--type",
            "u8",
        ])
        .args(["--iso", "0.5", "--out", "nowhere/x.obj"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("does not exist") && !e.contains("missing.raw"),
        "{e}"
    );
}

/// The walking session with levels of detail out to 1 km, with Marching Cubes, Surface Nets
/// and Dual Contouring: the same field, every chunk of every level equal to its from-scratch
/// mesh with the view's seams, drawn by the asked mesher, and no crack inside the view
/// (`open_edges`, in the metrics and the summary).
#[test]
fn replay_with_levels_of_detail_is_crack_free_and_verified() {
    for mesher in ["mc", "sn", "dc"] {
        replay_with_levels(mesher);
    }
}

fn replay_with_levels(mesher: &str) {
    let hash = "f85176560fb534ea6570f03b6e53f68f9fb0e07d2d3e3d88507c0c8a31ec85d4";
    let session = root().join("examples/walk.json");
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("metrics.json");
    let args = [
        "--fast",
        "--verify",
        "--threads",
        "2",
        "--view-distance",
        "1024",
        "--mesher",
        mesher,
        "--metrics-json",
        metrics.to_str().unwrap(),
    ];
    let o = replay_args(&args, &session, dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(hash_line(&o), format!("field-hash: {hash}"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("levels of detail"), "{stdout}");
    assert!(stdout.contains("every chunk equals its from-scratch mesh"));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&metrics).unwrap()).unwrap();
    assert_eq!(m["open_edges"], 0, "{mesher}: {m}");
    if mesher == "mc" {
        // The dual meshers keep unsplit pinches beside their level seams (issue 48).
        assert_eq!(m["nonmanifold_edges"], 0, "{m}");
    }
    // The metric says what drew the view: the asked mesher at every level.
    assert_eq!(m["shown_meshers"], serde_json::json!([mesher]), "{m}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert!(s["lod_levels"].as_u64().unwrap() >= 3, "{s}");
    assert_eq!(s["open_edges"], 0);
    // Level of detail shows more than the level-0 view does.
    assert!(s["chunks_shown"].as_u64().unwrap() > 909, "{s}");
}

/// `bench-world`'s JSON rows for `args` (one worker count, one load).
fn bench_world(args: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("rows.json");
    let o = Command::new(env!("CARGO_BIN_EXE_loam"))
        .current_dir(root())
        .args([
            "bench-world",
            "examples/generated.json",
            "--threads",
            "1",
            "--runs",
            "1",
        ])
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    rows[0].clone()
}

/// `bench-world` reports the initial load's chunks (loaded, and built: the loaded ones less
/// those known all air or all solid) and the chunk jobs of the digs apart. The load's
/// figures were once read after the digs' reset of the metrics: 0 chunks built with no dig.
#[test]
fn bench_world_counts_the_loads_chunks_and_the_digs_builds_apart() {
    let none = bench_world(&["--edits", "0"]);
    let two = bench_world(&["--edits", "2", "--interval", "0"]);
    let n = |r: &serde_json::Value, k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k}: {r}"));
    for r in [&none, &two] {
        assert!(n(r, "chunks_built") > 0, "{r}");
        assert!(n(r, "chunks_built") <= n(r, "chunks_loaded"), "{r}");
    }
    // The load does not depend on the digs that follow it.
    assert_eq!(n(&none, "chunks_loaded"), n(&two, "chunks_loaded"));
    assert_eq!(n(&none, "chunks_built"), n(&two, "chunks_built"));
    assert_eq!(n(&none, "edit_chunks_built"), 0);
    // A dig centred on an 8-chunk corner remeshes chunks around it.
    assert!(n(&two, "edit_chunks_built") >= 2, "{two}");
}

/// A volume too large for the memory the process may use is an error that says so (it
/// aborted on the failed allocation: a 1600³ scan on a machine without 16 GiB spare). The
/// process runs under an address-space limit (`ulimit -v`, 900 MiB) that leaves room for
/// the binary and the 216 MB file but not for the 864 MB of f32 samples.
#[cfg(target_os = "linux")]
#[test]
fn mesh_volume_too_large_for_memory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("big.raw");
    std::fs::write(&raw, vec![100u8; 600 * 600 * 600]).unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 921600 && exec "$0" mesh-volume "$1" --dims 600,600,600 --type u8 --iso 50"#)
        .arg(env!("CARGO_BIN_EXE_loam"))
        .arg(&raw)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("216000000 samples need 0.8 GiB as f32, which this machine could not allocate"),
        "{e}"
    );
}

/// Issue 48: the generated terrain and the DEM sessions with levels of detail out to 1 km,
/// drawn by Surface Nets and by Dual Contouring at every level, weld with no crack inside the
/// view.
#[test]
fn example_sessions_have_no_crack_with_levels_for_the_dual_meshers() {
    for session in ["generated", "jacksboro", "sculpt"] {
        for mesher in ["sn", "dc"] {
            let dir = tempfile::tempdir().unwrap();
            let metrics = dir.path().join("metrics.json");
            let o = replay_args(
                &[
                    "--fast",
                    "--threads",
                    "2",
                    "--view-distance",
                    "1024",
                    "--mesher",
                    mesher,
                    "--metrics-json",
                    metrics.to_str().unwrap(),
                ],
                &root().join(format!("examples/{session}.json")),
                dir.path(),
            );
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let m: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&metrics).unwrap()).unwrap();
            assert_eq!(m["open_edges"], 0, "{session} {mesher}: {m}");
            assert_eq!(m["shown_meshers"], serde_json::json!([mesher]), "{m}");
        }
    }
}
