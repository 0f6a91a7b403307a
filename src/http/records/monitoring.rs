//! Monitoring sessions on the wire (`/V2/{t}/devices/{deviceId}/monitoring`, issue 45
//! §1; docs/monitoring.md): the settings a client sends to start or change a session,
//! what a check-in carries, and the session as read (its state computed at read time).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::monitoring::record::ForceStop;
use crate::domain::monitoring::settings::NOTE_MAX_CHARS;
use crate::domain::monitoring::{DefaultSources, RequestedSettings, SessionSettings};
use crate::domain::record::ServerFields;
use crate::domain::serde_util::opt_int64;
use crate::domain::validation::{ValidationErrors, Validator};

/// A session's settings as a client sends them (`POST`, and what a `PATCH` applies to).
/// A value not sent comes from the device's `Properties`, then the tenant's, under the
/// same name, then the built-in default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "MonitoringSettings", rename_all = "PascalCase")]
#[schema(as = MonitoringSettings)]
pub struct MonitoringSettingsRecord {
    /// From the start to the planned end, 1 to 10080 (a week); default 480. Counted from
    /// the start: extending a session is a larger duration.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 10080, example = 480)]
    pub duration_minutes: Option<i64>,
    /// 1 to 1440, at most the duration; default 60 (the duration when shorter).
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1440, example = 60)]
    pub check_in_interval_minutes: Option<i64>,
    /// 0 to 120; default 5.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 120, example = 5)]
    pub grace_minutes: Option<i64>,
    /// 0 (no reminder) to the interval − 1; default 5.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 1439, example = 5)]
    pub reminder_minutes: Option<i64>,
    /// 0 (off), or 5 to 1440; default 0.
    #[serde(default, with = "opt_int64")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 1440, example = 0)]
    pub no_motion_minutes: Option<i64>,
    /// Where and what, at most 500 characters.
    #[schema(max_length = 500, example = "Pump station 4, valve maintenance")]
    pub note: Option<String>,
}

impl ServerFields for MonitoringSettingsRecord {
    const READ_ONLY_FIELDS: &'static [&'static str] = &[];

    fn without_read_only(self) -> Self {
        self
    }
}

impl MonitoringSettingsRecord {
    /// The settings settled against the limits and the defaults (every bad value named).
    pub fn validated(
        self,
        sources: DefaultSources<'_>,
    ) -> Result<SessionSettings, ValidationErrors> {
        let requested = RequestedSettings {
            duration_minutes: self.duration_minutes,
            check_in_interval_minutes: self.check_in_interval_minutes,
            grace_minutes: self.grace_minutes,
            reminder_minutes: self.reminder_minutes,
            no_motion_minutes: self.no_motion_minutes,
            note: self.note,
        };
        Ok(requested.settle(sources)?.settings)
    }
}

impl From<&SessionSettings> for MonitoringSettingsRecord {
    fn from(s: &SessionSettings) -> Self {
        MonitoringSettingsRecord {
            duration_minutes: Some(i64::from(s.duration_minutes)),
            check_in_interval_minutes: Some(i64::from(s.check_in_interval_minutes)),
            grace_minutes: Some(i64::from(s.grace_minutes)),
            reminder_minutes: Some(i64::from(s.reminder_minutes)),
            no_motion_minutes: Some(i64::from(s.no_motion_minutes)),
            note: s.note.clone(),
        }
    }
}

/// A check-in through the API (`POST …/monitoring/checkins`): an operator or an
/// integration records that the person called in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "MonitoringCheckIn", rename_all = "PascalCase")]
#[schema(as = MonitoringCheckIn)]
pub struct CheckInRecord {
    /// At most 500 characters (kept on the session's history).
    #[schema(max_length = 500, example = "Called the duty phone")]
    pub note: Option<String>,
}

impl CheckInRecord {
    pub fn validated(self) -> Result<Option<String>, ValidationErrors> {
        let mut v = Validator::new();
        v.length("Note", self.note.as_deref(), 0, NOTE_MAX_CHARS);
        v.finish()?;
        Ok(self.note.filter(|n| !n.trim().is_empty()))
    }
}

/// An operator's force stop (`POST …/monitoring/forcestop`, `ForceStopMonitoring`): the
/// current session ends at once as `EndKind` `ForceStop`, with the reason.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "MonitoringForceStop", rename_all = "PascalCase")]
#[schema(as = MonitoringForceStop)]
pub struct ForceStopRecord {
    /// Why the operator stopped it, 1 to 500 characters and not blank (the session's
    /// `EndReason`).
    #[schema(
        required = true,
        min_length = 1,
        max_length = 500,
        example = "Worker reached by phone"
    )]
    pub reason: Option<String>,
}

impl ForceStopRecord {
    /// The force stop (`Reason` present, not blank, at most 500 characters; kept trimmed).
    pub fn validated(self) -> Result<ForceStop, ValidationErrors> {
        let mut v = Validator::new();
        let reason = v.required("Reason", self.reason.as_deref());
        v.length("Reason", reason, 1, NOTE_MAX_CHARS);
        v.finish()?;
        match reason {
            Some(reason) => Ok(ForceStop {
                reason: reason.trim().to_string(),
            }),
            // Unreachable: a missing or blank reason was reported above.
            None => Err(ValidationErrors::single("Reason", "is required")),
        }
    }
}

pub use crate::domain::monitoring::view::{MonitoringSessionEventView, MonitoringSessionView};
