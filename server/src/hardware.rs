//! Describing the hardware for the roofline: one request type per operation
//! ([`GpuRequest`], [`ModelRequest`]) read from a form's text fields or a JSON body,
//! checked by `domain::analysis::roofline` (a bad value is refused naming its field), stored
//! through `db::hardware` with who set it and when.

use app::db::{self, Db, DbError};
use app::domain::analysis::roofline::{check_figure, parse_figure, FactError, GpuSpec, ModelFacts};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Add or correct a GPU (`Set`), or remove the team's entry of a name.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuRequest {
    Set(GpuSpec),
    Remove(String),
}

/// Set a model's facts, or remove them.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelRequest {
    Set(ModelFacts),
    Remove(String),
}

const GPU_FIGURES: [&str; 6] = ["memory_gb", "memory_tb_s", "bf16_tflops", "fp8_tflops", "fp4_tflops", "power_w"];
const MODEL_FIGURES: [&str; 4] = ["total_params_b", "active_params_b", "bits_per_weight", "kv_bytes_per_token"];

/// The JSON object of a body, read leniently (a bare `NaN` reaches the field's check and is
/// refused there, naming the field) and bounded; a field not in `known` is refused.
fn body_object(body: &[u8], known: &[&str]) -> Result<Map<String, Value>, FactError> {
    const MAX_BODY: usize = 16 * 1024;
    let err = |problem: String| FactError { field: "body", problem };
    if body.len() > MAX_BODY {
        return Err(err(format!("at most {MAX_BODY} bytes")));
    }
    let text = std::str::from_utf8(body).map_err(|_| err("not UTF-8".into()))?;
    match crate::ingest::json::parse(text).map_err(|e| err(e.to_string()))? {
        Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| !known.contains(&k.as_str())) {
                return Err(err(format!("unknown field {k:?}; expected one of {}", known.join(", "))));
            }
            Ok(m)
        }
        _ => Err(err("a JSON object".into())),
    }
}

/// A figure from JSON: a number, a string holding one, or `null` / absent (unknown).
fn json_figure(m: &Map<String, Value>, field: &'static str) -> Result<Option<f64>, FactError> {
    match m.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) => check_figure(field, x).map(Some),
            None => Err(FactError { field, problem: "not a number Plateau can read".into() }),
        },
        Some(Value::String(s)) => parse_figure(field, s),
        Some(other) => {
            Err(FactError { field, problem: format!("must be a number, not {}", crate::ingest::json::kind(other)) })
        }
    }
}

/// A text from JSON (absent: empty).
fn json_text(m: &Map<String, Value>, field: &'static str) -> Result<String, FactError> {
    match m.get(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => {
            Err(FactError { field, problem: format!("must be a string, not {}", crate::ingest::json::kind(other)) })
        }
    }
}

fn form_figure(form: &HashMap<String, String>, field: &'static str) -> Result<Option<f64>, FactError> {
    parse_figure(field, form.get(field).map(String::as_str).unwrap_or_default())
}

fn form_text(form: &HashMap<String, String>, field: &str) -> String {
    form.get(field).cloned().unwrap_or_default()
}

fn required(field: &'static str, v: Option<f64>) -> Result<f64, FactError> {
    v.ok_or_else(|| FactError { field, problem: "required: the roof rests on it".into() })
}

fn gpu_of(
    name: String,
    aliases: Vec<String>,
    fig: impl Fn(&'static str) -> Result<Option<f64>, FactError>,
    source: String,
) -> Result<GpuSpec, FactError> {
    Ok(GpuSpec {
        name,
        aliases,
        memory_gb: fig("memory_gb")?,
        memory_tb_s: required("memory_tb_s", fig("memory_tb_s")?)?,
        bf16_tflops: fig("bf16_tflops")?,
        fp8_tflops: fig("fp8_tflops")?,
        fp4_tflops: fig("fp4_tflops")?,
        power_w: fig("power_w")?,
        source,
        set_by: None,
        set_at: None,
    })
}

impl GpuRequest {
    /// `PUT /api/v1/hardware/gpus` with `{"name": "H100 SXM", "memory_tb_s": 3.35, "source": …}`
    /// (and optionally `aliases`, `memory_gb`, `bf16_tflops`, `fp8_tflops`, `fp4_tflops`, `power_w`).
    pub fn from_json(body: &[u8]) -> Result<Self, FactError> {
        let known: Vec<&str> = ["name", "aliases", "source"].into_iter().chain(GPU_FIGURES).collect();
        let m = body_object(body, &known)?;
        let aliases = match m.get("aliases") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| FactError { field: "aliases", problem: "a list of strings".into() })?,
            Some(_) => return Err(FactError { field: "aliases", problem: "a list of strings".into() }),
        };
        Ok(Self::Set(gpu_of(json_text(&m, "name")?, aliases, |f| json_figure(&m, f), json_text(&m, "source")?)?))
    }

    /// The hardware page's form: the fields above (`aliases` comma-separated), `action` =
    /// `set` | `remove`.
    pub fn from_form(form: &HashMap<String, String>) -> Result<Self, FactError> {
        let name = form_text(form, "name");
        if form.get("action").is_some_and(|a| a == "remove") {
            return Ok(Self::Remove(name));
        }
        let aliases =
            form_text(form, "aliases").split(',').map(|a| a.trim().to_owned()).filter(|a| !a.is_empty()).collect();
        Ok(Self::Set(gpu_of(name, aliases, |f| form_figure(form, f), form_text(form, "source"))?))
    }
}

fn facts_of(
    model: String,
    fig: impl Fn(&'static str) -> Result<Option<f64>, FactError>,
    source: String,
) -> Result<ModelFacts, FactError> {
    Ok(ModelFacts {
        model,
        total_params_b: fig("total_params_b")?,
        active_params_b: fig("active_params_b")?,
        bits_per_weight: fig("bits_per_weight")?,
        kv_bytes_per_token: fig("kv_bytes_per_token")?,
        source,
        set_by: String::new(),
        set_at: String::new(),
    })
}

impl ModelRequest {
    /// `PUT /api/v1/hardware/models` with `{"model": …, "active_params_b": 32,
    /// "bits_per_weight": 4.5, …}`.
    pub fn from_json(body: &[u8]) -> Result<Self, FactError> {
        let known: Vec<&str> = ["model", "source"].into_iter().chain(MODEL_FIGURES).collect();
        let m = body_object(body, &known)?;
        Ok(Self::Set(facts_of(json_text(&m, "model")?, |f| json_figure(&m, f), json_text(&m, "source")?)?))
    }

    /// The hardware page's form: the fields above, `action` = `set` | `remove`.
    pub fn from_form(form: &HashMap<String, String>) -> Result<Self, FactError> {
        let model = form_text(form, "model");
        if form.get("action").is_some_and(|a| a == "remove") {
            return Ok(Self::Remove(model));
        }
        Ok(Self::Set(facts_of(model, |f| form_figure(form, f), form_text(form, "source"))?))
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Adds, corrects or removes a GPU, by `who`.
pub async fn set_gpu(db: &Db, req: GpuRequest, who: &str) -> Result<Option<GpuSpec>, DbError> {
    match req {
        GpuRequest::Set(spec) => db::set_gpu_spec(db, &spec.name.clone(), Some(spec), who, &now()).await,
        GpuRequest::Remove(name) => db::set_gpu_spec(db, &name, None, who, &now()).await,
    }
}

/// Sets or removes a model's facts, by `who`.
pub async fn set_model(db: &Db, req: ModelRequest, who: &str) -> Result<Option<ModelFacts>, DbError> {
    match req {
        ModelRequest::Set(facts) => db::set_model_facts(db, &facts.model.clone(), Some(facts), who, &now()).await,
        ModelRequest::Remove(model) => db::set_model_facts(db, &model, None, who, &now()).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_and_a_model_read_alike_from_form_and_json() {
        let form: HashMap<String, String> = [
            ("name", "MI300X"),
            ("aliases", "Instinct MI300X, , mi300x-oam"),
            ("memory_tb_s", "5.3"),
            ("bf16_tflops", "1307.4"),
            ("memory_gb", ""),
            ("source", "AMD ROCm docs"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let json = br#"{"name": "MI300X", "aliases": ["Instinct MI300X", "mi300x-oam"], "memory_tb_s": 5.3,
                        "bf16_tflops": "1307.4", "memory_gb": null, "source": "AMD ROCm docs"}"#;
        assert_eq!(GpuRequest::from_form(&form).unwrap(), GpuRequest::from_json(json).unwrap());
        let e = GpuRequest::from_json(br#"{"name": "X", "memory_tb_s": NaN, "source": "s"}"#).unwrap_err();
        assert_eq!(e.field, "memory_tb_s");
        let e = GpuRequest::from_json(br#"{"name": "X", "source": "s"}"#).unwrap_err();
        assert_eq!(e.field, "memory_tb_s", "the bandwidth is required");
        let e = GpuRequest::from_json(br#"{"name": "X", "memory_tb_s": 1, "source": "s", "admin": true}"#).unwrap_err();
        assert_eq!(e.field, "body");
        let e = ModelRequest::from_json(br#"{"model": "m", "bits_per_weight": "four"}"#).unwrap_err();
        assert_eq!(e.field, "bits_per_weight");
        let ok = ModelRequest::from_json(br#"{"model": "m", "active_params_b": 32, "bits_per_weight": 4.5}"#).unwrap();
        assert!(
            matches!(ok, ModelRequest::Set(f) if f.active_params_b == Some(32.0) && f.bits_per_weight == Some(4.5))
        );
        let big = vec![b' '; 20_000];
        assert_eq!(ModelRequest::from_json(&big).unwrap_err().field, "body");
    }
}
