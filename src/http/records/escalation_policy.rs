//! The escalation policy as clients write it (`POST`/`PUT /V2/{t}/escalationpolicies`).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::escalation_policy::{
    DESCRIPTION_MAX_CHARS, EscalationPolicy, EscalationPolicyFields, EscalationStep,
    MAX_AFTER_MINUTES, MAX_INSTRUCTIONS_CHARS, MAX_STEP_RECIPIENTS, MAX_STEPS, NAME_MAX_CHARS,
};
use crate::domain::recipient::{Recipient, RecipientReference, validate_recipients};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::{null_as_default, opt_int64};
use crate::domain::validation::{ValidationErrors, Validator};

/// An escalation policy: the ordered steps an unacknowledged alert goes through. A
/// notification that raises an alert names one (`EscalationPolicyId`), else the tenant's
/// default applies (see docs/monitoring.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "EscalationPolicy", rename_all = "PascalCase")]
#[schema(as = EscalationPolicy)]
pub struct EscalationPolicyRecord {
    /// Assigned by the server.
    #[schema(read_only, example = "4")]
    pub escalation_policy_id: Option<String>,
    /// The owning tenant (an inherited policy names its ancestor).
    #[schema(read_only, example = "1000")]
    pub tenant_code: Option<String>,
    /// Unique within the tenant (case-insensitively).
    #[schema(
        required = true,
        min_length = 1,
        max_length = 200,
        example = "Lone worker, night shift"
    )]
    pub name: Option<String>,
    #[schema(max_length = 1000)]
    pub description: Option<String>,
    /// Usable (read-only) by every descendant tenant's notifications as well.
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub applies_to_subtenants: bool,
    /// The policy of alerts whose notification names none. At most one per tenant:
    /// marking this one unmarks the tenant's previous default.
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub is_tenant_default: bool,
    /// 1 to 10 steps, `AfterMinutes` strictly increasing.
    #[schema(required = true, min_items = 1, max_items = 10)]
    pub steps: Option<Vec<EscalationStepRecord>>,
    #[schema(read_only, value_type = Option<String>, format = DateTime)]
    pub timestamp: Option<Timestamp>,
}

/// One step: due `AfterMinutes` after the alert was raised, while nobody has
/// acknowledged it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "EscalationStep", rename_all = "PascalCase")]
#[schema(as = EscalationStep)]
pub struct EscalationStepRecord {
    /// Minutes after the raise, 0 (at once) to 1440 (a day).
    #[serde(default, with = "opt_int64")]
    #[schema(required = true, value_type = Option<i64>, minimum = 0, maximum = 1440, example = 10)]
    pub after_minutes: Option<i64>,
    /// Whom the step notifies (at most 100), in the notification's Recipient shape.
    #[schema(nullable)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub recipients: Vec<Recipient>,
    /// The response procedure an operator follows at this step (at most 2000
    /// characters). A step has recipients, instructions or both.
    #[schema(
        max_length = 2000,
        example = "Call the worker; if no answer, call the site supervisor."
    )]
    pub instructions: Option<String>,
}

impl ServerFields for EscalationPolicyRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] =
        &["EscalationPolicyId", "TenantCode", "Timestamp"];

    fn without_read_only(mut self) -> Self {
        self.escalation_policy_id = None;
        self.tenant_code = None;
        self.timestamp = None;
        self
    }
}

impl EscalationPolicyRecord {
    /// Checks every rule (docs in `domain::escalation_policy`); returns the policy as
    /// stored and the references its steps' recipients make (resolved by the store in
    /// the writing transaction, from the owning tenant).
    pub fn validated(
        self,
    ) -> Result<(EscalationPolicyFields, Vec<RecipientReference>), ValidationErrors> {
        let mut v = Validator::new();
        if let Some(name) = v.required("Name", self.name.as_deref()) {
            v.length("Name", Some(name.trim()), 1, NAME_MAX_CHARS);
        }
        v.length(
            "Description",
            self.description.as_deref(),
            0,
            DESCRIPTION_MAX_CHARS,
        );
        let (steps, references) = checked_steps(&mut v, self.steps.as_deref());
        v.finish()?;
        let Some(name) = self.name else {
            // Unreachable: a missing name was reported above.
            return Err(ValidationErrors::single("Name", "is required"));
        };
        let fields = EscalationPolicyFields {
            name: name.trim().to_string(),
            description: self.description.filter(|d| !d.is_empty()),
            applies_to_subtenants: self.applies_to_subtenants,
            is_tenant_default: self.is_tenant_default,
            steps,
        };
        Ok((fields, references))
    }
}

/// The steps, each checked, and their recipients' references; what is wrong goes to `v`
/// as `Steps[i].Field` (recipients: `Steps[i].Recipients[j].Field`).
fn checked_steps(
    v: &mut Validator,
    steps: Option<&[EscalationStepRecord]>,
) -> (Vec<EscalationStep>, Vec<RecipientReference>) {
    let Some(steps) = steps else {
        v.add("Steps", "is required");
        return (Vec::new(), Vec::new());
    };
    if steps.is_empty() || steps.len() > MAX_STEPS {
        v.add(
            "Steps",
            format!("must have 1 to {MAX_STEPS} steps (got {})", steps.len()),
        );
        return (Vec::new(), Vec::new());
    }
    let mut checked = Vec::new();
    let mut references = Vec::new();
    let mut previous: Option<u32> = None;
    for (index, step) in steps.iter().enumerate() {
        let prefix = format!("Steps[{index}]");
        let after = checked_after_minutes(v, &prefix, step.after_minutes, previous);
        previous = after.or(previous);
        references.extend(checked_recipients(v, &prefix, step));
        v.length(
            &format!("{prefix}.Instructions"),
            step.instructions.as_deref(),
            0,
            MAX_INSTRUCTIONS_CHARS,
        );
        let instructions = step.instructions.clone().filter(|i| !i.trim().is_empty());
        if step.recipients.is_empty() && instructions.is_none() {
            v.add(
                prefix.clone(),
                "a step needs Recipients, Instructions or both",
            );
        }
        if let Some(after_minutes) = after {
            checked.push(EscalationStep {
                after_minutes,
                recipients: step.recipients.clone(),
                instructions,
            });
        }
    }
    (checked, references)
}

/// `AfterMinutes` in range and later than the previous step's.
fn checked_after_minutes(
    v: &mut Validator,
    prefix: &str,
    raw: Option<i64>,
    previous: Option<u32>,
) -> Option<u32> {
    let field = format!("{prefix}.AfterMinutes");
    let Some(raw) = raw else {
        v.add(field, "is required");
        return None;
    };
    let Some(minutes) = u32::try_from(raw).ok().filter(|m| *m <= MAX_AFTER_MINUTES) else {
        v.add(
            field,
            format!("must be a whole number of minutes from 0 to {MAX_AFTER_MINUTES} (got {raw})"),
        );
        return None;
    };
    if let Some(previous) = previous
        && minutes <= previous
    {
        v.add(
            field,
            format!("must be later than the previous step's {previous} (steps are in order)"),
        );
        return None;
    }
    Some(minutes)
}

/// The step's recipients parsed as a notification's are, their problems named under
/// the step.
fn checked_recipients(
    v: &mut Validator,
    prefix: &str,
    step: &EscalationStepRecord,
) -> Vec<RecipientReference> {
    if step.recipients.len() > MAX_STEP_RECIPIENTS {
        v.add(
            format!("{prefix}.Recipients"),
            format!(
                "at most {MAX_STEP_RECIPIENTS} recipients per step (got {})",
                step.recipients.len()
            ),
        );
        return Vec::new();
    }
    let mut inner = Validator::new();
    let mut references = validate_recipients(&step.recipients, &mut inner);
    if let Err(errors) = inner.finish() {
        for error in errors.0 {
            v.add(format!("{prefix}.{}", error.field), error.message);
        }
    }
    for reference in &mut references {
        reference.field_prefix = format!("{prefix}.{}", reference.field_prefix);
    }
    references
}

impl From<&EscalationPolicy> for EscalationPolicyRecord {
    fn from(policy: &EscalationPolicy) -> Self {
        EscalationPolicyRecord {
            escalation_policy_id: Some(policy.escalation_policy_id.to_string()),
            tenant_code: Some(policy.tenant_code.to_string()),
            name: Some(policy.name.clone()),
            description: policy.description.clone(),
            applies_to_subtenants: policy.applies_to_subtenants,
            is_tenant_default: policy.is_tenant_default,
            steps: Some(
                policy
                    .steps
                    .iter()
                    .map(|s| EscalationStepRecord {
                        after_minutes: Some(i64::from(s.after_minutes)),
                        recipients: s.recipients.clone(),
                        instructions: s.instructions.clone(),
                    })
                    .collect(),
            ),
            timestamp: Some(policy.timestamp),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::EscalationPolicyId;
    use crate::domain::recipient::RecipientType;

    fn mail(address: &str) -> Recipient {
        Recipient {
            r#type: Some(RecipientType::MessagingAddress),
            messaging_address: Some(format!("mail:{address}")),
            ..Default::default()
        }
    }

    fn step(after: i64) -> EscalationStepRecord {
        EscalationStepRecord {
            after_minutes: Some(after),
            recipients: vec![mail("ops@example.com")],
            instructions: None,
        }
    }

    fn record(steps: Vec<EscalationStepRecord>) -> EscalationPolicyRecord {
        EscalationPolicyRecord {
            name: Some(" Night ".into()),
            steps: Some(steps),
            ..Default::default()
        }
    }

    fn fields(r: EscalationPolicyRecord) -> Vec<String> {
        r.validated()
            .err()
            .map(|e| e.0.into_iter().map(|f| f.field).collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_good_policy_is_kept_trimmed_in_order() {
        let (policy, references) = record(vec![step(0), step(5), step(1440)])
            .validated()
            .expect("valid");
        assert_eq!(policy.name, "Night");
        let minutes: Vec<u32> = policy.steps.iter().map(|s| s.after_minutes).collect();
        assert_eq!(minutes, [0, 5, 1440]);
        assert!(references.is_empty());
    }

    #[test]
    fn steps_are_required_bounded_and_strictly_increasing() {
        assert_eq!(
            fields(EscalationPolicyRecord {
                name: Some("x".into()),
                ..Default::default()
            }),
            ["Steps"]
        );
        assert_eq!(fields(record(vec![])), ["Steps"]);
        assert_eq!(fields(record((0..11).map(step).collect())), ["Steps"]);
        assert_eq!(
            fields(record(vec![step(5), step(5)])),
            ["Steps[1].AfterMinutes"]
        );
        assert_eq!(
            fields(record(vec![step(5), step(3)])),
            ["Steps[1].AfterMinutes"]
        );
        assert_eq!(fields(record(vec![step(-1)])), ["Steps[0].AfterMinutes"]);
        assert_eq!(fields(record(vec![step(1441)])), ["Steps[0].AfterMinutes"]);
        assert_eq!(
            fields(record(vec![step(i64::MAX)])),
            ["Steps[0].AfterMinutes"]
        );
        let missing = EscalationStepRecord {
            after_minutes: None,
            ..step(0)
        };
        assert_eq!(fields(record(vec![missing])), ["Steps[0].AfterMinutes"]);
        // A bad step in the middle does not hide the order of the others.
        assert_eq!(
            fields(record(vec![step(10), step(2000), step(5)])),
            ["Steps[1].AfterMinutes", "Steps[2].AfterMinutes"]
        );
    }

    #[test]
    fn a_step_reaches_someone_or_says_something() {
        let empty = EscalationStepRecord {
            after_minutes: Some(0),
            recipients: vec![],
            instructions: Some("  ".into()),
        };
        assert_eq!(fields(record(vec![empty])), ["Steps[0]"]);
        let instructions_only = EscalationStepRecord {
            after_minutes: Some(0),
            recipients: vec![],
            instructions: Some("Call the site".into()),
        };
        assert!(fields(record(vec![instructions_only])).is_empty());
        let long = EscalationStepRecord {
            instructions: Some("x".repeat(MAX_INSTRUCTIONS_CHARS + 1)),
            ..step(0)
        };
        assert_eq!(fields(record(vec![long])), ["Steps[0].Instructions"]);
    }

    #[test]
    fn recipients_are_parsed_and_named_under_their_step() {
        let bad = EscalationStepRecord {
            recipients: vec![mail("ops@example.com"), mail("not an address")],
            ..step(3)
        };
        assert_eq!(
            fields(record(vec![step(0), bad])),
            ["Steps[1].Recipients[1].MessagingAddress"]
        );
        let listed = EscalationStepRecord {
            recipients: vec![Recipient {
                r#type: Some(RecipientType::TenantList),
                list_id: Some("7".into()),
                ..Default::default()
            }],
            ..step(0)
        };
        let (_, references) = record(vec![listed]).validated().expect("valid");
        assert_eq!(references.len(), 1);
        assert_eq!(references[0].field_prefix, "Steps[0].Recipients[0]");
        let many = EscalationStepRecord {
            recipients: vec![mail("a@example.com"); MAX_STEP_RECIPIENTS + 1],
            ..step(0)
        };
        assert_eq!(fields(record(vec![many])), ["Steps[0].Recipients"]);
    }

    #[test]
    fn name_and_description_rules() {
        let r = EscalationPolicyRecord {
            name: Some(" ".into()),
            description: Some("d".repeat(DESCRIPTION_MAX_CHARS + 1)),
            ..record(vec![step(0)])
        };
        assert_eq!(fields(r), ["Name", "Description"]);
        let r = EscalationPolicyRecord {
            name: Some("n".repeat(NAME_MAX_CHARS + 1)),
            ..record(vec![step(0)])
        };
        assert_eq!(fields(r), ["Name"]);
    }

    #[test]
    fn wire_form_matches_the_domain_form() {
        let (fields, _) = record(vec![step(0), step(15)]).validated().expect("valid");
        let domain = EscalationPolicy::new(
            EscalationPolicyId::new(3),
            "1000".parse().expect("code"),
            EscalationPolicyFields {
                description: Some("Nights".into()),
                is_tenant_default: true,
                ..fields
            },
            "2026-01-01T00:00:00Z".parse().expect("time"),
            "e".into(),
        );
        let json = serde_json::to_value(&domain).expect("serialises");
        let wire: EscalationPolicyRecord = serde_json::from_value(json.clone()).expect("reads");
        assert_eq!(serde_json::to_value(&wire).expect("serialises"), json);
        assert_eq!(EscalationPolicyRecord::from(&domain), wire);
        let keys: Vec<&String> = json.as_object().expect("object").keys().collect();
        assert_eq!(keys.first().map(|k| k.as_str()), Some("EscalationPolicyId"));
    }
}
