// SPDX-License-Identifier: GPL-2.0

//! The device's file operations (called by `rcm_ucma_helpers.c`): open,
//! release, write (one command per call) and the event test behind poll
//! and GET_EVENT.

use super::{errno, UcmaAbi};
use crate::abi::service::{with_service, Service};
use crate::bindings;
use crate::proto::ucma::command::{parse, Command};
use crate::proto::ucma::layout::input::{ACCEPT, HEADER};
use crate::proto::ucma::{FileId, Header};
use crate::rdma::ucma_dev::UcmaFile;
use kernel::error::code;
use kernel::ffi::c_int;
use kernel::prelude::*;
use kernel::uaccess::{UserPtr, UserSlice};

/// The largest command input (ACCEPT's).
const MAX_INPUT: usize = ACCEPT;

impl UcmaAbi {
    fn file_id(f: &UcmaFile) -> FileId {
        FileId(f.token())
    }

    /// One `write()`: the frame, the command's input, the command.
    fn write(&self, s: &Service, f: &UcmaFile, buf: UserPtr, len: usize) -> Result<usize> {
        if let Some(e) = Header::too_short(len) {
            return Err(errno(e));
        }
        let mut raw = [0u8; HEADER];
        UserSlice::new(buf, HEADER).reader().read_slice(&mut raw)?;
        let header = Header::parse(len, &raw).map_err(errno)?;
        let want = header.op.input_len(&header).map_err(errno)?;
        let mut body = [0u8; MAX_INPUT];
        let body = body.get_mut(..want).ok_or(code::EINVAL)?;
        // As the in-tree handlers do: the struct is read whatever `in`
        // says, and a short buffer faults.
        UserSlice::new(buf.wrapping_add(HEADER), want)
            .reader()
            .read_slice(body)?;
        let cmd = parse(&header, body).map_err(errno)?;
        self.execute(s, f, &header, cmd)?;
        Ok(len)
    }

    /// Runs one command. Its handler keeps a frame of its own (they are
    /// `#[inline(never)]`): inlined into this one match, they made a
    /// 2.2 KiB frame on every command's path (`scripts/check-stack.py`).
    fn execute(&self, s: &Service, f: &UcmaFile, header: &Header, cmd: Command) -> Result {
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

/// Runs `op` on the service and the file, or answers `None` while the
/// module is going.
fn with_file<R>(
    f: *mut bindings::rcm_ucma_file,
    op: impl FnOnce(&Service, &UcmaAbi, &UcmaFile) -> R,
) -> Option<R> {
    // SAFETY: the helper passes the file of the running file operation.
    let file = unsafe { UcmaFile::from_raw(f) };
    with_service(|s| op(&s, &s.consumer().ucma, &file))
}

/// `open`: names the file.
#[no_mangle]
pub(crate) extern "C" fn rcm_ucma_file_open(f: *mut bindings::rcm_ucma_file) -> c_int {
    with_file(f, |_, ucma, file| match ucma.open(f) {
        Ok(id) => {
            file.set_token(id.0);
            0
        }
        Err(e) => e.to_errno(),
    })
    .unwrap_or(code::ENODEV.to_errno())
}

/// `release`: every context of the file goes.
#[no_mangle]
pub(crate) extern "C" fn rcm_ucma_file_release(f: *mut bindings::rcm_ucma_file) {
    with_file(f, |s, ucma, file| ucma.close(s, UcmaAbi::file_id(file)));
}

/// `write`: one command; the bytes written or a negative errno.
#[no_mangle]
pub(crate) extern "C" fn rcm_ucma_file_write(
    f: *mut bindings::rcm_ucma_file,
    buf: *const kernel::ffi::c_char,
    len: usize,
) -> isize {
    let r = with_file(f, |s, ucma, file| ucma.write(s, file, buf as UserPtr, len))
        .unwrap_or(Err(code::ENODEV));
    match r {
        Ok(n) => isize::try_from(n).unwrap_or(isize::MAX),
        // A negative errno widens losslessly.
        Err(e) => e.to_errno() as isize,
    }
}

/// poll's and GET_EVENT's test.
#[no_mangle]
pub(crate) extern "C" fn rcm_ucma_file_has_event(f: *mut bindings::rcm_ucma_file) -> bool {
    with_file(f, |_, ucma, file| ucma.has_event(UcmaAbi::file_id(file))).unwrap_or(false)
}
