//! Level-of-detail figures for BENCHMARKS.md (issue 11): chunks, meshes, triangles and open
//! edges of a 2 km view around a point of the generated terrain, and the load time.
//!
//! `cargo run --release -p loam-world --example lod_view -- [levels] [view_radius] [view_distance] [threads]`

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseTerrainSettings};
use loam_world::{IDLE_TIMEOUT, PullBudget, Shown, Viewer, World, WorldSettings};

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let arg = |i: usize, d: f64| args.get(i).copied().unwrap_or(d);
    let g = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())
        .expect("generator");
    let field = Field::new(FieldSettings::default(), Arc::new(g)).expect("field");
    let h = field.generator().surface_height(0.0, 0.0);
    let settings = WorldSettings {
        lod_levels: arg(0, 4.0) as u8,
        view_radius: arg(1, 8.0) as u32,
        view_distance: arg(2, 2048.0),
        threads: arg(3, 1.0) as usize,
        ..Default::default()
    };
    let mut world = World::new(field, settings).expect("world");
    let start = Instant::now();
    world.update(&[Viewer::at([0.0, h + 2.0, 0.0])]);
    assert!(world.wait_idle(IDLE_TIMEOUT * 10));
    let load = start.elapsed().as_secs_f64();
    let mut shown = Shown::default();
    shown
        .apply(world.pull(PullBudget::ALL))
        .expect("no stale mesh");
    let view = world.view();
    let mut per_level: BTreeMap<u8, (usize, usize, usize)> = BTreeMap::new();
    for k in &view {
        per_level.entry(k.level).or_default().0 += 1;
    }
    for m in shown.meshes() {
        let e = per_level.entry(m.level).or_default();
        e.1 += 1;
        e.2 += m.mesh.indices.len() / 3;
    }
    println!("settings: {settings:?}");
    println!("level  chunks_in_view  meshes  triangles");
    for (l, (c, m, t)) in &per_level {
        println!("{l:>5}  {c:>14}  {m:>6}  {t:>9}");
    }
    let open = shown.open_edges(&view, 1.0);
    println!(
        "total: {} chunks in view, {} meshes, {} triangles; load {load:.2} s; open edges inside {}, on the outer edge {}",
        view.len(),
        shown.len(),
        open.triangles,
        open.inside,
        open.outer
    );
}
