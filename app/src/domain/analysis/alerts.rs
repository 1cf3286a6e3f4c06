//! Alerts: what Plateau tells a team's chat or on-call hook when a run lands that the
//! regression gate fails, or whose landing reveals a new change point in its
//! configuration's history ([`super::changes`]). One [`Alert`] per finding, with a stable
//! key: a finding already delivered, or acknowledged by a person (who, when, why), is not
//! sent again.
//!
//! The body ([`Alert::payload`]) is JSON with the run, the configuration, the metric,
//! before → after, the significance and a link, plus a `text` field, so a Slack (or
//! Mattermost, Google Chat, Discord `/slack`) incoming webhook shows it as it is. Text from
//! runs is escaped for Slack's markup (`&`, `<`, `>`) and its `@` mentions defused, so a
//! run name cannot forge a link or ping a channel.
//!
//! Pure, no IO: the server delivers (`server::alerts`), the store records
//! (`db::alerts`).

use super::changes::{p_text, HistoryChange};
use super::regression::CheckReport;
use super::thresholds::metric_label;
use crate::domain::model::format::fig_in;
use crate::domain::{Run, RunId};
use serde::{Deserialize, Serialize};

/// Why an alert is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// The regression gate (against the configuration's history) fails the run.
    GateFailed,
    /// The history changes level at a run (a change point the run's landing revealed).
    ChangePoint,
}

/// One finding to tell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    /// `gate/<run>` or `change_point/<run>/<series>`: what acknowledging stops.
    pub key: String,
    pub kind: AlertKind,
    /// The run that landed.
    pub run_id: RunId,
    pub run_name: String,
    /// The run the finding is about (the change's first run; the landed run for the gate).
    pub about_run_id: RunId,
    /// The configuration, in words.
    pub configuration: String,
    /// "output tok/s at C=64", "throughput at the plateau".
    pub metric: String,
    pub before: Option<f64>,
    pub after: Option<f64>,
    pub unit: String,
    /// (after − before) ÷ |before| × 100.
    pub change_pct: Option<f64>,
    /// "p = 0.005", "z = 4.1", "2 regressions".
    pub significance: String,
    /// One sentence, plain text.
    pub summary: String,
}

/// Escapes text for Slack's markup (`&`, `<` and `>` are its control characters) and
/// defuses mentions for the chats that read `@` in plain text (Mattermost's `@channel`,
/// `@all`, Discord's `@everyone`, `@here`, a user's `@name`): a zero-width space after
/// each `@` that starts a word, so a run's name never pings anyone.
pub fn slack_escape(s: &str) -> String {
    let escaped = s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let mut out = String::with_capacity(escaped.len());
    let mut chars = escaped.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '@' && chars.peek().is_some_and(|n| n.is_alphanumeric()) {
            out.push('\u{200B}');
        }
    }
    out
}

impl Alert {
    /// The gate's failure of `report` (against the history) for `run`, if it failed.
    pub fn from_check(report: &CheckReport, run: &Run) -> Option<Alert> {
        if report.passed() {
            return None;
        }
        let n = report.regressions();
        // The worst finding leads: the largest change in its worse direction.
        let worst = report
            .findings
            .iter()
            .filter(|f| f.regression)
            .max_by(|a, b| a.change_pct.abs().total_cmp(&b.change_pct.abs()));
        let configuration = super::thresholds::ConfigKey::of(run).label();
        let (metric, before, after, unit, change_pct, significance) = match worst {
            Some(f) => (
                format!("{} at {}", metric_label(f.metric, f.stat), f.level.label()),
                Some(f.reference),
                Some(f.value),
                f.metric.unit().label().to_owned(),
                Some(f.change_pct),
                match f.z {
                    Some(z) => format!("z = {z:.1} ({} regression(s))", n),
                    None => format!("{} ({} regression(s))", f.test.label(), n),
                },
            ),
            None => ("capacity at the SLO".to_owned(), None, None, String::new(), None, format!("{n} regression(s)")),
        };
        let summary = match worst {
            Some(f) => format!(
                "The regression gate fails “{}”: {} {} against {} ({n} regression(s)).",
                run.name,
                metric,
                super::noise::pct(f.change_pct),
                report.against
            ),
            None => format!("The regression gate fails “{}” against {}.", run.name, report.against),
        };
        Some(Alert {
            key: format!("gate/{}", run.id),
            kind: AlertKind::GateFailed,
            run_id: run.id.clone(),
            run_name: run.name.clone(),
            about_run_id: run.id.clone(),
            configuration,
            metric,
            before,
            after,
            unit,
            change_pct,
            significance,
            summary,
        })
    }

    /// A change point of `run`'s history, told when `run` landed.
    pub fn from_change(change: &HistoryChange, run: &Run) -> Alert {
        Alert {
            key: change.key(),
            kind: AlertKind::ChangePoint,
            run_id: run.id.clone(),
            run_name: run.name.clone(),
            about_run_id: change.run_id.clone(),
            configuration: super::thresholds::ConfigKey::of(run).label(),
            metric: change.label.clone(),
            before: Some(change.before_mean),
            after: Some(change.after_mean),
            unit: change.unit.clone(),
            change_pct: change.change_pct,
            significance: p_text(change.p_value),
            summary: format!("{} at run “{}”.", change.sentence(), change.run_name),
        }
    }

    /// The page the alert links to: the run the finding is about.
    pub fn path(&self) -> String {
        match self.kind {
            AlertKind::GateFailed => format!("/runs/{}", self.about_run_id),
            AlertKind::ChangePoint => format!("/runs/{}#anomalies", self.about_run_id),
        }
    }

    /// The JSON body posted to a webhook; `base`: the server's public address (the link is
    /// a path without one).
    pub fn payload(&self, base: Option<&str>) -> serde_json::Value {
        let link = match base {
            Some(b) => format!("{}{}", b.trim_end_matches('/'), self.path()),
            None => self.path(),
        };
        let change = self.change_pct.map(super::noise::pct).unwrap_or_default();
        let numbers = match (self.before, self.after) {
            (Some(b), Some(a)) => format!(
                " ({} → {} {}{})",
                fig_in(b, &self.unit),
                fig_in(a, &self.unit),
                self.unit,
                if change.is_empty() { String::new() } else { format!(", {change}") }
            ),
            _ => String::new(),
        };
        let title = match self.kind {
            AlertKind::GateFailed => "Regression",
            AlertKind::ChangePoint => "Change point",
        };
        let text = format!(
            "*Plateau — {title}* · {}\n{}{numbers}\n<{}|Open in Plateau>",
            slack_escape(&self.configuration),
            slack_escape(&self.summary),
            slack_escape(&link),
        );
        serde_json::json!({
            "text": text,
            "kind": self.kind,
            "key": self.key,
            "run": { "id": self.run_id, "name": self.run_name },
            "about_run": self.about_run_id,
            "configuration": self.configuration,
            "metric": self.metric,
            "before": self.before,
            "after": self.after,
            "unit": self.unit,
            "change_pct": self.change_pct,
            "significance": self.significance,
            "summary": self.summary,
            "link": link,
        })
    }
}

/// Where a delivery stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Being sent (or retried).
    Pending,
    /// The endpoint answered 2xx.
    Delivered,
    /// Every attempt failed.
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [DeliveryStatus::Pending, DeliveryStatus::Delivered, DeliveryStatus::Failed]
            .into_iter()
            .find(|d| d.as_str() == s)
    }
}

/// One alert's delivery to one endpoint, as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub id: i64,
    pub alert_key: String,
    /// The endpoint's origin only (`https://hooks.slack.com`): a webhook's path is its secret.
    pub endpoint: String,
    pub summary: String,
    pub status: DeliveryStatus,
    pub attempts: i64,
    /// The last failure ("HTTP 500", "timed out after 10 s").
    pub last_error: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A person's acknowledgement of an alert: it stops alerting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ack {
    pub alert_key: String,
    pub author: String,
    pub reason: String,
    pub acknowledged_at: String,
}

/// A run's alerts: what was sent about it, and what was acknowledged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunAlerts {
    pub deliveries: Vec<Delivery>,
    pub acks: Vec<Ack>,
}

impl RunAlerts {
    /// The acknowledgement of `key`, if any.
    pub fn ack(&self, key: &str) -> Option<&Ack> {
        self.acks.iter().find(|a| a.alert_key == key)
    }

    /// The alert keys, in the order first sent.
    pub fn keys(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for d in &self.deliveries {
            if !out.contains(&d.alert_key.as_str()) {
                out.push(&d.alert_key);
            }
        }
        out
    }
}

/// One alert as the run page shows it, formatted on the server (the browser bundle
/// carries strings only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlertView {
    pub key: String,
    pub summary: String,
    /// One line per delivery: "`http://hooks.example` #1a2b3c4d: failed after 3 attempt(s),
    /// 2026-12-04 06:50 UTC — no answer within 10 s".
    pub deliveries: Vec<String>,
    /// Some delivery failed.
    pub failed: bool,
    /// "Acknowledged by ana on 2026-12-04 07:01 UTC: expected, vLLM upgrade".
    pub ack: Option<String>,
}

impl RunAlerts {
    /// The run page's view, one entry per alert, in the order first sent.
    pub fn views(&self) -> Vec<AlertView> {
        use crate::domain::model::format::when;
        self.keys()
            .into_iter()
            .map(|key| {
                let of_key: Vec<&Delivery> = self.deliveries.iter().filter(|d| d.alert_key == key).collect();
                AlertView {
                    key: key.to_owned(),
                    summary: of_key.first().map(|d| d.summary.clone()).unwrap_or_default(),
                    deliveries: of_key
                        .iter()
                        .map(|d| {
                            let error = d.last_error.as_ref().map(|e| format!(" — {e}")).unwrap_or_default();
                            format!(
                                "{}: {} after {} attempt(s), {}{error}",
                                d.endpoint,
                                d.status.as_str(),
                                d.attempts,
                                when(&d.updated_at)
                            )
                        })
                        .collect(),
                    failed: of_key.iter().any(|d| d.status == DeliveryStatus::Failed),
                    ack: self
                        .ack(key)
                        .map(|a| format!("Acknowledged by {} on {}: {}", a.author, when(&a.acknowledged_at), a.reason)),
                }
            })
            .collect()
    }
}

/// Longest stored alert key (a run id and a series key).
pub const MAX_KEY_CHARS: usize = 200;

/// Checks an alert key given back by a person (the acknowledge form): known shape, bounded.
pub fn check_key(key: &str) -> Result<(), String> {
    let ok_shape = key.starts_with("gate/") || key.starts_with("change_point/");
    if key.chars().count() > MAX_KEY_CHARS || !ok_shape || key.chars().any(char::is_control) {
        return Err("key: not an alert key".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change() -> HistoryChange {
        HistoryChange {
            series_key: "plateau".into(),
            label: "throughput at the plateau".into(),
            unit: "tok/s".into(),
            run_index: 10,
            run_id: RunId::parse("run000000010").unwrap(),
            run_name: "nightly <10> & co".into(),
            created_at: "2026-03-14T00:00:00Z".into(),
            previous_run_id: RunId::parse("run000000009").unwrap(),
            before_mean: 600.0,
            after_mean: 492.0,
            change_pct: Some(-18.0),
            p_value: 0.003,
            worse: Some(true),
            history_query: "level=plateau".into(),
        }
    }

    #[test]
    fn a_change_alert_says_before_after_and_escapes_run_text_for_slack() {
        let mut run = crate::domain::analysis::compare::tests::chat_run();
        run.name = "<!channel> & <https://evil|click>".into();
        let a = Alert::from_change(&change(), &run);
        assert_eq!(a.key, "change_point/run000000010/plateau");
        let body = a.payload(Some("https://plateau.example/"));
        let text = body["text"].as_str().unwrap();
        assert!(text.contains("Throughput at the plateau fell 18 % here (600.0 → 492.0 tok/s, p = 0.003)"), "{text}");
        assert!(text.contains("nightly &lt;10&gt; &amp; co"), "{text}");
        assert!(text.contains("<https://plateau.example/runs/run000000010#anomalies|Open in Plateau>"), "{text}");
        assert!(!text.contains("<!channel>"), "{text}");
        // Mentions in plain-text chats are defused.
        let mut mentions = change();
        mentions.run_name = "@channel @here @everyone @all me@x".into();
        let text = Alert::from_change(&mentions, &run).payload(None)["text"].as_str().unwrap().to_owned();
        for m in ["@channel", "@here", "@everyone", "@all", "me@x"] {
            assert!(!text.contains(m), "{m} in {text}");
        }
        assert!(text.contains("@\u{200B}channel @\u{200B}here"), "{text}");
        assert_eq!(body["before"], 600.0);
        assert_eq!(body["after"], 492.0);
        assert_eq!(body["significance"], "p = 0.003");
        assert_eq!(body["run"]["name"], run.name.as_str(), "the JSON fields keep the text as it is");
    }

    #[test]
    fn keys_are_checked() {
        assert!(check_key("gate/run000000001").is_ok());
        assert!(check_key("change_point/run000000001/ttft.p99@64").is_ok());
        assert!(check_key("other").is_err());
        assert!(check_key(&format!("gate/{}", "x".repeat(300))).is_err());
        assert!(check_key("gate/\u{7}").is_err());
    }
}
