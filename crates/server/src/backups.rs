//! Periodic backups of the served world, made by the writer between groups (loam-store's
//! online backup, a few pages a step): a whole copy of the world file every
//! [`BackupPlan::every`], the newest [`BackupPlan::keep`] kept.
//!
//! A served world is held with an exclusive lock, so nothing outside the server can copy it
//! consistently while it runs; these copies are how an operator keeps restore points (a
//! griefer's work, a damaged disk) without stopping the server. A copy opens like any world
//! (`loam world info`, `loam serve --world COPY`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use std::sync::{Arc, Mutex};

use loam_store::{BackupCopy, Store};

/// Periodic backups of the served world ([`crate::ServerConfig::backups`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BackupPlan {
    /// The folder of the copies (created if missing). Copies are named after the world, a
    /// tag of its path and the UTC time they were started:
    /// `WORLD-1a2b3c4d-20261202T081500.123Z.loam` ([`BackupPlan::prefix_of`] gives the
    /// part before the time). Worlds may share a folder: each deletes only copies with its
    /// own prefix, so another world of the same file name is never pruned (the tag differs
    /// with the path; a world moved elsewhere starts a new series and leaves the old one).
    pub dir: PathBuf,
    /// Time between the starts of two backups, in `[1 s, 30 days]`. The first is started
    /// when the server starts. A backup is skipped when no op was logged since the last
    /// one (a copy of an idle world would only push an older, different one out).
    pub every: Duration,
    /// Copies kept, in `[1, 10000]`: after each backup, the oldest of this world's copies in
    /// `dir` beyond this many are deleted.
    pub keep: usize,
}

impl BackupPlan {
    /// The start of the names of `world`'s copies, up to the time: the file stem, `-`, and
    /// the first 8 hex digits of the BLAKE3 hash of the world's canonical path (the path as
    /// given if it cannot be resolved).
    pub fn prefix_of(world: &Path) -> String {
        let stem = world
            .file_stem()
            .map_or_else(|| "world".into(), |s| s.to_string_lossy().into_owned());
        let path = std::fs::canonicalize(world).unwrap_or_else(|_| world.to_path_buf());
        let tag = blake3::hash(path.as_os_str().as_encoded_bytes()).to_hex();
        format!("{stem}-{}", &tag[..8])
    }

    /// Checks the numbers and makes the folder.
    pub(crate) fn check(&self) -> Result<(), crate::ServerError> {
        let bad = |why: &str| crate::ServerError::Config {
            name: "backups",
            why: why.into(),
        };
        if !(Duration::from_secs(1)..=Duration::from_secs(30 * 86_400)).contains(&self.every) {
            return Err(bad("`every` in [1 s, 30 days]"));
        }
        if !(1..=10_000).contains(&self.keep) {
            return Err(bad("`keep` in [1, 10000]"));
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            bad(&format!(
                "the folder {:?} cannot be made: {e}",
                self.dir.display()
            ))
        })
    }
}

/// Pages copied a step: 1 MiB of 4 KiB pages, a millisecond or two between two groups.
const PAGES_PER_STEP: u32 = 256;

/// The writer's backups: when the next one starts, and the world's name for the copies.
pub(crate) struct Backups {
    plan: BackupPlan,
    /// [`BackupPlan::prefix_of`] the world.
    stem: String,
    next: Instant,
    /// The last op of the last finished copy (set by the thread that completes it).
    copied: Arc<Mutex<Option<u64>>>,
    /// The threads completing copies.
    completing: Vec<std::thread::JoinHandle<()>>,
    /// Where each finished copy's path goes (a node's snapshot uploader,
    /// `cluster/snapshot.rs`).
    then: Option<tokio::sync::mpsc::UnboundedSender<PathBuf>>,
}

impl Backups {
    /// Backups of the world at `world` by `plan`, the first one due now.
    pub fn new(plan: BackupPlan, world: &Path) -> Self {
        let stem = BackupPlan::prefix_of(world);
        // Parts a killed server left (none is being written: this server has not started
        // one yet).
        let parts = files_of(&plan, &stem, |stem, n| {
            n.strip_suffix(".part").is_some_and(|c| is_copy_of(stem, c))
        });
        for p in parts {
            remove(&p, "an unfinished backup");
        }
        Self {
            plan,
            stem,
            next: Instant::now(),
            copied: Arc::default(),
            completing: Vec::new(),
            then: None,
        }
    }

    /// These backups, the first one due after one interval rather than now.
    pub fn first_after_interval(mut self) -> Self {
        self.next = Instant::now() + self.plan.every;
        self
    }

    /// These backups, each finished copy's path sent to `then` (before older copies are
    /// pruned: with one copy kept, the copy stays until the next one is finished).
    pub fn then_send(mut self, then: tokio::sync::mpsc::UnboundedSender<PathBuf>) -> Self {
        self.then = Some(then);
        self
    }

    /// Waits for the copies being completed (a server stopping leaves no part behind).
    pub fn join(self) {
        for t in self.completing {
            let _ = t.join();
        }
    }

    /// How long the writer may wait for work before [`Backups::tick`] has something to do.
    pub fn wait(&self, store: &Store) -> Duration {
        if store.backing_up() {
            Duration::ZERO
        } else {
            self.next.saturating_duration_since(Instant::now())
        }
    }

    /// Copies a step of the backup in progress, or starts one when it is due. Failures are
    /// logged and leave the world as it is; the next backup is tried at its time.
    pub fn tick(&mut self, store: &mut Store) {
        if store.backing_up() {
            match store.backup_step(PAGES_PER_STEP) {
                Ok(None) => {}
                // Syncing the copy takes a while (0.3 s for 44 MB here): not on the writer.
                Ok(Some(copy)) => self.complete(copy),
                Err(e) => tracing::warn!("a backup failed: {}", crate::error_chain(&e)),
            }
            return;
        }
        let now = Instant::now();
        if now < self.next {
            return;
        }
        self.next = now + self.plan.every;
        if *lock(&self.copied) == Some(store.last_seq()) {
            return;
        }
        let path = self.plan.dir.join(format!(
            "{}-{}.loam",
            self.stem,
            utc_stamp(SystemTime::now())
        ));
        if let Err(e) = store.begin_backup(&path) {
            tracing::warn!("a backup could not start: {}", crate::error_chain(&e));
        }
    }

    /// Syncs and renames a copied backup on a thread of its own, then prunes.
    fn complete(&mut self, copy: BackupCopy) {
        self.completing.retain(|t| !t.is_finished());
        let (copied, plan, stem) = (self.copied.clone(), self.plan.clone(), self.stem.clone());
        let then = self.then.clone();
        let work = move || match copy.complete() {
            Ok(done) => {
                *lock(&copied) = Some(done.last_seq);
                tracing::info!(
                    path = %done.path.display(),
                    seq = done.last_seq,
                    bytes = done.pages * 4096,
                    "backed up the world"
                );
                if let Some(then) = &then {
                    let _ = then.send(done.path.clone());
                }
                prune(&plan, &stem);
            }
            Err(e) => tracing::warn!("a backup failed: {}", crate::error_chain(&e)),
        };
        match std::thread::Builder::new()
            .name("loam-server-backup".into())
            .spawn(work)
        {
            Ok(t) => self.completing.push(t),
            Err(e) => tracing::warn!("a backup could not be completed: {e}"),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Deletes the world `stem`'s oldest copies beyond `plan.keep` (only files named as its
/// copies are: its prefix, then a time).
fn prune(plan: &BackupPlan, stem: &str) {
    let mut copies = files_of(plan, stem, is_copy_of);
    // The stamps sort as the times do.
    copies.sort();
    let extra = copies.len().saturating_sub(plan.keep);
    for old in &copies[..extra] {
        remove(old, "an old backup");
    }
}

/// The files in `plan.dir` whose names `named(stem, name)` accepts.
fn files_of(plan: &BackupPlan, stem: &str, named: fn(&str, &str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(&plan.dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| named(stem, n))
        })
        .collect()
}

fn remove(path: &Path, what: &str) {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            tracing::warn!(path = %path.display(), "{what} could not be deleted: {e}");
        }
        _ => {}
    }
}

/// Whether `name` is `STEM-YYYYMMDDTHHMMSS.mmmZ.loam` (`stem` is a world's prefix).
fn is_copy_of(stem: &str, name: &str) -> bool {
    let Some(stamp) = name
        .strip_prefix(stem)
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|r| r.strip_suffix(".loam"))
    else {
        return false;
    };
    let b = stamp.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 => c == b'T',
            15 => c == b'.',
            19 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// `t` in UTC as `YYYYMMDDTHHMMSS.mmmZ` (ISO 8601 basic format, milliseconds).
fn utc_stamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{day:02}T{:02}{:02}{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// The proleptic Gregorian date of `z` days after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, <https://howardhinnant.github.io/date_algorithms.html>).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_dates_and_name_only_copies() {
        let at = |s: u64, ms: u64| UNIX_EPOCH + Duration::from_millis(s * 1000 + ms);
        assert_eq!(utc_stamp(at(0, 0)), "19700101T000000.000Z");
        // 2026-12-02 08:15:00.123 UTC; 2000-02-29 (a leap day of a century year); the last
        // millisecond of 2023.
        assert_eq!(utc_stamp(at(1_796_199_300, 123)), "20261202T081500.123Z");
        assert_eq!(utc_stamp(at(951_782_400, 0)), "20000229T000000.000Z");
        assert_eq!(utc_stamp(at(1_704_067_199, 999)), "20231231T235959.999Z");
        assert!(is_copy_of("w", "w-20261202T081500.123Z.loam"));
        // Another world's copies: the same file name elsewhere has another tag.
        assert!(!is_copy_of(
            "w-1a2b3c4d",
            "w-5e6f7a8b-20261202T081500.123Z.loam"
        ));
        assert!(!is_copy_of("w-1a2b3c4d", "w-20261202T081500.123Z.loam"));
        for not in [
            "w.loam",
            "w-20261202T081500.123Z.loam.part",
            "w-2026120xT081500.123Z.loam",
            "ww-20261202T081500.123Z.loam",
            "w-20261202T081500Z.loam",
        ] {
            assert!(!is_copy_of("w", not), "{not}");
        }
    }
}
