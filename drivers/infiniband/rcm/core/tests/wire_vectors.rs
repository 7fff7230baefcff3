// SPDX-License-Identifier: GPL-2.0

//! Byte images written by hand from the IBTA Vol 1 ch. 12 tables, with a
//! distinctive value in every field, checked both ways: parse gives the
//! expected fields and emit reproduces the image byte for byte.

use rcm_core::reason::RejectReason;
use rcm_core::timer::IbaTime;
use rcm_core::wire::field::{Mad, MAD_SIZE};
use rcm_core::wire::mad::MadHeader;
use rcm_core::wire::req::{Req, ReqPath};
use rcm_core::wire::{CmMad, CmMessage};

/// Writes `bytes` at body offset `at` (MAD offset 24 + at).
fn put(mad: &mut Mad, at: usize, bytes: &[u8]) {
    mad[24 + at..24 + at + bytes.len()].copy_from_slice(bytes);
}

fn header_image(mad: &mut Mad, attr_id: u16, attr_mod: u32) {
    mad[..24].copy_from_slice(&[
        1, 0x07, 2, 0x03, // base, class, class version, method Send
        0, 0, 0, 0, // status, class specific
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // transaction id
        0, 0, 0, 0, // attr id (below), reserved
        0, 0, 0, 0, // attr mod (below)
    ]);
    mad[16..18].copy_from_slice(&attr_id.to_be_bytes());
    mad[20..24].copy_from_slice(&attr_mod.to_be_bytes());
}

fn check(image: &Mad, expected: CmMad) {
    assert_eq!(CmMad::parse(image), Ok(expected));
    let mut out = [0u8; MAD_SIZE];
    expected.emit(&mut out);
    for i in 0..MAD_SIZE {
        assert_eq!(out[i], image[i], "byte {i} (body {})", i as isize - 24);
    }
}

fn seq<const N: usize>(start: u8) -> [u8; N] {
    core::array::from_fn(|i| start.wrapping_add(i as u8))
}

#[test]
fn req() {
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0010, 0xcafe_babe);
    put(&mut m, 0, &[0x11, 0x22, 0x33, 0x44]); // local comm id
    put(&mut m, 5, &[0x55, 0x66, 0x77]); // vendor id (byte 4 reserved)
    put(&mut m, 8, &[0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x4e, 0x21]); // service id
    put(
        &mut m,
        16,
        &[0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18],
    ); // CA GUID
    put(&mut m, 28, &[0x21, 0x22, 0x23, 0x24]); // qkey
    put(&mut m, 32, &[0x31, 0x32, 0x33, 0x34]); // QPN | responder resources
    put(&mut m, 36, &[0x41, 0x42, 0x43, 0x44]); // local EECN | initiator depth
                                                // remote EECN, then 10100 (timeout 20) 01 (UC) 1 (flow control)
    put(&mut m, 40, &[0x51, 0x52, 0x53, 0b1010_0011]);
    // starting PSN, then 10010 (timeout 18) 101 (retry 5)
    put(&mut m, 44, &[0x61, 0x62, 0x63, 0b1001_0101]);
    put(&mut m, 48, &[0xff, 0xff]); // P_Key
    put(&mut m, 50, &[0b0101_1110]); // MTU 5, RDC 1, RNR retry 6
    put(&mut m, 51, &[0b1111_0011]); // max CM retries 15, SRQ 0, ext 3
                                     // primary path
    put(&mut m, 52, &[0xa1, 0xa2, 0xb1, 0xb2]);
    put(&mut m, 56, &seq::<16>(0xc0));
    put(&mut m, 72, &seq::<16>(0xd0));
    put(&mut m, 88, &[0x12, 0x34, 0x50, 0x2a]); // flow label 0x12345, rate 42
    put(&mut m, 92, &[0x77, 0x40, 0b1011_1000, 0b1001_1000]); // tc, hops, SL 11 + local, ack 19
                                                              // alternate path
    put(&mut m, 96, &[0x01, 0x02, 0x03, 0x04]);
    put(&mut m, 100, &seq::<16>(0xe0));
    put(&mut m, 116, &seq::<16>(0xf0));
    put(&mut m, 132, &[0xfe, 0xdc, 0xb0, 0x3f]); // flow label 0xfedcb, rate 63
    put(&mut m, 136, &[0x88, 0x99, 0b0011_0000, 0b1111_1100]); // SL 3, ack 31 + SAP
    put(&mut m, 140, &seq::<92>(0x80));

    let primary = ReqPath {
        local_port_lid: 0xa1a2,
        remote_port_lid: 0xb1b2,
        local_port_gid: seq(0xc0),
        remote_port_gid: seq(0xd0),
        flow_label: 0x12345,
        packet_rate: 42,
        traffic_class: 0x77,
        hop_limit: 0x40,
        sl: 11,
        subnet_local: true,
        local_ack_timeout: IbaTime::new(19),
    };
    let alternate = ReqPath {
        local_port_lid: 0x0102,
        remote_port_lid: 0x0304,
        local_port_gid: seq(0xe0),
        remote_port_gid: seq(0xf0),
        flow_label: 0xfedcb,
        packet_rate: 63,
        traffic_class: 0x88,
        hop_limit: 0x99,
        sl: 3,
        subnet_local: false,
        local_ack_timeout: IbaTime::new(31),
    };
    let req = Req {
        local_comm_id: 0x1122_3344,
        vendor_id: 0x55_6677,
        service_id: 0x0106_4e21,
        local_ca_guid: 0x1112_1314_1516_1718,
        local_qkey: 0x2122_2324,
        local_qpn: 0x31_3233,
        responder_resources: 0x34,
        local_eecn: 0x41_4243,
        initiator_depth: 0x44,
        remote_eecn: 0x51_5253,
        remote_cm_response_timeout: IbaTime::new(20),
        transport_service_type: 1,
        end_to_end_flow_control: true,
        starting_psn: 0x61_6263,
        local_cm_response_timeout: IbaTime::new(18),
        retry_count: 5,
        partition_key: 0xffff,
        path_mtu: 5,
        rdc_exists: true,
        rnr_retry_count: 6,
        max_cm_retries: 15,
        srq: false,
        extended_transport_type: 3,
        primary_path: primary,
        alternate_path: alternate,
        sap_supported: true,
        private_data: seq(0x80),
    };
    let mut header = MadHeader::cm_send(0x0010, 0x0102_0304_0506_0708, 0xcafe_babe);
    header.status = 0;
    check(
        &m,
        CmMad {
            header,
            message: CmMessage::Req(req),
        },
    );
}

#[test]
fn rej_carries_unknown_reasons() {
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0012, 0);
    put(&mut m, 0, &[0, 0, 0, 1, 0, 0, 0, 2]);
    // REJ of "other" (2 in the top 2 bits), ARI length 72 in the top 7 bits, reason 34
    put(&mut m, 8, &[0b1000_0000, 72 << 1, 0x00, 34]);
    let parsed = CmMad::parse(&m).expect("valid");
    let CmMessage::Rej(rej) = parsed.message else {
        panic!("not a REJ")
    };
    assert_eq!(rej.reason, RejectReason::Unknown(34));
    assert_eq!(rej.message_rejected, 2);
    assert_eq!(rej.rejected_info_length, 72);
    let mut out = [0u8; MAD_SIZE];
    parsed.emit(&mut out);
    assert_eq!(out, m);
}
