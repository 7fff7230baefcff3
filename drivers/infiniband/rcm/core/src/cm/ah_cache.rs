// SPDX-License-Identifier: GPL-2.0

//! Address handles of one MAD agent's sends, shared by the sends on one
//! path.
//!
//! Every MAD goes out with an address handle. Creating one per send and
//! destroying it on completion, as 6.12's CM does, costs a driver call
//! each way for every REQ, REP, RTU, DREQ and DREP. Here a handle made for
//! a path serves the later sends on the same path while it is fresh: for
//! at most `max_age_ms` (rcm.reply_path_ms, the window in which rcm also
//! reuses a sender's reply path) and within one network generation (no
//! neighbour or netdev change seen since it was made). `max_age_ms` 0
//! makes one handle per send again.
//!
//! Slots are few (a storm mostly talks to one peer): a send that finds no
//! fresh slot and no idle one to take over keeps a handle of its own. A
//! send that finds no fresh handle for its path also takes the idle ones
//! past their time out of their slots, so that none holds its GID entry
//! for long.
//!
//! A handle that leaves its slot (past its time, or taken over) is
//! retired rather than destroyed by the send that found it: the next send
//! done destroys it, as 6.12 destroys its handles when their sends
//! complete, so that a new path's first MAD (a REQ, a REP) waits for one
//! driver call, not two. Handles that find no room among the retired
//! ones go back to their finder at once.
//!
//! The cache holds no lock and calls no driver: it says which handles to
//! create and destroy, and the caller does that outside its lock.

/// Slots per agent.
pub const AH_SLOTS: usize = 16;

/// When a handle is fresh: the time now, the network generation now, and
/// how long a handle serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Freshness {
    /// Milliseconds on a monotonic clock.
    pub now_ms: u64,
    /// The count of network changes seen so far.
    pub generation: u32,
    /// How long a handle serves (0: one handle per send).
    pub max_age_ms: u64,
}

#[derive(Clone, Copy, Debug)]
struct Slot<K, H> {
    key: K,
    ah: H,
    /// Sends holding the handle.
    users: u32,
    generation: u32,
    made_ms: u64,
    /// The last send's time, to take over the one idle longest.
    used_ms: u64,
}

impl<K, H> Slot<K, H> {
    fn fresh(&self, f: &Freshness) -> bool {
        f.max_age_ms != 0
            && self.generation == f.generation
            && f.now_ms < self.made_ms.saturating_add(f.max_age_ms)
    }
}

/// Handles out of the slots (at most one per slot): handed to the caller
/// to destroy, or kept retired.
#[derive(Debug)]
pub struct Handles<H> {
    items: [Option<H>; AH_SLOTS],
}

impl<H> Handles<H> {
    const fn none() -> Self {
        Handles {
            items: [const { None }; AH_SLOTS],
        }
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.items.iter().flatten().count()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps `h` in a free place; hands it back if there is none.
    fn keep(&mut self, h: H) -> Option<H> {
        match self.items.iter_mut().find(|place| place.is_none()) {
            Some(place) => {
                *place = Some(h);
                None
            }
            None => Some(h),
        }
    }
}

impl<H> IntoIterator for Handles<H> {
    type Item = H;
    type IntoIter = core::iter::Flatten<core::array::IntoIter<Option<H>, AH_SLOTS>>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().flatten()
    }
}

/// What [`AhCache::lookup`] found.
#[derive(Debug)]
pub enum Lookup<H> {
    /// A fresh handle for the path, now held by one more send.
    Hit {
        /// The slot, for [`AhCache::put`].
        slot: usize,
        /// The handle.
        ah: H,
    },
    /// None: the caller creates one (then [`AhCache::insert`]) after
    /// destroying these, idle past their time (the ones the retired found
    /// no room among).
    Miss {
        /// Handles given back.
        stale: Handles<H>,
    },
}

/// What [`AhCache::insert`] did with a new handle.
#[derive(Debug, PartialEq, Eq)]
pub struct Inserted<H> {
    /// Its slot, for [`AhCache::put`]; `None`: the send's own handle,
    /// destroyed with it.
    pub slot: Option<usize>,
    /// An idle handle it took the slot of, for the caller to destroy
    /// (if the retired had no room for it).
    pub evicted: Option<H>,
}

/// The slots of one agent: keys `K` (the path), handles `H`.
#[derive(Debug)]
pub struct AhCache<K, H> {
    slots: [Option<Slot<K, H>>; AH_SLOTS],
    /// Handles out of their slots, held by no send, for the next send
    /// done to destroy ([`AhCache::take_retired`]).
    retired: Handles<H>,
}

impl<K: PartialEq + Copy, H: Copy> Default for AhCache<K, H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: PartialEq + Copy, H: Copy> AhCache<K, H> {
    /// No handles.
    pub const fn new() -> Self {
        AhCache {
            slots: [const { None }; AH_SLOTS],
            retired: Handles::none(),
        }
    }

    /// A fresh handle for `key`, held for one more send; else the idle
    /// handles past their time, given back.
    pub fn lookup(&mut self, key: &K, f: &Freshness) -> Lookup<H> {
        if let Some((slot, s)) = self
            .slots
            .iter_mut()
            .enumerate()
            .filter_map(|(i, s)| Some((i, s.as_mut()?)))
            .find(|(_, s)| s.key == *key && s.fresh(f))
        {
            s.users += 1;
            s.used_ms = f.now_ms;
            return Lookup::Hit { slot, ah: s.ah };
        }
        let mut stale = Handles::none();
        for (slot, out) in self.slots.iter_mut().zip(stale.items.iter_mut()) {
            if slot.as_ref().is_some_and(|s| s.users == 0 && !s.fresh(f)) {
                *out = slot.take().and_then(|s| self.retired.keep(s.ah));
            }
        }
        Lookup::Miss { stale }
    }

    /// Keeps a handle just made for `key`, held by its send: in a free
    /// slot, else in the one idle longest (whose handle is evicted); with
    /// neither, or with `max_age_ms` 0, the send keeps it alone.
    pub fn insert(&mut self, key: K, ah: H, f: &Freshness) -> Inserted<H> {
        let alone = Inserted {
            slot: None,
            evicted: None,
        };
        if f.max_age_ms == 0 {
            return alone;
        }
        let free = self.slots.iter().position(Option::is_none);
        let idle = || {
            self.slots
                .iter()
                .enumerate()
                .filter_map(|(i, s)| Some((i, s.as_ref()?)))
                .filter(|(_, s)| s.users == 0)
                .min_by_key(|(_, s)| s.used_ms)
                .map(|(i, _)| i)
        };
        let Some(slot) = free.or_else(idle) else {
            return alone;
        };
        let evicted = self.slots[slot].replace(Slot {
            key,
            ah,
            users: 1,
            generation: f.generation,
            made_ms: f.now_ms,
            used_ms: f.now_ms,
        });
        Inserted {
            slot: Some(slot),
            evicted: evicted.and_then(|s| self.retired.keep(s.ah)),
        }
    }

    /// The retired handles, for a send that is done to destroy (see the
    /// module's comment).
    pub fn take_retired(&mut self) -> Handles<H> {
        core::mem::replace(&mut self.retired, Handles::none())
    }

    /// A send on `slot`'s handle is done: its handle, for the caller to
    /// destroy, if it was the last send on a handle past its time.
    pub fn put(&mut self, slot: usize, f: &Freshness) -> Option<H> {
        let entry = self.slots.get_mut(slot)?;
        let s = entry.as_mut()?;
        s.users = s.users.saturating_sub(1);
        if s.users == 0 && !s.fresh(f) {
            return entry.take().map(|s| s.ah);
        }
        None
    }

    /// Empties the cache (the agent is gone): every slot's handle, the
    /// retired ones, and whether any was still held by a send (a caller's
    /// bug).
    pub fn clear(&mut self) -> (Handles<H>, Handles<H>, bool) {
        let mut gone = Handles::none();
        let mut held = false;
        for (slot, out) in self.slots.iter_mut().zip(gone.items.iter_mut()) {
            if let Some(s) = slot.take() {
                held |= s.users != 0;
                *out = Some(s.ah);
            }
        }
        (gone, self.take_retired(), held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Freshness = Freshness {
        now_ms: 1_000,
        generation: 7,
        max_age_ms: 100,
    };

    fn at(now_ms: u64) -> Freshness {
        Freshness { now_ms, ..F }
    }

    fn miss(l: Lookup<u32>) -> Handles<u32> {
        match l {
            Lookup::Miss { stale } => stale,
            Lookup::Hit { .. } => panic!("expected a miss"),
        }
    }

    #[test]
    fn a_path_shares_one_handle_while_it_is_fresh() {
        let mut c = AhCache::<u8, u32>::new();
        assert!(miss(c.lookup(&1, &F)).is_empty());
        let ins = c.insert(1, 100, &F);
        assert_eq!((ins.slot, ins.evicted), (Some(0), None));
        match c.lookup(&1, &at(1_050)) {
            Lookup::Hit { slot, ah } => assert_eq!((slot, ah), (0, 100)),
            Lookup::Miss { .. } => panic!("fresh handle missed"),
        }
        // Another path gets its own.
        assert!(miss(c.lookup(&2, &F)).is_empty());
        // Both sends done while fresh: the handle stays.
        assert_eq!(c.put(0, &at(1_060)), None);
        assert_eq!(c.put(0, &at(1_060)), None);
        // Past its time, the next miss retires it for the next send done.
        assert!(miss(c.lookup(&1, &at(1_100))).is_empty());
        let mut retired = c.take_retired().into_iter();
        assert_eq!((retired.next(), retired.next()), (Some(100), None));
    }

    #[test]
    fn a_network_change_or_age_zero_ends_sharing() {
        let mut c = AhCache::<u8, u32>::new();
        c.insert(1, 100, &F);
        let moved = Freshness { generation: 8, ..F };
        // Held by its send: not given back, not shared.
        assert!(miss(c.lookup(&1, &moved)).is_empty());
        // Its last send gives it back at once.
        assert_eq!(c.put(0, &moved), Some(100));
        let alone = Freshness { max_age_ms: 0, ..F };
        assert_eq!(
            c.insert(1, 101, &alone),
            Inserted {
                slot: None,
                evicted: None
            }
        );
        assert!(miss(c.lookup(&1, &alone)).is_empty());
    }

    #[test]
    fn a_full_cache_takes_over_the_longest_idle_else_leaves_the_send_alone() {
        let mut c = AhCache::<u8, u32>::new();
        for k in 0..AH_SLOTS as u8 {
            let ins = c.insert(k, u32::from(k), &at(1_000 + u64::from(k)));
            assert_eq!(ins.slot, Some(usize::from(k)));
        }
        // All held: a new path's handle is the send's own.
        assert_eq!(c.insert(99, 99, &F).slot, None);
        // Slots 3 and 5 idle; 3 was used longest ago.
        c.put(5, &F);
        c.put(3, &F);
        let ins = c.insert(99, 99, &F);
        assert_eq!((ins.slot, ins.evicted), (Some(3), None));
        let (gone, retired, held) = c.clear();
        assert_eq!((gone.len(), retired.len()), (AH_SLOTS, 1));
        assert!(held);
        assert_eq!(c.put(3, &F), None);
        assert!(!c.clear().2);
    }

    #[test]
    fn a_handle_out_of_its_slot_waits_for_the_next_send_done() {
        let mut c = AhCache::<u8, u32>::new();
        for k in 0..AH_SLOTS as u8 {
            c.insert(k, u32::from(k), &F);
            c.put(usize::from(k), &F);
        }
        // Taken over: retired, not handed to the new path's send.
        let ins = c.insert(99, 99, &F);
        assert_eq!((ins.slot, ins.evicted), (Some(0), None));
        assert_eq!(c.put(0, &F), None);
        // Past their time: retired too, up to the room there is.
        let later = at(F.now_ms + F.max_age_ms);
        let stale = miss(c.lookup(&98, &later));
        // Slots 1 to 15 (and 0 again) go stale; the retired have room
        // for 15 beside handle 0: the last one comes back.
        let mut stale = stale.into_iter();
        assert_eq!((stale.next(), stale.next()), (Some(15), None));
        let retired = c.take_retired();
        assert_eq!(retired.len(), AH_SLOTS);
        assert!(retired.into_iter().any(|ah| ah == 0));
        assert!(c.take_retired().is_empty());
    }
}
