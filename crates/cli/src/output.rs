//! Output files written whole or not at all.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, bail};

/// The first 16 bytes of every SQLite database (a Loam world file), from the SQLite file
/// format specification, "The Database Header".
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Writes `bytes` to `path` through a temporary file in the same folder, synced, then renamed
/// over `path`, so that a failed write (a full disk, a killed process) leaves `path` as it was
/// (absent, or its old contents) and no partial file. Refuses to replace an SQLite database:
/// a world file given as an output by mistake (say, `loam world export W --out W`) would be
/// lost.
///
/// # Errors
/// `path` is a world file, or its folder cannot be written.
pub fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    check_folder(path)?;
    refuse_world_file(path)?;
    let dir = folder_of(path);
    let write = || -> std::io::Result<()> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(".loam-out-");
        // A temporary file is private (0600); the output gets a plain file's mode (the
        // umask applies, as for `File::create`).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        // Not tempfile's error: it names the temporary file, which the user never asked for.
        let mut tmp = builder
            .tempfile_in(dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("creating a file in {dir:?}")))?;
        tmp.write_all(bytes)?;
        tmp.as_file().sync_all()?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    };
    write().with_context(|| format!("writing {path:?}"))
}

/// Refuses output `path` when it is an SQLite database (a world file given as an output by
/// mistake); for outputs written by others (the headless renderer's picture and sound),
/// checked before the work starts.
///
/// # Errors
/// `path` is a world file.
pub fn refuse_world_file(path: &Path) -> anyhow::Result<()> {
    if let Ok(mut f) = std::fs::File::open(path) {
        let mut head = [0u8; 16];
        if std::io::Read::read_exact(&mut f, &mut head).is_ok() && &head == SQLITE_MAGIC {
            bail!("{path:?} is a world file (SQLite); not overwriting it with this output");
        }
    }
    Ok(())
}

/// The folder an output path is written in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Checks that the folder of output `path` exists, so that a command can refuse a bad output
/// before its work rather than after.
///
/// # Errors
/// The folder does not exist (or is not a folder).
pub fn check_folder(path: &Path) -> anyhow::Result<()> {
    let dir = folder_of(path);
    if !dir.is_dir() {
        bail!("writing {path:?}: the folder {dir:?} does not exist");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_never_over_a_world() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a.json");
        write_whole(&out, b"one").unwrap();
        write_whole(&out, b"two").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&out).unwrap().permissions().mode();
            assert_ne!(
                mode & 0o044,
                0,
                "readable by others as a created file is: {mode:o}"
            );
        }
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

        let world = dir.path().join("w.loam");
        let mut bytes = SQLITE_MAGIC.to_vec();
        bytes.extend_from_slice(&[7; 100]);
        std::fs::write(&world, &bytes).unwrap();
        let e = write_whole(&world, b"{}").unwrap_err().to_string();
        assert!(e.contains("world file"), "{e}");
        assert_eq!(
            std::fs::read(&world).unwrap(),
            bytes,
            "the world is untouched"
        );

        // A folder that does not exist: an error, nothing written.
        let e = write_whole(&dir.path().join("no/such/x.json"), b"x").unwrap_err();
        assert!(format!("{e:#}").contains("writing"), "{e:#}");
    }
}
