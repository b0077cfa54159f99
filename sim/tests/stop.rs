//! The cooperative stop flag: a search far larger than its wait is stopped mid-way,
//! within a few hundred states of the flag being set, and says so (incomplete, "stopped
//! on request"), both in the explorer and in the bounded check over assignments.

use collc_sim::bounded::{check, BoundedConfig};
use collc_sim::{simulate, Memory, SimConfig, StopFlag, Verdict};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn broadcast() -> collc_spec::Validated {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/broadcast.coll");
    let text = std::fs::read_to_string(path).expect("the example exists");
    collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("the example validates")
}

/// Sets `stop` after `after`, from another thread.
fn stop_later(stop: &StopFlag, after: Duration) -> std::thread::JoinHandle<()> {
    let stop = StopFlag::clone(stop);
    std::thread::spawn(move || {
        std::thread::sleep(after);
        stop.store(true, Ordering::SeqCst);
    })
}

#[test]
fn a_stop_request_ends_an_exhaustive_search_mid_way() {
    let p = broadcast();
    let params = BTreeMap::from([
        ("P".to_string(), 4),
        ("n".to_string(), 768),
        ("root".to_string(), 0),
    ]);
    // Relaxed memory, no reduction, 3 calls: more than a minute of search, far past
    // the stop request.
    let stop = StopFlag::default();
    let cfg = SimConfig {
        calls: 3,
        memory: Memory::Relaxed,
        reduce: false,
        stop: Some(StopFlag::clone(&stop)),
        ..SimConfig::default()
    };
    let setter = stop_later(&stop, Duration::from_millis(300));
    let t = Instant::now();
    let r = simulate(&p, &params, &cfg).expect("the parameters are accepted");
    let took = t.elapsed();
    setter.join().expect("the setter ends");
    assert_eq!(r.verdict, Verdict::Incomplete, "{:?}", r.stats);
    assert!(!r.stats.complete);
    let why = r.stats.stopped.clone().unwrap_or_default();
    assert!(why.starts_with("stopped on request"), "{why}");
    assert!(r.stats.states > 0);
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn a_stop_flag_set_before_a_bounded_check_explores_nothing() {
    let p = broadcast();
    let stop = StopFlag::default();
    stop.store(true, Ordering::SeqCst);
    let cfg = BoundedConfig {
        stop: Some(stop),
        ..BoundedConfig::default()
    };
    let r = check(&p, &cfg);
    assert!(r.configs.is_empty(), "{:?}", r.configs);
    assert!(r
        .obligations
        .iter()
        .all(|o| o.status == collc_sim::bounded::Status::Incomplete && o.configs_skipped > 0));
}
