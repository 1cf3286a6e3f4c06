//! What the runs list shows of each run's curve besides its peak: where it plateaus (the
//! run page's knee, the same function and threshold), the peak per GPU, the capacity at a
//! chosen named SLO, and the curve itself for a sparkline — each from the levels the run's
//! page uses (none hidden or excluded by an annotation).

use crate::domain::analysis::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use crate::domain::analysis::slo::{capacity, Slo};
use crate::domain::model::level::{load_label, LevelKey};
use crate::domain::{LoadKind, Point};
use serde::{Deserialize, Serialize};

/// The most points a sparkline draws: a run of more levels is drawn from every n-th one
/// (first and last kept), which a 96-pixel line cannot tell apart anyway.
pub const SPARKLINE_POINTS: usize = 48;

/// Where a run's throughput stops growing, as the list says it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Plateau {
    /// The knee's load (the run page's [`crate::domain::analysis::knee::knee`]).
    At { load_kind: LoadKind, load: f64 },
    /// Still growing at its last level.
    NotReached,
    /// Fewer than two levels of known throughput: nothing to say.
    #[default]
    Unknown,
}

impl Plateau {
    /// `C=16`, `no plateau`, or `—`.
    pub fn label(&self) -> String {
        match self {
            Plateau::At { load_kind, load } => load_label(*load_kind, *load),
            Plateau::NotReached => "no plateau".to_owned(),
            Plateau::Unknown => crate::domain::model::format::UNKNOWN.to_owned(),
        }
    }
}

/// The capacity at the chosen SLO, as the list says it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CapacityCell {
    /// The highest level meeting the SLO below its first failure.
    At { load_kind: LoadKind, load: f64 },
    /// Levels were judged and the first already fails.
    NoneMeets,
    /// No level could be judged (the run lacks a metric the SLO limits).
    Unjudged,
}

impl CapacityCell {
    /// `C=12`, `none meets it`, or `not measured`.
    pub fn label(&self) -> String {
        match self {
            CapacityCell::At { load_kind, load } => load_label(*load_kind, *load),
            CapacityCell::NoneMeets => "none meets it".to_owned(),
            CapacityCell::Unjudged => "not measured".to_owned(),
        }
    }
}

/// One run's figures for the list.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListFigures {
    pub plateau: Plateau,
    /// Peak output tok/s over the GPU count, when the run states one.
    pub tok_s_per_gpu: Option<f64>,
    /// At the list's chosen SLO (`None`: no SLO chosen, or the run has no levels).
    pub capacity: Option<CapacityCell>,
    /// `[load, output tok/s]` of the levels of the run's main load kind, in load order, at
    /// most [`SPARKLINE_POINTS`].
    pub curve: Vec<[f64; 2]>,
}

/// The figures of a run whose used levels are `points` (any order), whose peak is
/// `peak_tok_s` and which states `gpu_count` GPUs; the capacity when `slo` is given.
pub fn list_figures(
    points: &[Point],
    peak_tok_s: Option<f64>,
    gpu_count: Option<i64>,
    slo: Option<&Slo>,
) -> ListFigures {
    let mut points: Vec<Point> = points.to_vec();
    points.sort_by(|a, b| LevelKey::of(a).order(&LevelKey::of(b)));
    // The main load kind: the one most levels have (a run is nearly always of one).
    let main = [LoadKind::Concurrency, LoadKind::RequestRate]
        .into_iter()
        .max_by_key(|k| points.iter().filter(|p| p.load_kind == *k).count());
    let of_main: Vec<Point> = points.iter().filter(|p| Some(p.load_kind) == main).cloned().collect();
    let tok_s_per_gpu = match (peak_tok_s, gpu_count) {
        (Some(t), Some(n)) if n > 0 && t.is_finite() => Some(t / n as f64),
        _ => None,
    };
    let capacity = slo.filter(|_| !of_main.is_empty()).map(|slo| {
        let c = capacity(slo, &of_main);
        match (c.capacity, c.load_kind) {
            (Some(at), Some(load_kind)) => CapacityCell::At { load_kind, load: at.load },
            _ if c.first_failure.is_some() => CapacityCell::NoneMeets,
            _ => CapacityCell::Unjudged,
        }
    });
    let known: Vec<[f64; 2]> =
        of_main.iter().filter_map(|p| Some([p.load_value, p.output_tok_s().filter(|t| t.is_finite())?])).collect();
    // One level has no curve to plateau on: nothing said, rather than "no plateau".
    let plateau = match saturation(&of_main, DEFAULT_KNEE_THRESHOLD) {
        _ if known.len() < 2 => Plateau::Unknown,
        Some(s) => match s.knee {
            Some(k) => Plateau::At { load_kind: s.load_kind, load: k.load },
            None => Plateau::NotReached,
        },
        None => Plateau::Unknown,
    };
    ListFigures { plateau, tok_s_per_gpu, capacity, curve: thin(known, SPARKLINE_POINTS) }
}

/// At most `max` of `curve`'s points, evenly spaced by index, the first and last kept.
fn thin(curve: Vec<[f64; 2]>, max: usize) -> Vec<[f64; 2]> {
    if curve.len() <= max || max < 2 {
        return curve;
    }
    let last = curve.len() - 1;
    (0..max).filter_map(|i| curve.get(i * last / (max - 1)).copied()).collect()
}

/// The sparkline's polyline, `width` × `height` pixels: load on a log scale when the
/// levels span more than a factor of 4 (concurrency sweeps double), tok/s from 0.
pub fn sparkline_points(curve: &[[f64; 2]], width: f64, height: f64) -> Option<String> {
    if curve.len() < 2 {
        return None;
    }
    let log = curve.iter().all(|[l, _]| *l > 0.0) && {
        let (lo, hi) = curve.iter().fold((f64::MAX, f64::MIN), |(lo, hi), [l, _]| (lo.min(*l), hi.max(*l)));
        hi / lo > 4.0
    };
    let x_of = |l: f64| if log { l.ln() } else { l };
    let (x0, x1) = curve.iter().fold((f64::MAX, f64::MIN), |(lo, hi), [l, _]| (lo.min(x_of(*l)), hi.max(x_of(*l))));
    let top = curve.iter().fold(0.0_f64, |m, [_, t]| m.max(*t));
    // A single load (no width) or no throughput (no height): nothing to draw.
    let drawable = x1 > x0 && top > 0.0;
    if !drawable {
        return None;
    }
    Some(
        curve
            .iter()
            .map(|[l, t]| {
                let x = (x_of(*l) - x0) / (x1 - x0) * width;
                let y = height - t / top * height;
                format!("{x:.1},{y:.1}")
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::model::metrics::{Metric, Stat};

    fn level(c: f64, tok_s: f64, ttft_p99_ms: Option<f64>) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        p.set(Metric::OutputThroughput, Stat::Mean, tok_s);
        if let Some(t) = ttft_p99_ms {
            p.set(Metric::Ttft, Stat::P99, t);
        }
        p
    }

    #[test]
    fn a_curve_that_flattens_names_its_knee_and_one_still_growing_says_so() {
        // Given out of order: sorted by load first.
        let flat =
            [level(16.0, 400.0, None), level(1.0, 100.0, None), level(4.0, 380.0, None), level(8.0, 390.0, None)];
        let f = list_figures(&flat, Some(410.0), Some(2), None);
        assert_eq!(f.plateau, Plateau::At { load_kind: LoadKind::Concurrency, load: 4.0 });
        assert_eq!(f.plateau.label(), "C=4");
        assert_eq!(f.tok_s_per_gpu, Some(205.0));
        assert_eq!(f.curve, vec![[1.0, 100.0], [4.0, 380.0], [8.0, 390.0], [16.0, 400.0]]);
        assert_eq!(f.capacity, None);
        let growing = [level(1.0, 100.0, None), level(2.0, 190.0, None), level(4.0, 370.0, None)];
        let f = list_figures(&growing, Some(370.0), None, None);
        assert_eq!((f.plateau.label(), f.tok_s_per_gpu), ("no plateau".to_owned(), None));
        let one = list_figures(&[level(1.0, 100.0, None)], Some(100.0), Some(0), None);
        assert_eq!((one.plateau, one.tok_s_per_gpu), (Plateau::Unknown, None));
    }

    #[test]
    fn the_capacity_is_the_highest_level_meeting_the_slo_or_says_why_not() {
        let slo = Slo::parse("ttft:p99<=500ms").unwrap();
        let pts = [level(1.0, 100.0, Some(120.0)), level(2.0, 190.0, Some(300.0)), level(4.0, 370.0, Some(900.0))];
        let f = list_figures(&pts, Some(370.0), None, Some(&slo));
        assert_eq!(f.capacity, Some(CapacityCell::At { load_kind: LoadKind::Concurrency, load: 2.0 }));
        assert_eq!(f.capacity.unwrap().label(), "C=2");
        let strict = Slo::parse("ttft:p99<=50ms").unwrap();
        assert_eq!(list_figures(&pts, None, None, Some(&strict)).capacity, Some(CapacityCell::NoneMeets));
        let unmeasured = [level(1.0, 100.0, None), level(2.0, 190.0, None)];
        assert_eq!(list_figures(&unmeasured, None, None, Some(&slo)).capacity, Some(CapacityCell::Unjudged));
        assert_eq!(CapacityCell::Unjudged.label(), "not measured");
    }

    #[test]
    fn a_long_curve_is_thinned_keeping_its_ends_and_the_sparkline_fits_its_box() {
        let long: Vec<Point> = (1..=200).map(|i| level(f64::from(i), f64::from(i) * 2.0, None)).collect();
        let f = list_figures(&long, None, None, None);
        assert_eq!(f.curve.len(), SPARKLINE_POINTS);
        assert_eq!((f.curve[0], f.curve[SPARKLINE_POINTS - 1]), ([1.0, 2.0], [200.0, 400.0]));
        let line = sparkline_points(&f.curve, 96.0, 20.0).unwrap();
        let xy: Vec<(f64, f64)> = line
            .split(' ')
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert!(xy.iter().all(|(x, y)| (0.0..=96.0).contains(x) && (0.0..=20.0).contains(y)), "{line}");
        assert_eq!((xy[0].0, xy[xy.len() - 1]), (0.0, (96.0, 0.0)));
        assert_eq!(sparkline_points(&[[1.0, 5.0]], 96.0, 20.0), None, "one level draws no line");
        assert_eq!(sparkline_points(&[[1.0, 0.0], [2.0, 0.0]], 96.0, 20.0), None, "all-zero draws no line");
    }
}
