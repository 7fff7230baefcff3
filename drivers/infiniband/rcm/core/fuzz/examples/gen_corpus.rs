// SPDX-License-Identifier: GPL-2.0

//! Writes the seed corpora, corpus/parse_mad/, corpus/endpoint/ and
//! corpus/ucma_command/, from
//! `rcm_core_fuzz::seeds`, after checking that each seed passes its
//! target and that the programs decode to what was encoded:
//!
//!     cd drivers/infiniband/rcm/core/fuzz && cargo run --example gen_corpus
//!
//! Seed names are stable, so rerunning it changes nothing unless the
//! seeds or the wire format change.

use rcm_core_fuzz::endpoint::{decode, encode};
use rcm_core_fuzz::seeds::{exchange_mads, programs, wire_vectors};
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

fn write_dir(dir: &Path, files: &[(String, Vec<u8>)]) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() {
            fs::remove_file(path)?;
        }
    }
    for (name, bytes) in files {
        fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");

    let mut mads: Vec<(String, Vec<u8>)> = wire_vectors()
        .into_iter()
        .map(|(n, m)| (n.to_string(), m))
        .collect();
    let mut seen: BTreeSet<Vec<u8>> = mads.iter().map(|(_, m)| m.clone()).collect();
    let mut counts = std::collections::BTreeMap::new();
    for (attr, mad) in exchange_mads() {
        if !seen.insert(mad.to_vec()) {
            continue;
        }
        let k = counts.entry(attr).or_insert(0);
        *k += 1;
        mads.push((format!("sim-{}-{}", attr.to_lowercase(), k), mad.to_vec()));
    }
    for (name, mad) in &mads {
        rcm_core_fuzz::roundtrip(mad);
        println!("parse_mad/{name}: {} bytes", mad.len());
    }

    let progs = programs(&mads);
    for (name, data) in &progs {
        let (setup, ops) = decode(data);
        assert_eq!(
            &encode(&setup, &ops),
            data,
            "{name}: encoding does not round-trip"
        );
        let events = rcm_core_fuzz::endpoint::run(data);
        let names: Vec<String> = events.iter().map(|(n, e)| format!("{n}:{e}")).collect();
        println!(
            "endpoint/{name}: {} ops, {} bytes: {}",
            ops.len(),
            data.len(),
            names.join(" ")
        );
    }

    let commands = rcm_core_fuzz::ucma::seeds();
    for (name, data) in &commands {
        rcm_core_fuzz::ucma::command(data);
        println!("ucma_command/{name}: {} bytes", data.len());
    }

    write_dir(&root.join("parse_mad"), &mads)?;
    write_dir(&root.join("ucma_command"), &commands)?;
    write_dir(&root.join("endpoint"), &progs)?;
    println!(
        "wrote {} parse_mad and {} endpoint seeds under {}",
        mads.len(),
        progs.len(),
        root.display()
    );
    Ok(())
}
