// SPDX-License-Identifier: GPL-2.0

//! What the random simulations (`tests/cm_simulation/`,
//! `tests/rdma_cm_simulation.rs`) share: the seed they replay
//! (`RCM_SIM_SEED`), a panic turned into a failure, and the sweep over
//! `RCM_SIM_SEEDS` seeds from `RCM_SIM_FIRST` that reports the first five
//! failing ones.

/// The seed `RCM_SIM_SEED` names for a replay, if any.
pub fn replay_seed() -> Option<u64> {
    let seed = std::env::var("RCM_SIM_SEED").ok()?;
    Some(seed.parse().expect("RCM_SIM_SEED is a number"))
}

/// `run`'s outcome, a panic included as a failure.
pub fn catch(run: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|p| {
        Err(format!(
            "panic: {}",
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        ))
    })
}

/// Runs `run` for `RCM_SIM_SEEDS` (default 20,000) divided by `share`
/// seeds from `RCM_SIM_FIRST` (default 0), stopping at five failures,
/// prints how long that took under `name`, and panics with the failures
/// and how to replay the first (`replay`, a command naming `RCM_SIM_SEED`).
pub fn sweep(name: &str, share: u64, replay: &str, mut run: impl FnMut(u64) -> Result<(), String>) {
    let seeds = env_number("RCM_SIM_SEEDS", 20_000) / share;
    let first = env_number("RCM_SIM_FIRST", 0);
    let start = std::time::Instant::now();
    let mut failures = Vec::new();
    for seed in first..first.saturating_add(seeds) {
        if let Err(e) = run(seed) {
            failures.push((seed, e));
            if failures.len() >= 5 {
                break;
            }
        }
    }
    eprintln!(
        "{name}: {seeds} seeds in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    if let Some((seed, e)) = failures.first() {
        let all: Vec<String> = failures
            .iter()
            .map(|(s, e)| format!("  seed {s}: {e}"))
            .collect();
        panic!(
            "{} failing seed(s):\n{}\nreplay: RCM_SIM_SEED={seed} {replay}\n(first: {e})",
            failures.len(),
            all.join("\n")
        );
    }
}

/// The number in environment variable `name`, or `default`.
fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
