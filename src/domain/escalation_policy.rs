//! Escalation policies (issue 45 §3, DESIGN §11): what happens, step by step, while
//! nobody acknowledges an alert. A policy is an ordered list of steps `{AfterMinutes,
//! Recipients, Instructions}`; a step is due once `AfterMinutes` have passed since the
//! alert was raised, and the chain stops when someone acknowledges.
//!
//! Which policy an alert follows: the one its notification names (`EscalationPolicyId`),
//! else the tenant default (the policy marked `IsTenantDefault` in the notification's
//! tenant, else the nearest ancestor's default marked `AppliesToSubtenants`), else
//! today's single round to the escalation contacts (`services/escalation.rs`).
//!
//! Rules (checked by `http::records::escalation_policy`): `Name` 1–200 characters,
//! unique within the tenant (case-insensitively); `Description` at most 1000; 1 to
//! `MAX_STEPS` steps, `AfterMinutes` 0 to `MAX_AFTER_MINUTES` and strictly increasing;
//! each step at most `MAX_STEP_RECIPIENTS` recipients in the notification's `Recipient`
//! shape (the same parse), `Instructions` at most `MAX_INSTRUCTIONS_CHARS`; a step must
//! reach someone or tell the operator something (recipients, instructions, or both).
//! At most one default per tenant: marking one the default unmarks the previous one
//! (in the same transaction, which changes that one's `ETag`).

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::ids::{EscalationPolicyId, TenantCode};
use super::recipient::Recipient;
use super::serde_util::null_as_default;

pub const NAME_MAX_CHARS: usize = 200;
pub const DESCRIPTION_MAX_CHARS: usize = 1000;
/// Most steps one policy has: a response procedure longer than this is a document, not
/// a timer chain.
pub const MAX_STEPS: usize = 10;
/// The latest a step may come: a day after the raise. An alert unacknowledged for a day
/// is a failure of the procedure, not a step of it.
pub const MAX_AFTER_MINUTES: u32 = 1440;
/// Most recipients one step has (each reference is looked up on every write).
pub const MAX_STEP_RECIPIENTS: usize = 100;
pub const MAX_INSTRUCTIONS_CHARS: usize = 2000;

/// One step of a policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EscalationStep {
    /// Minutes after the raise at which the step is due (0: at once).
    pub after_minutes: u32,
    /// Whom the step notifies, as written (parsed wherever used, like a notification's).
    #[serde(default, deserialize_with = "null_as_default")]
    pub recipients: Vec<Recipient>,
    /// The response procedure an operator follows at this step (shown by the console).
    pub instructions: Option<String>,
}

impl EscalationStep {
    /// When the step is due for an alert raised at `raised_at`.
    pub fn due_at(&self, raised_at: Timestamp) -> Timestamp {
        // At most a day after a stored time: beyond the end of time only in theory.
        raised_at
            .checked_add(SignedDuration::from_mins(i64::from(self.after_minutes)))
            .unwrap_or(Timestamp::MAX)
    }
}

/// What a client sets on a policy, its rules checked (the module's list). `steps` is
/// non-empty and ordered by strictly increasing `after_minutes`.
#[derive(Debug, Clone, PartialEq)]
pub struct EscalationPolicyFields {
    pub name: String,
    pub description: Option<String>,
    pub applies_to_subtenants: bool,
    pub is_tenant_default: bool,
    pub steps: Vec<EscalationStep>,
}

/// What the store keeps as the policy's document: the parts no query filters on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EscalationPolicyDoc {
    pub description: Option<String>,
    pub steps: Vec<EscalationStep>,
}

/// A policy as stored and shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EscalationPolicy {
    pub escalation_policy_id: EscalationPolicyId,
    /// The owning tenant (a descendant sees its ancestors' shared policies too).
    pub tenant_code: TenantCode,
    pub name: String,
    pub description: Option<String>,
    pub applies_to_subtenants: bool,
    pub is_tenant_default: bool,
    pub steps: Vec<EscalationStep>,
    pub timestamp: Timestamp,
    /// Record version: the `ETag` header only.
    #[serde(skip)]
    pub etag: String,
}

/// The steps an escalation pass should fire now (`EscalationPolicy::due_steps`): their
/// indexes in the policy, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueSteps {
    /// The first step not yet fired.
    pub first: usize,
    /// One past the last step due now (`first == end`: nothing is due).
    pub end: usize,
}

impl DueSteps {
    pub fn is_empty(self) -> bool {
        self.first >= self.end
    }

    pub fn indexes(self) -> std::ops::Range<usize> {
        self.first..self.end
    }
}

impl EscalationPolicy {
    /// The steps due at `now` for an alert raised at `raised_at` of which `already_fired`
    /// steps (the first ones: steps fire in order) have fired. Every step whose time has
    /// come is due, so a worker that was down catches up with each of them in order
    /// (each has its own recipients; skipping one would leave its people untold).
    ///
    /// The worker calls this only for alerts nobody acknowledged (acknowledging stops the
    /// chain), records each returned step on the alert's timeline with its deliveries,
    /// stores `end` as the alert's fired count and sleeps until `next_due_at`.
    pub fn due_steps(
        &self,
        raised_at: Timestamp,
        now: Timestamp,
        already_fired: usize,
    ) -> DueSteps {
        let first = already_fired.min(self.steps.len());
        let end = first
            + self.steps[first..]
                .iter()
                .take_while(|step| step.due_at(raised_at) <= now)
                .count();
        DueSteps { first, end }
    }

    /// When the next unfired step is due (`None`: every step has fired).
    pub fn next_due_at(&self, raised_at: Timestamp, already_fired: usize) -> Option<Timestamp> {
        self.steps.get(already_fired).map(|s| s.due_at(raised_at))
    }

    /// The step an operator is at: the last one fired (`None` before the first fires).
    pub fn current_step(&self, already_fired: usize) -> Option<&EscalationStep> {
        already_fired
            .checked_sub(1)
            .and_then(|i| self.steps.get(i.min(self.steps.len().saturating_sub(1))))
    }

    /// The policy `fields` as stored under `id` by `tenant_code`.
    pub fn new(
        id: EscalationPolicyId,
        tenant_code: TenantCode,
        fields: EscalationPolicyFields,
        timestamp: Timestamp,
        etag: String,
    ) -> Self {
        EscalationPolicy {
            escalation_policy_id: id,
            tenant_code,
            name: fields.name,
            description: fields.description,
            applies_to_subtenants: fields.applies_to_subtenants,
            is_tenant_default: fields.is_tenant_default,
            steps: fields.steps,
            timestamp,
            etag,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("timestamp")
    }

    fn step(after_minutes: u32) -> EscalationStep {
        EscalationStep {
            after_minutes,
            recipients: Vec::new(),
            instructions: Some(format!("after {after_minutes}")),
        }
    }

    fn policy(minutes: &[u32]) -> EscalationPolicy {
        EscalationPolicy::new(
            EscalationPolicyId::new(1),
            "1000".parse().expect("code"),
            EscalationPolicyFields {
                name: "Lone worker".into(),
                description: None,
                applies_to_subtenants: false,
                is_tenant_default: false,
                steps: minutes.iter().copied().map(step).collect(),
            },
            at("2026-01-01T00:00:00Z"),
            "e".into(),
        )
    }

    const RAISED: &str = "2026-03-01T10:00:00Z";

    #[test]
    fn a_zero_minute_step_is_due_at_the_raise() {
        let p = policy(&[0, 5, 15]);
        let due = p.due_steps(at(RAISED), at(RAISED), 0);
        assert_eq!(due.indexes(), 0..1);
        assert!(!due.is_empty());
    }

    #[test]
    fn a_step_is_due_exactly_when_its_minutes_have_passed() {
        let p = policy(&[0, 5, 15]);
        let raised = at(RAISED);
        assert_eq!(
            p.due_steps(raised, at("2026-03-01T10:04:59Z"), 1).indexes(),
            1..1
        );
        assert!(
            p.due_steps(raised, at("2026-03-01T10:04:59Z"), 1)
                .is_empty()
        );
        assert_eq!(
            p.due_steps(raised, at("2026-03-01T10:05:00Z"), 1).indexes(),
            1..2
        );
    }

    #[test]
    fn fired_steps_never_fire_again_and_late_passes_catch_up_in_order() {
        let p = policy(&[0, 5, 15]);
        let raised = at(RAISED);
        // The worker was down for an hour: every step is due, in order.
        assert_eq!(
            p.due_steps(raised, at("2026-03-01T11:00:00Z"), 0).indexes(),
            0..3
        );
        assert_eq!(
            p.due_steps(raised, at("2026-03-01T11:00:00Z"), 2).indexes(),
            2..3
        );
        assert!(
            p.due_steps(raised, at("2026-03-01T11:00:00Z"), 3)
                .is_empty()
        );
        // A count beyond the steps (a policy shortened since) fires nothing.
        assert!(
            p.due_steps(raised, at("2026-03-01T11:00:00Z"), 7)
                .is_empty()
        );
    }

    #[test]
    fn nothing_is_due_before_the_raise() {
        let p = policy(&[0, 5]);
        assert!(
            p.due_steps(at(RAISED), at("2026-03-01T09:59:59Z"), 0)
                .is_empty()
        );
    }

    #[test]
    fn the_next_due_time_and_the_current_step() {
        let p = policy(&[0, 5, 15]);
        let raised = at(RAISED);
        assert_eq!(p.next_due_at(raised, 0), Some(raised));
        assert_eq!(p.next_due_at(raised, 2), Some(at("2026-03-01T10:15:00Z")));
        assert_eq!(p.next_due_at(raised, 3), None);
        assert_eq!(p.current_step(0), None);
        assert_eq!(p.current_step(1).map(|s| s.after_minutes), Some(0));
        assert_eq!(p.current_step(3).map(|s| s.after_minutes), Some(15));
        assert_eq!(p.current_step(9).map(|s| s.after_minutes), Some(15));
    }

    #[test]
    fn the_stored_document_reads_back() {
        let doc = EscalationPolicyDoc {
            description: Some("Night shift".into()),
            steps: vec![step(0), step(10)],
        };
        let text = serde_json::to_string(&doc).expect("json");
        assert!(text.contains("\"AfterMinutes\":10"));
        let back: EscalationPolicyDoc = serde_json::from_str(&text).expect("reads");
        assert_eq!(back, doc);
    }
}
