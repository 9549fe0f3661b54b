//! At most 6 starts in any 0.1 s.

use loam_sound::RateLimiter;

#[test]
fn seventh_start_within_a_tenth_of_a_second_is_dropped() {
    let mut l = RateLimiter::default();
    let starts = [0.0, 0.01, 0.02, 0.03, 0.05, 0.08];
    assert!(starts.iter().all(|&t| l.try_start(t)));
    assert!(!l.try_start(0.09), "7th start within 0.1 s was accepted");
    assert!(!l.try_start(0.099));
    // The start at 0.0 leaves the window at 0.1 s: room for one more, then full again.
    assert!(l.try_start(0.1));
    assert!(!l.try_start(0.105));
    // 0.01 leaves at 0.11.
    assert!(l.try_start(0.11));
    // Long after, the window is empty: six more.
    assert_eq!(
        (0..8)
            .filter(|i| l.try_start(5.0 + *i as f64 * 0.001))
            .count(),
        6
    );
}

#[test]
fn window_slides_rather_than_resetting() {
    // Fixed 0.1 s buckets would allow 12 starts in 0.05..0.15; a sliding window allows 6.
    let mut l = RateLimiter::default();
    let accepted = (0..12)
        .filter(|i| l.try_start(0.05 + *i as f64 * 0.008))
        .count();
    assert_eq!(accepted, 6);
}

#[test]
fn same_times_same_answers() {
    let times: Vec<f64> = (0..200)
        .map(|i| (i * 37 % 101) as f64 * 0.003 + i as f64 * 0.01)
        .collect();
    let run = || {
        let mut l = RateLimiter::default();
        times.iter().map(|&t| l.try_start(t)).collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
    assert!(run().iter().any(|a| !a) && run().iter().any(|a| *a));
}

#[test]
fn custom_limit() {
    let mut l = RateLimiter::new(2, 1.0);
    assert!(l.try_start(0.0) && l.try_start(0.5));
    assert!(!l.try_start(0.9));
    assert!(l.try_start(1.0));
    l.clear();
    assert!(l.try_start(1.0) && l.try_start(1.0));
}
