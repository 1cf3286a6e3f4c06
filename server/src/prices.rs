//! Setting prices: one request type per operation ([`GpuPriceRequest`], [`RunPriceRequest`])
//! read from a form's text fields or a JSON body, checked by `domain::analysis::cost` (a bad value is
//! refused naming its field), stored through `db::prices` with who set it and when.
//! Plateau never sets a price itself.

use app::db::{self, Db, DbError};
use app::domain::analysis::cost::{check_usd_per_hour, parse_usd_per_hour, GpuPrice, PriceError, RunPrice};
use app::domain::RunId;
use serde_json::Value;
use std::collections::HashMap;

/// Set or remove a GPU type's price.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuPriceRequest {
    pub gpu_type: String,
    /// `None`: remove the price.
    pub usd_per_gpu_hour: Option<f64>,
}

/// Set or remove one run's deployment price.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPriceRequest {
    /// `None`: remove the price.
    pub usd_per_hour: Option<f64>,
}

/// A price from a JSON value: a number, or a string holding a plain decimal number.
/// `null` is refused (removing is its own request: DELETE).
fn price_value(field: &'static str, v: Option<&Value>) -> Result<f64, PriceError> {
    match v {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) => check_usd_per_hour(field, x),
            None => Err(PriceError { field, problem: "not a number Plateau can read".into() }),
        },
        Some(Value::String(s)) => parse_usd_per_hour(field, s),
        Some(other) => Err(PriceError {
            field,
            problem: format!("must be a number of dollars per hour, not {}", crate::ingest::json::kind(other)),
        }),
        None => Err(PriceError { field, problem: "missing: give dollars per hour, e.g. 2.50".into() }),
    }
}

/// The JSON object of a body, read leniently (a bare `NaN` or `Infinity` reaches the
/// field's check and is refused there, naming the field) and bounded.
fn body_object(body: &[u8], field: &'static str) -> Result<serde_json::Map<String, Value>, PriceError> {
    const MAX_BODY: usize = 4096;
    if body.len() > MAX_BODY {
        return Err(PriceError { field: "body", problem: format!("at most {MAX_BODY} bytes") });
    }
    let text = std::str::from_utf8(body).map_err(|_| PriceError { field: "body", problem: "not UTF-8".into() })?;
    let v = crate::ingest::json::parse(text).map_err(|e| PriceError { field: "body", problem: e.to_string() })?;
    match v {
        Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| k.as_str() != field) {
                return Err(PriceError { field: "body", problem: format!("unknown field {k:?}; expected {field:?}") });
            }
            Ok(m)
        }
        _ => Err(PriceError { field: "body", problem: format!("a JSON object {{\"{field}\": …}}") }),
    }
}

impl GpuPriceRequest {
    /// `PUT /api/v1/prices/{gpu_type}` with `{"usd_per_gpu_hour": 2.5}`.
    pub fn from_json(gpu_type: &str, body: &[u8]) -> Result<Self, PriceError> {
        let m = body_object(body, "usd_per_gpu_hour")?;
        let usd = price_value("usd_per_gpu_hour", m.get("usd_per_gpu_hour"))?;
        Ok(Self { gpu_type: gpu_type.to_owned(), usd_per_gpu_hour: Some(usd) })
    }

    /// The settings page's form: `gpu_type`, `usd_per_gpu_hour`, `action` = `set` | `remove`.
    pub fn from_form(form: &HashMap<String, String>) -> Result<Self, PriceError> {
        let gpu_type = form.get("gpu_type").cloned().unwrap_or_default();
        let remove = form.get("action").is_some_and(|a| a == "remove");
        let usd_per_gpu_hour = if remove {
            None
        } else {
            Some(parse_usd_per_hour(
                "usd_per_gpu_hour",
                form.get("usd_per_gpu_hour").map(String::as_str).unwrap_or_default(),
            )?)
        };
        Ok(Self { gpu_type, usd_per_gpu_hour })
    }
}

impl RunPriceRequest {
    /// `PUT /api/v1/runs/{id}/price` with `{"usd_per_hour": 20}`.
    pub fn from_json(body: &[u8]) -> Result<Self, PriceError> {
        let m = body_object(body, "usd_per_hour")?;
        Ok(Self { usd_per_hour: Some(price_value("usd_per_hour", m.get("usd_per_hour"))?) })
    }

    /// The run page's form: `usd_per_hour`, `action` = `set` | `remove`.
    pub fn from_form(form: &HashMap<String, String>) -> Result<Self, PriceError> {
        if form.get("action").is_some_and(|a| a == "remove") {
            return Ok(Self { usd_per_hour: None });
        }
        let text = form.get("usd_per_hour").map(String::as_str).unwrap_or_default();
        Ok(Self { usd_per_hour: Some(parse_usd_per_hour("usd_per_hour", text)?) })
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Sets or removes a GPU type's price, by `who`.
pub async fn set_gpu_price(db: &Db, req: &GpuPriceRequest, who: &str) -> Result<Option<GpuPrice>, DbError> {
    db::set_gpu_price(db, &req.gpu_type, req.usd_per_gpu_hour, who, &now()).await
}

/// Sets or removes run `run`'s deployment price, by `who`.
pub async fn set_run_price(
    db: &Db,
    run: &RunId,
    req: &RunPriceRequest,
    who: &str,
) -> Result<Option<RunPrice>, DbError> {
    db::set_run_price(db, run, req.usd_per_hour, who, &now()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_prices_are_refused_naming_the_field() {
        for body in [
            r#"{"usd_per_gpu_hour": -1}"#,
            r#"{"usd_per_gpu_hour": NaN}"#,
            r#"{"usd_per_gpu_hour": 1e308}"#,
            r#"{"usd_per_gpu_hour": 1e999}"#,
            r#"{"usd_per_gpu_hour": "abc"}"#,
            r#"{"usd_per_gpu_hour": Infinity}"#,
            r#"{"usd_per_gpu_hour": [2.5]}"#,
            r#"{"usd_per_gpu_hour": null}"#,
            r#"{"usd_per_gpu_hour": 0}"#,
        ] {
            let e = GpuPriceRequest::from_json("H200", body.as_bytes()).unwrap_err();
            assert_eq!(e.field, "usd_per_gpu_hour", "{body}: {e}");
        }
        assert_eq!(GpuPriceRequest::from_json("H200", b"{}").unwrap_err().field, "usd_per_gpu_hour", "missing");
        for body in [r#"[1]"#, r#"{"usd": 1}"#, "{", &format!("{{\"usd_per_gpu_hour\": \"{}\"}}", "9".repeat(5000))] {
            assert_eq!(GpuPriceRequest::from_json("H200", body.as_bytes()).unwrap_err().field, "body", "{body}");
        }
        assert_eq!(
            GpuPriceRequest::from_json("H200", br#"{"usd_per_gpu_hour": "2.50"}"#),
            Ok(GpuPriceRequest { gpu_type: "H200".into(), usd_per_gpu_hour: Some(2.5) })
        );
        assert_eq!(
            RunPriceRequest::from_json(br#"{"usd_per_hour": 20}"#),
            Ok(RunPriceRequest { usd_per_hour: Some(20.0) })
        );
        assert_eq!(RunPriceRequest::from_json(br#"{"usd_per_hour": -3}"#).unwrap_err().field, "usd_per_hour");
        let form: HashMap<String, String> =
            [("gpu_type".to_owned(), "H200".to_owned()), ("usd_per_gpu_hour".to_owned(), "1e308".to_owned())].into();
        assert_eq!(GpuPriceRequest::from_form(&form).unwrap_err().field, "usd_per_gpu_hour");
        let remove: HashMap<String, String> =
            [("gpu_type".to_owned(), "H200".to_owned()), ("action".to_owned(), "remove".to_owned())].into();
        assert_eq!(GpuPriceRequest::from_form(&remove).unwrap().usd_per_gpu_hour, None);
    }
}
