//! INTERIM (replaced by the full detector): E-divisive means with a permutation test.
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub alpha: f64,
    pub min_segment: usize,
    pub permutations: usize,
    pub max_change_points: usize,
}
impl Default for Settings {
    fn default() -> Self {
        Self { alpha: 0.01, min_segment: 3, permutations: 199, max_change_points: 10 }
    }
}
impl Settings {
    pub fn check(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha <= 0.5) {
            return Err("alpha: between 0 and 0.5".into());
        }
        if !(2..=50).contains(&self.min_segment) {
            return Err("min_segment: between 2 and 50".into());
        }
        if !(19..=9999).contains(&self.permutations) {
            return Err("permutations: between 19 and 9999".into());
        }
        Ok(())
    }
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub mean: f64,
    pub sd: f64,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    pub index: usize,
    pub p_value: f64,
    pub statistic: f64,
    pub before_mean: f64,
    pub after_mean: f64,
    pub change_pct: Option<f64>,
}
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Segmentation {
    pub change_points: Vec<ChangePoint>,
    pub segments: Vec<Segment>,
}

fn best(x: &[f64], m: usize) -> Option<(usize, f64)> {
    let n = x.len();
    let mut out: Option<(usize, f64)> = None;
    for t in m..=n.saturating_sub(m) {
        let (a, b) = x.split_at(t);
        let (p, q) = (a.len() as f64, b.len() as f64);
        let cross: f64 = a.iter().flat_map(|u| b.iter().map(move |v| (u - v).abs())).sum::<f64>() * 2.0 / (p * q);
        let within = |s: &[f64]| {
            let k = s.len() as f64;
            let sum: f64 = s.iter().enumerate().flat_map(|(i, u)| s[i + 1..].iter().map(move |v| (u - v).abs())).sum();
            sum / (k * (k - 1.0) / 2.0)
        };
        let q_stat = p * q / (p + q) * (cross - within(a) - within(b));
        if out.is_none_or(|(_, s)| q_stat > s) {
            out = Some((t, q_stat));
        }
    }
    out
}

fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let sd = if x.len() > 1 { (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
    (m, sd)
}

pub fn detect(values: &[f64], s: &Settings) -> Segmentation {
    let n = values.len();
    if n == 0 || values.iter().any(|v| !v.is_finite()) {
        return Segmentation::default();
    }
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15 ^ values.iter().fold(0u64, |h, v| h.rotate_left(5) ^ v.to_bits());
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut cuts: Vec<usize> = vec![0, n];
    let mut found: Vec<(usize, f64, f64)> = Vec::new();
    while found.len() < s.max_change_points {
        let mut cand: Option<(usize, f64, f64)> = None;
        for w in cuts.windows(2) {
            let seg = &values[w[0]..w[1]];
            if seg.len() < 2 * s.min_segment {
                continue;
            }
            let Some((t, stat)) = best(seg, s.min_segment) else { continue };
            let mut perm = seg.to_vec();
            let mut ge = 0usize;
            for _ in 0..s.permutations {
                for i in (1..perm.len()).rev() {
                    let j = (next() % (i as u64 + 1)) as usize;
                    perm.swap(i, j);
                }
                if best(&perm, s.min_segment).is_some_and(|(_, q)| q >= stat) {
                    ge += 1;
                }
            }
            let p = (1.0 + ge as f64) / (1.0 + s.permutations as f64);
            if cand.is_none_or(|(_, cp, _)| p < cp) {
                cand = Some((w[0] + t, p, stat));
            }
        }
        match cand {
            Some(c) if c.1 <= s.alpha => {
                found.push(c);
                cuts.push(c.0);
                cuts.sort_unstable();
            }
            _ => break,
        }
    }
    let segments: Vec<Segment> = cuts
        .windows(2)
        .map(|w| {
            let (mean, sd) = mean_sd(&values[w[0]..w[1]]);
            Segment { start: w[0], end: w[1], mean, sd }
        })
        .collect();
    found.sort_by_key(|c| c.0);
    let change_points = found
        .iter()
        .filter_map(|&(i, p, stat)| {
            let k = segments.iter().position(|g| g.start == i)?;
            let (b, a) = (segments.get(k.checked_sub(1)?)?.mean, segments.get(k)?.mean);
            Some(ChangePoint {
                index: i,
                p_value: p,
                statistic: stat,
                before_mean: b,
                after_mean: a,
                change_pct: (b != 0.0).then(|| (a - b) / b.abs() * 100.0),
            })
        })
        .collect();
    Segmentation { change_points, segments }
}
