//! How the comparison's sentences write numbers: percentages, approximate figures, times.

use crate::domain::model::level::fmt_number;

/// A fraction as an unsigned percentage: whole percent from 10 % up, one decimal below.
pub(crate) fn fmt_pct_abs(fraction: f64) -> String {
    let pct = (fraction * 100.0).abs();
    if pct >= 9.95 {
        format!("{pct:.0}")
    } else {
        format!("{pct:.1}")
    }
}

/// A signed percentage with a true minus sign: `−42 %`, `+4.5 %`.
pub(crate) fn fmt_pct_signed(fraction: f64) -> String {
    let sign = if fraction < 0.0 { "−" } else { "+" };
    format!("{sign}{} %", fmt_pct_abs(fraction))
}

pub(super) fn rose_fell(ratio: f64) -> &'static str {
    if ratio >= 1.0 {
        "rose"
    } else {
        "fell"
    }
}

/// Three significant figures, for "≈" figures: 510.35 → `510`, 1234.5 → `1230`, 61.27 → `61.3`.
pub(crate) fn approx(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return fmt_number(v);
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (2 - magnitude).max(0);
    let scale = 10f64.powi(2 - magnitude);
    let rounded = (v * scale).round() / scale;
    format!("{rounded:.prec$}", prec = decimals as usize)
}

/// Milliseconds as a person reads them: `35.23 s` from 1 s up, `850.0 ms` below.
pub(crate) fn fmt_ms(ms: f64) -> String {
    if ms.abs() >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.1} ms")
    }
}
