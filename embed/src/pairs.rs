//! A held set of sentence pairs (paraphrases, related and unrelated) and Spearman's rank
//! correlation, to say how closely one embedder's similarities track another's.

/// Sentence pairs, written for this purpose: none is used to build any table.
pub const HELD_PAIRS: [(&str, &str); 40] = [
    ("The cat sits on the mat.", "A cat is sitting on a rug."),
    ("The service streams events to Kinesis.", "Events are sent from the service into Kinesis."),
    ("How do I reset my password?", "I forgot my password and need a new one."),
    ("The invoice was paid yesterday.", "Yesterday the bill was settled."),
    ("A man is playing a guitar.", "Someone plays an acoustic guitar."),
    ("The order has not arrived yet.", "My package is still missing."),
    ("Neurons transmit electrical signals.", "Nerve cells carry electrical impulses."),
    ("The heart pumps blood through the body.", "Blood is circulated by the heart."),
    ("She bought a new car last week.", "Last week she purchased a new automobile."),
    ("The meeting is moved to Friday.", "We rescheduled the meeting for Friday."),
    ("The database is running out of disk space.", "Storage on the database server is almost full."),
    ("Children are playing in the park.", "Kids play outside in a park."),
    ("The weather is sunny and warm today.", "It is a warm, bright day."),
    ("He is cooking pasta for dinner.", "He makes spaghetti for the evening meal."),
    ("The train was delayed by an hour.", "The train arrived sixty minutes late."),
    ("Please cancel my subscription.", "I want to end my membership."),
    ("The patient has a high fever.", "The sick person's temperature is elevated."),
    ("The stock market fell sharply.", "Share prices dropped steeply."),
    ("Auth service depends on the user database.", "The authentication service needs the users DB."),
    ("The river flooded the village.", "Water from the river covered the town."),
    ("The cat sits on the mat.", "Interest rates rose again this quarter."),
    ("The service streams events to Kinesis.", "My grandmother bakes bread on Sundays."),
    ("How do I reset my password?", "The volcano erupted last night."),
    ("The invoice was paid yesterday.", "Neurons transmit electrical signals."),
    ("A man is playing a guitar.", "The database is running out of disk space."),
    ("The order has not arrived yet.", "The heart pumps blood through the body."),
    ("Children are playing in the park.", "Please cancel my subscription."),
    ("The weather is sunny and warm today.", "Auth service depends on the user database."),
    ("He is cooking pasta for dinner.", "The stock market fell sharply."),
    ("The train was delayed by an hour.", "She bought a new car last week."),
    ("The patient has a high fever.", "The river flooded the village."),
    ("The meeting is moved to Friday.", "A cat is sitting on a rug."),
    ("The cat sits on the mat.", "A dog sleeps on the sofa."),
    ("The service streams events to Kinesis.", "The service writes logs to Kafka."),
    ("The invoice was paid yesterday.", "The invoice is due next month."),
    ("The heart pumps blood through the body.", "The lungs take in oxygen."),
    ("She bought a new car last week.", "She sold her old bicycle."),
    ("The train was delayed by an hour.", "The flight was cancelled."),
    ("The patient has a high fever.", "The doctor prescribed antibiotics."),
    ("Neurons transmit electrical signals.", "Glial cells support neurons."),
];

fn ranks(v: &[f32]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]].total_cmp(&v[idx[i]]).is_eq() {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for k in &idx[i..=j] {
            r[*k] = avg;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rank correlation of two equally long series (ties get average ranks).
pub fn spearman(a: &[f32], b: &[f32]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

/// Cosine similarity of each held pair under `e`.
pub fn pair_similarities(e: &dyn crate::Embedder) -> Result<Vec<f32>, crate::EmbedError> {
    let left: Vec<&str> = HELD_PAIRS.iter().map(|p| p.0).collect();
    let right: Vec<&str> = HELD_PAIRS.iter().map(|p| p.1).collect();
    let (l, r) = (e.embed(&left)?, e.embed(&right)?);
    Ok(l.iter().zip(&r).map(|(a, b)| crate::cosine(a, b)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_of_known_series() {
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0], &[4.0, 3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        // Ties take average ranks: scipy.stats.spearmanr([1,2,2,3],[1,3,2,4]) = 0.9486832980505138.
        assert!((spearman(&[1.0, 2.0, 2.0, 3.0], &[1.0, 3.0, 2.0, 4.0]) - 0.948_683_298_050_513_8).abs() < 1e-12);
    }
}
