//! Display formatting shared by tables, tooltips and exports: one place decides how an
//! unknown value looks ("—") and how many digits a figure deserves.

/// The mark shown for a value the source did not report.
pub const UNKNOWN: &str = "—";

/// A number with `digits` decimals, or "—".
pub fn num(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.digits$}"),
        _ => UNKNOWN.to_owned(),
    }
}

/// An integer, or "—".
pub fn int(v: Option<i64>) -> String {
    v.map_or_else(|| UNKNOWN.to_owned(), |n| n.to_string())
}

/// A duration given in milliseconds, shown in seconds with two decimals (the story's unit).
pub fn ms_as_s(v: Option<f64>) -> String {
    num(v.map(|ms| ms / 1000.0), 2)
}

/// A ratio shown as a percentage, e.g. `0.943` → `94 %`.
pub fn pct(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{:.0} %", x * 100.0),
        _ => UNKNOWN.to_owned(),
    }
}

/// A load level: `32` for concurrency, `2.5` for a rate.
pub fn load(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}")
    }
}

/// The date and minute of an RFC 3339 stamp: `2026-11-29 15:43 UTC`.
pub fn when(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(t) => t.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M UTC").to_string(),
        Err(_) => rfc3339.to_owned(),
    }
}

/// HTML-escapes text for the places that build HTML as a string (the offline report, the
/// login page) or hand text to something that renders HTML (ECharts tooltips).
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_is_a_dash_never_zero() {
        assert_eq!(num(None, 1), "—");
        assert_eq!(num(Some(f64::NAN), 1), "—");
        assert_eq!(num(Some(0.0), 1), "0.0");
        assert_eq!(ms_as_s(Some(35_230.0)), "35.23");
        assert_eq!(ms_as_s(None), "—");
        assert_eq!(int(None), "—");
        assert_eq!(pct(Some(0.9431)), "94 %");
        assert_eq!(load(32.0), "32");
        assert_eq!(load(2.5), "2.50");
        assert_eq!(when("2026-11-29T15:43:10Z"), "2026-11-29 15:43 UTC");
    }
}
