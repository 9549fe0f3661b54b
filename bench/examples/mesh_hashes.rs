//! Prints the hash of every mesher's output on the suite of `loam_bench::hashes`, one line per
//! grid family and mesher: `family mesher triangles hash`. The lines are what
//! `bench/mesh_hashes.txt` records.
//!
//! Run: `cargo run --release -p loam-bench --example mesh_hashes`.

fn main() {
    for (name, tris, hash) in loam_bench::hashes::suite_hashes() {
        println!("{name} {tris} {hash:016x}");
    }
}
