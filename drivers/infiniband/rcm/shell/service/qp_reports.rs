// SPDX-License-Identifier: GPL-2.0

//! What a QP reports to the CM (`ib_cm_notify`, `rdma_notify`), from any
//! context: applied at once where the endpoint's lock can be had, else
//! (interrupt context, the lock busy) left to the call delivery work.

use super::{CmService, KernelEndpoint, QpReport};
use crate::proto::cm::{CmError, CommId};
use crate::shell::outbox::Outbox;
use crate::shell::trace;
use kernel::prelude::*;

impl CmService {
    /// What a QP saw, for `comm`'s connection, from any context (room
    /// taken with `GFP_ATOMIC`; the events are delivered later). Applied
    /// at once where the endpoint can be had, then `mirror` runs under the
    /// same hold. In interrupt context while the endpoint is busy (its
    /// holder may be what the interrupt stopped) the report is queued for
    /// the call delivery work and `Ok` returned: the state's answer is
    /// then not known, which 6.12's QP event handlers ignore (rdma_ucm's
    /// NOTIFY, which returns it, runs in a task).
    pub(crate) fn qp_reported(
        &self,
        comm: CommId,
        report: QpReport,
        mirror: impl FnOnce(&KernelEndpoint),
    ) -> Result<(), CmError> {
        let Ok(mut outbox) = Outbox::for_events(1, GFP_ATOMIC) else {
            return Err(CmError::NoMemory);
        };
        let Some(mut ep) = self.endpoint.lock_from_any_context() else {
            self.deferred_reports
                .lock()
                .push((comm, report), GFP_ATOMIC)
                .map_err(|_| CmError::NoMemory)?;
            if let Some(delivery) = self.delivery.lock().as_ref() {
                delivery.for_calls.queue();
            }
            return Ok(());
        };
        let r = report.apply(&mut ep, comm, &mut outbox);
        mirror(&ep);
        drop(ep);
        trace::state_changes(&outbox);
        self.queue_events(&mut outbox);
        r
    }

    /// Applies the QP reports interrupt context left (process context);
    /// their state errors go unreported, as for a deferred report.
    pub(super) fn apply_deferred_reports(&self) {
        let reports = self.deferred_reports.lock().take();
        for (comm, report) in reports.iter() {
            let _ = self.call(|ep, out| report.apply(ep, *comm, out));
        }
    }
}

impl QpReport {
    /// The report's input to the core (it sends nothing).
    fn apply(self, ep: &mut KernelEndpoint, comm: CommId, out: &mut Outbox) -> Result<(), CmError> {
        match self {
            QpReport::Established => ep.notify_established(comm, out),
            QpReport::PathMigrated => ep.notify_path_migrated(comm),
        }
    }
}
