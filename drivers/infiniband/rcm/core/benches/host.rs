// SPDX-License-Identifier: GPL-2.0

//! Host benchmark of rcm-core, one core (`make bench-host`, or
//! `cargo bench -p rcm-core --features std --bench host`):
//!
//! 1. parse + emit of every CM message type: MADs per second;
//! 2. the receive path of two endpoints driven back to back, without the
//!    simulated fabric's delays: N connections go through REQ, REP, RTU
//!    (all N established at once), then DREQ, DREP and TIMEWAIT, for N =
//!    1,000 and 10,000. Reported: MADs handled per second by
//!    `handle_mad` alone, connection setups per second (REQ to RTU
//!    received, API calls included), whole life cycles per second.
//!    MADs are handed over in batches of [`BATCH`] and each batch's events
//!    are taken from the sink before the next, as the kernel's intake work
//!    does.
//!
//! `RCM_BENCH_PART=parse` or `=lifecycle` runs one part only (to profile
//! it). `RCM_BENCH_SECS` sets the seconds per line (default 3), split into 3
//! rounds; the table gives the median round and the spread of the rounds.
//! Rates are per second of the benchmark thread's own CPU time (from
//! `/proc/thread-self/schedstat`, so that other load on the machine
//! matters less), or of wall time where that file is missing.

use rcm_core::cm::store::btree::Std;
use rcm_core::cm::{
    CommId, Config, DeviceId, Endpoint, Event, ListenSpec, Millis, Received, Sink, Transmit,
};
use rcm_core::sim::{sample_rep, sample_req};
use rcm_core::timer::IbaTime;
use rcm_core::wire::field::{Mad, MAD_SIZE};
use rcm_core::wire::mad::attr;
use rcm_core::wire::CmMad;
use std::hint::black_box;
use std::time::{Duration, Instant};

const ROUNDS: usize = 3;

/// The thread's time on a CPU so far (Linux schedstat, in ns).
fn cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        s.split_whitespace().next()?.parse().ok()?,
    ))
}

/// Measures CPU time if the system tells it, else wall time.
#[derive(Clone, Copy)]
struct Stopwatch {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Stopwatch {
    fn start() -> Self {
        Stopwatch {
            wall: Instant::now(),
            cpu: cpu_time(),
        }
    }

    fn elapsed(&self) -> Duration {
        match (self.cpu, cpu_time()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => self.wall.elapsed(),
        }
    }
}

/// Rates of the rounds of one line, per second.
struct Rates(Vec<f64>);

impl Rates {
    fn median(&self) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// (max - min) / median, in percent.
    fn spread(&self) -> f64 {
        let min = self.0.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.0.iter().copied().fold(0.0, f64::max);
        100.0 * (max - min) / self.median()
    }
}

fn human(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2} M", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.1} k", rate / 1e3)
    } else {
        format!("{rate:.0}")
    }
}

// ---- parse + emit ---------------------------------------------------------

/// A CM MAD of `attr_id` whose body is a fixed pseudo-random pattern (the
/// parser accepts any body; the values make every field non-trivial).
fn image(attr_id: u16, seed: u32) -> Mad {
    let mut mad = [0u8; MAD_SIZE];
    let mut x = seed.wrapping_mul(0x9E37_79B9) | 1;
    for b in mad[24..].iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    let method = if attr_id == attr::CLASS_PORT_INFO {
        0x81
    } else {
        0x03
    };
    mad[..4].copy_from_slice(&[1, 0x07, 2, method]);
    mad[8..16].copy_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes());
    mad[16..18].copy_from_slice(&attr_id.to_be_bytes());
    mad
}

/// parse + emit of `mads` (several different images, cycled) for `secs`.
fn parse_emit(mads: &[Mad], secs: f64) -> Rates {
    let mut out = [0u8; MAD_SIZE];
    let batch = 4096;
    let mut once = |n: usize| {
        for i in 0..n {
            let mad = black_box(&mads[i % mads.len()]);
            match CmMad::parse(mad) {
                Ok(m) => m.emit(&mut out),
                Err(e) => panic!("bench image does not parse: {e:?}"),
            }
            black_box(&out);
        }
    };
    once(batch);
    let per_round = Duration::from_secs_f64(secs / ROUNDS as f64);
    let mut rates = Vec::new();
    for _ in 0..ROUNDS {
        let (start, watch) = (Instant::now(), Stopwatch::start());
        let mut done = 0u64;
        while start.elapsed() < per_round {
            once(batch);
            done += batch as u64;
        }
        rates.push(done as f64 / watch.elapsed().as_secs_f64());
    }
    Rates(rates)
}

// ---- endpoints back to back ------------------------------------------------

/// MADs handed to an endpoint at once; the sink's events are taken after
/// each batch. The kernel's intake work does the same with its
/// `INTAKE_BATCH` (shell/intake.rs), so the events stay in a few warm cache
/// lines instead of a cold vector of N.
const BATCH: usize = 16;

/// Collects one phase's output: MADs to deliver and one batch's events.
#[derive(Default)]
struct Out {
    mads: Vec<Mad>,
    events: Vec<(CommId, Event)>,
}

impl Sink<u32> for Out {
    fn transmit(&mut self, tx: Transmit<'_, u32>) {
        self.mads.push(*tx.mad);
    }
    fn event(&mut self, id: CommId, _owner: rcm_core::cm::Owner, event: Event) {
        self.events.push((id, event));
    }
}

const SID: u64 = 0x0106_0000_0000_4E20;
const GUID_A: u64 = 0xA;
const GUID_B: u64 = 0xB;

struct Pair {
    a: Endpoint<u32, Std>,
    b: Endpoint<u32, Std>,
    now: Millis,
    out: Out,
    /// Ids of the active (A) and passive (B) sides of this round.
    ids_a: Vec<CommId>,
    ids_b: Vec<CommId>,
    mads: Vec<Mad>,
    /// The ids the last phase's events were for, and how many of those
    /// events were REQs received.
    event_ids: Vec<CommId>,
    reqs_received: usize,
}

/// Time spent per round.
#[derive(Default, Clone, Copy)]
struct Times {
    /// In `handle_mad` only.
    rx: Duration,
    /// From the first create_id to the last RTU handled.
    setup: Duration,
    /// The whole round (setup, disconnect, TIMEWAIT, destroy).
    total: Duration,
}

fn rx_from(from: u32, guid: u64) -> Received<u32> {
    Received {
        from: Some(from),
        device: DeviceId(0),
        local_ca_guid: guid,
    }
}

impl Pair {
    fn new() -> Self {
        let mut b = Endpoint::new(Config {
            id_operand: 0x5bd1_e995,
            tid_high: 2,
            hash_seed: 0x9E37_79B9_7F4A_7C15,
            // Every phase hands all N MADs over at once (no receive queue
            // to overflow), so nothing is paced.
            peer_window: 0,
        });
        let listener = b.create_id(DeviceId(0), GUID_B).expect("create_id");
        b.listen(listener, ListenSpec::exact(SID), &mut Out::default())
            .expect("listen");
        Pair {
            a: Endpoint::new(Config {
                id_operand: 0x2545_f491,
                tid_high: 1,
                hash_seed: 0xBF58_476D_1CE4_E5B9,
                peer_window: 0,
            }),
            b,
            now: 0,
            out: Out::default(),
            ids_a: Vec::new(),
            ids_b: Vec::new(),
            mads: Vec::new(),
            event_ids: Vec::new(),
            reqs_received: 0,
        }
    }

    /// Delivers the MADs of the last phase to `to` (B if `to_b`) batch by
    /// batch, timing `handle_mad` and the taking of each batch's events
    /// (the ids, into `event_ids`).
    fn deliver(&mut self, to_b: bool, rx_time: &mut Duration) {
        self.mads.clear();
        std::mem::swap(&mut self.mads, &mut self.out.mads);
        self.out.events.clear();
        self.event_ids.clear();
        self.reqs_received = 0;
        let (ep, rx) = if to_b {
            (&mut self.b, rx_from(0, GUID_B))
        } else {
            (&mut self.a, rx_from(1, GUID_A))
        };
        let watch = Stopwatch::start();
        for batch in self.mads.chunks(BATCH) {
            for mad in batch {
                black_box(ep.handle_mad(self.now, &rx, mad, &mut self.out));
            }
            for (id, event) in &self.out.events {
                self.reqs_received += usize::from(matches!(event, Event::ReqReceived { .. }));
                self.event_ids.push(*id);
            }
            self.out.events.clear();
        }
        *rx_time += watch.elapsed();
    }

    /// One life cycle of `n` concurrent connections.
    fn round(&mut self, n: usize) -> Times {
        let mut t = Times::default();
        let start = Stopwatch::start();
        self.out.mads.clear();
        self.out.events.clear();
        self.ids_a.clear();
        self.ids_b.clear();
        let plt = IbaTime::new(14);

        // REQ: A creates n ids and connects each.
        for i in 0..n {
            let id = self.a.create_id(DeviceId(0), GUID_A).expect("create_id");
            let req = sample_req(SID, 0x10 + i as u32, 3);
            self.a
                .send_req(self.now, id, &req, 0, 1, plt, &mut self.out)
                .expect("send_req");
            self.ids_a.push(id);
        }
        self.deliver(true, &mut t.rx);
        // REP: B accepts every REQ.
        assert_eq!(self.reqs_received, n);
        for (i, &id) in self.event_ids.iter().enumerate() {
            let rep = sample_rep(0x10_0000 + i as u32);
            self.b
                .send_rep(self.now, id, &rep, 0, &mut self.out)
                .expect("send_rep");
            self.ids_b.push(id);
        }
        self.deliver(false, &mut t.rx);
        // RTU: A confirms.
        assert_eq!(self.event_ids.len(), n);
        for &id in &self.ids_a {
            self.a.send_rtu(id, &[], &mut self.out).expect("send_rtu");
        }
        self.deliver(true, &mut t.rx);
        assert_eq!(self.event_ids.len(), n);
        t.setup = start.elapsed();

        // DREQ from A, DREP from B.
        self.now += 1;
        for &id in &self.ids_a {
            self.a
                .send_dreq(self.now, id, &[], &mut self.out)
                .expect("send_dreq");
        }
        self.deliver(true, &mut t.rx);
        assert_eq!(self.event_ids.len(), n);
        for &id in &self.ids_b {
            self.b
                .send_drep(self.now, id, &[], &mut self.out)
                .expect("send_drep");
        }
        self.deliver(false, &mut t.rx);
        assert_eq!(self.event_ids.len(), n);

        // Both sides destroy their ids, which leave after TIMEWAIT.
        for &id in &self.ids_a {
            self.a
                .destroy(self.now, id, true, &mut self.out)
                .expect("destroy");
        }
        for &id in &self.ids_b {
            self.b
                .destroy(self.now, id, true, &mut self.out)
                .expect("destroy");
        }
        self.now += 100_000_000;
        self.a.handle_timeout(self.now, &mut self.out);
        self.b.handle_timeout(self.now, &mut self.out);
        t.total = start.elapsed();
        assert!(self.out.mads.is_empty(), "unexpected MADs at teardown");
        assert_eq!((self.a.len(), self.b.len()), (0, 1), "ids left over");
        t
    }
}

/// Rates for `n` concurrent connections over `secs`:
/// (MADs handled/s in handle_mad, setups/s, life cycles/s).
fn lifecycle(n: usize, secs: f64) -> [Rates; 3] {
    let mut pair = Pair::new();
    pair.round(n);
    let per_round = Duration::from_secs_f64(secs / ROUNDS as f64);
    let mut out = [Rates(Vec::new()), Rates(Vec::new()), Rates(Vec::new())];
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let (mut sum, mut cycles) = (Times::default(), 0u64);
        while start.elapsed() < per_round {
            let t = pair.round(n);
            sum.rx += t.rx;
            sum.setup += t.setup;
            sum.total += t.total;
            cycles += n as u64;
        }
        out[0].0.push((5 * cycles) as f64 / sum.rx.as_secs_f64());
        out[1].0.push(cycles as f64 / sum.setup.as_secs_f64());
        out[2].0.push(cycles as f64 / sum.total.as_secs_f64());
    }
    out
}

fn main() {
    // `cargo bench` passes --bench; anything else is a filter we ignore.
    let secs: f64 = std::env::var("RCM_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let clock = if cpu_time().is_some() {
        "thread CPU time"
    } else {
        "wall time"
    };
    println!("rcm-core host benchmark: one core, {secs} s per line, median of {ROUNDS} rounds (spread = max-min)");
    println!("rates per second of {clock}");
    let part = std::env::var("RCM_BENCH_PART").unwrap_or_default();
    if part.is_empty() || part == "parse" {
        parse_emit_table(secs);
    }
    if part.is_empty() || part == "lifecycle" {
        lifecycle_table(secs);
    }
}

fn parse_emit_table(secs: f64) {
    println!();
    println!("parse + emit (CmMad::parse then CmMad::emit of one 256-byte MAD)");
    println!(
        "  {:<14} {:>12} {:>9} {:>8}",
        "message", "MADs/s", "ns/MAD", "spread"
    );
    let types: [(&str, u16); 12] = [
        ("REQ", attr::REQ),
        ("MRA", attr::MRA),
        ("REJ", attr::REJ),
        ("REP", attr::REP),
        ("RTU", attr::RTU),
        ("DREQ", attr::DREQ),
        ("DREP", attr::DREP),
        ("SIDR_REQ", attr::SIDR_REQ),
        ("SIDR_REP", attr::SIDR_REP),
        ("LAP", attr::LAP),
        ("APR", attr::APR),
        ("ClassPortInfo", attr::CLASS_PORT_INFO),
    ];
    for (name, attr_id) in types {
        let mads: Vec<Mad> = (1..=8).map(|s| image(attr_id, s)).collect();
        let r = parse_emit(&mads, secs);
        println!(
            "  {:<14} {:>12} {:>9.1} {:>7.1}%",
            name,
            human(r.median()),
            1e9 / r.median(),
            r.spread()
        );
    }
}

fn lifecycle_table(secs: f64) {
    println!();
    println!("endpoint life cycle, two endpoints back to back: REQ -> REP -> RTU (all N");
    println!("established at once), DREQ -> DREP, destroy, TIMEWAIT; 5 MADs per connection");
    println!(
        "  {:>8} {:>17} {:>12} {:>14} {:>8}",
        "N", "handle_mad MADs/s", "setups/s", "life cycles/s", "spread"
    );
    for n in [1_000, 10_000] {
        let [rx, setup, total] = lifecycle(n, secs);
        let spread = rx.spread().max(setup.spread()).max(total.spread());
        println!(
            "  {:>8} {:>17} {:>12} {:>14} {:>7.1}%",
            n,
            human(rx.median()),
            human(setup.median()),
            human(total.median()),
            spread
        );
    }
}
