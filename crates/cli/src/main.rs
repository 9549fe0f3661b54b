//! `loam`: Loam's command-line entry point: the headless `replay` and `mesh-volume`
//! subcommands; the editor comes with its issue.

mod bench_world;
mod chunk_meshes;
mod export;
mod mesh_volume;
mod pipeline;
mod replay;
mod session;
mod timeline;
mod world;

use clap::{Parser, Subcommand};

/// Loam: editable smooth-voxel terrain.
#[derive(Debug, Parser)]
#[command(name = "loam", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply a session's ops to its world, write a summary and print the field hash.
    Replay(replay::ReplayArgs),
    /// World files: `new`, `info`, `compact`, `export`.
    World(world::WorldArgs),
    /// Benchmark the chunk pipeline on a session's terrain: initial load and edit latency.
    BenchWorld(bench_world::BenchWorldArgs),
    /// Mesh a raw scalar volume and print one line of JSON with the mesh's statistics.
    MeshVolume(mesh_volume::MeshVolumeArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Replay(args) => replay::run(args),
        Command::MeshVolume(args) => mesh_volume::run(args),
        Command::BenchWorld(args) => bench_world::run(args),
        Command::World(args) => world::run(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loam: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}
