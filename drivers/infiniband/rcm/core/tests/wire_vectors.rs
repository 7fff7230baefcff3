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

fn msg(image: &Mad) -> CmMessage {
    CmMad::parse(image).expect("valid MAD").message
}

/// Parse must give `expected`, and emitting it must give the image back.
fn check_message(image: &Mad, attr_mod: u32, expected: CmMessage) {
    let header = MadHeader::cm_send(expected.attr_id(), 0x0102_0304_0506_0708, attr_mod);
    check(
        image,
        CmMad {
            header,
            message: expected,
        },
    );
}

#[test]
fn mra() {
    use rcm_core::wire::mra::Mra;
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0011, 0);
    put(&mut m, 0, &[0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3]);
    put(&mut m, 8, &[0b0100_0000, 0b1100_0000]); // MRAed REP (1), timeout 24
    put(&mut m, 10, &seq::<222>(1));
    let expected = Mra {
        local_comm_id: 0xa0a1_a2a3,
        remote_comm_id: 0xb0b1_b2b3,
        message_mraed: 1,
        service_timeout: IbaTime::new(24),
        private_data: seq(1),
    };
    check_message(&m, 0, CmMessage::Mra(expected));
}

#[test]
fn rej() {
    use rcm_core::wire::mra::Rej;
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0012, 0x0000_0015);
    put(&mut m, 0, &[0, 0, 0, 0, 0xb0, 0xb1, 0xb2, 0xb3]);
    put(&mut m, 8, &[0b0000_0000, 5 << 1, 0x00, 28]); // REQ rejected, ARI 5, consumer
    put(&mut m, 12, &seq::<72>(0x40));
    put(&mut m, 84, &seq::<148>(0x90));
    let expected = Rej {
        local_comm_id: 0,
        remote_comm_id: 0xb0b1_b2b3,
        message_rejected: 0,
        rejected_info_length: 5,
        reason: RejectReason::ConsumerDefined,
        ari: seq(0x40),
        private_data: seq(0x90),
    };
    check_message(&m, 0x15, CmMessage::Rej(expected));
}

#[test]
fn rep() {
    use rcm_core::wire::rep::Rep;
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0013, 0x1234_5678);
    put(&mut m, 0, &[0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3]);
    put(&mut m, 8, &[0x01, 0x23, 0x45, 0x67]); // qkey
    put(&mut m, 12, &[0x00, 0x00, 0x11, 0xaa]); // QPN 0x11, vendor high
    put(&mut m, 16, &[0x00, 0x00, 0x00, 0xbb]); // EECN 0, vendor mid
    put(&mut m, 20, &[0xc1, 0xc2, 0xc3, 0xcc]); // PSN, vendor low
                                                // resp res, init depth, ack delay 15 + failover 2 + flow ctl 1, RNR 7 + SRQ 1
    put(&mut m, 24, &[0x10, 0x20, 0b0111_1101, 0b1111_0000]);
    put(
        &mut m,
        28,
        &[0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10],
    );
    put(&mut m, 36, &seq::<196>(0x33));
    let mut expected = Rep {
        local_comm_id: 0xa0a1_a2a3,
        remote_comm_id: 0xb0b1_b2b3,
        local_qkey: 0x0123_4567,
        local_qpn: 0x11,
        vendor_id_high: 0,
        local_eecn: 0,
        vendor_id_mid: 0,
        starting_psn: 0xc1_c2c3,
        vendor_id_low: 0,
        responder_resources: 0x10,
        initiator_depth: 0x20,
        target_ack_delay: IbaTime::new(15),
        failover_accepted: 2,
        end_to_end_flow_control: true,
        rnr_retry_count: 7,
        srq: true,
        local_ca_guid: 0xfedc_ba98_7654_3210,
        private_data: seq(0x33),
    };
    expected.set_vendor_id(0xaa_bbcc);
    assert_eq!(expected.vendor_id(), 0xaa_bbcc);
    check_message(&m, 0x1234_5678, CmMessage::Rep(expected));
}

#[test]
fn rtu_dreq_drep() {
    use rcm_core::wire::disconnect::{Drep, Dreq};
    use rcm_core::wire::rep::Rtu;
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0014, 0);
    put(&mut m, 0, &[1, 2, 3, 4, 5, 6, 7, 8]);
    put(&mut m, 8, &seq::<224>(9));
    let rtu = Rtu {
        local_comm_id: 0x0102_0304,
        remote_comm_id: 0x0506_0708,
        private_data: seq(9),
    };
    check_message(&m, 0, CmMessage::Rtu(rtu));

    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0015, 0);
    put(&mut m, 0, &[1, 2, 3, 4, 5, 6, 7, 8, 0xab, 0xcd, 0xef]); // remote QPN, byte 11 reserved
    put(&mut m, 12, &seq::<220>(0x20));
    let dreq = Dreq {
        local_comm_id: 0x0102_0304,
        remote_comm_id: 0x0506_0708,
        remote_qpn_eecn: 0xab_cdef,
        private_data: seq(0x20),
    };
    check_message(&m, 0, CmMessage::Dreq(dreq));

    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0016, 0);
    put(&mut m, 0, &[8, 7, 6, 5, 4, 3, 2, 1]);
    put(&mut m, 8, &seq::<224>(0x70));
    let drep = Drep {
        local_comm_id: 0x0807_0605,
        remote_comm_id: 0x0403_0201,
        private_data: seq(0x70),
    };
    check_message(&m, 0, CmMessage::Drep(drep));
}

#[test]
fn sidr() {
    use rcm_core::reason::SidrStatus;
    use rcm_core::wire::sidr::{SidrRep, SidrReq};
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0017, 0);
    put(&mut m, 0, &[0x12, 0x34, 0x56, 0x78, 0x80, 0x01]); // request id, P_Key
    put(&mut m, 8, &[0, 0, 0, 0, 0x01, 0x11, 0x12, 0x34]); // service id (UDP port space)
    put(&mut m, 16, &seq::<216>(0x21));
    let req = SidrReq {
        request_id: 0x1234_5678,
        partition_key: 0x8001,
        service_id: 0x0111_1234,
        private_data: seq(0x21),
    };
    check_message(&m, 0, CmMessage::SidrReq(req));

    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0018, 0);
    put(&mut m, 0, &[0x12, 0x34, 0x56, 0x78, 2, 72, 0xaa, 0xbb]); // status Reject, info 72, vendor hi
    put(&mut m, 8, &[0x00, 0x0a, 0x0b, 0xcc]); // QPN, vendor low
    put(&mut m, 12, &[0, 0, 0, 0, 0x01, 0x11, 0x12, 0x34]);
    put(&mut m, 20, &[0x01, 0x23, 0x45, 0x67]);
    put(&mut m, 24, &seq::<72>(0x50));
    put(&mut m, 96, &seq::<136>(0x60));
    let mut rep = SidrRep {
        request_id: 0x1234_5678,
        status: SidrStatus::Reject,
        additional_info_length: 72,
        vendor_id_high: 0,
        qpn: 0x0a0b,
        vendor_id_low: 0,
        service_id: 0x0111_1234,
        qkey: 0x0123_4567,
        additional_info: seq(0x50),
        private_data: seq(0x60),
    };
    rep.set_vendor_id(0xaa_bbcc);
    check_message(&m, 0, CmMessage::SidrRep(rep));
}

#[test]
fn lap_apr() {
    use rcm_core::reason::AprStatus;
    use rcm_core::wire::lap::{Apr, Lap};
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0019, 0);
    put(&mut m, 0, &[1, 2, 3, 4, 5, 6, 7, 8]);
    put(&mut m, 12, &[0x0c, 0x0d, 0x0e, 0b1011_1000]); // remote QPN, timeout 23
    put(&mut m, 20, &[0x11, 0x22, 0x33, 0x44]); // LIDs
    put(&mut m, 24, &seq::<16>(0x80));
    put(&mut m, 40, &seq::<16>(0x90));
    // flow label 0xabcde, tclass 0x12, hop 0x34, rate 33
    put(&mut m, 56, &[0xab, 0xcd, 0xe0, 0x12, 0x34, 33]);
    put(&mut m, 62, &[0b0111_1000, 0b0111_0000]); // SL 7 + local, ack 14
    put(&mut m, 64, &seq::<168>(0xa0));
    let lap = Lap {
        local_comm_id: 0x0102_0304,
        remote_comm_id: 0x0506_0708,
        remote_qpn_eecn: 0x0c_0d0e,
        remote_cm_response_timeout: IbaTime::new(23),
        alternate_local_port_lid: 0x1122,
        alternate_remote_port_lid: 0x3344,
        alternate_local_port_gid: seq(0x80),
        alternate_remote_port_gid: seq(0x90),
        alternate_flow_label: 0xabcde,
        alternate_traffic_class: 0x12,
        alternate_hop_limit: 0x34,
        alternate_packet_rate: 33,
        alternate_sl: 7,
        alternate_subnet_local: true,
        alternate_local_ack_timeout: IbaTime::new(14),
        private_data: seq(0xa0),
    };
    check_message(&m, 0, CmMessage::Lap(lap));

    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x001a, 0);
    put(&mut m, 0, &[1, 2, 3, 4, 5, 6, 7, 8, 16, 13]); // info length 16, status 13
    put(&mut m, 12, &seq::<72>(0x10));
    put(&mut m, 84, &seq::<148>(0x60));
    let apr = Apr {
        local_comm_id: 0x0102_0304,
        remote_comm_id: 0x0506_0708,
        additional_info_length: 16,
        ap_status: AprStatus::InvalidSl,
        additional_info: seq(0x10),
        private_data: seq(0x60),
    };
    check_message(&m, 0, CmMessage::Apr(apr));
    assert!(matches!(msg(&m), CmMessage::Apr(_)));
}

#[test]
fn class_port_info() {
    use rcm_core::wire::class_port_info::ClassPortInfo;
    let mut m = [0u8; MAD_SIZE];
    header_image(&mut m, 0x0001, 0);
    m[3] = 0x81; // GetResp
    put(
        &mut m,
        0,
        &[1, 2, 0x12, 0x34, 0xab, 0xcd, 0xef, 0b0001_0011],
    ); // cap2 + resp time 19
    put(&mut m, 8, &seq::<16>(0x20));
    put(
        &mut m,
        24,
        &[0x55, 0x6a, 0xbc, 0xde, 0x11, 0x22, 0x33, 0x44],
    ); // tc, SL 6, FL 0xabcde
    put(
        &mut m,
        32,
        &[0x00, 0x01, 0x02, 0x03, 0x0a, 0x0b, 0x0c, 0x0d],
    );
    put(&mut m, 40, &seq::<16>(0x40));
    put(
        &mut m,
        56,
        &[0x66, 0x71, 0x23, 0x45, 0x55, 0x66, 0x77, 0x88],
    );
    put(
        &mut m,
        64,
        &[0x09, 0x00, 0x00, 0x01, 0x80, 0x01, 0x00, 0x00],
    );
    let cpi = ClassPortInfo {
        base_version: 1,
        class_version: 2,
        capability_mask: 0x1234,
        capability_mask2: 0xabcd_ef13 >> 5, // the top 27 bits of bytes 4..8
        resp_time_value: IbaTime::new(19),
        redirect_gid: seq(0x20),
        redirect_tc: 0x55,
        redirect_sl: 6,
        redirect_fl: 0xabcde,
        redirect_lid: 0x1122,
        redirect_pkey: 0x3344,
        redirect_qp: 0x01_0203,
        redirect_qkey: 0x0a0b_0c0d,
        trap_gid: seq(0x40),
        trap_tc: 0x66,
        trap_sl: 7,
        trap_fl: 0x12345,
        trap_lid: 0x5566,
        trap_pkey: 0x7788,
        trap_hl: 9,
        trap_qp: 1,
        trap_qkey: 0x8001_0000,
    };
    let mut header = MadHeader::cm_send(0x0001, 0x0102_0304_0506_0708, 0);
    header.method = 0x81;
    check(
        &m,
        CmMad {
            header,
            message: CmMessage::ClassPortInfo(cpi),
        },
    );
}
