// SPDX-License-Identifier: GPL-2.0

//! The two indexes of connected ids by what the peer calls them: its comm
//! id (to spot a repeated REQ) and its QPN (to spot a stale connection),
//! each with the peer's CA GUID.
//!
//! Every REQ, REP and disconnect looks in both, so they are hash tables
//! whose chains run through the connections themselves: an entry costs
//! no memory of its own, inserting never allocates once the table has
//! buckets, and a lookup reads the bucket and the connections on its
//! chain (one, with at most one entry per bucket on average). The
//! buckets double, in place, when the entries outnumber them; if that
//! allocation fails the chains only get longer.
//!
//! The keys come from the wire, so the hash is keyed with a random seed of
//! the endpoint's that never leaves it: a peer cannot aim its comm ids or
//! QPNs at one bucket without knowing it.

use super::conn::Connection;
use super::store::{Collections, NoMemory, SlotVec};
use super::table::IdTable;
use super::CommId;

/// A peer's number (comm id or QPN) and CA GUID.
pub(crate) type RemoteKey = (u32, u64);

/// What a connected id is found by in the two indexes: the peer's comm
/// id and QPN, both under its CA GUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RemoteKeys {
    pub(crate) comm_id: u32,
    pub(crate) qpn: u32,
    pub(crate) ca_guid: u64,
}

impl RemoteKeys {
    /// The key in index `which`.
    pub(crate) fn key(&self, which: Remote) -> RemoteKey {
        match which {
            Remote::Id => (self.comm_id, self.ca_guid),
            Remote::Qpn => (self.qpn, self.ca_guid),
        }
    }
}

/// End of a chain: comm id 0, which the id table never issues (any other
/// number may be a live id).
pub(crate) const NO_ID: u32 = 0;

/// Buckets of a table's first allocation.
const FIRST_BUCKETS: usize = 64;

/// Which of the two indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Remote {
    /// By the peer's comm id.
    Id,
    /// By the peer's QPN.
    Qpn,
}

impl<A> Connection<A> {
    /// The id's key in index `which`, when it has an entry there.
    pub(crate) fn remote_key(&self, which: Remote) -> Option<RemoteKey> {
        self.remote_indexed.then(|| self.remote_keys().key(which))
    }

    /// The peer's keys, as recorded.
    pub(crate) fn remote_keys(&self) -> RemoteKeys {
        RemoteKeys {
            comm_id: self.remote_id,
            qpn: self.qp.remote_qpn,
            ca_guid: self.remote_ca_guid,
        }
    }

    /// Records the peer's keys.
    pub(crate) fn set_remote_keys(&mut self, keys: RemoteKeys) {
        self.remote_id = keys.comm_id;
        self.qp.remote_qpn = keys.qpn;
        self.remote_ca_guid = keys.ca_guid;
    }

    /// The next id on the id's chain in index `which`.
    fn next_on_chain(&self, which: Remote) -> u32 {
        match which {
            Remote::Id => self.remote_id_next,
            Remote::Qpn => self.remote_qpn_next,
        }
    }

    /// The link to the next id on the id's chain in index `which`.
    fn chain_next(&mut self, which: Remote) -> &mut u32 {
        match which {
            Remote::Id => &mut self.remote_id_next,
            Remote::Qpn => &mut self.remote_qpn_next,
        }
    }
}

/// One index.
///
/// INVARIANT: `buckets` is 0 or a power of two no larger than
/// `heads.len()`; each id whose [`Connection::remote_key`] is set is on
/// exactly one chain, that of its key's bucket, and `len` counts them;
/// `heads[i]` is [`NO_ID`] for every `i >= buckets`.
pub(crate) struct RemoteIndex<C: Collections> {
    which: Remote,
    heads: C::Vec<u32>,
    buckets: usize,
    len: usize,
    seed: u64,
}

impl<C: Collections> RemoteIndex<C> {
    pub(crate) fn new(which: Remote, seed: u64) -> Self {
        RemoteIndex {
            which,
            heads: SlotVec::new_empty(),
            buckets: 0,
            len: 0,
            seed,
        }
    }

    /// Entries in the index.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bucket of `key` among `buckets` (a power of two, not 0).
    fn bucket(&self, key: RemoteKey, buckets: usize) -> usize {
        let mut x = (u64::from(key.0) ^ key.1.rotate_left(29) ^ self.seed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 32;
        (x as usize) & (buckets - 1)
    }

    fn head(&self, bucket: usize) -> u32 {
        self.heads.get(bucket).copied().unwrap_or(NO_ID)
    }

    fn set_head(&mut self, bucket: usize, id: u32) {
        if let Some(head) = self.heads.get_mut(bucket) {
            *head = id;
        }
    }

    /// The id whose key is `key`.
    pub(crate) fn get<A>(
        &self,
        conns: &IdTable<Connection<A>, C>,
        key: RemoteKey,
    ) -> Option<CommId> {
        if self.buckets == 0 {
            return None;
        }
        let mut at = self.head(self.bucket(key, self.buckets));
        while let Some(conn) = conns.get(at) {
            if conn.remote_key(self.which) == Some(key) {
                return Some(conn.id);
            }
            at = conn.next_on_chain(self.which);
        }
        None
    }

    /// Puts `id`, whose key is set and not in the index, on its chain.
    /// Fails only while the index has no buckets and cannot get any.
    pub(crate) fn insert<A>(
        &mut self,
        conns: &mut IdTable<Connection<A>, C>,
        id: CommId,
    ) -> Result<(), NoMemory> {
        if self.len >= self.buckets {
            let grown = self.grow(conns);
            if self.buckets == 0 {
                return grown;
            }
        }
        let Some(conn) = conns.get_mut(id.0) else {
            return Ok(());
        };
        let Some(key) = conn.remote_key(self.which) else {
            return Ok(());
        };
        let bucket = self.bucket(key, self.buckets);
        *conn.chain_next(self.which) = self.head(bucket);
        self.set_head(bucket, id.0);
        self.len += 1;
        Ok(())
    }

    /// Takes `id`, whose key is still set, off its chain.
    pub(crate) fn remove<A>(&mut self, conns: &mut IdTable<Connection<A>, C>, id: CommId) {
        let which = self.which;
        let Some(key) = conns.get(id.0).and_then(|c| c.remote_key(which)) else {
            return;
        };
        if self.buckets == 0 {
            return;
        }
        let bucket = self.bucket(key, self.buckets);
        let next = conns
            .get_mut(id.0)
            .map_or(NO_ID, |c| core::mem::replace(c.chain_next(which), NO_ID));
        if self.head(bucket) == id.0 {
            self.set_head(bucket, next);
            self.len = self.len.saturating_sub(1);
            return;
        }
        let mut at = self.head(bucket);
        while let Some(conn) = conns.get_mut(at) {
            let link = conn.chain_next(which);
            if *link == id.0 {
                *link = next;
                self.len = self.len.saturating_sub(1);
                return;
            }
            at = *link;
        }
    }

    /// Doubles the buckets (or makes the first ones) and moves each entry
    /// to its bucket among them, in place: an entry of bucket `b` goes to
    /// `b` or to `b` plus the old count, which starts out empty.
    fn grow<A>(&mut self, conns: &mut IdTable<Connection<A>, C>) -> Result<(), NoMemory> {
        let old = self.buckets;
        let new = (old * 2).max(FIRST_BUCKETS);
        while self.heads.len() < new {
            self.heads.try_grow(|| NO_ID)?;
        }
        self.buckets = new;
        for bucket in 0..old {
            let mut at = self.head(bucket);
            self.set_head(bucket, NO_ID);
            while let Some(conn) = conns.get_mut(at) {
                let Some(key) = conn.remote_key(self.which) else {
                    break;
                };
                let to = self.bucket(key, new);
                let link = conn.chain_next(self.which);
                let next = core::mem::replace(link, self.head(to));
                self.set_head(to, at);
                at = next;
            }
        }
        Ok(())
    }
}
