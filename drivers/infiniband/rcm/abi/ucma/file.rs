// SPDX-License-Identifier: GPL-2.0

//! The device's file operations (through `rdma::ucma_dev`): open,
//! release, write (one command per call) and the event test behind poll
//! and GET_EVENT.

use super::context::UcmaHost;
use super::{errno, UcmaAbi};
use crate::abi::service::with_service;
use crate::proto::ucma::command::{parse, Command};
use crate::proto::ucma::layout::input::{ACCEPT, HEADER};
use crate::proto::ucma::{FileId, Header};
use crate::rdma::ucma_dev::{UcmaFile, UcmaFileOps};
use kernel::error::code;
use kernel::prelude::*;
use kernel::uaccess::{UserPtr, UserSlice};

/// The largest command input (ACCEPT's).
const MAX_INPUT: usize = ACCEPT;

impl UcmaAbi {
    fn file_id(f: &UcmaFile) -> FileId {
        FileId(f.token())
    }

    /// One `write()`: the frame, the command's input, the command.
    fn write(&self, s: &UcmaHost<'_>, f: &UcmaFile, buf: UserPtr, len: usize) -> Result<usize> {
        if let Some(e) = Header::too_short(len) {
            return Err(errno(e));
        }
        let mut frame = [0u8; HEADER + MAX_INPUT];
        // One copy of what the write holds (librdmacm writes the frame and
        // the struct, no more). A fault there may lie past what the
        // in-tree module reads: the frame is then read its way, header
        // first, then the struct whatever `in` says.
        let at_once = len.min(frame.len());
        let whole = frame.get_mut(..at_once).ok_or(code::EINVAL)?;
        let read = if UserSlice::new(buf, at_once)
            .reader()
            .read_slice(whole)
            .is_ok()
        {
            at_once
        } else {
            let head = frame.get_mut(..HEADER).ok_or(code::EINVAL)?;
            UserSlice::new(buf, HEADER).reader().read_slice(head)?;
            HEADER
        };
        let raw: [u8; HEADER] = frame
            .get(..HEADER)
            .and_then(|h| h.try_into().ok())
            .ok_or(code::EINVAL)?;
        let header = Header::parse(len, &raw).map_err(errno)?;
        let end = HEADER + header.op.input_len(&header).map_err(errno)?;
        if end > read {
            // As the in-tree handlers do: the struct is read whatever `in`
            // says, and a short buffer faults.
            let rest = frame.get_mut(read..end).ok_or(code::EINVAL)?;
            UserSlice::new(buf.wrapping_add(read), rest.len())
                .reader()
                .read_slice(rest)?;
        }
        let body = frame.get(HEADER..end).ok_or(code::EINVAL)?;
        let cmd = parse(&header, body).map_err(errno)?;
        self.execute(s, f, &header, cmd)?;
        Ok(len)
    }

    /// Runs one command. Its handler keeps a frame of its own (they are
    /// `#[inline(never)]`): inlined into this one match, they made a
    /// 2.2 KiB frame on every command's path (`scripts/check-stack.py`).
    fn execute(&self, s: &UcmaHost<'_>, f: &UcmaFile, header: &Header, cmd: Command) -> Result {
        let file = Self::file_id(f);
        let out_len = u32::from(header.out_len);
        match cmd {
            Command::CreateId {
                uid,
                response,
                port_space,
                qp_type,
            } => self.create_id(s, file, uid, response, port_space, qp_type),
            Command::DestroyId { response, id } => self.destroy_id(s, file, id, response),
            Command::Bind { id, addr } => self.bind(s, file, id, addr),
            Command::ResolveAddr {
                id,
                src,
                dst,
                timeout_ms,
            } => self.resolve_addr(s, file, id, src, dst, timeout_ms),
            Command::ResolveRoute { id, timeout_ms } => self.resolve_route(s, file, id, timeout_ms),
            Command::QueryRoute { response, id } => {
                self.query_route(s, file, id, out_len, response)
            }
            Command::Query { response, id, kind } => {
                self.query(s, file, id, kind, out_len, response)
            }
            Command::Connect { id, param, ece } => self.connect(s, file, id, &param, ece),
            Command::Listen { id, backlog } => self.listen(s, file, id, backlog),
            Command::Accept {
                uid,
                id,
                param,
                ece,
            } => self.accept(s, file, id, uid, param.as_ref(), ece),
            Command::Reject {
                id,
                reason,
                private_data,
            } => self.reject(s, file, id, reason, private_data.as_slice()),
            Command::Disconnect { id } => self.disconnect(s, file, id),
            Command::InitQpAttr {
                response,
                id,
                qp_state,
            } => self.init_qp_attr(s, file, id, qp_state, response),
            Command::GetEvent { response } => self.get_event(f, file, out_len, response),
            Command::SetOption(opt) => self.set_option(s, file, &opt),
            Command::Notify { id, event } => self.notify(s, file, id, event),
            Command::Join {
                response,
                uid,
                id,
                addr,
                mode,
            } => self.join(s, file, id, uid, addr, mode, response),
            Command::Leave {
                response,
                membership,
            } => self.leave(s, file, membership, response),
            Command::MigrateId { response, id, fd } => self.migrate_id(file, id, fd, response),
        }
    }
}

/// The device's files as this surface serves them (registered by the
/// module's root through `rdma::ucma_dev::UcmaDevice`).
pub(crate) struct UcmaFiles;

/// Runs `op` on the service's surface, or answers `None` while the module
/// is going.
fn with_surface<R>(op: impl FnOnce(&UcmaHost<'_>, &UcmaAbi) -> R) -> Option<R> {
    with_service(|cm| {
        let host = UcmaHost {
            cm: &cm,
            rdma_cm: cm.part()?,
        };
        Some(op(&host, cm.part()?))
    })
    .flatten()
}

impl UcmaFileOps for UcmaFiles {
    fn open(file: &UcmaFile) -> Result {
        let id = with_surface(|_, ucma| ucma.open(file)).ok_or(code::ENODEV)??;
        file.set_token(id.0);
        Ok(())
    }

    fn release(file: &UcmaFile) {
        with_surface(|s, ucma| ucma.close(s, UcmaAbi::file_id(file)));
    }

    fn write(file: &UcmaFile, buf: UserPtr, len: usize) -> Result<usize> {
        with_surface(|s, ucma| ucma.write(s, file, buf, len)).unwrap_or(Err(code::ENODEV))
    }

    fn has_event(file: &UcmaFile) -> bool {
        with_surface(|_, ucma| ucma.has_event(UcmaAbi::file_id(file))).unwrap_or(false)
    }
}
