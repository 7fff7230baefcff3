// SPDX-License-Identifier: GPL-2.0

//! What userspace asks of an id: QUERY_ROUTE, QUERY (ADDR, PATH, GID) and
//! INIT_QP_ATTR. Addresses come from the core; device, route and QP
//! attributes from the id's C fields, in ib_core's user layouts.

use super::context::copy_out;
use super::context::UcmaHost;
use super::UcmaAbi;
use crate::abi::rdma_cm::id::RdmaIdBox;
use crate::abi::rdma_cm::types::port_space;
use crate::bindings;
use crate::proto::rdma_cm::PortSpace;
use crate::proto::ucma::command::QueryKind;
use crate::proto::ucma::layout::response;
use crate::proto::ucma::query::IdFacts;
use crate::proto::ucma::FileId;
use kernel::error::code;
use kernel::prelude::*;

/// The first bytes of a plain C value.
fn bytes_of<T>(v: &T, len: usize) -> &[u8] {
    let len = len.min(core::mem::size_of::<T>());
    // SAFETY: `v` is a live value of at least `len` bytes; the bindings'
    // structs are plain data, read as bytes.
    unsafe { core::slice::from_raw_parts((v as *const T).cast::<u8>(), len) }
}

impl UcmaAbi {
    /// QUERY_ROUTE: as much of the answer as userspace has room for.
    #[inline(never)]
    pub(super) fn query_route(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        out_len: u32,
        response: u64,
    ) -> Result {
        let b = self.id(s, file, ctx)?;
        let resp = b.user_route();
        copy_out(response, bytes_of(&resp, out_len as usize))
    }

    /// QUERY.
    #[inline(never)]
    pub(super) fn query(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        kind: QueryKind,
        out_len: u32,
        response: u64,
    ) -> Result {
        let b = self.id(s, file, ctx)?;
        let out_len = out_len as usize;
        match kind {
            QueryKind::Addr | QueryKind::Gid => {
                if out_len < response::QUERY_ADDR_MIN {
                    return Err(code::ENOSPC);
                }
                let facts = facts(&b, kind == QueryKind::Gid);
                let answer = if kind == QueryKind::Addr {
                    facts.write_addr()
                } else {
                    facts.write_gid()
                };
                copy_out(response, &answer[..out_len.min(answer.len())])
            }
            QueryKind::Path => query_path(&b, out_len, response),
            QueryKind::Unknown => Err(super::enosys()),
        }
    }

    /// INIT_QP_ATTR: rdma_cm's attributes for the state asked for, in the
    /// uverbs layout.
    #[inline(never)]
    pub(super) fn init_qp_attr(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        qp_state: u8,
        response: u64,
    ) -> Result {
        let b = self.id(s, file, ctx)?;
        let (device, _) = b.device_port();
        if device.is_null() {
            return Err(code::EINVAL);
        }
        let mut attr = bindings::ib_qp_attr {
            qp_state: u32::from(qp_state),
            ..Default::default()
        };
        let mask = s
            .rdma_cm
            .qp_attrs(s, &b, &mut attr)
            .map_err(Error::from_errno)?;
        let mut resp = bindings::ib_uverbs_qp_attr::default();
        // SAFETY: the id's device lives while the id does; both structs are
        // ours.
        unsafe { bindings::ib_copy_qp_attr_to_user(device, &mut resp, &mut attr) };
        resp.qp_attr_mask = mask;
        copy_out(response, bytes_of(&resp, response::QP_ATTR))
    }
}

/// QUERY(PATH): the header, then the path records that fit.
fn query_path(b: &RdmaIdBox, out_len: usize, response: u64) -> Result {
    if out_len < response::QUERY_PATH_HEADER {
        return Err(code::ENOSPC);
    }
    let room = (out_len - response::QUERY_PATH_HEADER) / response::PATH_REC_DATA;
    // An id has two paths at most.
    let mut recs = [bindings::ib_path_rec_data::default(); 2];
    let (n, total) = b.user_paths(&mut recs[..room.min(2)]);
    let mut out = [0u8; response::QUERY_PATH_HEADER + 2 * response::PATH_REC_DATA];
    out[..4].copy_from_slice(&total.to_ne_bytes());
    let mut len = response::QUERY_PATH_HEADER;
    for r in recs.iter().take(n) {
        let end = len + response::PATH_REC_DATA;
        out[len..end].copy_from_slice(bytes_of(r, response::PATH_REC_DATA));
        len = end;
    }
    copy_out(response, &out[..len])
}

/// What the core and the id's C fields say about it; its GIDs (zero
/// otherwise) only `with_gids`, as only QUERY(GID) reports them.
fn facts(b: &RdmaIdBox, with_gids: bool) -> IdFacts {
    // Fixed at creation: read from the id, not under the core's lock.
    let port_space = port_space(b.port_space()).unwrap_or(PortSpace::Tcp);
    // What the in-tree rdma_ucm reports: the id's own fields (a refused
    // bind leaves the address it asked for there, as in 6.12).
    let (src, dst) = b.addrs();
    let (sgid, dgid) = if with_gids { b.gids() } else { (None, None) };
    let (sgid, dgid) = (sgid.unwrap_or_default(), dgid.unwrap_or_default());
    IdFacts {
        src,
        dst,
        device: b.bound_device(),
        port_space,
        sgid,
        dgid,
    }
}

const _: () = assert!(core::mem::size_of::<bindings::ib_uverbs_qp_attr>() == response::QP_ATTR);
const _: () =
    assert!(core::mem::size_of::<bindings::ib_path_rec_data>() == response::PATH_REC_DATA);
const _: () =
    assert!(core::mem::size_of::<bindings::rdma_ucm_query_route_resp>() == response::QUERY_ROUTE);
