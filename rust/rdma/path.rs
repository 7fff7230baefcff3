// SPDX-License-Identifier: GPL-2.0

//! Path records (`struct sa_path_rec`) as consumers hand them over.

use crate::bindings;

/// The (source, destination) LIDs of a path record (0 on RoCE, where the
/// record has none).
pub(crate) fn lids(rec: &bindings::sa_path_rec) -> (u16, u16) {
    let (mut slid, mut dlid) = (0u16, 0u16);
    // SAFETY: `rec` is a valid record for the call; the outputs are ours.
    unsafe { bindings::rcm_h_path_lids(rec, &mut slid, &mut dlid) };
    (slid, dlid)
}
