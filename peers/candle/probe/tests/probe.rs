//! `probe OUT_DIR` (a test target without a harness): runs a unary, binary, reduction, conv,
//! index, cast, affine, where and sort op of candle on the first CUDA
//! device, on inputs fixed by a seed, writes each output's bytes to
//! `OUT_DIR/{op}.bin` and prints `{op} {median µs} {min µs}` per op, timed
//! over 200 runs each with the device synchronized. Two builds of candle
//! (nvcc's kernels, cuda-build's) run it; the bundle's script compares.

use std::time::Instant;

use candle_core::{DType, Device, Tensor};

/// A fixed pseudo-random sequence in [-1, 1): the same on every machine.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// The tensor's elements as little-endian bytes, read back to the host.
fn bytes(t: &Tensor) -> candle_core::Result<Vec<u8>> {
    let t = t.flatten_all()?;
    Ok(match t.dtype() {
        DType::F32 => t
            .to_vec1::<f32>()?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        DType::F16 => t
            .to_vec1::<half::f16>()?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        DType::BF16 => t
            .to_vec1::<half::bf16>()?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        DType::U32 => t
            .to_vec1::<u32>()?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        DType::I64 => t
            .to_vec1::<i64>()?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        DType::U8 => t.to_vec1::<u8>()?,
        other => return Err(candle_core::Error::Msg(format!("no reader for {other:?}"))),
    })
}

type Op<'a> = (&'a str, Box<dyn Fn() -> candle_core::Result<Tensor> + 'a>);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::path::PathBuf::from(std::env::args().nth(1).ok_or("usage: probe OUT_DIR")?);
    std::fs::create_dir_all(&out)?;
    let dev = Device::new_cuda(0)?;
    let (rows, cols) = (1024, 4096);
    let x = Tensor::from_vec(values(rows * cols, 1), (rows, cols), &dev)?;
    let y = Tensor::from_vec(values(rows * cols, 2), (rows, cols), &dev)?;
    let row = Tensor::from_vec(values(cols, 3), (1, cols), &dev)?;
    let image = Tensor::from_vec(values(8 * 64 * 64 * 64, 4), (8, 64, 64, 64), &dev)?;
    let kernel = Tensor::from_vec(values(64 * 64 * 3 * 3, 5), (64, 64, 3, 3), &dev)?;
    let ids: Vec<u32> = (0..rows as u32).map(|i| (i * 7919) % rows as u32).collect();
    let ids = Tensor::from_vec(ids, rows, &dev)?;
    let column_ids: Vec<u32> = (0..(rows * 16) as u32)
        .map(|i| (i * 104729) % cols as u32)
        .collect();
    let column_ids = Tensor::from_vec(column_ids, (rows, 16), &dev)?;
    let mask = x.ge(0f32)?;
    let short = x.narrow(1, 0, 512)?.contiguous()?;

    let ops: Vec<Op> = vec![
        ("unary_exp", Box::new(|| x.exp())),
        ("unary_gelu", Box::new(|| x.gelu())),
        ("unary_tanh", Box::new(|| x.tanh())),
        ("binary_mul", Box::new(|| x.mul(&y))),
        ("binary_broadcast_add", Box::new(|| x.broadcast_add(&row))),
        ("reduce_sum", Box::new(|| x.sum_keepdim(1))),
        ("reduce_max", Box::new(|| x.max_keepdim(1))),
        ("reduce_argmax", Box::new(|| x.argmax_keepdim(1))),
        ("conv2d", Box::new(|| image.conv2d(&kernel, 1, 1, 1, 1))),
        ("index_select", Box::new(|| x.index_select(&ids, 0))),
        ("gather", Box::new(|| x.gather(&column_ids, 1))),
        ("cast_bf16", Box::new(|| x.to_dtype(DType::BF16))),
        ("cast_f16", Box::new(|| x.to_dtype(DType::F16))),
        ("affine", Box::new(|| x.affine(1.5, -0.25))),
        ("where_cond", Box::new(|| mask.where_cond(&x, &y))),
        ("sort", Box::new(|| short.arg_sort_last_dim(true))),
    ];
    for (name, op) in &ops {
        let result = op()?;
        std::fs::write(out.join(format!("{name}.bin")), bytes(&result)?)?;
        for _ in 0..5 {
            op()?;
        }
        dev.synchronize()?;
        let mut times: Vec<f64> = (0..200)
            .map(|_| {
                let start = Instant::now();
                let result = op();
                dev.synchronize()?;
                result.map(|_| start.elapsed().as_secs_f64() * 1e6)
            })
            .collect::<candle_core::Result<_>>()?;
        times.sort_by(f64::total_cmp);
        println!("{name} {:.1} {:.1}", times[times.len() / 2], times[0]);
    }
    Ok(())
}
