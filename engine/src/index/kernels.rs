//! Similarity kernels: SIMD inner products (simsimd picks AVX-512 / AVX2 / NEON at run time) over
//! f32 rows and their quantized copies, and the scalar references the tests hold them to.
//!
//! Vectors are compared by inner product; for unit-norm vectors (what embedders emit) that is the
//! cosine. Cosine over non-normalized rows is `dot / (|a|·|b|)`, computed from the same kernel.

use simsimd::SpatialSimilarity;

pub use simsimd::f16;

/// Inner product of two f32 rows of equal length.
#[inline]
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    f32::dot(a, b).map_or(0.0, |d| d as f32)
}

/// Inner product of two f16 rows of equal length (accumulated in f32).
#[inline]
pub fn dot_f16(a: &[f16], b: &[f16]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    f16::dot(a, b).map_or(0.0, |d| d as f32)
}

/// Inner product of two i8 rows of equal length (exact, accumulated in i32).
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    i8::dot(a, b).map_or(0.0, |d| d as f32)
}

#[cfg(target_arch = "x86_64")]
mod avx512;

/// Inner products of `q` with each `q.len()`-wide row of `rows`, into `out` (one per row; exact
/// in i32 for rows shorter than 65,536). Scanning many rows, one call per row costs more than the
/// arithmetic: on AVX-512 VNNI a hand-written kernel runs (`kernels::avx512`, 2–4× the compiled
/// loop on 64–384 dimensions), elsewhere [`dot_i8_rows_portable`].
pub fn dot_i8_rows(q: &[i8], rows: &[i8], out: &mut [i32]) {
    if q.is_empty() {
        out.fill(0);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // Safety: `available` checked the CPU features the kernel is compiled for.
        unsafe { avx512::dot_i8_rows(q, rows, out) };
        return;
    }
    dot_i8_rows_portable(q, rows, out);
}

/// [`dot_i8_rows`] as a plain loop, compiled for AVX-512 / AVX2 / SSE4.1 / NEON and picked at run
/// time (`multiversion`); the compiler vectorizes it across the row.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512vnni+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1",
    "aarch64+neon"
))]
pub fn dot_i8_rows_portable(q: &[i8], rows: &[i8], out: &mut [i32]) {
    if q.is_empty() {
        out.fill(0);
        return;
    }
    for (row, o) in rows.chunks_exact(q.len()).zip(out.iter_mut()) {
        *o = row.iter().zip(q).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum();
    }
}

/// Cosine similarity; 0 when either row is all zeros.
pub fn cosine_f32(a: &[f32], b: &[f32]) -> f32 {
    let d = dot_f32(a, b);
    let n = (dot_f32(a, a) * dot_f32(b, b)).sqrt();
    if n > 0.0 {
        d / n
    } else {
        0.0
    }
}

/// A row converted to f16 (round to nearest even; the `half` crate uses F16C when the CPU has it).
pub fn to_f16(row: &[f32]) -> Vec<f16> {
    use half::slice::HalfFloatSliceExt;
    let mut bits = vec![half::f16::ZERO; row.len()];
    bits.convert_from_f32_slice(row);
    bits.into_iter().map(|h| f16(h.to_bits())).collect()
}

/// A row quantized to i8 with one scale: `row[i] ≈ q[i] · scale`, `scale = max|row| / 127`.
pub fn quantize_i8(row: &[f32], out: &mut [i8]) -> f32 {
    let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
    if max == 0.0 || !max.is_finite() {
        out.fill(0);
        return 0.0;
    }
    let inv = 127.0 / max;
    for (o, v) in out.iter_mut().zip(row) {
        *o = (v * inv).round().clamp(-127.0, 127.0) as i8;
    }
    max / 127.0
}

/// Scalar references (no SIMD crate, f64 accumulation): what the kernels are tested against.
#[cfg(test)]
pub mod scalar {
    use super::f16;

    /// Inner product, accumulated in f64.
    pub fn dot_f32(a: &[f32], b: &[f32]) -> f64 {
        a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
    }

    /// Inner product of f16 rows, widened to f64.
    pub fn dot_f16(a: &[f16], b: &[f16]) -> f64 {
        a.iter().zip(b).map(|(x, y)| f64::from(x.to_f32()) * f64::from(y.to_f32())).sum()
    }

    /// Inner product of i8 rows, exact.
    pub fn dot_i8(a: &[i8], b: &[i8]) -> i64 {
        a.iter().zip(b).map(|(x, y)| i64::from(*x) * i64::from(*y)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rows() -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
        (1usize..700).prop_flat_map(|n| (prop::collection::vec(-1.0f32..1.0, n), prop::collection::vec(-1.0f32..1.0, n)))
    }

    type Kernel = fn(&[i8], &[i8], &mut [i32]);

    proptest! {
        #[test]
        fn f32_kernel_matches_scalar((a, b) in rows()) {
            let want = scalar::dot_f32(&a, &b);
            prop_assert!((f64::from(dot_f32(&a, &b)) - want).abs() <= 1e-4 * (1.0 + want.abs()), "{} vs {}", dot_f32(&a, &b), want);
        }

        /// Exact where f16 arithmetic is: products of -1, 0, 1 summed over at most 700 terms
        /// (every partial sum an integer below 2,048). Catches a lane or a tail left out, which
        /// the rounding bound below could hide.
        #[test]
        fn f16_kernel_is_exact_on_small_integers(n in 1usize..700, seed in any::<u64>()) {
            let digit = |i: usize, salt: u64| ((seed ^ salt).wrapping_mul(i as u64 * 2 + 1).rotate_left(17) % 3) as f32 - 1.0;
            let a: Vec<f32> = (0..n).map(|i| digit(i, 0x9e37)).collect();
            let b: Vec<f32> = (0..n).map(|i| digit(i, 0x7f4a)).collect();
            let (ha, hb) = (to_f16(&a), to_f16(&b));
            let (got, want) = (f64::from(dot_f16(&ha, &hb)), scalar::dot_f16(&ha, &hb));
            // Both are small integers, exactly representable: compared as integers.
            prop_assert!(got.fract() == 0.0 && want.fract() == 0.0 && got as i64 == want as i64, "{got} vs {want}");
        }

        /// Within the rounding of the kernel's accumulator. On CPUs with AVX-512 FP16 simsimd
        /// accumulates in f16 itself (32 lanes of about n/32 terms, then a 5-level reduction), so
        /// the bound is the worst case of recursive summation at f16's unit roundoff, 2^-11.
        #[test]
        fn f16_kernel_matches_scalar((a, b) in rows()) {
            let (ha, hb) = (to_f16(&a), to_f16(&b));
            let want = scalar::dot_f16(&ha, &hb);
            let magnitude: f64 = ha.iter().zip(&hb).map(|(x, y)| (f64::from(x.to_f32()) * f64::from(y.to_f32())).abs()).sum();
            let terms_per_lane = a.len().div_ceil(32) as f64;
            let bound = (terms_per_lane + 6.0) * 2f64.powi(-11) * magnitude + 1e-6;
            let got = f64::from(dot_f16(&ha, &hb));
            prop_assert!((got - want).abs() <= bound, "{got} vs {want} (bound {bound})");
            // And the f16 copy stays close to the f32 original.
            prop_assert!((want - scalar::dot_f32(&a, &b)).abs() <= 2e-3 * a.len() as f64);
        }

        #[test]
        fn i8_kernel_is_exact((a, b) in rows()) {
            let (mut qa, mut qb) = (vec![0i8; a.len()], vec![0i8; b.len()]);
            let (sa, sb) = (quantize_i8(&a, &mut qa), quantize_i8(&b, &mut qb));
            prop_assert_eq!(dot_i8(&qa, &qb) as i64, scalar::dot_i8(&qa, &qb));
            // Quantization error per coordinate is at most half a step.
            for (q, v) in qa.iter().zip(&a) {
                prop_assert!((f32::from(*q) * sa - v).abs() <= sa * 0.5 + 1e-6);
            }
            let approx = f64::from(dot_i8(&qa, &qb) * sa * sb);
            // |ab − âb̂| ≤ |a|·e_b + |b|·e_a + e_a·e_b per coordinate, with e = scale / 2.
            let l1 = |v: &[f32]| v.iter().map(|x| f64::from(x.abs())).sum::<f64>();
            let (ea, eb) = (f64::from(sa) / 2.0, f64::from(sb) / 2.0);
            let bound = l1(&a) * eb + l1(&b) * ea + a.len() as f64 * ea * eb;
            prop_assert!((approx - scalar::dot_f32(&a, &b)).abs() <= bound * 1.001 + 1e-4);
        }

        #[test]
        /// Both kernels (the AVX-512 one where the CPU has it) against the scalar reference:
        /// dimensions across 64-byte chunk edges, row counts across 16-row blocks, a trailing
        /// partial row and a short `out` (neither may be read or written past).
        fn many_rows_i8_kernel_is_exact(dim in 1usize..300, rows in 0usize..40, seed in any::<u64>(), short_out in any::<bool>(), extremes in any::<bool>()) {
            // Full-range values, -128 included (quantized rows stop at -127; the kernel must not).
            let mut x = seed | 1;
            let mut next = || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; (x >> 56) as u8 as i8 };
            let mut pick = || if extremes { [-128i8, 127][usize::from(next() < 0)] } else { next() };
            let q: Vec<i8> = (0..dim).map(|_| pick()).collect();
            let mut flat: Vec<i8> = (0..dim * rows).map(|_| pick()).collect();
            flat.extend(std::iter::repeat_n(5i8, dim / 2)); // a partial row: ignored
            let n_out = if short_out { rows.saturating_sub(1) } else { rows };
            for kernel in [dot_i8_rows as Kernel, dot_i8_rows_portable] {
                let mut out = vec![7i32; n_out];
                kernel(&q, &flat, &mut out);
                for (r, got) in flat.chunks_exact(dim).zip(&out) {
                    prop_assert_eq!(i64::from(*got), scalar::dot_i8(&q, r));
                }
            }
        }
    }

    #[test]
    fn f16_conversion_rounds_like_the_reference() {
        let xs = [0.0f32, -0.0, 1.0, -2.5, 65504.0, 1e-8, 0.1, 2.71, -1234.5678, 6.0e-5];
        for (h, x) in to_f16(&xs).iter().zip(xs) {
            assert_eq!(h.0, f16::from_f32(x).0, "{x}");
        }
    }

    #[test]
    fn cosine_of_zero_rows_is_zero() {
        assert!((cosine_f32(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine_f32(&[0.0, 0.0], &[1.0, 0.0]).abs() < f32::MIN_POSITIVE);
    }
}
