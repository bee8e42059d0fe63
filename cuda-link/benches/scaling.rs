//! Inspection must stay linear in the input: PTX with 10,000 and 40,000
//! kernels, and fatbins with 2,500 and 10,000 entries, built in pure Rust.
//! `cargo bench -p cuda-link --bench scaling` prints the ratios: the median,
//! over 61 pairs run side by side, of the large input's time over the small
//! one's. Linear is 4×, and the target is at most 5×.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group};
use cuda_link::ObjectCode;

fn ptx_with_kernels(count: usize) -> Vec<u8> {
    let mut text = String::from(".version 8.0\n.target sm_90\n.address_size 64\n");
    for i in 0..count {
        text.push_str(&format!(
            ".visible .entry kernel_{i}(.param .u64 p)\n{{\n ret;\n}}\n"
        ));
    }
    text.into_bytes()
}

fn fatbin_with_entries(count: usize) -> Vec<u8> {
    let ptx = ptx_with_kernels(1);
    let entries: Vec<(u16, u32, &[u8])> = (0..count).map(|_| (1u16, 90u32, &ptx[..])).collect();
    cuda_link_tests::hostile::raw_fatbin(&entries)
}

fn inspect(bytes: &[u8]) -> usize {
    let code = ObjectCode::from_bytes(bytes.to_vec(), "scaling").unwrap();
    code.inspect().unwrap().kernels().len()
}

/// Seconds of one inspection.
fn seconds(bytes: &[u8]) -> f64 {
    let start = Instant::now();
    black_box(inspect(bytes));
    start.elapsed().as_secs_f64()
}

/// Medians of `small`'s and `large`'s seconds, and of the ratio within
/// each pair: the two runs of a pair are adjacent (in ABBA order), so a
/// change in the machine's speed between pairs cancels out of the ratio.
fn paired_medians(small: &[u8], large: &[u8], pairs: usize) -> (f64, f64, f64) {
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 0..pairs {
        let (s, l) = if pair % 2 == 0 {
            let s = seconds(small);
            (s, seconds(large))
        } else {
            let l = seconds(large);
            (seconds(small), l)
        };
        a.push(s);
        b.push(l);
        ratios.push(l / s);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(a), median(b), median(ratios))
}

fn bench_scaling(c: &mut Criterion) {
    let inputs = [
        ("ptx_10k_kernels", ptx_with_kernels(10_000)),
        ("ptx_40k_kernels", ptx_with_kernels(40_000)),
        ("fatbin_2500_entries", fatbin_with_entries(2_500)),
        ("fatbin_10k_entries", fatbin_with_entries(10_000)),
    ];
    let mut group = c.benchmark_group("scaling");
    group.sample_size(10);
    for (name, bytes) in &inputs {
        group.bench_function(*name, |b| b.iter(|| black_box(inspect(bytes))));
    }
    group.finish();
    // The ratios side by side, measured in one run.
    for pair in inputs.chunks(2) {
        let (small, large, ratio) = paired_medians(&pair[0].1, &pair[1].1, 61);
        println!(
            "{} → {}: {:.1} ms → {:.1} ms, {ratio:.2}× for 4× the input (target ≤ 5×)",
            pair[0].0,
            pair[1].0,
            small * 1e3,
            large * 1e3,
        );
    }
}

criterion_group!(benches, bench_scaling);

fn main() {
    benches();
}
