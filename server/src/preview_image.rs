//! The link-preview image of a run (`og:image`): its throughput curve as a PNG, so a link
//! pasted into a chat unfurls with the shape of the sweep — where it rises and where it
//! flattens, the knee, and the annotated levels. Text lives in `og:title` and
//! `og:description`; the image carries no font, only the curve.

use app::domain::annotations::{Anchor, Effect};
use app::domain::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use app::domain::Run;

const W: usize = 1200;
const H: usize = 630;
const MARGIN: f64 = 70.0;

struct Canvas {
    px: Vec<u8>,
}

impl Canvas {
    fn new() -> Self {
        Self { px: vec![255; W * H * 3] }
    }

    fn set(&mut self, x: i64, y: i64, rgb: [u8; 3]) {
        if x < 0 || y < 0 || x >= W as i64 || y >= H as i64 {
            return;
        }
        let i = (y as usize * W + x as usize) * 3;
        if let Some(p) = self.px.get_mut(i..i + 3) {
            p.copy_from_slice(&rgb);
        }
    }

    fn disc(&mut self, cx: f64, cy: f64, r: f64, rgb: [u8; 3]) {
        let (x0, x1, y0, y1) =
            ((cx - r).floor() as i64, (cx + r).ceil() as i64, (cy - r).floor() as i64, (cy + r).ceil() as i64);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f64 - cx, y as f64 - cy);
                if dx * dx + dy * dy <= r * r {
                    self.set(x, y, rgb);
                }
            }
        }
    }

    fn ring(&mut self, cx: f64, cy: f64, r: f64, width: f64, rgb: [u8; 3]) {
        let (x0, x1, y0, y1) =
            ((cx - r).floor() as i64, (cx + r).ceil() as i64, (cy - r).floor() as i64, (cy + r).ceil() as i64);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let d = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)).sqrt();
                if d <= r && d >= r - width {
                    self.set(x, y, rgb);
                }
            }
        }
    }

    fn line(&mut self, a: (f64, f64), b: (f64, f64), width: f64, rgb: [u8; 3]) {
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let steps = (len * 2.0).ceil().max(1.0) as usize;
        for i in 0..=steps {
            let t = i as f64 / steps as f64;
            self.disc(a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t, width / 2.0, rgb);
        }
    }

    fn png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, W as u32, H as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let written = enc.write_header().and_then(|mut w| w.write_image_data(&self.px));
        if let Err(e) = written {
            tracing::error!(error = %e, "could not encode the preview image");
        }
        out
    }
}

/// The run's throughput curve as a 1200×630 PNG.
pub fn throughput_png(run: &Run) -> Vec<u8> {
    let mut c = Canvas::new();
    let pts: Vec<(f64, f64)> = run
        .points
        .iter()
        .filter_map(|p| Some((p.load_value, p.output_tok_s()?)))
        .filter(|(l, t)| *l > 0.0 && t.is_finite())
        .collect();
    let (plot_w, plot_h) = (W as f64 - 2.0 * MARGIN, H as f64 - 2.0 * MARGIN);
    let xs: Vec<f64> = pts.iter().map(|p| p.0.log2()).collect();
    let (x_min, x_max) =
        (xs.iter().copied().fold(f64::INFINITY, f64::min), xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let y_max = pts.iter().map(|p| p.1).fold(0.0_f64, f64::max) * 1.1;
    let to_px = |load: f64, tok: f64| {
        let span = if x_max > x_min { x_max - x_min } else { 1.0 };
        // 4 % padding each side, so end points do not sit on the axes.
        let fx = if x_max > x_min { 0.04 + 0.92 * (load.log2() - x_min) / span } else { 0.5 };
        let fy = if y_max > 0.0 { tok / y_max } else { 0.0 };
        (MARGIN + fx * plot_w, H as f64 - MARGIN - fy * plot_h)
    };
    // Grid and axes.
    for i in 0..=4 {
        let y = H as f64 - MARGIN - plot_h * f64::from(i) / 4.0;
        c.line((MARGIN, y), (W as f64 - MARGIN, y), 1.0, [228, 228, 228]);
    }
    c.line((MARGIN, H as f64 - MARGIN), (W as f64 - MARGIN, H as f64 - MARGIN), 3.0, [60, 60, 60]);
    c.line((MARGIN, MARGIN), (MARGIN, H as f64 - MARGIN), 3.0, [60, 60, 60]);
    if pts.is_empty() {
        return c.png();
    }
    // The saturated region, shaded.
    if let Some(sat) = saturation(&run.points, DEFAULT_KNEE_THRESHOLD) {
        if let Some(r) = sat.region.filter(|r| r.to > r.from) {
            let (x0, _) = to_px(r.from, 0.0);
            let (x1, _) = to_px(r.to, 0.0);
            for x in x0 as i64..=x1 as i64 {
                for y in MARGIN as i64..(H as f64 - MARGIN) as i64 {
                    c.set(x, y, [252, 240, 214]);
                }
            }
        }
    }
    let px: Vec<(f64, f64)> = pts.iter().map(|(l, t)| to_px(*l, *t)).collect();
    for w in px.windows(2) {
        if let [a, b] = w {
            c.line(*a, *b, 6.0, [31, 119, 180]);
        }
    }
    for p in &px {
        c.disc(p.0, p.1, 9.0, [31, 119, 180]);
    }
    if let Some(k) = saturation(&run.points, DEFAULT_KNEE_THRESHOLD).and_then(|s| s.knee) {
        let (x, y) = to_px(k.load, k.tok_s);
        c.disc(x, y, 14.0, [230, 159, 0]);
    }
    for s in run.set_aside.iter().filter(|s| s.effect == Effect::Exclude) {
        if let Some(t) = s.point.output_tok_s() {
            let (x, y) = to_px(s.point.load_value, t);
            c.ring(x, y, 11.0, 3.0, [150, 150, 150]);
        }
    }
    for a in run.annotations.iter().filter(|a| matches!(a.anchor, Anchor::Point { .. })) {
        for p in run.points.iter().filter(|p| a.anchor.covers(p)) {
            if let Some(t) = p.output_tok_s() {
                let (x, y) = to_px(p.load_value, t);
                c.line((x, y - 14.0), (x, y - 40.0), 4.0, [180, 69, 31]);
                c.disc(x, y - 46.0, 10.0, [180, 69, 31]);
            }
        }
    }
    c.png()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_png_of_the_right_size() {
        let run = app::domain::Run {
            id: app::domain::RunId::parse("test1").unwrap(),
            name: "t".into(),
            created_at: String::new(),
            status: app::domain::RunStatus::Complete,
            source: app::domain::SourceInfo { format: app::domain::SourceFormat::Manual, file_name: None },
            facts: Default::default(),
            definitions: Default::default(),
            points: [(1.0, 60.0), (2.0, 118.0), (4.0, 230.0), (8.0, 240.0)]
                .iter()
                .map(|(c, t)| {
                    let mut p = app::domain::Point::at(app::domain::LoadKind::Concurrency, *c);
                    p.set(app::domain::metrics::Metric::OutputThroughput, app::domain::metrics::Stat::Mean, *t);
                    p
                })
                .collect(),
            set_aside: vec![],
            annotations: vec![],
        };
        let bytes = throughput_png(&run);
        assert_eq!(bytes.get(..8), Some(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a][..]));
        let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (1200, 630));
        // The curve is drawn: the blue of the series appears.
        let mut reader = reader;
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).unwrap();
        assert!(buf.chunks(3).any(|p| p == [31, 119, 180]));
        assert!(bytes.len() < 200_000, "compressed: {} bytes", bytes.len());
    }
}
