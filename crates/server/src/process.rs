//! Process settings for a server (and a load generator) that answers in milliseconds.

/// Turns transparent huge pages off for this process (Linux, `prctl(PR_SET_THP_DISABLE)`,
/// kept by its children; see `prctl(2)`). Returns whether it did: `false` on other systems.
///
/// Why: the allocator of `loam serve` (mimalloc) asks the kernel for huge pages on its large
/// regions (`madvise(MADV_HUGEPAGE)`), and the first touch of each then has the kernel zero
/// a whole 2 MiB page inside one page fault. On the 2-core VM of BENCHMARKS.md that fault
/// takes 2.4–2.9 ms, and it falls on whichever thread touches new memory first: after each
/// bake, on the ordering thread copying the bricks the bake's snapshot shares, 7–8 times in
/// a row, while every client's edits wait behind it. With them off, the p99 round trip at
/// 64 clients × 313 ops/s went from 7.9–10.4 ms to 5.3–5.8 ms, at the same CPU
/// (BENCHMARKS.md, multiplayer). Databases and caches with latency goals advise the same
/// (Redis: "Latency induced by transparent huge pages", <https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/latency/>).
///
/// # Errors
/// The system's, if `prctl` refuses (nothing changed then).
pub fn disable_transparent_huge_pages() -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE reads its integer arguments only.
        let r = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(true)
    }
    #[cfg(not(target_os = "linux"))]
    Ok(false)
}

/// Runs the calling thread under `SCHED_IDLE` (Linux, `sched(7)`): it gets a CPU only when
/// no ordinary thread wants it, and an ordinary thread waking up takes the CPU from it at
/// once. For the server's baker and its ground worker, so that they take the CPU the
/// ordering thread and the connections leave. Where the system refuses the policy, the
/// thread runs at nice +10 instead (niceness belongs to the thread on Linux:
/// `setpriority(PRIO_PROCESS, 0, …)` sets the caller's, `setpriority(2)`); elsewhere
/// nothing changes (the work is the same, only less polite).
///
/// Nice +10 alone still left such a thread about a tenth of the weight of each busy one, and
/// the ground worker took its fifth of a core in turns with the ordering thread: under the
/// load benchmark in two processes the round trip's p99 was lower in 6 of 8 alternated pairs
/// with `SCHED_IDLE` (BENCHMARKS.md, multiplayer, 2026-12-04, second section), and the
/// worker did as many searches (it runs in the time the CPUs would idle). Under a load that
/// leaves no idle time at all (other processes keeping every core busy) such a thread gets
/// almost nothing: lumps fall and bakes land much later; the ops go first (nothing of the
/// ordering thread's or the writer's waits for such a thread: a bake that comes while the
/// baker is busy waits beside the appends, `server/writer.rs`). Terrain colliders do not
/// wait so: a collider job the ground worker holds too long is built on the ordering
/// thread (`server/ground.rs`, `RESCUE_AFTER`).
pub(crate) fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: sched_setscheduler reads `param` (a live local) and its integer arguments;
    // setpriority reads its integer arguments only; `pid`/`who` 0 is the calling thread.
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        if libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) == 0 {
            return;
        }
        let idle = std::io::Error::last_os_error();
        if libc::setpriority(libc::PRIO_PROCESS, 0, 10) != 0 {
            tracing::debug!(
                "a background thread keeps its priority: SCHED_IDLE: {idle}; nice: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// The calling thread's time on a CPU so far (`CLOCK_THREAD_CPUTIME_ID`, POSIX); `None`
/// where there is no such clock.
pub(crate) fn thread_cpu_time() -> Option<std::time::Duration> {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec through the pointer, a live local.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            let secs = u64::try_from(t.tv_sec).ok()?;
            let nanos = u32::try_from(t.tv_nsec).ok()?;
            return Some(std::time::Duration::new(secs, nanos));
        }
        None
    }
    #[cfg(not(unix))]
    None
}

#[cfg(test)]
mod tests {
    /// The flag is set and reads back (PR_GET_THP_DISABLE), on Linux; a no-op elsewhere.
    /// (A test process of its own: `cargo test` runs each test binary apart, and nothing in
    /// this crate's tests depends on huge pages.)
    #[test]
    fn huge_pages_are_off_after_the_call() {
        let done = super::disable_transparent_huge_pages().unwrap();
        #[cfg(target_os = "linux")]
        {
            assert!(done);
            // SAFETY: PR_GET_THP_DISABLE takes no pointer.
            let flag = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
            assert_eq!(flag, 1);
        }
        #[cfg(not(target_os = "linux"))]
        assert!(!done);
    }

    /// A background thread ends up under `SCHED_IDLE`, or at nice +10 where the policy is
    /// refused; the thread that spawned it keeps its own scheduling.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_background_thread_yields_to_the_others() {
        // SAFETY: sched_getscheduler and getpriority read their integer arguments only.
        let policy_and_nice = || unsafe {
            (
                libc::sched_getscheduler(0),
                libc::getpriority(libc::PRIO_PROCESS, 0),
            )
        };
        let before = policy_and_nice();
        let (policy, nice) = std::thread::spawn(move || {
            super::lower_thread_priority();
            policy_and_nice()
        })
        .join()
        .unwrap();
        assert!(
            policy == libc::SCHED_IDLE || (policy == libc::SCHED_OTHER && nice == 10),
            "policy {policy}, nice {nice}"
        );
        assert_eq!(policy_and_nice(), before);
    }

    /// The thread's CPU clock runs while it works and not while it sleeps.
    #[cfg(unix)]
    #[test]
    fn the_thread_cpu_clock_counts_work_not_sleep() {
        let t0 = super::thread_cpu_time().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let slept = super::thread_cpu_time().unwrap() - t0;
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let worked = super::thread_cpu_time().unwrap() - t0 - slept;
        assert!(slept < std::time::Duration::from_millis(20), "{slept:?}");
        assert!(worked > slept, "{worked:?} {slept:?}");
    }
}
