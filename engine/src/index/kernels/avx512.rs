//! The i8 many-rows inner product on AVX-512 VNNI: the engine's one hand-written SIMD kernel.
//!
//! `vpdpbusd` multiplies unsigned by signed bytes, four at a time, into i32 lanes. The query is
//! made unsigned by adding 128 (`q + 128`), so each row's lanes hold `Σ (q + 128)·x`; a second
//! `vpdpbusd` against ones gives `Σ x`, and `Σ q·x = Σ (q + 128)·x − 128·Σ x`, exact in i32 for
//! every input (−128 included) while a row is shorter than 2^16 bytes. Sixteen rows are reduced
//! together (a transpose by unpacks and 128-bit shuffles) instead of one horizontal sum per row,
//! which is what the compiler's own vectorization of the loop spends most of its time on.

use std::arch::x86_64::{
    __m512i, _mm512_add_epi32, _mm512_dpbusd_epi32, _mm512_maskz_loadu_epi8, _mm512_reduce_add_epi32, _mm512_set1_epi8,
    _mm512_setzero_si512, _mm512_shuffle_i32x4, _mm512_slli_epi32, _mm512_storeu_si512, _mm512_sub_epi32, _mm512_unpackhi_epi32,
    _mm512_unpackhi_epi64, _mm512_unpacklo_epi32, _mm512_unpacklo_epi64, _mm512_xor_si512,
};

/// Whether this CPU runs [`dot_i8_rows`] (checked once, then cached by the standard library).
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vnni")
}

/// `out[r] = Σ_i q[i]·rows[r·d + i]` for `r < min(rows.len() / d, out.len())`, `d = q.len() ≥ 1`.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VNNI ([`available`]). Memory safety holds for any
/// slices: every load reads at most the bytes `[r·d, r·d + d)` of `rows` for `r` below the row
/// count (masked loads touch no byte outside their mask), and stores go to `out[r..r + 16]` only
/// when `r + 16 ≤` the row count `≤ out.len()`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub unsafe fn dot_i8_rows(q: &[i8], rows: &[i8], out: &mut [i32]) {
    let d = q.len();
    debug_assert!(d > 0);
    let n = (rows.len() / d).min(out.len());
    let offset = _mm512_set1_epi8(-128i8);
    // The query in 64-byte chunks, made unsigned; lanes past `d` read as 0 in the rows, so their
    // value here does not matter.
    let mut chunks: Vec<(__m512i, u64)> = Vec::with_capacity(d.div_ceil(64));
    for c in 0..d.div_ceil(64) {
        let len = (d - c * 64).min(64);
        let mask = if len == 64 { u64::MAX } else { (1u64 << len) - 1 };
        // Safety: the mask covers bytes `c·64 .. c·64 + len ≤ d` of `q`.
        let v = unsafe { _mm512_maskz_loadu_epi8(mask, q.as_ptr().add(c * 64)) };
        chunks.push((_mm512_xor_si512(v, offset), mask));
    }
    let mut r = 0;
    while r + 16 <= n {
        // Safety: `r + 16 ≤ n`: rows `r..r + 16` lie within `rows` and `out` holds `r..r + 16`.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(r).cast(), block16(rows, d, r, &chunks)) };
        r += 16;
    }
    for (i, o) in out.iter_mut().enumerate().take(n).skip(r) {
        // Safety: `i < n`.
        *o = _mm512_reduce_add_epi32(unsafe { row(rows, d, i, &chunks) });
    }
}

/// The products of rows `r..r + 16`, one per lane.
///
/// # Safety
/// `(r + 16)·d ≤ rows.len()`, and `chunks` is the query as built by [`dot_i8_rows`] for this `d`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn block16(rows: &[i8], d: usize, r: usize, chunks: &[(__m512i, u64)]) -> __m512i {
    let mut quads = [_mm512_setzero_si512(); 4];
    for (k, slot) in quads.iter_mut().enumerate() {
        let at = r + 4 * k;
        // Safety: rows `at..at + 4` are among `r..r + 16` (the caller's guarantee).
        let v =
            unsafe { [row(rows, d, at, chunks), row(rows, d, at + 1, chunks), row(rows, d, at + 2, chunks), row(rows, d, at + 3, chunks)] };
        *slot = quad(v[0], v[1], v[2], v[3]);
    }
    let [q0, q1, q2, q3] = quads;
    // Add the four 128-bit lanes of each quad: pair lanes (0, 1) and (2, 3), then the pairs.
    let u01 = _mm512_add_epi32(_mm512_shuffle_i32x4::<0b10_00_10_00>(q0, q1), _mm512_shuffle_i32x4::<0b11_01_11_01>(q0, q1));
    let u23 = _mm512_add_epi32(_mm512_shuffle_i32x4::<0b10_00_10_00>(q2, q3), _mm512_shuffle_i32x4::<0b11_01_11_01>(q2, q3));
    _mm512_add_epi32(_mm512_shuffle_i32x4::<0b10_00_10_00>(u01, u23), _mm512_shuffle_i32x4::<0b11_01_11_01>(u01, u23))
}

/// The 16 partial sums of row `r` (their total is the row's product with the query).
///
/// # Safety
/// `(r + 1)·d ≤ rows.len()`, and `chunks` is the query as built by [`dot_i8_rows`] for this `d`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn row(rows: &[i8], d: usize, r: usize, chunks: &[(__m512i, u64)]) -> __m512i {
    let p = rows.as_ptr().wrapping_add(r * d);
    let ones = _mm512_set1_epi8(1);
    let (mut acc, mut sum) = (_mm512_setzero_si512(), _mm512_setzero_si512());
    for (c, (qv, mask)) in chunks.iter().enumerate() {
        // Safety: the bytes under `mask` are `r·d + c·64 ..` up to `r·d + d ≤ rows.len()`.
        let x = unsafe { _mm512_maskz_loadu_epi8(*mask, p.add(c * 64)) };
        acc = _mm512_dpbusd_epi32(acc, *qv, x);
        sum = _mm512_dpbusd_epi32(sum, ones, x);
    }
    _mm512_sub_epi32(acc, _mm512_slli_epi32::<7>(sum))
}

/// Four rows' partial sums folded so each 128-bit lane holds the [a, b, c, e] sums of that lane.
#[target_feature(enable = "avx512f")]
#[inline]
fn quad(a: __m512i, b: __m512i, c: __m512i, e: __m512i) -> __m512i {
    let ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    let ce = _mm512_add_epi32(_mm512_unpacklo_epi32(c, e), _mm512_unpackhi_epi32(c, e));
    _mm512_add_epi32(_mm512_unpacklo_epi64(ab, ce), _mm512_unpackhi_epi64(ab, ce))
}
