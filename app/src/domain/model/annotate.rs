//! Annotations applied to a run: an input checked against the run it goes on (the field at
//! fault named), the levels an `exclude` or `hide` annotation sets aside, and the
//! annotations that concern one level.

use super::annotations::{Anchor, Annotation, AnnotationInput, AnnotationKind, Effect, SetAside};
use super::comparison::{check_run_count, run_count_rule};
use super::level::LevelKey;
use super::point::{LoadKind, Point};
use super::run::Run;

impl AnnotationInput {
    /// Checks the input against the run it goes on; the error names the field at fault.
    pub fn validate(&self, run: &Run) -> Result<(), String> {
        let body = self.body.trim();
        if body.is_empty() {
            return Err("body: write what the annotation says".into());
        }
        crate::domain::model::text::check_annotation_body(body).map_err(|e| e.to_string())?;
        let level_exists = |kind: LoadKind, load: f64| {
            run.points.iter().any(|p| LevelKey { load_kind: kind, load_value: load }.matches(p))
        };
        if self.new_baseline && self.anchor != Anchor::Run {
            return Err("new_baseline: only an annotation on the whole run can start a new baseline".into());
        }
        match &self.anchor {
            Anchor::Run => {}
            Anchor::Point { load_kind, load } => {
                if !load.is_finite() || !level_exists(*load_kind, *load) {
                    return Err(format!("level: the run has no level {}", crate::domain::model::format::load(*load)));
                }
            }
            Anchor::Range { from, to, .. } => {
                if !(from.is_finite() && to.is_finite()) || from > to {
                    return Err("range: “from” must be a load at or below “to”".into());
                }
                if !run.points.iter().any(|p| self.anchor.covers(p)) {
                    return Err("range: no level of the run lies in it".into());
                }
            }
            Anchor::Comparison { runs } => {
                if check_run_count(runs.len()).is_err() || !runs.contains(&run.id) {
                    return Err(format!("comparison: {}, this run among them", run_count_rule()));
                }
                if self.effect != Effect::None {
                    return Err("effect: a comparison note cannot exclude or hide data".into());
                }
            }
        }
        if self.kind == AnnotationKind::Superseded {
            match &self.superseded_by {
                None => return Err("superseded by: name the run that replaces this one".into()),
                Some(by) if *by == run.id => return Err("superseded by: a run cannot replace itself".into()),
                Some(_) => {}
            }
        }
        if let Some(key) = &self.proposal_key {
            if key.len() > 300 {
                return Err("proposal: key too long".into());
            }
        }
        Ok(())
    }
}

/// Moves the levels covered by an `exclude` or `hide` annotation out of `run.points`
/// into `run.set_aside` (hide wins over exclude). Idempotent.
pub fn apply_effects(run: &mut Run) {
    let mut kept = Vec::with_capacity(run.points.len());
    for p in std::mem::take(&mut run.points) {
        let strongest =
            run.annotations.iter().filter(|a| a.effect != Effect::None && a.anchor.covers(&p)).max_by_key(|a| match a
                .effect
            {
                Effect::Hide => 2,
                Effect::Exclude => 1,
                Effect::None => 0,
            });
        match strongest {
            Some(a) => run.set_aside.push(SetAside { point: p, effect: a.effect, annotation: a.id }),
            None => kept.push(p),
        }
    }
    run.points = kept;
}

/// The annotations of `run` that concern level `p` (point and range anchors).
pub fn for_level<'a>(run: &'a Run, p: &Point) -> Vec<&'a Annotation> {
    run.annotations
        .iter()
        .filter(|a| matches!(a.anchor, Anchor::Point { .. } | Anchor::Range { .. }) && a.anchor.covers(p))
        .collect()
}
