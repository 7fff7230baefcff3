// SPDX-License-Identifier: GPL-2.0

//! The `extern "C"` entry points of rdma_cm: each checks its pointers,
//! turns them into safe types and calls the surface; errors become
//! 6.12's errnos in `types`.

use super::connect::conn_params;
use super::id::{NewId, RdmaIdBox};
use super::resolve::{optional_sockaddr, timeout_ms};
use super::types::{port_space, read_sockaddr};
use super::RdmaCmAbi;
use crate::abi::service::with_part;
use crate::bindings;
use crate::proto::rdma_cm::{service_id_of, CmResponse};
use crate::shell::CmService;
use kernel::ffi::{c_char, c_int, c_ulong, c_void};
use kernel::prelude::*;

/// `ERR_PTR(-errno)`.
fn err_ptr<T>(errno: c_int) -> *mut T {
    errno as isize as *mut T
}

/// Runs `f` on the service and the box of the consumer's id `b`, held for
/// the call: `-EINVAL` for NULL, `-ENODEV` without a service.
pub(super) fn on_id(
    b: Option<&RdmaIdBox>,
    f: impl FnOnce(&CmService, &RdmaCmAbi, &RdmaIdBox) -> c_int,
) -> c_int {
    let Some(b) = b else {
        return EINVAL.to_errno();
    };
    with_part(|s, abi: &RdmaCmAbi| {
        // A reference for the call: a handler running meanwhile may
        // destroy the id (non-zero return) while the call still uses it.
        let Some(held) = abi.id_box(b.core) else {
            return EINVAL.to_errno();
        };
        f(s, abi, &held)
    })
    .unwrap_or(ENODEV.to_errno())
}

/// Creates an id for `n`: the consumer's pointer or `ERR_PTR`.
fn create(n: NewId) -> *mut bindings::rdma_cm_id {
    match with_part(|s, cm: &RdmaCmAbi| cm.create_id(s, &n)) {
        Some(Ok(b)) => b.as_id(),
        Some(Err(e)) => err_ptr(e),
        None => err_ptr(ENODEV.to_errno()),
    }
}

/// `__rdma_create_kernel_id` (behind the `rdma_create_id` macro).
///
/// # Safety
///
/// `net` must be a live namespace; `caller` a static string.
#[no_mangle]
pub(crate) unsafe extern "C" fn __rdma_create_kernel_id(
    net: *mut bindings::net,
    handler: bindings::rdma_cm_event_handler,
    context: *mut c_void,
    ps: bindings::rdma_ucm_port_space,
    qp_type: bindings::ib_qp_type,
    caller: *const c_char,
) -> *mut bindings::rdma_cm_id {
    create(NewId {
        net,
        handler,
        context,
        ps,
        qp_type,
        caller,
        parent: core::ptr::null(),
    })
}

/// `rdma_create_user_id`: an id in the caller's namespace, tracked under
/// the calling task.
#[no_mangle]
pub(crate) extern "C" fn rdma_create_user_id(
    handler: bindings::rdma_cm_event_handler,
    context: *mut c_void,
    ps: bindings::rdma_ucm_port_space,
    qp_type: bindings::ib_qp_type,
) -> *mut bindings::rdma_cm_id {
    create(NewId {
        // SAFETY: the caller's namespace lives during its call.
        net: unsafe { bindings::rcm_h_current_net() },
        handler,
        context,
        ps,
        qp_type,
        caller: core::ptr::null(),
        parent: core::ptr::null(),
    })
}

/// `rdma_destroy_id`: waits for the id's running handler; none runs
/// after.
///
/// # Safety
///
/// `id` must come from rcm and not be used after.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_destroy_id(id: *mut bindings::rdma_cm_id) {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.destroy_id(s, b);
        0
    });
}

/// `rdma_bind_addr`.
///
/// # Safety
///
/// `id` from rcm; `addr` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_bind_addr(
    id: *mut bindings::rdma_cm_id,
    addr: *mut bindings::sockaddr,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, addr) = unsafe { (RdmaIdBox::from_id_or_null(id), read_sockaddr(addr)) };
    match addr {
        Ok(addr) => on_id(b, |s, abi, b| abi.bind(s, b, addr)),
        Err(e) => e,
    }
}

/// `rdma_resolve_addr`.
///
/// # Safety
///
/// `id` from rcm; `src` NULL or valid; `dst` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_resolve_addr(
    id: *mut bindings::rdma_cm_id,
    src: *mut bindings::sockaddr,
    dst: *const bindings::sockaddr,
    timeout: c_ulong,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, src, dst) = unsafe {
        (
            RdmaIdBox::from_id_or_null(id),
            optional_sockaddr(src),
            read_sockaddr(dst),
        )
    };
    let (src, dst) = match (src, dst) {
        (Ok(src), Ok(dst)) => (src, dst),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    on_id(b, |s, abi, b| {
        abi.resolve_addr(s, b, src, dst, timeout_ms(timeout))
    })
}

/// `rdma_resolve_route`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_resolve_route(
    id: *mut bindings::rdma_cm_id,
    timeout: c_ulong,
) -> c_int {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.resolve_route(s, b, timeout_ms(timeout), false)
    })
}

/// `rdma_set_ib_path`.
///
/// # Safety
///
/// `id` from rcm; `rec` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_set_ib_path(
    id: *mut bindings::rdma_cm_id,
    rec: *mut bindings::sa_path_rec,
) -> c_int {
    // SAFETY: per this function's contract: NULL or valid.
    let (b, rec) = unsafe { (RdmaIdBox::from_id_or_null(id), rec.as_ref()) };
    let Some(rec) = rec else {
        return EINVAL.to_errno();
    };
    on_id(b, |s, abi, b| abi.set_ib_path(s, b, rec))
}

/// `rdma_create_qp`.
///
/// # Safety
///
/// `id` from rcm; `pd` and `init` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_create_qp(
    id: *mut bindings::rdma_cm_id,
    pd: *mut bindings::ib_pd,
    init: *mut bindings::ib_qp_init_attr,
) -> c_int {
    if pd.is_null() || init.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.create_qp(s, b, pd, init)
    })
}

/// `rdma_destroy_qp`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_destroy_qp(id: *mut bindings::rdma_cm_id) {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.destroy_qp(s, b);
        0
    });
}

/// `rdma_init_qp_attr`.
///
/// # Safety
///
/// `id` from rcm; `attr` and `mask` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_init_qp_attr(
    id: *mut bindings::rdma_cm_id,
    attr: *mut bindings::ib_qp_attr,
    mask: *mut c_int,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, attr, mask) = unsafe { (RdmaIdBox::from_id_or_null(id), attr.as_mut(), mask.as_mut()) };
    let (Some(attr), Some(mask)) = (attr, mask) else {
        return EINVAL.to_errno();
    };
    on_id(b, |s, abi, b| match abi.qp_attrs(s, b, attr) {
        Ok(m) => {
            *mask = m as c_int;
            0
        }
        Err(e) => e,
    })
}

/// `rdma_connect_locked`: from the id's handler (or with its handler
/// lock held).
///
/// # Safety
///
/// `id` from rcm; `param` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_connect_locked(
    id: *mut bindings::rdma_cm_id,
    param: *mut bindings::rdma_conn_param,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, p) = unsafe {
        (
            RdmaIdBox::from_id_or_null(id),
            param.as_ref().map(|_| conn_params(param)),
        )
    };
    let Some(p) = p else {
        return EINVAL.to_errno();
    };
    on_id(b, |s, abi, b| abi.connect(s, b, &p, None))
}

/// `rdma_connect`: takes the id's handler lock.
///
/// # Safety
///
/// `id` from rcm; `param` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_connect(
    id: *mut bindings::rdma_cm_id,
    param: *mut bindings::rdma_conn_param,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, p) = unsafe {
        (
            RdmaIdBox::from_id_or_null(id),
            param.as_ref().map(|_| conn_params(param)),
        )
    };
    let Some(p) = p else {
        return EINVAL.to_errno();
    };
    on_id(b, |s, abi, b| {
        b.lock_handler();
        let r = abi.connect(s, b, &p, None);
        b.unlock_handler();
        r
    })
}

/// Records the ECE a consumer offers in its REQ or REP (`-EINVAL` for
/// NULL).
///
/// # Safety
///
/// `id` from rcm; `ece` NULL or valid.
unsafe fn set_ece(id: *mut bindings::rdma_cm_id, ece: *const bindings::rdma_ucm_ece) -> c_int {
    // SAFETY: per this function's contract.
    let (b, ece) = unsafe { (RdmaIdBox::from_id_or_null(id), ece.as_ref()) };
    let Some(ece) = ece else {
        return EINVAL.to_errno();
    };
    on_id(b, |s, abi, b| {
        abi.set_ece(s, b, ece.vendor_id, ece.attr_mod)
    })
}

/// `rdma_connect_ece`: `rdma_connect` offering ECE.
///
/// # Safety
///
/// `id` from rcm; `param` and `ece` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_connect_ece(
    id: *mut bindings::rdma_cm_id,
    param: *mut bindings::rdma_conn_param,
    ece: *mut bindings::rdma_ucm_ece,
) -> c_int {
    // SAFETY: per this function's contract.
    unsafe {
        match set_ece(id, ece) {
            0 => rdma_connect(id, param),
            e => e,
        }
    }
}

/// `rdma_listen`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_listen(
    id: *mut bindings::rdma_cm_id,
    backlog: c_int,
) -> c_int {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.listen(s, b, backlog)
    })
}

/// `rdma_accept`: from the id's handler (or with its handler lock held).
///
/// # Safety
///
/// `id` from rcm; `param` NULL or valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_accept(
    id: *mut bindings::rdma_cm_id,
    param: *mut bindings::rdma_conn_param,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, p) = unsafe {
        (
            RdmaIdBox::from_id_or_null(id),
            param.as_ref().map(|_| conn_params(param)),
        )
    };
    on_id(b, |s, abi, b| abi.accept(s, b, p.as_ref(), None))
}

/// `rdma_accept_ece`: `rdma_accept` offering ECE.
///
/// # Safety
///
/// `id` from rcm; `param` NULL or valid; `ece` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_accept_ece(
    id: *mut bindings::rdma_cm_id,
    param: *mut bindings::rdma_conn_param,
    ece: *mut bindings::rdma_ucm_ece,
) -> c_int {
    // SAFETY: per this function's contract.
    unsafe {
        match set_ece(id, ece) {
            0 => rdma_accept(id, param),
            e => e,
        }
    }
}

/// `rdma_reject`.
///
/// # Safety
///
/// `id` from rcm; `data` valid for `len` bytes or NULL.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_reject(
    id: *mut bindings::rdma_cm_id,
    data: *const c_void,
    len: u8,
    reason: u8,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, data) = unsafe {
        let data = if data.is_null() || len == 0 {
            &[][..]
        } else {
            core::slice::from_raw_parts(data.cast::<u8>(), usize::from(len))
        };
        (RdmaIdBox::from_id_or_null(id), data)
    };
    on_id(b, |s, abi, b| abi.reject(s, b, data, reason))
}

/// `rdma_disconnect`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_disconnect(id: *mut bindings::rdma_cm_id) -> c_int {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.disconnect(s, b)
    })
}

/// `rdma_notify`: from any context, hard IRQ included (nvmet, srpt,
/// isert and RDS call it from QP event handlers), so it takes no sleeping
/// lock, not even the registry's: the caller's id is live for the call.
///
/// # Safety
///
/// `id` from rcm, not destroyed before the call returns.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_notify(
    id: *mut bindings::rdma_cm_id,
    event: bindings::ib_event_type,
) -> c_int {
    if id.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let b = unsafe { RdmaIdBox::from_id(id) };
    with_part(|s, cm: &RdmaCmAbi| cm.notify(s, b, event)).unwrap_or(ENODEV.to_errno())
}

/// `rdma_lock_handler`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_lock_handler(id: *mut bindings::rdma_cm_id) {
    // SAFETY: per this function's contract.
    unsafe { RdmaIdBox::from_id(id) }.lock_handler();
}

/// `rdma_unlock_handler`.
///
/// # Safety
///
/// `id` from rcm, its handler lock held by the caller.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_unlock_handler(id: *mut bindings::rdma_cm_id) {
    // SAFETY: per this function's contract.
    unsafe { RdmaIdBox::from_id(id) }.unlock_handler();
}

/// `rdma_set_service_type`: the type of service of the id's packets.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_set_service_type(id: *mut bindings::rdma_cm_id, tos: c_int) {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.set_tos(s, b, tos as u8)
    });
}

/// `rdma_set_reuseaddr`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_set_reuseaddr(
    id: *mut bindings::rdma_cm_id,
    reuse: c_int,
) -> c_int {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.set_reuseaddr(s, b, reuse != 0)
    })
}

/// `rdma_set_afonly`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_set_afonly(
    id: *mut bindings::rdma_cm_id,
    afonly: c_int,
) -> c_int {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.set_afonly(s, b, afonly != 0)
    })
}

/// `rdma_set_ack_timeout`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_set_ack_timeout(
    id: *mut bindings::rdma_cm_id,
    timeout: u8,
) -> c_int {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |_, abi, b| {
        abi.set_ack_timeout(b, timeout)
    })
}

/// `rcm_set_cm_response` (include/rdma/rcm_cm_response.h).
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rcm_set_cm_response(
    id: *mut bindings::rdma_cm_id,
    response_timeout: u8,
    max_cm_retries: u8,
) -> c_int {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |s, abi, b| {
        abi.set_cm_response(s, b, |_| CmResponse::new(response_timeout, max_cm_retries))
    })
}

/// `rdma_set_min_rnr_timer`.
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_set_min_rnr_timer(
    id: *mut bindings::rdma_cm_id,
    timer: u8,
) -> c_int {
    // SAFETY: per this function's contract.
    on_id(unsafe { RdmaIdBox::from_id_or_null(id) }, |_, abi, b| {
        abi.set_min_rnr_timer(b, timer)
    })
}

/// `rdma_get_service_id`: the service id an address names for the id's
/// port space (big-endian).
///
/// # Safety
///
/// `id` from rcm; `addr` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_get_service_id(
    id: *mut bindings::rdma_cm_id,
    addr: *mut bindings::sockaddr,
) -> u64 {
    // SAFETY: per this function's contract.
    let (addr, ps) = unsafe { (read_sockaddr(addr), (*id).ps) };
    let Ok(addr) = addr else {
        return 0;
    };
    port_space(ps).map_or(0, |ps| service_id_of(ps, &addr).to_be())
}

/// `rdma_iw_cm_id`: the iw_cm id of an iWARP id's connection (NULL for
/// other ids).
///
/// # Safety
///
/// `id` from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_iw_cm_id(
    id: *mut bindings::rdma_cm_id,
) -> *mut bindings::iw_cm_id {
    // SAFETY: per this function's contract.
    let b = unsafe { RdmaIdBox::from_id_or_null(id) };
    b.map_or(core::ptr::null_mut(), |b| b.iw_cm_id())
}

/// `rdma_res_to_id`: the id of a resource-tracking entry.
///
/// # Safety
///
/// `res` must be an rdma_cm id's entry.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_res_to_id(
    res: *mut bindings::rdma_restrack_entry,
) -> *mut bindings::rdma_cm_id {
    // SAFETY: per this function's contract.
    unsafe { bindings::rcm_h_rdma_res_to_id(res) }
}
