//! What the platform knows about a device now, and what each message changes: the facts
//! the events engine evaluates (transitions are computed from this state, never from a
//! rescan of history).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::alarm;
use super::events::{EventFacts, GeofenceFact};
use super::mo_message::{EmergencyState, GeofenceRef, MoMessage};

/// The device's last position.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct LastPosition {
    pub lat: f64,
    pub lon: f64,
    pub speed: Option<f64>,
    pub heading: Option<f64>,
    pub altitude: Option<f64>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub gps_timestamp: Option<Timestamp>,
}

/// A device's state, kept by message time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceState {
    pub last_message_time: Option<Timestamp>,
    pub last_message_id: Option<i64>,
    pub last_position: Option<LastPosition>,
    /// Absent before the first message that said.
    pub emergency_state: Option<EmergencyState>,
    pub battery_percentage: Option<f64>,
    pub containing_geofences: Vec<GeofenceRef>,
    pub check_in_interval_minutes: Option<i64>,
    pub check_in_paused: bool,
    /// When a `MissedCheckIn` is due unless a confirming message (a person's act,
    /// `monitoring::message_confirmation`) arrives first.
    pub next_check_in_at: Option<Timestamp>,
    /// The last check-in a person confirmed (what the schedule counts from).
    pub last_check_in_at: Option<Timestamp>,
    /// When `Silent` is due unless any message at all arrives first (the device's
    /// `SilentAfterMinutes`); `None` once fired, until the next message.
    pub silent_due_at: Option<Timestamp>,
}

/// Longest `SilentAfterMinutes` (a week).
pub const SILENT_AFTER_MAX_MINUTES: u32 = 10_080;

/// The device's `SilentAfterMinutes`: its own property, else its tenant's, each a whole
/// number 1 to a week (anything else is passed over, as a session's defaults are).
pub fn silent_after(
    device: &std::collections::BTreeMap<String, String>,
    tenant: Option<&std::collections::BTreeMap<String, String>>,
) -> Option<u32> {
    let minutes = |properties: &std::collections::BTreeMap<String, String>| {
        properties
            .get("SilentAfterMinutes")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|m| (1..=SILENT_AFTER_MAX_MINUTES).contains(m))
    };
    minutes(device).or_else(|| tenant.and_then(minutes))
}

/// What one message means for the device.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// Facts for the events engine (local time not yet set: that depends on each
    /// notification's time zone).
    pub facts: EventFacts,
    /// Older than the device state: stored and evaluated, but the state stays.
    pub late: bool,
    /// The geofences containing the message's position (the state's when it has none).
    pub containing: Vec<GeofenceRef>,
}

fn facts_of(geofences: &[GeofenceRef]) -> Vec<GeofenceFact> {
    geofences
        .iter()
        .map(|g| GeofenceFact {
            id: g.geofence_id.clone(),
            name: g.geofence_name.clone(),
        })
        .collect()
}

fn minus(a: &[GeofenceRef], b: &[GeofenceRef]) -> Vec<GeofenceRef> {
    a.iter()
        .filter(|g| !b.iter().any(|h| h.geofence_id == g.geofence_id))
        .cloned()
        .collect()
}

impl DeviceState {
    fn in_emergency(&self) -> bool {
        self.emergency_state
            .is_some_and(EmergencyState::in_emergency)
    }

    /// Applies a stored message (`message_id`, at `time`) whose position lies in `inside`
    /// (`None`: the message has no position). Returns the facts it yields:
    /// - its `MessageType`; `Speed`, `Battery`, `Property(k)` from the message;
    /// - `Emergency` while the device is in emergency after this message (a message
    ///   without `EmergencyState` leaves it as it was), `EmergencyCancelled` on the
    ///   transition from emergency to `None`;
    /// - `GeofenceEnter`/`GeofenceExit` on changes of the containing set, `InGeofence`.
    ///
    /// A late message (older than the state) moves nothing: it yields its own facts,
    /// `Emergency` if it says so, `InGeofence` for its position, and no transitions —
    /// but for its word on the emergency (`late_emergency_word`).
    pub fn observe(
        &mut self,
        message: &MoMessage,
        message_id: i64,
        time: Timestamp,
        inside: Option<Vec<GeofenceRef>>,
    ) -> Observation {
        let late = self.last_message_time.is_some_and(|last| time < last);
        let mut facts = EventFacts {
            message_type: message.message_type.clone(),
            speed_kmh: message.position.as_ref().and_then(|p| p.speed),
            battery_percent: message.battery_percent(),
            properties: message.properties.clone(),
            // A fall is the message's own word, late or not (it is an emergency too).
            fall: message.emergency_state == Some(EmergencyState::Fall),
            tamper: alarm::is_tamper(&message.properties),
            low_battery: alarm::is_low_battery(&message.properties),
            ..Default::default()
        };
        if late {
            let containing = inside.unwrap_or_default();
            facts.emergency = message.in_emergency() == Some(true);
            facts.inside = facts_of(&containing);
            return Observation {
                facts,
                late,
                containing,
            };
        }
        let was_in_emergency = self.in_emergency();
        if let Some(state) = message.emergency_state {
            self.emergency_state = Some(state);
        }
        facts.emergency = self.in_emergency();
        facts.emergency_cancelled = was_in_emergency && message.in_emergency() == Some(false);

        let containing = match inside {
            Some(now_inside) => {
                facts.entered = facts_of(&minus(&now_inside, &self.containing_geofences));
                facts.exited = facts_of(&minus(&self.containing_geofences, &now_inside));
                self.containing_geofences = now_inside.clone();
                now_inside
            }
            None => self.containing_geofences.clone(),
        };
        facts.inside = facts_of(&containing);

        if let Some(p) = &message.position
            && let Some((lat, lon)) = p.lat_lon()
        {
            self.last_position = Some(LastPosition {
                lat,
                lon,
                speed: p.speed,
                heading: p.heading,
                altitude: p.altitude,
                gps_timestamp: p.gps_timestamp,
            });
        }
        if let Some(battery) = message.battery_percent() {
            self.battery_percentage = Some(battery);
        }
        self.last_message_time = Some(time);
        self.last_message_id = Some(message_id);
        Observation {
            facts,
            late,
            containing,
        }
    }

    /// A late message's word on the emergency (`EmergencyState`), once `observe` found it
    /// late: the device's emergency state is the one said by the newest message (by its
    /// time) that says one, so a late word counts unless a newer message said one
    /// (`newer_word`). A late SOS thus puts the device in emergency (until a newer
    /// cancel), and a late cancel never cancels a newer emergency.
    pub fn late_emergency_word(
        &mut self,
        message: &MoMessage,
        newer_word: bool,
        observation: &mut Observation,
    ) {
        let Some(state) = message
            .emergency_state
            .filter(|_| observation.late && !newer_word)
        else {
            return;
        };
        let was_in_emergency = self.in_emergency();
        self.emergency_state = Some(state);
        observation.facts.emergency = self.in_emergency();
        observation.facts.emergency_cancelled = was_in_emergency && !state.in_emergency();
    }

    /// A check-in a person confirmed at `time` (`monitoring::message_confirmation`; never
    /// an automatic report): the next is due one interval after it — unless it is not
    /// newer than the last one (messages arrive out of order: an older one changes
    /// nothing).
    pub fn confirmed_check_in(&mut self, time: Timestamp) {
        if self.last_check_in_at.is_some_and(|last| time <= last) {
            return;
        }
        self.last_check_in_at = Some(time);
        self.reschedule_check_in(time);
    }

    /// A message (any at all) arrived at `received`: `Silent` is due `silent_after`
    /// later (none without a `SilentAfterMinutes`).
    pub fn heard_from(&mut self, received: Timestamp, silent_after: Option<jiff::SignedDuration>) {
        self.silent_due_at = silent_after.and_then(|after| received.checked_add(after).ok());
    }

    /// The next check-in is due one interval after `time`.
    pub fn reschedule_check_in(&mut self, time: Timestamp) {
        self.next_check_in_at = match self.check_in_interval_minutes {
            Some(minutes) if minutes > 0 && !self.check_in_paused => {
                minutes_long(minutes).and_then(|interval| time.checked_add(interval).ok())
            }
            _ => None,
        };
    }

    /// Sets (or with `None`/0 clears) the check-in interval; the schedule counts from
    /// the last confirmed check-in (or from `now` when there is none yet).
    pub fn set_check_in_interval(&mut self, minutes: Option<i64>, now: Timestamp) {
        self.check_in_interval_minutes = minutes.filter(|m| *m > 0);
        self.reschedule_check_in(self.last_check_in_at.unwrap_or(now));
    }

    /// Pauses (`StopCheckInSchedule`) or resumes (`StartCheckInSchedule`) the schedule.
    pub fn pause_check_in(&mut self, paused: bool, now: Timestamp) {
        self.check_in_paused = paused;
        // Resuming counts a full interval from now: the pause was not a silence.
        self.reschedule_check_in(now);
    }

    /// A missed check-in was reported at `due`; the next is due one interval after it,
    /// or — after a long silence (or downtime) — the next interval boundary after `now`:
    /// one `MissedCheckIn` per missed interval, never a backlog at once.
    pub fn missed_check_in(&mut self, due: Timestamp, now: Timestamp) {
        let Some(interval) = self
            .check_in_interval_minutes
            .filter(|m| *m > 0)
            .and_then(minutes_long)
        else {
            self.next_check_in_at = None;
            return;
        };
        let mut next = due;
        while next <= now {
            match next.checked_add(interval) {
                Ok(t) => next = t,
                Err(_) => break,
            }
        }
        self.next_check_in_at = Some(next);
    }
}

/// `minutes` as a duration; `None` past what a duration holds (`from_mins` would panic).
fn minutes_long(minutes: i64) -> Option<jiff::SignedDuration> {
    minutes.checked_mul(60).map(jiff::SignedDuration::from_secs)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::domain::mo_message::Position;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn depot() -> GeofenceRef {
        GeofenceRef {
            geofence_id: "1".into(),
            geofence_name: "Depot".into(),
        }
    }

    fn positioned(emergency: Option<&str>) -> MoMessage {
        MoMessage {
            message_type: Some("AutomaticPositionReport".into()),
            position: Some(Position {
                latitude: Some(51.5),
                longitude: Some(-0.1),
                speed: Some(40.0),
                ..Default::default()
            }),
            emergency_state: emergency.map(|s| s.parse().unwrap()),
            ..Default::default()
        }
    }

    #[test]
    fn emergency_transitions() {
        let mut s = DeviceState::default();
        let o = s.observe(&positioned(None), 1, at("2026-01-01T00:00:00Z"), None);
        assert!(!o.facts.emergency && !o.facts.emergency_cancelled);
        let o = s.observe(
            &positioned(Some("Active")),
            2,
            at("2026-01-01T00:01:00Z"),
            None,
        );
        assert!(o.facts.emergency);
        // While in emergency, every message is an Emergency, said or not.
        let o = s.observe(&positioned(None), 3, at("2026-01-01T00:02:00Z"), None);
        assert!(o.facts.emergency);
        let o = s.observe(
            &positioned(Some("None")),
            4,
            at("2026-01-01T00:03:00Z"),
            None,
        );
        assert!(!o.facts.emergency && o.facts.emergency_cancelled);
        let o = s.observe(
            &positioned(Some("None")),
            5,
            at("2026-01-01T00:04:00Z"),
            None,
        );
        assert!(!o.facts.emergency_cancelled);
    }

    #[test]
    fn geofence_transitions_and_late_messages() {
        let mut s = DeviceState::default();
        let o = s.observe(
            &positioned(None),
            1,
            at("2026-01-01T00:00:00Z"),
            Some(vec![]),
        );
        assert!(o.facts.entered.is_empty());
        let o = s.observe(
            &positioned(None),
            2,
            at("2026-01-01T00:05:00Z"),
            Some(vec![depot()]),
        );
        assert_eq!(o.facts.entered.len(), 1);
        assert_eq!(o.facts.inside.len(), 1);
        // A late SOS outside the depot: evaluated, but moves nothing.
        let o = s.observe(
            &positioned(Some("Active")),
            3,
            at("2026-01-01T00:01:00Z"),
            Some(vec![]),
        );
        assert!(o.late && o.facts.emergency);
        assert!(o.facts.exited.is_empty());
        assert_eq!(s.containing_geofences, vec![depot()]);
        assert_eq!(s.last_message_id, Some(2));
        assert_eq!(s.emergency_state, None);
        let o = s.observe(
            &positioned(None),
            4,
            at("2026-01-01T00:06:00Z"),
            Some(vec![]),
        );
        assert_eq!(o.facts.exited.len(), 1);
        // No position: the containing set carries over.
        s.containing_geofences = vec![depot()];
        let o = s.observe(&MoMessage::default(), 5, at("2026-01-01T00:07:00Z"), None);
        assert_eq!(o.facts.inside.len(), 1);
        assert!(o.facts.exited.is_empty());
    }

    #[test]
    fn a_late_emergency_puts_the_device_in_emergency_unless_a_newer_word_came() {
        let mut s = DeviceState::default();
        s.observe(&positioned(None), 1, at("2026-01-01T00:05:00Z"), None);
        let sos = positioned(Some("Active"));
        let mut o = s.observe(&sos, 2, at("2026-01-01T00:01:00Z"), None);
        s.late_emergency_word(&sos, false, &mut o);
        assert!(o.late && o.facts.emergency && !o.facts.emergency_cancelled);
        assert_eq!(s.emergency_state, Some(EmergencyState::Active));
        assert_eq!(s.last_message_id, Some(1), "the rest of the state stays");
        // Every later message is an Emergency until a newer cancel.
        let o = s.observe(&positioned(None), 3, at("2026-01-01T00:06:00Z"), None);
        assert!(o.facts.emergency);
        // A late cancel older than a newer SOS the device already said: nothing moves.
        let cancel = positioned(Some("None"));
        let mut o = s.observe(&cancel, 4, at("2026-01-01T00:02:00Z"), None);
        s.late_emergency_word(&cancel, true, &mut o);
        assert!(!o.facts.emergency_cancelled);
        assert_eq!(s.emergency_state, Some(EmergencyState::Active));
        // A late cancel newer than every word so far cancels.
        let mut o = s.observe(&cancel, 5, at("2026-01-01T00:03:00Z"), None);
        s.late_emergency_word(&cancel, false, &mut o);
        assert!(o.facts.emergency_cancelled && !o.facts.emergency);
        assert_eq!(s.emergency_state, Some(EmergencyState::Clear));
        // A late SOS older than a cancel already said stays out of the state.
        let mut o = s.observe(&sos, 6, at("2026-01-01T00:00:30Z"), None);
        s.late_emergency_word(&sos, true, &mut o);
        assert!(o.facts.emergency, "still evaluated as an Emergency");
        assert_eq!(s.emergency_state, Some(EmergencyState::Clear));
    }

    #[test]
    fn check_in_schedule() {
        let mut s = DeviceState::default();
        let t0 = at("2026-01-01T00:00:00Z");
        s.set_check_in_interval(Some(30), t0);
        assert_eq!(s.next_check_in_at, Some(at("2026-01-01T00:30:00Z")));
        // A report is not a check-in; a person's confirmation is.
        s.observe(&positioned(None), 1, at("2026-01-01T00:05:00Z"), None);
        assert_eq!(s.next_check_in_at, Some(at("2026-01-01T00:30:00Z")));
        s.confirmed_check_in(at("2026-01-01T00:10:00Z"));
        assert_eq!(s.next_check_in_at, Some(at("2026-01-01T00:40:00Z")));
        // An older confirmation arriving late changes nothing.
        s.confirmed_check_in(at("2026-01-01T00:08:00Z"));
        assert_eq!(s.last_check_in_at, Some(at("2026-01-01T00:10:00Z")));
        assert_eq!(s.next_check_in_at, Some(at("2026-01-01T00:40:00Z")));
        // Ten hours of silence: one report, the next due at the next boundary.
        s.missed_check_in(at("2026-01-01T00:40:00Z"), at("2026-01-01T10:41:00Z"));
        assert_eq!(s.next_check_in_at, Some(at("2026-01-01T11:10:00Z")));
        s.pause_check_in(true, at("2026-01-01T10:42:00Z"));
        assert_eq!(s.next_check_in_at, None);
        s.pause_check_in(false, at("2026-01-01T12:00:00Z"));
        assert_eq!(s.next_check_in_at, Some(at("2026-01-01T12:30:00Z")));
        s.set_check_in_interval(Some(0), t0);
        assert_eq!(s.next_check_in_at, None);
    }

    #[test]
    fn silence_counts_from_the_last_arrival_and_the_device_property_wins() {
        let props = |v: &str| BTreeMap::from([("SilentAfterMinutes".to_string(), v.to_string())]);
        let none = BTreeMap::new();
        assert_eq!(silent_after(&none, None), None);
        assert_eq!(silent_after(&props("30"), Some(&props("60"))), Some(30));
        for bad in ["0", "-5", "ten", "10081", ""] {
            assert_eq!(
                silent_after(&props(bad), Some(&props("60"))),
                Some(60),
                "{bad} passed over"
            );
        }
        let mut s = DeviceState::default();
        let t0 = at("2026-01-01T00:00:00Z");
        s.heard_from(t0, Some(jiff::SignedDuration::from_mins(30)));
        assert_eq!(s.silent_due_at, Some(at("2026-01-01T00:30:00Z")));
        s.heard_from(t0, None);
        assert_eq!(s.silent_due_at, None);
    }

    #[test]
    fn an_interval_no_duration_holds_schedules_nothing_and_never_panics() {
        let mut s = DeviceState::default();
        let t0 = at("2026-01-01T00:00:00Z");
        for minutes in [1_000_000_000_000_000_000, i64::MAX] {
            s.set_check_in_interval(Some(minutes), t0);
            assert_eq!(s.next_check_in_at, None, "{minutes}");
            s.missed_check_in(t0, t0);
            assert_eq!(s.next_check_in_at, None, "{minutes}");
        }
    }
}
