//! Every mesher's output on the suite of `loam_bench::hashes` is bit for bit what
//! `bench/mesh_hashes.txt` recorded (vertex order, positions, normals, materials, indices).
//! Rerecord only for an intended change of the meshes:
//! `cargo run --release -p loam-bench --example mesh_hashes > bench/mesh_hashes.txt`.

#[test]
fn meshes_match_recorded_hashes() {
    let recorded = include_str!("../mesh_hashes.txt");
    let now: Vec<String> = loam_bench::hashes::suite_hashes()
        .into_iter()
        .map(|(name, tris, hash)| format!("{name} {tris} {hash:016x}"))
        .collect();
    let want: Vec<&str> = recorded.lines().collect();
    assert_eq!(now, want, "mesh hashes differ from bench/mesh_hashes.txt");
}
