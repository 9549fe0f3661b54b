//! `loam`: Loam's editor (`loam` or `loam edit [WORLD]`), its headless renderer
//! (`loam render`), the multiplayer server (`loam serve`, `loam bench-net`), and the
//! command-line tools: `replay`, `world`, `bench-world`, `mesh-volume`.

/// mimalloc instead of the system allocator: the server's many mid-sized, short-lived
/// allocations (op plans, deltas, frames) cost glibc's malloc 3 % more CPU, and its free-list
/// consolidation showed in profiles of `loam serve` under load (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bench_world;
mod chunk_meshes;
mod connect;
mod edit;
mod export;
mod mesh_volume;
mod output;
mod pipeline;
mod render;
mod replay;
mod serve;
mod session;
mod session_blocks;
mod timeline;
mod world;

use clap::{Parser, Subcommand};

/// Loam: editable smooth-voxel terrain.
#[derive(Debug, Parser)]
#[command(name = "loam", version, about)]
struct Cli {
    /// Without a subcommand: the editor on `worlds/default.loam` (`loam edit`).
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Open the editor on a world file (created if missing); without a display, render the
    /// example session headless instead (joining a server, --connect, needs a display: it
    /// says how to run under Xvfb).
    Edit(edit::EditArgs),
    /// Render a session's camera and ops to a PNG, headless (no window, no GPU needed).
    Render(render::RenderArgs),
    /// Apply a session's ops to its world, write a summary and print the field hash.
    Replay(replay::ReplayArgs),
    /// World files: `new`, `info`, `compact`, `export`.
    World(world::WorldArgs),
    /// Benchmark the chunk pipeline on a session's terrain: initial load and edit latency.
    BenchWorld(bench_world::BenchWorldArgs),
    /// Mesh a raw scalar volume and print one line of JSON with the mesh's statistics.
    MeshVolume(mesh_volume::MeshVolumeArgs),
    /// Serve a world to several editors: one order for everyone's edits (WebSocket).
    Serve(serve::ServeArgs),
    /// Load-test a server with N WebSocket clients; prints one JSON line, and exits 1 after it
    /// when a client did not converge, a connection dropped or an op was never confirmed.
    BenchNet(serve::BenchNetArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        None => edit::run(&edit::EditArgs::default()),
        Some(Command::Edit(args)) => edit::run(args),
        Some(Command::Render(args)) => render::run(args),
        Some(Command::Replay(args)) => replay::run(args),
        Some(Command::MeshVolume(args)) => mesh_volume::run(args),
        Some(Command::BenchWorld(args)) => bench_world::run(args),
        Some(Command::World(args)) => world::run(args),
        Some(Command::Serve(args)) => serve::run_serve(args),
        Some(Command::BenchNet(args)) => serve::run_bench(args),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Settings that cannot work are refused when parsed, with the reason: a client limit of
    /// 0, empty tokens and names, a token without a server to give it to.
    #[test]
    fn unusable_network_settings_are_refused() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from(args)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let w = "--world=w.loam";
        assert!(parse(&["loam", "serve", w, "--max-clients", "1"]).is_ok());
        let e = parse(&["loam", "serve", w, "--max-clients", "0"]).unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
        assert!(parse(&["loam", "serve", w, "--listen", "localhost:7878"]).is_ok());
        let e = parse(&["loam", "serve", w, "--listen", "7878"]).unwrap_err();
        assert!(e.contains("not HOST:PORT"), "{e}");
        let e = parse(&["loam", "serve", w, "--listen", "nohost.invalid:7905"]).unwrap_err();
        assert!(e.contains("\"nohost.invalid\" does not resolve"), "{e}");
        // A bad port is named as such (it blamed the name "127.0.0.1").
        let e = parse(&["loam", "serve", w, "--listen", "127.0.0.1:70000"]).unwrap_err();
        assert!(e.contains("the port \"70000\" is not a number"), "{e}");
        assert!(parse(&["loam", "serve", w, "--listen", "[::1]:7878"]).is_ok());
        let e = parse(&["loam", "serve", w, "--token", ""]).unwrap_err();
        assert!(e.contains("must not be empty"), "{e}");
        let url = "--url=ws://127.0.0.1:7878/ws";
        assert!(parse(&["loam", "bench-net", url, "--token", ""]).is_err());
        // A negative number is a bad value, not an unknown flag.
        let e = parse(&["loam", "bench-net", url, "--rate", "-5"]).unwrap_err();
        assert!(
            e.contains("'-5' for '--rate") && e.contains("above 0"),
            "{e}"
        );
        for (flag, bad) in [
            ("--clients", "0"),
            ("--clients", "-1"),
            ("--seconds", "0"),
            ("--warmup", "-1"),
        ] {
            let e = parse(&["loam", "bench-net", url, flag, bad]).unwrap_err();
            assert!(e.contains(&format!("'{bad}' for '{flag}")), "{e}");
        }
        let ok = ["--clients=1", "--rate=0.5", "--seconds=1", "--warmup=0"];
        assert!(parse(&[&["loam", "bench-net", url][..], &ok[..]].concat()).is_ok());
        let c = "--connect=ws://127.0.0.1:7878/ws";
        assert!(parse(&["loam", "edit", c, "--name", "ada", "--token", "s"]).is_ok());
        assert!(parse(&["loam", "edit", c, "--name", ""]).is_err());
        let e = parse(&["loam", "edit", "--token", "s"]).unwrap_err();
        assert!(e.contains("--connect"), "{e}");
    }
}
