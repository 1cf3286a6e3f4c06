//! The link-preview image of a run (`og:image`): a small chart of its throughput curve, so a
//! link pasted into a chat unfurls with what the sweep found — a title, both axes with
//! their units and numbers, the curve, the saturated region shaded, and the peak and the
//! knee labelled; annotated levels are pinned, excluded ones drawn hollow.
//!
//! Drawn with plotters' bitmap backend into an RGB buffer, encoded with `png`. Text uses
//! DejaVu Sans, shipped in the binary (`server/assets/fonts`, Bitstream Vera licence; see
//! `LICENSE-DejaVu.txt` there): the image never depends on the machine's fonts.

use app::domain::analysis::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use app::domain::model::annotations::{Anchor, Effect};
use app::domain::model::format::{load, num};
use app::domain::{LoadKind, Run};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::sync::OnceLock;

const W: u32 = 1200;
const H: u32 = 630;
/// DejaVu Sans 2.37 (Debian fonts-dejavu-core), unmodified.
const FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

const BLUE: RGBColor = RGBColor(0, 114, 178);
const ORANGE: RGBColor = RGBColor(213, 94, 0);
const PIN: RGBColor = RGBColor(180, 69, 31);
const GREY: RGBColor = RGBColor(120, 120, 120);
const INK: RGBColor = RGBColor(27, 31, 36);
const MUTED: RGBColor = RGBColor(91, 100, 112);

/// Registers the shipped font with plotters, once per process.
fn font_ready() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| match plotters::style::register_font(FAMILY, FontStyle::Normal, FONT) {
        Ok(()) => true,
        Err(_) => {
            tracing::error!("the preview image's font could not be read");
            false
        }
    })
}

/// The run's throughput chart as a 1200×630 PNG (a blank image if drawing failed; the
/// log says why).
pub fn throughput_png(run: &Run) -> Vec<u8> {
    let mut rgb = vec![255u8; (W * H * 3) as usize];
    if let Err(e) = draw(run, &mut rgb) {
        tracing::error!(run = %run.id, error = %e, "could not draw the preview image");
        rgb.fill(255);
    }
    encode(&rgb)
}

fn encode(rgb: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, W, H);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    // Flat colours and anti-aliased text: the best compression roughly halves the file.
    enc.set_compression(png::Compression::Best);
    enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let written = enc.write_header().and_then(|mut w| w.write_image_data(rgb));
    if let Err(e) = written {
        tracing::error!(error = %e, "could not encode the preview image");
    }
    out
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or(s)),
        None => s.to_owned(),
    }
}

fn draw(run: &Run, rgb: &mut [u8]) -> Result<(), String> {
    if !font_ready() {
        return Err("no font".into());
    }
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let root = BitMapBackend::with_buffer(rgb, (W, H)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let kind = run.points.first().map_or(LoadKind::Concurrency, |p| p.load_kind);
    let at =
        |l: f64| if kind == LoadKind::Concurrency { format!("C={}", load(l)) } else { format!("{} req/s", load(l)) };
    let pts: Vec<(f64, f64)> = run
        .points
        .iter()
        .filter_map(|p| Some((p.load_value, p.output_tok_s()?)))
        .filter(|(l, t)| *l > 0.0 && t.is_finite())
        .collect();
    let sat = saturation(&run.points, DEFAULT_KNEE_THRESHOLD);

    // Title and a one-line finding.
    let title = TextStyle::from((FAMILY, 40).into_font()).color(&INK);
    root.draw_text(&clip(&run.name, 52), &title, (40, 24)).map_err(|e| err(&e))?;
    let facts: Vec<String> = [run.facts.model.clone(), run.facts.gpu_label()].into_iter().flatten().collect();
    let finding = match &sat {
        Some(s) => format!("peak {} tok/s at {}", num(Some(s.max.tok_s), 1), at(s.max.load)),
        None => "no level with output throughput".to_owned(),
    };
    let sub = TextStyle::from((FAMILY, 24).into_font()).color(&MUTED);
    let line = if facts.is_empty() { finding } else { format!("{} · {finding}", facts.join(" · ")) };
    root.draw_text(&clip(&line, 90), &sub, (40, 76)).map_err(|e| err(&e))?;

    let area = root.margin(120, 24, 28, 48);
    if pts.is_empty() {
        let note = TextStyle::from((FAMILY, 30).into_font()).color(&MUTED);
        area.draw_text("Nothing to draw yet: no level has finished.", &note, (200, 200)).map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
        return Ok(());
    }
    // log₂ load axis, labelled at the powers of two; y from 0 to a round value above the peak.
    let xs: Vec<f64> = pts.iter().map(|p| p.0.log2()).collect();
    let (lo, hi) =
        (xs.iter().copied().fold(f64::INFINITY, f64::min), xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
    let pad = 0.2;
    let top = app::charts::nice_max(pts.iter().map(|p| p.1).fold(0.0, f64::max)).unwrap_or(1.0);
    let x_range = (lo - pad)..(hi + pad);
    let ticks = (hi - lo) as usize + 1;
    let mut chart = ChartBuilder::on(&area)
        .x_label_area_size(64)
        .y_label_area_size(96)
        .build_cartesian_2d(x_range, 0f64..top)
        .map_err(|e| err(&e))?;
    let label = TextStyle::from((FAMILY, 22).into_font()).color(&INK);
    let axis_desc = TextStyle::from((FAMILY, 24).into_font()).color(&MUTED);
    let x_desc = match kind {
        LoadKind::Concurrency => "Concurrency (requests in flight, log₂ scale)",
        LoadKind::RequestRate => "Request rate (req/s, log₂ scale)",
    };
    chart
        .configure_mesh()
        .light_line_style(RGBColor(238, 240, 243))
        .bold_line_style(RGBColor(222, 226, 230))
        .x_labels(ticks.clamp(2, 12))
        .x_label_formatter(&|v| if (v - v.round()).abs() < 1e-6 { load(2f64.powf(v.round())) } else { String::new() })
        .y_label_formatter(&|v| num(Some(*v), 0))
        .y_labels(6)
        .label_style(label)
        .axis_desc_style(axis_desc)
        .x_desc(x_desc)
        .y_desc("Output throughput (tok/s)")
        .draw()
        .map_err(|e| err(&e))?;
    let px = |l: f64, t: f64| (l.log2(), t);
    // The saturated region, shaded.
    if let Some(r) = sat.as_ref().and_then(|s| s.region).filter(|r| r.to > r.from) {
        let shade = RGBColor(230, 159, 0).mix(0.14).filled();
        chart
            .draw_series(std::iter::once(Rectangle::new([(r.from.log2(), 0.0), (r.to.log2(), top)], shade)))
            .map_err(|e| err(&e))?;
    }
    chart
        .draw_series(LineSeries::new(pts.iter().map(|(l, t)| px(*l, *t)), BLUE.stroke_width(5)))
        .map_err(|e| err(&e))?;
    chart.draw_series(pts.iter().map(|(l, t)| Circle::new(px(*l, *t), 8, BLUE.filled()))).map_err(|e| err(&e))?;
    let tag = TextStyle::from((FAMILY, 24).into_font()).color(&INK);
    if let Some(s) = &sat {
        let (x, y) = px(s.max.load, s.max.tok_s);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, y))
                    + Circle::new((0, 0), 12, BLUE.stroke_width(3))
                    + Text::new(format!("peak {} tok/s", num(Some(s.max.tok_s), 1)), (-190, -40), tag.clone()),
            ))
            .map_err(|e| err(&e))?;
        if let Some(k) = s.knee.filter(|k| k.load != s.max.load) {
            let (x, y) = px(k.load, k.tok_s);
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((x, y))
                        + Circle::new((0, 0), 13, ORANGE.filled())
                        + Text::new(format!("knee {}", at(k.load)), (18, 12), tag.clone().color(&ORANGE)),
                ))
                .map_err(|e| err(&e))?;
        }
    }
    draw_marks(&mut chart, run, top)?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// The marks on the curve: levels set aside (excluded) hollow and grey, annotated levels
/// pinned.
fn draw_marks(
    chart: &mut ChartContext<'_, BitMapBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    run: &Run,
    top: f64,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let px = |l: f64, t: f64| (l.log2(), t);
    // Excluded levels hollow and grey; annotated levels pinned.
    for s in run.set_aside.iter().filter(|s| s.effect == Effect::Exclude) {
        if let Some(t) = s.point.output_tok_s().filter(|t| t.is_finite() && *t <= top) {
            chart
                .draw_series(std::iter::once(Circle::new(px(s.point.load_value, t), 10, GREY.stroke_width(3))))
                .map_err(|e| err(&e))?;
        }
    }
    for a in run.annotations.iter().filter(|a| matches!(a.anchor, Anchor::Point { .. })) {
        for p in run.points.iter().filter(|p| a.anchor.covers(p)) {
            if let Some(t) = p.output_tok_s() {
                let pin = EmptyElement::at(px(p.load_value, t))
                    + PathElement::new(vec![(0, -14), (0, -38)], PIN.stroke_width(4))
                    + Circle::new((0, -44), 9, PIN.filled());
                chart.draw_series(std::iter::once(pin)).map_err(|e| err(&e))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(levels: &[(f64, f64)]) -> Run {
        app::domain::Run {
            id: app::domain::RunId::parse("test1").unwrap(),
            name: "Kimi-K2.5 NVFP4 · /v1/chat/completions".into(),
            created_at: String::new(),
            status: app::domain::RunStatus::Complete,
            source: app::domain::SourceInfo { format: app::domain::SourceFormat::Manual, file_name: None },
            facts: Default::default(),
            definitions: Default::default(),
            points: levels
                .iter()
                .map(|(c, t)| {
                    let mut p = app::domain::Point::at(LoadKind::Concurrency, *c);
                    p.set(
                        app::domain::model::metrics::Metric::OutputThroughput,
                        app::domain::model::metrics::Stat::Mean,
                        *t,
                    );
                    p
                })
                .collect(),
            set_aside: vec![],
            annotations: vec![],
        }
    }

    /// Decodes a PNG: (width, height, RGB pixels).
    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    /// Pixels of a colour inside a rectangle of the image.
    fn count(px: &[u8], (x0, y0, x1, y1): (u32, u32, u32, u32), f: impl Fn(&[u8]) -> bool) -> usize {
        (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| ((y * W + x) * 3) as usize))
            .filter(|i| px.get(*i..*i + 3).is_some_and(&f))
            .count()
    }

    #[test]
    fn a_chart_with_title_axes_curve_peak_and_knee() {
        let bytes = throughput_png(&run(&[(1.0, 60.0), (2.0, 118.0), (4.0, 230.0), (8.0, 240.0), (16.0, 245.0)]));
        assert_eq!(bytes.get(..8), Some(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a][..]));
        let (w, h, px) = decode(&bytes);
        assert_eq!((w, h), (1200, 630));
        let dark = |p: &[u8]| p.iter().all(|c| *c < 90);
        // Title text in the top band, axis numbers along the left and the bottom.
        assert!(count(&px, (40, 20, 900, 70), dark) > 500, "the title is drawn");
        assert!(count(&px, (0, 120, 230, 560), |p| p.iter().all(|c| *c < 150)) > 300, "y-axis labels and name");
        assert!(count(&px, (230, 540, 1180, 630), |p| p.iter().all(|c| *c < 150)) > 300, "x-axis labels and name");
        // The curve (blue), the knee (orange) and the saturated region (pale orange).
        assert!(count(&px, (0, 0, W, H), |p| p == [0, 114, 178]) > 2_000, "the curve");
        assert!(count(&px, (0, 0, W, H), |p| p == [213, 94, 0]) > 200, "the knee");
        assert!(count(&px, (0, 0, W, H), |p| p[0] > 240 && p[1] > 215 && p[1] < 245 && p[2] < 235) > 2_000, "shade");
        assert!(bytes.len() < 200_000, "compressed: {} bytes", bytes.len());
        if let Some(path) = std::env::var_os("PLATEAU_PREVIEW_PNG") {
            std::fs::write(path, &bytes).unwrap();
        }
    }

    #[test]
    fn a_run_without_levels_still_gets_a_titled_image() {
        let (w, h, px) = decode(&throughput_png(&run(&[])));
        assert_eq!((w, h), (1200, 630));
        assert!(count(&px, (40, 20, 900, 70), |p| p.iter().all(|c| *c < 90)) > 500, "the title is drawn");
        assert!(px.chunks(3).any(|p| p != [255, 255, 255]), "not blank");
    }
}
