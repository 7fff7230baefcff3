// SPDX-License-Identifier: GPL-2.0

//! rcm's watch on the network for rdma_cm, as 6.12's cma.c watches it:
//! neighbour updates (a RoCE id's destination moved to another hardware
//! address) and bonding failovers (the netdev an id is bound to changed its
//! own). The notifiers post each change to the core's bounded, coalescing
//! queue ([`PendingNetChanges`]); a work item of the watch's own hands them
//! to the [`NetChangeHandler`] in the order they came, never from the
//! notifiers (atomic context, or under RTNL).

use crate::bindings;
use crate::proto::rdma_cm::net_changes::{
    NetChange as Change, NetChangeKind, PendingNetChanges, Posted, PENDING_NET_CHANGES,
};
use crate::proto::rdma_cm::sockaddr::{self, AF_INET, AF_INET6};
use crate::proto::rdma_cm::SockAddr;
use crate::rdma::sync::IrqSpinLock;
use crate::rdma::timer::{now_ms, Work, WorkCpu, WorkHandler};
use core::ffi::c_void;
use core::marker::PhantomData;
use core::ptr::addr_of;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::error::to_result;
use kernel::ffi::{c_int, c_ulong};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

/// A change handed to the handler: where it happened and the new hardware
/// address.
pub(crate) struct NetChange(Change);

impl NetChange {
    /// Whether the hardware address `mine` of an id whose device address
    /// is `dev_addr` is on the changed interface and differs from the new
    /// one.
    ///
    /// # Safety
    ///
    /// `dev_addr` points to a live `rdma_dev_addr` and `mine` into it.
    unsafe fn differs(
        &self,
        dev_addr: *const bindings::rdma_dev_addr,
        mine: *const [u8; bindings::MAX_ADDR_LEN as usize],
    ) -> bool {
        // SAFETY: per this function's contract. An id still resolving may
        // be writing its device address: each word is read once and at
        // worst the comparison is stale (6.12 reads it the same way).
        let (ifindex, net, mine) = unsafe {
            (
                addr_of!((*dev_addr).bound_dev_if).read_volatile(),
                addr_of!((*dev_addr).net).read_volatile(),
                mine.read_volatile(),
            )
        };
        let new = self.0.hardware_address();
        ifindex == self.0.ifindex && net as usize == self.0.net && mine[..new.len()] != *new
    }

    /// Whether the id's resolved route leaves through the changed
    /// interface to a hardware address other than the new one.
    ///
    /// # Safety
    ///
    /// `id` is a live rdma_cm id.
    pub(crate) unsafe fn changes_destination_of(
        &self,
        id: *const bindings::rdma_id_private,
    ) -> bool {
        // SAFETY: per this function's contract; the address is the id's.
        unsafe {
            let da = addr_of!((*id).id.route.addr.dev_addr);
            self.differs(da, addr_of!((*da).dst_dev_addr))
        }
    }

    /// Whether the id is bound to the changed interface with a hardware
    /// address other than the new one.
    ///
    /// # Safety
    ///
    /// `id` is a live rdma_cm id.
    pub(crate) unsafe fn changes_source_of(&self, id: *const bindings::rdma_id_private) -> bool {
        // SAFETY: as in `changes_destination_of`.
        unsafe {
            let da = addr_of!((*id).id.route.addr.dev_addr);
            self.differs(da, addr_of!((*da).src_dev_addr))
        }
    }
}

/// What rdma_cm does with a network change (the watch's work item).
pub(crate) trait NetChangeHandler: 'static {
    /// The neighbour entry of `ip` was updated.
    fn neighbour_updated(ip: SockAddr, change: &NetChange);
    /// A bond failed over to another hardware address.
    fn failed_over(change: &NetChange);
}

/// Network changes seen so far (neighbour updates and netdev events).
static GENERATION: AtomicU32 = AtomicU32::new(0);

/// How many network changes (neighbour updates, netdev events) were seen
/// so far: a reply path worked out while it had another value may be
/// stale.
pub(crate) fn generation() -> u32 {
    GENERATION.load(Ordering::Relaxed)
}

/// The changes waiting for the work item, and the handler it calls.
#[pin_data]
struct Drain<H> {
    #[pin]
    pending: IrqSpinLock<PendingNetChanges<KVec<Option<Change>>>>,
    _handler: PhantomData<fn() -> H>,
}

impl<H: NetChangeHandler> WorkHandler for Drain<H> {
    fn run(&self) {
        loop {
            let Some(change) = self.pending.lock().take() else {
                break;
            };
            let change = NetChange(change);
            match change.0.kind {
                NetChangeKind::Neighbour(ip) => H::neighbour_updated(ip, &change),
                NetChangeKind::Failover => H::failed_over(&change),
            }
            crate::rdma::sync::yield_between_batches();
        }
        let dropped = self.pending.lock().take_dropped();
        if dropped != 0 && warning_due() {
            pr_warn!(
                "{} network change(s) dropped: more than {} neighbours changed at once\n",
                dropped,
                PENDING_NET_CHANGES
            );
        }
    }
}

/// When the last warning of dropped changes was printed (ms).
static LAST_DROP_WARNING: AtomicU64 = AtomicU64::new(0);

/// Whether a warning of dropped changes may be printed now: one in
/// [`DROP_WARNING_INTERVAL_MS`] (a flood of neighbour updates must not
/// flood the log too).
fn warning_due() -> bool {
    let now = now_ms();
    let last = LAST_DROP_WARNING.load(Ordering::Relaxed);
    (last == 0 || now.saturating_sub(last) >= DROP_WARNING_INTERVAL_MS)
        && LAST_DROP_WARNING
            .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

/// How often dropped changes may be reported (as `pr_warn_ratelimited`).
const DROP_WARNING_INTERVAL_MS: u64 = 5000;

/// The notifiers and the work that drains what they post.
#[pin_data]
struct Watcher<H: NetChangeHandler> {
    #[pin]
    neighbour_nb: Opaque<bindings::notifier_block>,
    #[pin]
    netdev_nb: Opaque<bindings::notifier_block>,
    drain: Arc<Drain<H>>,
    work: Work<Drain<H>>,
}

// SAFETY: the notifier blocks are written by the notifier chains (under
// their own locks) while registered, never through `&Watcher`; the rest
// is `Send` and `Sync`.
unsafe impl<H: NetChangeHandler> Send for Watcher<H> {}
// SAFETY: as above.
unsafe impl<H: NetChangeHandler> Sync for Watcher<H> {}

impl<H: NetChangeHandler> Watcher<H> {
    /// Posts `change` for the work item (any context).
    fn post(&self, change: Change) {
        if self.drain.pending.lock().post(change) != Posted::Dropped {
            self.work.queue();
        }
    }
}

/// A notifier block calling `call`.
fn notifier(
    call: unsafe extern "C" fn(*mut bindings::notifier_block, c_ulong, *mut c_void) -> c_int,
) -> Opaque<bindings::notifier_block> {
    Opaque::new(bindings::notifier_block {
        notifier_call: Some(call),
        ..Default::default()
    })
}

/// The notifiers, registered for as long as this value lives, their
/// changes handed to `H`.
///
/// INVARIANT: both of the watcher's notifier blocks are registered.
pub(crate) struct NetWatch<H: NetChangeHandler> {
    watcher: Pin<KBox<Watcher<H>>>,
}

impl<H: NetChangeHandler> NetWatch<H> {
    /// Registers the notifiers (once: module init).
    pub(crate) fn start() -> Result<Self> {
        let mut slots = KVec::with_capacity(PENDING_NET_CHANGES, GFP_KERNEL)?;
        for _ in 0..PENDING_NET_CHANGES {
            slots.push(None, GFP_KERNEL)?;
        }
        let drain = Arc::pin_init(
            pin_init!(Drain {
                pending <- IrqSpinLock::new(
                    PendingNetChanges::new(slots),
                    kernel::c_str!("rcm::net_changes"),
                    kernel::static_lock_class!(),
                ),
                _handler: PhantomData,
            }),
            GFP_KERNEL,
        )?;
        let work = Work::new(kernel::c_str!("rcm_net"), drain.clone(), WorkCpu::Queuing)?;
        let watcher = KBox::pin_init(
            pin_init!(Watcher {
                neighbour_nb: notifier(neighbour_call::<H>),
                netdev_nb: notifier(netdev_call::<H>),
                drain,
                work,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: the block is pinned and stays registered until `drop`
        // (or the error below) unregisters it.
        to_result(unsafe { bindings::register_netevent_notifier(watcher.neighbour_nb.get()) })?;
        // SAFETY: as above.
        if let Err(e) =
            to_result(unsafe { bindings::register_netdevice_notifier(watcher.netdev_nb.get()) })
        {
            // SAFETY: registered just above.
            unsafe { bindings::unregister_netevent_notifier(watcher.neighbour_nb.get()) };
            return Err(e);
        }
        // INVARIANT: both registered.
        Ok(NetWatch { watcher })
    }
}

impl<H: NetChangeHandler> Drop for NetWatch<H> {
    fn drop(&mut self) {
        // SAFETY: both are registered (type invariant); each call returns
        // once its notifier runs nowhere, before the watcher (and its
        // work, which waits for a running drain) is freed.
        unsafe {
            bindings::unregister_netdevice_notifier(self.watcher.netdev_nb.get());
            bindings::unregister_netevent_notifier(self.watcher.neighbour_nb.get());
        }
    }
}

/// The neighbour update notifier (atomic context).
///
/// # Safety
///
/// Called by the netevent chain with a block of a live watcher and, for
/// `NETEVENT_NEIGH_UPDATE`, a live neighbour entry.
unsafe extern "C" fn neighbour_call<H: NetChangeHandler>(
    nb: *mut bindings::notifier_block,
    event: c_ulong,
    ptr: *mut c_void,
) -> c_int {
    let done = bindings::NOTIFY_DONE as c_int;
    if event != bindings::netevent_notif_type_NETEVENT_NEIGH_UPDATE as c_ulong {
        return done;
    }
    let n = ptr.cast::<bindings::neighbour>();
    // SAFETY: a live entry (this function's contract).
    let dev = unsafe { (*n).dev };
    if dev.is_null() {
        return done;
    }
    GENERATION.fetch_add(1, Ordering::Relaxed);
    // SAFETY: a live entry of a live table.
    let family = unsafe { (*(*n).tbl).family } as u16;
    let key_len = match family {
        AF_INET => 4,
        AF_INET6 => 16,
        _ => return done,
    };
    // SAFETY: a live entry on a live device; an IP neighbour's key is its
    // address (`key_len` bytes), and its hardware address is as long as
    // its device's.
    let (ip, net, ifindex, ha) = unsafe {
        let key = core::slice::from_raw_parts((*n).primary_key.as_ptr(), key_len);
        let Some(ip) = sockaddr::from_ip(family, key) else {
            return done;
        };
        let ha_len = usize::from((*dev).addr_len).min((*n).ha.len());
        (ip, device_net(dev), (*dev).ifindex, &(&(*n).ha)[..ha_len])
    };
    let change = Change::new(net, ifindex, NetChangeKind::Neighbour(ip), ha);
    // SAFETY: `nb` is a watcher's `neighbour_nb` (this function's
    // contract); an `Opaque` has its contents' address.
    let watcher = unsafe { &*kernel::container_of!(nb, Watcher<H>, neighbour_nb) };
    watcher.post(change);
    done
}

/// The netdev notifier (RTNL held).
///
/// # Safety
///
/// Called by the netdevice chain with a block of a live watcher and its
/// `netdev_notifier_info`.
unsafe extern "C" fn netdev_call<H: NetChangeHandler>(
    nb: *mut bindings::notifier_block,
    event: c_ulong,
    ptr: *mut c_void,
) -> c_int {
    let done = bindings::NOTIFY_DONE as c_int;
    GENERATION.fetch_add(1, Ordering::Relaxed);
    if event != bindings::netdev_cmd_NETDEV_BONDING_FAILOVER as c_ulong {
        return done;
    }
    // SAFETY: the chain's info names a live device (this function's
    // contract).
    let dev = unsafe { bindings::rcm_h_netdev_notifier_dev(ptr) };
    // SAFETY: a live device.
    if dev.is_null() || !unsafe { bindings::rcm_h_netif_is_bond_master(dev) } {
        return done;
    }
    // SAFETY: a live device: its hardware address is `addr_len` bytes (at
    // most MAX_ADDR_LEN).
    let (net, ifindex, ha) = unsafe {
        let len = usize::from((*dev).addr_len).min(bindings::MAX_ADDR_LEN as usize);
        let ha = (*dev).dev_addr;
        let ha = if ha.is_null() {
            &[][..]
        } else {
            core::slice::from_raw_parts(ha, len)
        };
        (device_net(dev), (*dev).ifindex, ha)
    };
    let change = Change::new(net, ifindex, NetChangeKind::Failover, ha);
    // SAFETY: `nb` is a watcher's `netdev_nb` (this function's contract).
    let watcher = unsafe { &*kernel::container_of!(nb, Watcher<H>, netdev_nb) };
    watcher.post(change);
    done
}

/// The identity of `dev`'s namespace, for comparison only.
///
/// # Safety
///
/// `dev` is a live network device.
unsafe fn device_net(dev: *mut bindings::net_device) -> usize {
    // SAFETY: per this function's contract.
    unsafe { bindings::rcm_h_dev_net(dev) as usize }
}
