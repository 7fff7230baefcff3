// SPDX-License-Identifier: GPL-2.0

//! SET_OPTION: the option a command names and its value, checked as
//! 6.12's `ucma_set_option_*` check them (levels ID and IB; GET_OPTION has
//! no handler).

use super::layout::response::PATH_REC_DATA;
use super::UcmaError;
use crate::rdma_cm::sockaddr::read_array;

/// The largest value the in-tree module copies in (`KMALLOC_MAX_SIZE` of
/// an x86_64 kernel with 4 KiB pages and `MAX_PAGE_ORDER` 10); the kernel
/// shell checks its build agrees.
pub const MAX_OPTION_LEN: u32 = 4 << 20;

/// `RDMA_OPTION_ID`.
const LEVEL_ID: u32 = 0;
/// `RDMA_OPTION_IB`.
const LEVEL_IB: u32 = 1;

/// `RDMA_OPTION_ID_*`.
const ID_TOS: u32 = 0;
const ID_REUSEADDR: u32 = 1;
const ID_AFONLY: u32 = 2;
const ID_ACK_TIMEOUT: u32 = 3;
/// `RDMA_OPTION_IB_PATH`.
const IB_PATH: u32 = 1;
// rcm's own options at level ID, one byte each
// (`include/uapi/rdma/rcm_user_cm.h`), far above 6.12's numbers (0-3) so
// that an option added upstream cannot take them. 6.12's rdma_ucm answers
// both with ENOSYS, so a program learns which CM it runs on.
/// The CM response timeout (an IBA time exponent) of the id's REQs and
/// SIDR_REQs (see [`crate::rdma_cm::CmResponse`]).
pub const RCM_ID_CM_RESPONSE_TIMEOUT: u32 = 0x100;
/// How often the id's REQs and SIDR_REQs are sent again.
pub const RCM_ID_MAX_CM_RETRIES: u32 = 0x101;

/// The flags of the path record rdma_cm takes from a list: a GMP path,
/// primary, bidirectional (`IB_PATH_GMP | IB_PATH_PRIMARY |
/// IB_PATH_BIDIRECTIONAL`).
const USABLE_PATH_FLAGS: u32 = 1 | (1 << 1) | (1 << 3) | (1 << 5);
/// The packed SA path record inside a `struct ib_path_rec_data`.
pub const PACKED_PATH_REC_SIZE: usize = 64;

/// A SET_OPTION command before its value is copied in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetOption {
    /// The id.
    pub id: u32,
    /// `RDMA_OPTION_ID` or `RDMA_OPTION_IB`.
    pub level: u32,
    /// The option within the level.
    pub optname: u32,
    /// Where the value is (a user pointer).
    pub optval: u64,
    /// The value's length.
    pub optlen: u32,
}

/// An option and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdOption {
    /// Type of service (`rdma_set_service_type`).
    Tos(u8),
    /// `rdma_set_reuseaddr`.
    ReuseAddr(bool),
    /// `rdma_set_afonly`.
    AfOnly(bool),
    /// `rdma_set_ack_timeout`.
    AckTimeout(u8),
    /// A path record for the route (`rdma_set_ib_path`): the packed SA
    /// record, as `ib_sa_unpack_path` takes it.
    IbPath([u8; PACKED_PATH_REC_SIZE]),
    /// rcm's CM response timeout of the id's requests (checked when set).
    CmResponseTimeout(u8),
    /// rcm's retry count of the id's requests (checked when set).
    MaxCmRetries(u8),
}

impl SetOption {
    /// Reads the option's value as copied in from userspace (`optlen`
    /// bytes): the option it sets, or the in-tree module's error.
    pub fn value(&self, value: &[u8]) -> Result<IdOption, UcmaError> {
        match (self.level, self.optname) {
            (LEVEL_ID, ID_TOS) => one_byte(value).map(IdOption::Tos),
            (LEVEL_ID, ID_REUSEADDR) => int_flag(value).map(IdOption::ReuseAddr),
            (LEVEL_ID, ID_AFONLY) => int_flag(value).map(IdOption::AfOnly),
            (LEVEL_ID, ID_ACK_TIMEOUT) => one_byte(value).map(IdOption::AckTimeout),
            (LEVEL_IB, IB_PATH) => usable_path(value).map(IdOption::IbPath),
            (LEVEL_ID, RCM_ID_CM_RESPONSE_TIMEOUT) => {
                one_byte(value).map(IdOption::CmResponseTimeout)
            }
            (LEVEL_ID, RCM_ID_MAX_CM_RETRIES) => one_byte(value).map(IdOption::MaxCmRetries),
            _ => Err(UcmaError::NotImplemented),
        }
    }
}

fn one_byte(value: &[u8]) -> Result<u8, UcmaError> {
    match value {
        [b] => Ok(*b),
        _ => Err(UcmaError::Invalid),
    }
}

fn int_flag(value: &[u8]) -> Result<bool, UcmaError> {
    let v: [u8; 4] = value.try_into().map_err(|_| UcmaError::Invalid)?;
    Ok(i32::from_ne_bytes(v) != 0)
}

/// The first usable record of a list of `struct ib_path_rec_data`.
fn usable_path(value: &[u8]) -> Result<[u8; PACKED_PATH_REC_SIZE], UcmaError> {
    if !value.len().is_multiple_of(PATH_REC_DATA) {
        return Err(UcmaError::Invalid);
    }
    value
        .chunks_exact(PATH_REC_DATA)
        .find(|rec| read_array(rec, 0).map(u32::from_ne_bytes) == Some(USABLE_PATH_FLAGS))
        .and_then(|rec| read_array(rec, PATH_REC_DATA - PACKED_PATH_REC_SIZE))
        .ok_or(UcmaError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(level: u32, optname: u32) -> SetOption {
        SetOption {
            id: 0,
            level,
            optname,
            optval: 0,
            optlen: 0,
        }
    }

    #[test]
    fn id_options_need_their_exact_size() {
        assert_eq!(opt(0, 0).value(&[0x20]), Ok(IdOption::Tos(0x20)));
        assert_eq!(opt(0, 0).value(&[0x20, 0]), Err(UcmaError::Invalid));
        assert_eq!(
            opt(0, 1).value(&7i32.to_ne_bytes()),
            Ok(IdOption::ReuseAddr(true))
        );
        assert_eq!(
            opt(0, 2).value(&0i32.to_ne_bytes()),
            Ok(IdOption::AfOnly(false))
        );
        assert_eq!(opt(0, 2).value(&[1]), Err(UcmaError::Invalid));
        assert_eq!(opt(0, 3).value(&[14]), Ok(IdOption::AckTimeout(14)));
        assert_eq!(opt(0, 4).value(&[14]), Err(UcmaError::NotImplemented));
        assert_eq!(
            opt(0, 0x100).value(&[12]),
            Ok(IdOption::CmResponseTimeout(12))
        );
        assert_eq!(opt(0, 0x101).value(&[2]), Ok(IdOption::MaxCmRetries(2)));
        assert_eq!(opt(0, 0x101).value(&[2, 0]), Err(UcmaError::Invalid));
        assert_eq!(opt(1, 0x100).value(&[12]), Err(UcmaError::NotImplemented));
        assert_eq!(opt(2, 0).value(&[]), Err(UcmaError::NotImplemented));
    }

    #[test]
    fn ib_path_takes_the_first_primary_bidirectional_gmp_record() {
        let mut list = [0u8; 3 * PATH_REC_DATA];
        // An alternate path, then the usable one, then another usable one.
        list[..4].copy_from_slice(&(1u32 | 1 << 2).to_ne_bytes());
        for (i, rec) in list.chunks_exact_mut(PATH_REC_DATA).enumerate() {
            rec[8..].fill(i as u8);
            if i > 0 {
                rec[..4].copy_from_slice(&USABLE_PATH_FLAGS.to_ne_bytes());
            }
        }
        assert_eq!(opt(1, 1).value(&list), Ok(IdOption::IbPath([1; 64])));
        assert_eq!(
            opt(1, 1).value(&list[..PATH_REC_DATA]),
            Err(UcmaError::Invalid)
        );
        assert_eq!(
            opt(1, 1).value(&list[..PATH_REC_DATA + 1]),
            Err(UcmaError::Invalid)
        );
        assert_eq!(opt(1, 1).value(&[]), Err(UcmaError::Invalid));
        assert_eq!(opt(1, 2).value(&list), Err(UcmaError::NotImplemented));
    }
}
