//! Level-of-detail figures for BENCHMARKS.md (issue 11): chunks, meshes, triangles and open
//! edges of a 2 km view around a point of the generated terrain or of the real DEM, the load
//! time, resident memory, and an estimate of what level 0 alone would need for the same view.
//!
//! `cargo run --release -p loam-world --example lod_view -- [levels] [view_radius] [view_distance] [threads] [--dem[=PNG]] [--stride=N]`
//!
//! `--dem` lays the Jacksboro DEM (`data/heightmaps/jacksboro_3arcsec.png`, or `PNG` with its
//! `.json` sidecar beside it) into the world the way `examples/jacksboro.json` does (horizontal
//! and vertical scale 0.1, caves between −40 and 24 m), with the default 1 m voxels.
//!
//! Level 0 alone: every level-0 chunk column in the disc of radius `view_distance` is counted,
//! with the chunks its column bounds cannot prove all air or all solid (those a level-0 view
//! would have to mesh; within `view_distance` of the viewer's layer); the columns on a lattice of `stride` chunks (default 4, so 1 in 16)
//! are meshed, and their triangles scaled by candidates in the disc / candidates meshed.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use loam_field::{
    CHUNK_CELLS, CaveSettings, ChunkKey, Field, FieldSettings, Generator, Heightmap, HeightmapMeta,
    HeightmapPlacement, NoiseTerrainSettings,
};
use loam_world::streaming::column_layers;
use loam_world::{ChunkBuilder, IDLE_TIMEOUT, PullBudget, Shown, Viewer, World, WorldSettings};

fn jacksboro(png: &PathBuf) -> Generator {
    let bytes = std::fs::read(png).expect("read the DEM");
    let sidecar = std::fs::read_to_string(png.with_extension("json")).expect("read its sidecar");
    let meta = HeightmapMeta::from_json(&sidecar).expect("sidecar");
    let map = Heightmap::from_png(&bytes, &meta).expect("decode the DEM");
    let placement = HeightmapPlacement {
        horizontal_scale: 0.1,
        vertical_scale: 0.1,
        base_y: 0.0,
    };
    let caves = CaveSettings {
        y_min: -40.0,
        y_max: 24.0,
        ..Default::default()
    };
    Generator::heightmap(&map, &placement, &caves).expect("generator")
}

/// `VmRSS` and `VmHWM` of this process from `/proc/self/status`, MiB (0 where unreadable).
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (kib("VmRSS:") / 1024.0, kib("VmHWM:") / 1024.0)
}

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<f64> = raw.iter().filter_map(|a| a.parse().ok()).collect();
    let arg = |i: usize, d: f64| args.get(i).copied().unwrap_or(d);
    let flag = |name: &str| {
        raw.iter().find_map(|a| {
            (a == name)
                .then(String::new)
                .or_else(|| a.strip_prefix(&format!("{name}=")).map(str::to_owned))
        })
    };
    let dem = flag("--dem").map(|p| {
        if p.is_empty() {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../data/heightmaps/jacksboro_3arcsec.png")
        } else {
            PathBuf::from(p)
        }
    });
    let stride: i32 = flag("--stride").map_or(4, |s| s.parse().expect("--stride=N"));
    let g = match &dem {
        Some(png) => jacksboro(png),
        None => Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())
            .expect("generator"),
    };
    let field = Field::new(FieldSettings::default(), Arc::new(g)).expect("field");
    let h = field.generator().surface_height(0.0, 0.0);
    let settings = WorldSettings {
        lod_levels: arg(0, 4.0) as u8,
        view_radius: arg(1, 8.0) as u32,
        view_distance: arg(2, 2048.0),
        threads: arg(3, 1.0) as usize,
        ..Default::default()
    };
    let (rss0, _) = memory_mib();
    let mut world = World::new(field.clone(), settings).expect("world");
    let start = Instant::now();
    world.update(&[Viewer::at([0.0, h + 2.0, 0.0])]);
    assert!(world.wait_idle(IDLE_TIMEOUT * 10));
    let load = start.elapsed().as_secs_f64();
    let mut shown = Shown::default();
    shown
        .apply(world.pull(PullBudget::ALL))
        .expect("no stale mesh");
    let (rss, hwm) = memory_mib();
    let view = world.view();
    let mut per_level: BTreeMap<u8, (usize, usize, usize)> = BTreeMap::new();
    for k in &view {
        per_level.entry(k.level).or_default().0 += 1;
    }
    let (mut mesh_bytes, mut mesh_capacity) = (0, 0);
    for m in shown.meshes() {
        let e = per_level.entry(m.level).or_default();
        e.1 += 1;
        e.2 += m.mesh.indices.len() / 3;
        mesh_bytes += m.mesh.positions.len() * 24 + m.mesh.materials.len();
        mesh_bytes += m.mesh.indices.len() * 4;
        mesh_capacity += (m.mesh.positions.capacity() + m.mesh.normals.capacity()) * 12;
        mesh_capacity += m.mesh.materials.capacity() + m.mesh.indices.capacity() * 4;
    }
    let ground = if dem.is_some() { "DEM" } else { "generated" };
    println!("terrain: {ground}, viewer at (0, {:.1}, 0)", h + 2.0);
    println!("settings: {settings:?}");
    println!("level  chunks_in_view  meshes  triangles");
    for (l, (c, m, t)) in &per_level {
        println!("{l:>5}  {c:>14}  {m:>6}  {t:>9}");
    }
    let open = shown.open_edges(&view, 1.0);
    let tris: usize = per_level.values().map(|e| e.2).sum();
    println!(
        "total: {} chunks in view, {} meshes, {tris} triangles; load {load:.2} s; open edges inside {}, on the outer edge {}",
        view.len(),
        shown.len(),
        open.inside,
        open.outer
    );
    println!(
        "memory after the load: VmRSS {rss:.0} MiB (before the world {rss0:.0} MiB), VmHWM {hwm:.0} MiB; shown mesh buffers {:.0} MiB ({:.0} MiB allocated)",
        mesh_bytes as f64 / (1 << 20) as f64,
        mesh_capacity as f64 / (1 << 20) as f64
    );

    // Level 0 alone over the same disc.
    let start = Instant::now();
    let side = f64::from(CHUNK_CELLS) * field.settings().voxel_size;
    let r = (settings.view_distance / side).ceil() as i32;
    let vy = ((h + 2.0) / side).floor() as i32;
    let (mut columns, mut candidates, mut sampled) = (0usize, 0usize, 0usize);
    let (mut meshes, mut sample_tris, mut sample_bytes) = (0usize, 0usize, 0usize);
    let mut builder = ChunkBuilder::default();
    for cx in -r..=r {
        for cz in -r..=r {
            let centre = [(f64::from(cx) + 0.5) * side, (f64::from(cz) + 0.5) * side];
            if centre[0].hypot(centre[1]) > settings.view_distance {
                continue;
            }
            columns += 1;
            let col = column_layers(&field, cx, cz);
            let layers = (col.solid_top.max(vy - r) + 1)..=col.top.min(vy + r);
            candidates += layers.clone().count();
            if cx.rem_euclid(stride) != 0 || cz.rem_euclid(stride) != 0 {
                continue;
            }
            for cy in layers {
                sampled += 1;
                let mesh = builder.build(&field, ChunkKey::new(cx, cy, cz), settings.mesher);
                if !mesh.indices.is_empty() {
                    meshes += 1;
                    sample_tris += mesh.indices.len() / 3;
                    sample_bytes += mesh.positions.len() * 24 + mesh.materials.len();
                    sample_bytes += mesh.indices.len() * 4;
                }
            }
        }
    }
    let scale = candidates as f64 / sampled.max(1) as f64;
    println!(
        "level 0 alone within {} m: {columns} columns, {candidates} chunks not proven uniform; sampled 1 column in {} ({sampled} chunks, {meshes} meshes, {sample_tris} triangles, {:.1} s)",
        settings.view_distance,
        stride * stride,
        start.elapsed().as_secs_f64()
    );
    println!(
        "level 0 alone, estimated: {:.0} meshes, {:.0} triangles ({:.1} x the LOD view), mesh buffers {:.0} MiB",
        meshes as f64 * scale,
        sample_tris as f64 * scale,
        sample_tris as f64 * scale / tris.max(1) as f64,
        sample_bytes as f64 * scale / (1 << 20) as f64
    );
}
