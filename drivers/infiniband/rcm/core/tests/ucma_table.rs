// SPDX-License-Identifier: GPL-2.0

//! The rdma_ucm device's bookkeeping against 6.12's rules: per-file event
//! order, `events_reported`, backlog slots, events dropped before ACCEPT,
//! teardown of undelivered requests, memberships, migration, close; and a
//! seeded random run against a plain model, audited after every step.

use rcm_core::cm::store::btree::Std;
use rcm_core::rdma_cm::SockAddr;
use rcm_core::ucma::command::{ConnParam, PrivateData};
use rcm_core::ucma::event::{EventParam, EventResp};
use rcm_core::ucma::table::{Delivery, Refusal};
use rcm_core::ucma::{CtxId, Ece, FileId, McId, UcmaError, UcmaTable};

type Table = UcmaTable<Std, u32>;

/// GET_EVENT: the next event of `f`, delivered.
fn next(t: &mut Table, f: FileId) -> Option<EventResp> {
    let (ticket, event) = t.queues.peek(f, |e| *e)?;
    t.queues.take(f, ticket).then_some(event)
}

const CONNECT_REQUEST: u32 = 4;
const ESTABLISHED: u32 = 9;
const DISCONNECTED: u32 = 10;
const DEVICE_REMOVAL: u32 = 11;
const MULTICAST_JOIN: u32 = 12;
/// A multicast group.
const GROUP: SockAddr = SockAddr::V4 {
    addr: [239, 1, 2, 3],
    port: 0,
};

fn ev(event: u32) -> EventResp {
    EventResp {
        uid: 0,
        id: 0,
        event,
        status: 0,
        param: EventParam::Conn(ConnParam {
            qp_num: 0,
            qkey: 0,
            private_data: PrivateData::new(&[]).unwrap(),
            srq: false,
            responder_resources: 0,
            initiator_depth: 0,
            flow_control: false,
            retry_count: 0,
            rnr_retry_count: 0,
        }),
        ece: Ece::default(),
    }
}

fn ctx(t: &mut Table, file: FileId, uid: u64, handle: u32) -> CtxId {
    let c = t.both().reserve(file, uid).unwrap();
    t.contexts.publish(c, handle);
    c
}

/// The last step of a destroy, as the device does it: the ids of
/// undelivered requests' connections it hands back are "destroyed" into
/// `released`, then their contexts finished too. The events `c` reported.
fn finish(t: &mut Table, c: CtxId, released: &mut Vec<u32>) -> u32 {
    let mut orphans = Vec::new();
    let n = t
        .both()
        .finish_destroy(c, &mut |child, h| orphans.push((child, h)));
    while let Some((child, h)) = orphans.pop() {
        released.push(h);
        t.both()
            .finish_destroy(child, &mut |child, h| orphans.push((child, h)));
    }
    n
}

fn destroy(t: &mut Table, file: FileId, c: CtxId) -> (u32, Vec<u32>) {
    let mut released = Vec::new();
    let (held, busy) = t.contexts.unpublish(file, c).unwrap();
    assert!(!busy, "no command holds a context destroyed here");
    if let Some(h) = held {
        released.push(h);
    }
    let n = finish(t, c, &mut released);
    t.both().audit().unwrap();
    (n, released)
}

#[test]
fn events_are_per_file_in_order_and_counted_when_delivered() {
    let mut t = Table::new();
    let (f1, f2) = (
        t.contexts.open().expect("a file"),
        t.contexts.open().expect("a file"),
    );
    let a = ctx(&mut t, f1, 0xA, 1);
    let b = ctx(&mut t, f2, 0xB, 2);
    assert_eq!(t.queues.event(a, ev(ESTABLISHED)), Delivery::Queued(f1));
    assert_eq!(t.queues.event(b, ev(ESTABLISHED)), Delivery::Queued(f2));
    assert_eq!(t.queues.event(a, ev(DISCONNECTED)), Delivery::Queued(f1));
    let (ticket, first) = t.queues.peek(f1, |e| *e).unwrap();
    assert_eq!((first.uid, first.id, first.event), (0xA, a.0, ESTABLISHED));
    // Peeking (a copy-out that faults) does not deliver.
    assert_eq!(t.queues.peek(f1, |e| *e), Some((ticket, first)));
    assert!(t.queues.take(f1, ticket));
    assert!(!t.queues.take(f1, ticket), "a ticket delivers once");
    let (second, event) = t.queues.peek(f1, |e| e.event).unwrap();
    assert_eq!(event, DISCONNECTED);
    assert!(t.queues.take(f1, second));
    assert_eq!(t.queues.peek(f1, |e| *e), None);
    assert!(t.queues.has_event(f2));
    // One event on b undelivered: destroy reports none and drops it.
    assert_eq!(destroy(&mut t, f2, b), (0, vec![2]));
    assert!(!t.queues.has_event(f2));
    assert_eq!(destroy(&mut t, f1, a), (2, vec![1]));
    assert_eq!(t.both().counts(), (0, 0, 0));
}

#[test]
fn a_copy_out_racing_a_destroy_delivers_nothing_else() {
    // GET_EVENT copies an event out without the lock; the event's context
    // is destroyed meanwhile: its ticket then takes nothing, and the next
    // event of the file (another context's) stays queued.
    let mut t = Table::new();
    let f = t.contexts.open().expect("a file");
    let a = ctx(&mut t, f, 0xA, 1);
    let b = ctx(&mut t, f, 0xB, 2);
    t.queues.event(a, ev(ESTABLISHED));
    t.queues.event(b, ev(DISCONNECTED));
    let (ticket, copied) = t.queues.peek(f, |e| *e).unwrap();
    assert_eq!(copied.id, a.0);
    assert_eq!(destroy(&mut t, f, a), (0, vec![1]));
    assert!(!t.queues.take(f, ticket));
    assert_eq!(
        next(&mut t, f).map(|e| (e.id, e.event)),
        Some((b.0, DISCONNECTED))
    );
    // The destroy freed the event's slot: events come and go until one has
    // reused it (free slots are reused oldest first: a few chunks' worth),
    // and the old ticket takes none of them.
    for _ in 0..10_000 {
        t.queues.event(b, ev(DISCONNECTED));
        assert!(!t.queues.take(f, ticket), "a stale ticket took an event");
        assert_eq!(
            next(&mut t, f).map(|e| (e.id, e.event)),
            Some((b.0, DISCONNECTED))
        );
    }
    t.both().audit().unwrap();
}

#[test]
fn lookups_give_enoent_einval_enxio() {
    let mut t = Table::new();
    let (f1, f2) = (
        t.contexts.open().expect("a file"),
        t.contexts.open().expect("a file"),
    );
    let a = ctx(&mut t, f1, 1, 10);
    assert_eq!(t.contexts.find(f1, a), Ok(10));
    assert_eq!(t.contexts.find(f2, a), Err(UcmaError::Invalid));
    assert_eq!(t.contexts.find(f1, CtxId(a.0 + 1)), Err(UcmaError::NoEntry));
    let reserved = t.both().reserve(f1, 2).unwrap();
    assert_eq!(t.contexts.find(f1, reserved), Err(UcmaError::NoEntry));
    t.both().discard(reserved);
    // Device removal: the event is queued, the id handed back once;
    // commands then get ENXIO, DESTROY_ID still works.
    assert_eq!(t.queues.event(a, ev(DEVICE_REMOVAL)), Delivery::Queued(f1));
    assert_eq!(t.contexts.close(a), Some(10));
    assert_eq!(t.contexts.close(a), None);
    assert_eq!(t.contexts.find(f1, a), Err(UcmaError::Gone));
    assert_eq!(t.both().migrate(f2, f1, a), Err(UcmaError::Gone));
    assert_eq!(destroy(&mut t, f1, a), (0, vec![]));
    assert_eq!(t.contexts.find(f1, a), Err(UcmaError::NoEntry));
    assert_eq!(t.both().counts(), (0, 0, 0));
}

#[test]
fn requests_take_backlog_until_delivered_and_count_on_the_listener() {
    let mut t = Table::new();
    let f = t.contexts.open().expect("a file");
    let l = ctx(&mut t, f, 0x11, 1);
    t.queues.set_backlog(l, 2);
    let (c1, queued_on) = t.both().request(l, 100, ev(CONNECT_REQUEST)).unwrap();
    assert_eq!(queued_on, f, "a request is queued on its listener's file");
    let (c2, _) = t.both().request(l, 101, ev(CONNECT_REQUEST)).unwrap();
    assert_eq!(
        t.both().request(l, 102, ev(CONNECT_REQUEST)),
        Err(Refusal::Backlog)
    );
    let r = next(&mut t, f).unwrap();
    // The listener's uid, the new context's id.
    assert_eq!((r.uid, r.id, r.event), (0x11, c1.0, CONNECT_REQUEST));
    // Delivery frees a slot.
    let (c3, _) = t.both().request(l, 103, ev(CONNECT_REQUEST)).unwrap();
    // Before ACCEPT the new connection hears nothing.
    assert_eq!(t.queues.event(c1, ev(ESTABLISHED)), Delivery::Dropped);
    t.queues.set_uid(c1, 0x77);
    assert_eq!(t.queues.event(c1, ev(ESTABLISHED)), Delivery::Queued(f));
    // Destroying the listener destroys the connections of its undelivered
    // requests (c2, c3), not the delivered one (c1).
    let (reported, mut released) = destroy(&mut t, f, l);
    released.sort();
    assert_eq!((reported, released), (1, vec![1, 101, 103]));
    assert_eq!(t.contexts.find(f, c2), Err(UcmaError::NoEntry));
    assert_eq!(t.contexts.find(f, c3), Err(UcmaError::NoEntry));
    assert_eq!(
        next(&mut t, f).map(|e| (e.uid, e.event)),
        Some((0x77, ESTABLISHED))
    );
    assert_eq!(destroy(&mut t, f, c1), (1, vec![100]));
    assert_eq!(t.both().counts(), (0, 0, 0));
}

#[test]
fn memberships_count_on_both_and_leave_drops_their_events() {
    let mut t = Table::new();
    let (f, other) = (
        t.contexts.open().expect("a file"),
        t.contexts.open().expect("a file"),
    );
    let c = ctx(&mut t, f, 5, 1);
    let m1 = t.both().reserve_membership(c, 0x51, GROUP).unwrap();
    // Not visible until the join started.
    assert_eq!(
        t.contexts.unpublish_membership(f, m1),
        Err(UcmaError::NoEntry)
    );
    t.contexts.publish_membership(m1);
    let m2 = t.both().reserve_membership(c, 0x52, GROUP).unwrap();
    t.contexts.publish_membership(m2);
    assert_eq!(
        t.queues.mc_event(m1, ev(MULTICAST_JOIN)),
        Delivery::Queued(f)
    );
    assert_eq!(
        t.queues.mc_event(m2, ev(MULTICAST_JOIN)),
        Delivery::Queued(f)
    );
    let j = next(&mut t, f).unwrap();
    assert_eq!((j.uid, j.id), (0x51, m1.0));
    assert_eq!(
        t.contexts.unpublish_membership(other, m2),
        Err(UcmaError::Invalid)
    );
    assert_eq!(
        t.contexts.unpublish_membership(f, McId(99)),
        Err(UcmaError::NoEntry)
    );
    assert_eq!(t.contexts.unpublish_membership(f, m2), Ok((c, GROUP)));
    // m2's join event was never delivered.
    assert_eq!(t.both().finish_leave(m2), 0);
    assert!(!t.queues.has_event(f));
    assert_eq!(t.contexts.unpublish_membership(f, m1), Ok((c, GROUP)));
    assert_eq!(t.both().finish_leave(m1), 1);
    // The context counted the delivered multicast event too.
    assert_eq!(destroy(&mut t, f, c), (1, vec![1]));
    assert_eq!(t.both().counts(), (0, 0, 0));
}

#[test]
fn migrate_moves_the_context_and_its_events_in_order() {
    let mut t = Table::new();
    let (old, new) = (
        t.contexts.open().expect("a file"),
        t.contexts.open().expect("a file"),
    );
    let a = ctx(&mut t, old, 1, 1);
    let b = ctx(&mut t, old, 2, 2);
    let n = ctx(&mut t, new, 3, 3);
    t.queues.event(a, ev(ESTABLISHED));
    next(&mut t, old);
    t.queues.event(n, ev(ESTABLISHED));
    t.queues.event(a, ev(DISCONNECTED));
    t.queues.event(b, ev(ESTABLISHED));
    t.queues.event(a, ev(DEVICE_REMOVAL));
    assert_eq!(t.both().migrate(new, old, a), Ok(1));
    t.both().audit().unwrap();
    assert_eq!(t.contexts.find(old, a), Err(UcmaError::Invalid));
    assert_eq!(t.contexts.find(new, a), Ok(1));
    let order: Vec<_> = std::iter::from_fn(|| next(&mut t, new))
        .map(|e| (e.id, e.event))
        .collect();
    assert_eq!(
        order,
        vec![
            (n.0, ESTABLISHED),
            (a.0, DISCONNECTED),
            (a.0, DEVICE_REMOVAL)
        ]
    );
    assert_eq!(next(&mut t, old).map(|e| e.id), Some(b.0));
    // Migrating to the same file keeps the events and terminates.
    t.queues.event(b, ev(DISCONNECTED));
    assert_eq!(t.both().migrate(old, old, b), Ok(1));
    assert_eq!(next(&mut t, old).map(|e| e.event), Some(DISCONNECTED));
    t.both().audit().unwrap();
}

#[test]
fn close_destroys_every_context_of_the_file_only() {
    let mut t = Table::new();
    let (f, keep) = (
        t.contexts.open().expect("a file"),
        t.contexts.open().expect("a file"),
    );
    let l = ctx(&mut t, f, 1, 1);
    t.queues.set_backlog(l, 8);
    for h in 10..14 {
        t.both().request(l, h, ev(CONNECT_REQUEST)).unwrap();
    }
    let k = ctx(&mut t, keep, 2, 2);
    let mut released = Vec::new();
    while let Some(c) = t.contexts.next_context_of(f) {
        if let (Some(h), _) = t.contexts.unpublish_for_close(c) {
            released.push(h);
        }
        finish(&mut t, c, &mut released);
        t.both().audit().unwrap();
    }
    released.sort();
    assert_eq!(released, vec![1, 10, 11, 12, 13]);
    assert_eq!(t.both().counts(), (1, 0, 0));
    assert_eq!(t.contexts.find(keep, k), Ok(2));
}

/// A plain model of one context for the random run.
#[derive(Clone, Default)]
struct ModelCtx {
    file: u64,
    uid: u64,
    delivered: u32,
    queued: Vec<u64>,
}

/// Random commands and events on 3 files; after each step the table's
/// audit passes and every delivered event is the model's next one for that
/// file; at the end, closing every file leaves nothing behind.
#[test]
fn random_runs_match_a_model_and_leak_nothing() {
    for seed in 1..=40u64 {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut t = Table::new();
        let files: Vec<FileId> = (0..3).map(|_| t.contexts.open().expect("a file")).collect();
        let mut live: Vec<CtxId> = Vec::new();
        let mut model: std::collections::BTreeMap<u32, ModelCtx> = Default::default();
        let mut queues: std::collections::BTreeMap<u64, std::collections::VecDeque<(u32, u64)>> =
            Default::default();
        let mut stamp = 0u64;
        for _ in 0..400 {
            let f = files[rnd(3) as usize];
            match rnd(6) {
                0 => {
                    let uid = 1 + rnd(1000);
                    let c = ctx(&mut t, f, uid, 0);
                    live.push(c);
                    model.insert(
                        c.0,
                        ModelCtx {
                            file: f.0,
                            uid,
                            ..Default::default()
                        },
                    );
                }
                1 | 2 if !live.is_empty() => {
                    let c = live[rnd(live.len() as u64) as usize];
                    stamp += 1;
                    let mut e = ev(ESTABLISHED);
                    e.status = stamp as i32;
                    let m = model.get_mut(&c.0).unwrap();
                    assert_eq!(t.queues.event(c, e), Delivery::Queued(FileId(m.file)));
                    m.queued.push(stamp);
                    queues.entry(m.file).or_default().push_back((c.0, stamp));
                }
                3 => {
                    if let Some(e) = next(&mut t, f) {
                        let (c, s) = queues.get_mut(&f.0).unwrap().pop_front().unwrap();
                        assert_eq!((e.id, e.status as u64), (c, s), "seed {seed}: order");
                        let m = model.get_mut(&c).unwrap();
                        assert_eq!(e.uid, m.uid);
                        m.delivered += 1;
                        m.queued.retain(|&q| q != s);
                    } else {
                        assert!(queues.get(&f.0).is_none_or(|q| q.is_empty()));
                    }
                }
                4 if !live.is_empty() => {
                    let i = rnd(live.len() as u64) as usize;
                    let c = live[i];
                    let m = model[&c.0].clone();
                    if m.file != f.0 {
                        assert_eq!(t.contexts.unpublish(f, c), Err(UcmaError::Invalid));
                        continue;
                    }
                    live.swap_remove(i);
                    let (reported, _) = destroy(&mut t, f, c);
                    assert_eq!(reported, m.delivered, "seed {seed}: events_reported");
                    if let Some(q) = queues.get_mut(&m.file) {
                        q.retain(|&(id, _)| id != c.0);
                    }
                    model.remove(&c.0);
                }
                5 if !live.is_empty() => {
                    let c = live[rnd(live.len() as u64) as usize];
                    let from = FileId(model[&c.0].file);
                    assert_eq!(t.both().migrate(f, from, c), Ok(model[&c.0].delivered));
                    let moved: Vec<_> = queues
                        .get(&from.0)
                        .map(|q| q.iter().filter(|e| e.0 == c.0).copied().collect())
                        .unwrap_or_default();
                    if let Some(q) = queues.get_mut(&from.0) {
                        q.retain(|e| e.0 != c.0);
                    }
                    queues.entry(f.0).or_default().extend(moved);
                    model.get_mut(&c.0).unwrap().file = f.0;
                }
                _ => {}
            }
            t.both()
                .audit()
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        for &f in &files {
            while let Some(c) = t.contexts.next_context_of(f) {
                t.contexts.unpublish_for_close(c);
                finish(&mut t, c, &mut Vec::new());
            }
        }
        assert_eq!(t.both().counts(), (0, 0, 0), "seed {seed}: leaked");
    }
}

#[test]
fn one_command_at_a_time_per_context_and_teardown_sees_it() {
    let mut t = Table::new();
    let f = t.contexts.open().expect("a file");
    let c = t.both().reserve(f, 7).unwrap();
    t.contexts.publish(c, 70);
    assert_eq!(t.contexts.hold(f, c), Ok(Some(70)));
    assert!(t.contexts.busy(c));
    // A second command waits; another file's is refused as before.
    assert_eq!(t.contexts.hold(f, c), Ok(None));
    let other = t.contexts.open().expect("a file");
    assert_eq!(t.contexts.hold(other, c), Err(UcmaError::Invalid));
    // DESTROY_ID hides the context at once and waits for the holder.
    assert_eq!(t.contexts.unpublish(f, c), Ok((Some(70), true)));
    assert_eq!(t.contexts.hold(f, c), Err(UcmaError::NoEntry));
    assert!(t.contexts.busy(c));
    assert_eq!(t.contexts.unhold(c), None, "DESTROY_ID has the id");
    assert!(!t.contexts.busy(c));
    finish(&mut t, c, &mut Vec::new());
    assert!(!t.contexts.busy(c));
}

#[test]
fn device_removal_leaves_a_held_id_to_its_command() {
    let mut t = Table::new();
    let f = t.contexts.open().expect("a file");
    let c = t.both().reserve(f, 7).unwrap();
    t.contexts.publish(c, 70);
    assert_eq!(t.contexts.hold(f, c), Ok(Some(70)));
    // The command still uses the id: removal closes the context but
    // leaves the id; the command hands it over when done, once.
    assert_eq!(t.queues.event(c, ev(DEVICE_REMOVAL)), Delivery::Queued(f));
    assert_eq!(t.contexts.close(c), None);
    assert_eq!(t.contexts.hold(f, c), Err(UcmaError::Gone));
    assert_eq!(t.contexts.unhold(c), Some(70));
    assert_eq!(t.contexts.unhold(c), None);
    // DESTROY_ID then finds no id to destroy.
    assert_eq!(destroy(&mut t, f, c), (0, vec![]));
    assert_eq!(t.both().counts(), (0, 0, 0));
    // Closed while held and destroyed before the command ends: DESTROY_ID
    // takes the id, the command's end hands back nothing.
    let d = t.both().reserve(f, 8).unwrap();
    t.contexts.publish(d, 80);
    assert_eq!(t.contexts.hold(f, d), Ok(Some(80)));
    assert_eq!(t.contexts.close(d), None);
    assert_eq!(t.contexts.unpublish(f, d), Ok((Some(80), true)));
    assert_eq!(t.contexts.unhold(d), None);
    finish(&mut t, d, &mut Vec::new());
    assert_eq!(t.both().counts(), (0, 0, 0));
}

#[test]
fn a_context_number_names_its_slot_and_comes_back_last() {
    // Contexts are slots: numbers stay dense (the recipients are indexed
    // by them), and a freed number is reused only after the free ones
    // before it, so a stale number does not name the next context.
    let mut t = Table::new();
    let f = t.contexts.open().expect("a file");
    let first: Vec<CtxId> = (0..3).map(|i| ctx(&mut t, f, 1 + i, i as u32)).collect();
    assert_eq!(first, [CtxId(0), CtxId(1), CtxId(2)]);
    destroy(&mut t, f, first[1]);
    let next_one = ctx(&mut t, f, 9, 9);
    assert_ne!(next_one, first[1], "a freed number came back at once");
    assert_eq!(t.contexts.find(f, first[1]), Err(UcmaError::NoEntry));
    t.both().audit().unwrap();
}

#[test]
fn an_undelivered_connection_keeps_its_number_until_its_id_is_gone() {
    // A listener's destroy hands back the ids of its undelivered
    // requests' connections, destroyed after the table's locks. Until
    // then such an id may still deliver an event, naming the context by
    // number: that number must not name a new context meanwhile.
    let mut t = Table::new();
    let f = t.contexts.open().expect("a file");
    let l = ctx(&mut t, f, 1, 1);
    t.queues.set_backlog(l, 4);
    let (child, _) = t.both().request(l, 10, ev(CONNECT_REQUEST)).unwrap();
    t.contexts.unpublish(f, l).unwrap();
    let mut handed = Vec::new();
    t.both().finish_destroy(l, &mut |c, h| handed.push((c, h)));
    assert_eq!(handed, [(child, 10)]);
    // New contexts, enough to go through every free number and more.
    let mut made = Vec::new();
    for i in 0..300 {
        let c = ctx(&mut t, f, 100 + i, 100 + i as u32);
        assert_ne!(c, child, "a hidden connection's number was reused");
        made.push(c);
    }
    // The late event of the hidden connection's id reaches no one.
    assert_eq!(t.queues.event(child, ev(DISCONNECTED)), Delivery::Dropped);
    assert!(next(&mut t, f).is_none());
    // Its id destroyed, the context goes.
    t.both().finish_destroy(child, &mut |_, _| {});
    assert_eq!(t.contexts.find(f, child), Err(UcmaError::NoEntry));
    assert_eq!(t.both().counts(), (300, 0, 0));
    t.both().audit().unwrap();
}
