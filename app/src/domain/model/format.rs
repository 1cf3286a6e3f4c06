//! Display formatting shared by tables, tooltips and exports: one place decides how an
//! unknown value looks ("—") and how many digits a figure deserves.

/// The mark shown for a value the source did not report.
pub const UNKNOWN: &str = "—";

/// `s` with its first character upper-cased (sentences built from labels).
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A number with `digits` decimals, or "—" (plain digits: exports and inputs).
pub fn num(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.digits$}"),
        _ => UNKNOWN.to_owned(),
    }
}

/// `digits` of a formatted number with a comma between each group of three in its whole
/// part: `1017.0` → `1,017.0`, `-12345` → `-12,345`; anything else (`—`, `inf`) as it is.
pub fn grouped(digits: &str) -> String {
    let (sign, rest) = match digits.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", digits),
    };
    let (whole, frac) = rest.split_once('.').map_or((rest, None), |(w, f)| (w, Some(f)));
    if whole.len() < 4 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return digits.to_owned();
    }
    let mut out = String::with_capacity(digits.len() + whole.len() / 3);
    out.push_str(sign);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// A number as the pages show it: [`num`] with thousands separators (`1,017.0`). Exports
/// keep [`num`]'s plain digits.
pub fn shown(v: Option<f64>, digits: usize) -> String {
    grouped(&num(v, digits))
}

/// A count as the pages show it: `12,480`, or "—".
pub fn shown_int(v: Option<i64>) -> String {
    grouped(&int(v))
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

/// `v` to `sig` significant digits (at least one, no exponent): `0.212` → `0.21`, `31.4` → `31`.
pub fn significant(v: f64, sig: usize) -> String {
    if !v.is_finite() {
        return UNKNOWN.to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let magnitude = v.abs().log10().floor() as i64;
    let decimals = (sig.max(1) as i64 - 1 - magnitude).max(0) as usize;
    format!("{v:.decimals$}")
}

/// A duration given in ms, with its unit and two significant digits: `0.21 s`, `3.1 s`,
/// `12 s` from 100 ms up, `35 ms` and `8.2 ms` below (a sentence's precision, not a table's).
pub fn duration_ms(ms: f64) -> String {
    if !ms.is_finite() {
        UNKNOWN.to_owned()
    } else if ms.abs() >= 100.0 {
        format!("{} s", significant(ms / 1000.0, 2))
    } else {
        format!("{} ms", significant(ms, 2))
    }
}

/// Output tokens per second in a sentence: whole from 100 up (`2,600 tok/s`), one decimal below.
pub fn tok_s(v: f64) -> String {
    if !v.is_finite() {
        UNKNOWN.to_owned()
    } else if v.abs() >= 100.0 {
        format!("{} tok/s", grouped(&format!("{v:.0}")))
    } else {
        format!("{v:.1} tok/s")
    }
}

/// A count that may be an average (requests waiting, running): whole numbers and anything
/// from 10 up without decimals (`64`, `30`), one decimal below (`2.5`).
pub fn count(v: f64) -> String {
    if !v.is_finite() {
        UNKNOWN.to_owned()
    } else if v.fract() == 0.0 || v.abs() >= 10.0 {
        grouped(&format!("{v:.0}"))
    } else {
        format!("{v:.1}")
    }
}

/// A fraction as a percentage judged against `threshold` (also a fraction), never rounded
/// onto it: whole percent from 10 % up, one decimal below (`3.5 %`), one decimal more whenever the rounded figure would land on the
/// threshold or cross to its other side (89.6 % against 90 % reads "89.6 %", not "90 %"),
/// up to three decimals; beyond that, "below 90 %" or "above 90 %". A value exactly on
/// the threshold is shown as the threshold.
pub fn pct_clear_of(v: f64, threshold: f64) -> String {
    if !v.is_finite() {
        return UNKNOWN.to_owned();
    }
    let (x, t) = (v * 100.0, threshold * 100.0);
    if (x - t).abs() < 1e-9 {
        return format!("{} %", plain(t));
    }
    let first = if x.abs() >= 9.95 { 0 } else { 1 };
    for decimals in first..=3_usize {
        let shown = format!("{x:.decimals$}");
        let back: f64 = shown.parse().unwrap_or(x);
        let on_threshold = (back - t).abs() < 1e-9;
        let crossed = (x < t) != (back < t);
        if !on_threshold && !crossed {
            return format!("{shown} %");
        }
    }
    let side = if x < t { "below" } else { "above" };
    format!("{side} {} %", plain(t))
}

/// Up to three decimals, trailing zeros dropped: `90`, `1.5`.
pub fn plain(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Items of a sentence: `a`, `a and b`, `a, b and c`.
pub fn list_and<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [init @ .., last] => {
            format!("{} and {}", init.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(", "), last.as_ref())
        }
    }
}

/// The date and minute of an RFC 3339 stamp: `2026-11-29 15:43 UTC`.
pub fn when(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(t) => t.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M UTC").to_string(),
        Err(_) => rfc3339.to_owned(),
    }
}

/// A timestamp to the minute in UTC without the zone's name ("2026-12-06 07:57"): where a
/// date only tells runs apart (names, links). As written when it does not parse.
pub fn when_short(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(t) => t.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M").to_string(),
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

/// Run colours, in order (colour-blind-safe Okabe–Ito with grey for its black, which the
/// dark theme would hide; then ECharts' defaults): the compare charts draw run `i` in it,
/// and the compare page's swatches show the same.
pub const RUN_PALETTE: [&str; 10] =
    ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#8c8c8c", "#91cc75", "#fc8452"];

/// The colour of run `i`.
pub fn run_colour(i: usize) -> &'static str {
    RUN_PALETTE.get(i % RUN_PALETTE.len()).copied().unwrap_or("#333")
}

/// A number with the precision its size deserves: 1,017.0, 601.3, 42.75, 0.123.
pub fn fig(v: f64) -> String {
    let digits = if v.abs() >= 100.0 {
        1
    } else if v.abs() >= 1.0 {
        2
    } else {
        3
    };
    shown(Some(v), digits)
}

/// A number in a sentence, in `unit`: throughput with one decimal, as the tables give it
/// (`1,017.0`, `75.0`), so one sentence never holds "1,017.0 tok/s" beside "75.00 tok/s";
/// anything else by [`fig`].
pub fn fig_in(v: f64, unit: &str) -> String {
    if unit.ends_with("tok/s") {
        shown(Some(v), 1)
    } else {
        fig(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_group_thousands_and_exports_do_not() {
        assert_eq!(shown(Some(1017.0), 1), "1,017.0");
        assert_eq!(shown(Some(-1234567.891), 2), "-1,234,567.89");
        assert_eq!(shown(Some(999.95), 1), "1,000.0", "rounding may carry into a new group");
        assert_eq!(shown(Some(464.4), 1), "464.4");
        assert_eq!(shown(None, 1), "—");
        assert_eq!(shown_int(Some(12480)), "12,480");
        assert_eq!(num(Some(1017.0), 1), "1017.0", "exports keep plain digits");
        assert_eq!(tok_s(2600.4), "2,600 tok/s");
        assert_eq!(fig(1017.0), "1,017.0");
        assert_eq!((fig_in(1017.04, "tok/s"), fig_in(75.0, "tok/s")), ("1,017.0".into(), "75.0".into()));
        assert_eq!(fig_in(75.0, "ms"), "75.00");
        assert_eq!(grouped("inf"), "inf");
    }

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
        assert_eq!(when_short("2026-11-29T17:43:10+02:00"), "2026-11-29 15:43", "in UTC, whatever the offset");
        assert_eq!(when_short("yesterday"), "yesterday");
    }

    #[test]
    fn sentence_figures_carry_units_and_sensible_digits() {
        assert_eq!(significant(0.2123, 2), "0.21");
        assert_eq!(significant(31.4, 2), "31");
        assert_eq!(significant(314.0, 2), "314");
        assert_eq!(duration_ms(212.3), "0.21 s");
        assert_eq!(duration_ms(3_140.0), "3.1 s");
        assert_eq!(duration_ms(35.2), "35 ms");
        assert_eq!(duration_ms(8.24), "8.2 ms");
        assert_eq!(duration_ms(f64::NAN), "—");
        assert_eq!(tok_s(2_612.4), "2,612 tok/s");
        assert_eq!(tok_s(38.04), "38.0 tok/s");
        assert_eq!(count(64.0), "64");
        assert_eq!(count(30.4), "30");
        assert_eq!(count(2.46), "2.5");
    }

    #[test]
    fn a_percentage_is_never_rounded_onto_its_threshold() {
        assert_eq!(pct_clear_of(0.97, 0.9), "97 %");
        assert_eq!(pct_clear_of(0.896, 0.9), "89.6 %");
        assert_eq!(pct_clear_of(0.9004, 0.9), "90.04 %");
        assert_eq!(pct_clear_of(0.9, 0.9), "90 %", "exactly on it is the threshold");
        assert_eq!(pct_clear_of(0.0104, 0.01), "1.04 %");
        assert_eq!(pct_clear_of(0.00996, 0.01), "0.996 %");
        assert_eq!(pct_clear_of(0.0099999999, 0.01), "below 1 %");
        assert_eq!(pct_clear_of(0.3, 0.01), "30 %");
        assert_eq!(pct_clear_of(0.035, 0.01), "3.5 %");
    }
}
