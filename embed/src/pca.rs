//! Principal components of a row matrix, by the cyclic Jacobi method on its covariance (the
//! matrices here are at most a few hundred columns wide, so the O(d³) sweeps take well under a
//! second).

/// Projects `rows` (each of width `d`) onto their top `k` principal components, centred.
/// Returns the projected rows (width `k`) and the share of variance they keep.
pub fn reduce(rows: &[Vec<f32>], d: usize, k: usize) -> (Vec<Vec<f32>>, f64) {
    let n = rows.len().max(1) as f64;
    let mut mean = vec![0.0f64; d];
    for r in rows {
        for (m, x) in mean.iter_mut().zip(r) {
            *m += f64::from(*x) / n;
        }
    }
    let mut cov = vec![0.0f64; d * d];
    let mut centred = vec![0.0f64; d];
    for r in rows {
        for (c, (x, m)) in centred.iter_mut().zip(r.iter().zip(&mean)) {
            *c = f64::from(*x) - m;
        }
        for i in 0..d {
            let ci = centred[i];
            for j in i..d {
                cov[i * d + j] += ci * centred[j];
            }
        }
    }
    for i in 0..d {
        for j in i..d {
            cov[i * d + j] /= n;
            cov[j * d + i] = cov[i * d + j];
        }
    }
    let (values, vectors) = jacobi(cov, d);
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let k = k.min(d);
    let total: f64 = values.iter().sum();
    let kept: f64 = order[..k].iter().map(|&i| values[i]).sum();
    let out = rows
        .iter()
        .map(|r| order[..k].iter().map(|&c| (0..d).map(|i| (f64::from(r[i]) - mean[i]) * vectors[i * d + c]).sum::<f64>() as f32).collect())
        .collect();
    (out, if total > 0.0 { kept / total } else { 1.0 })
}

/// Eigenvalues and eigenvectors (columns of the returned `d×d` row-major matrix) of a symmetric
/// matrix.
fn jacobi(mut a: Vec<f64>, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0.0f64; d * d];
    for i in 0..d {
        v[i * d + i] = 1.0;
    }
    for _sweep in 0..60 {
        let off: f64 = (0..d).flat_map(|i| (0..d).filter(move |&j| j != i).map(move |j| (i, j))).map(|(i, j)| a[i * d + j].powi(2)).sum();
        if off < 1e-22 {
            break;
        }
        for p in 0..d {
            for q in p + 1..d {
                let apq = a[p * d + q];
                if apq.abs() < 1e-30 {
                    continue;
                }
                let theta = (a[q * d + q] - a[p * d + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..d {
                    let akp = a[k * d + p];
                    let akq = a[k * d + q];
                    a[k * d + p] = c * akp - s * akq;
                    a[k * d + q] = s * akp + c * akq;
                }
                for k in 0..d {
                    let apk = a[p * d + k];
                    let aqk = a[q * d + k];
                    a[p * d + k] = c * apk - s * aqk;
                    a[q * d + k] = s * apk + c * aqk;
                }
                for k in 0..d {
                    let vkp = v[k * d + p];
                    let vkq = v[k * d + q];
                    v[k * d + p] = c * vkp - s * vkq;
                    v[k * d + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..d).map(|i| a[i * d + i]).collect(), v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_the_dominant_direction_and_keeps_distances() {
        // Points along (1, 2, 2)/3 with small noise on the other axes.
        let rows: Vec<Vec<f32>> = (0..200)
            .map(|i| {
                let t = i as f32 / 10.0 - 10.0;
                let noise = ((i * 7919) % 13) as f32 / 130.0 - 0.05;
                vec![t / 3.0 + noise, 2.0 * t / 3.0 - noise, 2.0 * t / 3.0 + noise / 2.0]
            })
            .collect();
        let (proj, kept) = reduce(&rows, 3, 1);
        assert!(kept > 0.99, "{kept}");
        // The 1-d projection preserves the spacing of t (up to sign).
        let step = (proj[101][0] - proj[100][0]).abs();
        assert!((step - 0.1).abs() < 0.01, "{step}");
        let (full, kept) = reduce(&rows, 3, 3);
        assert!((kept - 1.0).abs() < 1e-9);
        let dist = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f32>().sqrt();
        assert!((dist(&full[3], &full[150]) - dist(&rows[3], &rows[150])).abs() < 1e-3);
    }
}
