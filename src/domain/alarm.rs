//! What a device's alarm says (DESIGN §13): the alarms of devices people wear, in
//! Traccar's names — the vocabulary Traccar's ~270 decoders, its forwarding, OsmAnd /
//! Traccar Client (`alarm=`) and the native decoders share. A message's alarms are its
//! `Properties.alarm`, comma-separated when several (`"sos,removing"`), names matched in
//! any letter case; names outside this set are kept in the property and mean nothing
//! more.
//!
//! | Alarm | Becomes |
//! |---|---|
//! | `sos` | `EmergencyState` `Active` (set by the gateway), event `Emergency` |
//! | `fallDown` (also `fall`) | `EmergencyState` `Fall` (set by the gateway), events `Fall` and `Emergency` |
//! | `removing`, `tampering` | event `Tamper` (read from the message by the events engine) |
//! | `lowBattery`, `lowPower` | event `LowBattery` (read from the message); also `Properties.lowBattery` `true` (Garmin's status flag) |
//! | `powerOff` | `MessageType` `PowerDown` (set by the gateway), event `PowerDown` |
//!
//! The emergency and the message type are set by the gateway that parses the report
//! (they are the message's own fields, which `EmergencyState` rules and check-ins read);
//! `Tamper` and `LowBattery` are read from the stored message wherever it came from.

use std::collections::BTreeMap;

use super::closed_set::closed_set;
use super::mo_message::EmergencyState;

closed_set! {
    /// An alarm name that means something to the platform.
    pub enum Alarm {
        Sos = "sos",
        FallDown = "fallDown",
        Fall = "fall",
        Removing = "removing",
        Tampering = "tampering",
        LowBattery = "lowBattery",
        LowPower = "lowPower",
        PowerOff = "powerOff",
    }
}

/// The property holding a message's alarms.
pub const ALARM_PROPERTY: &str = "alarm";

/// The alarms a comma-separated list names (unknown names skipped, each once, in order).
pub fn alarms_in(list: &str) -> Vec<Alarm> {
    let mut alarms = Vec::new();
    for alarm in list.split(',').filter_map(Alarm::parse_any_case) {
        if !alarms.contains(&alarm) {
            alarms.push(alarm);
        }
    }
    alarms
}

/// The emergency the alarms raise: a fall (the more particular) over an SOS; none
/// for the others.
pub fn emergency_of(alarms: &[Alarm]) -> Option<EmergencyState> {
    if alarms
        .iter()
        .any(|a| matches!(a, Alarm::FallDown | Alarm::Fall))
    {
        Some(EmergencyState::Fall)
    } else if alarms.contains(&Alarm::Sos) {
        Some(EmergencyState::Active)
    } else {
        None
    }
}

/// Whether the alarms say the device is switching off.
pub fn powers_off(alarms: &[Alarm]) -> bool {
    alarms.contains(&Alarm::PowerOff)
}

/// The alarms of a message's properties.
fn property_alarms(properties: &BTreeMap<String, String>) -> Vec<Alarm> {
    properties
        .get(ALARM_PROPERTY)
        .map(|list| alarms_in(list))
        .unwrap_or_default()
}

/// `Tamper`: the device was taken off or opened (`removing`, `tampering`).
pub fn is_tamper(properties: &BTreeMap<String, String>) -> bool {
    property_alarms(properties)
        .iter()
        .any(|a| matches!(a, Alarm::Removing | Alarm::Tampering))
}

/// `LowBattery`: the device says its battery or power is low (`lowBattery`, `lowPower`,
/// or the `lowBattery` status flag `true`).
pub fn is_low_battery(properties: &BTreeMap<String, String>) -> bool {
    let flag = properties
        .get("lowBattery")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    flag || property_alarms(properties)
        .iter()
        .any(|a| matches!(a, Alarm::LowBattery | Alarm::LowPower))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn lists_are_read_in_any_case_unknown_names_skipped() {
        assert_eq!(alarms_in("sos,removing"), [Alarm::Sos, Alarm::Removing]);
        assert_eq!(
            alarms_in(" FALLDOWN , overspeed,sos,sos"),
            [Alarm::FallDown, Alarm::Sos]
        );
        assert_eq!(alarms_in(""), []);
        assert_eq!(alarms_in("general,geofenceEnter"), []);
    }

    #[test]
    fn what_each_alarm_becomes() {
        assert_eq!(
            emergency_of(&alarms_in("sos")),
            Some(EmergencyState::Active)
        );
        assert_eq!(
            emergency_of(&alarms_in("sos,fallDown")),
            Some(EmergencyState::Fall)
        );
        assert_eq!(emergency_of(&alarms_in("fall")), Some(EmergencyState::Fall));
        assert_eq!(emergency_of(&alarms_in("removing,lowPower")), None);
        assert!(powers_off(&alarms_in("lowBattery,powerOff")));
        assert!(!powers_off(&alarms_in("powerOn")));
        assert!(is_tamper(&props(&[("alarm", "removing")])));
        assert!(is_tamper(&props(&[("alarm", "sos,tampering")])));
        assert!(!is_tamper(&props(&[("alarm", "sos")])));
        assert!(!is_tamper(&props(&[("tampering", "true")])));
        assert!(is_low_battery(&props(&[("alarm", "lowPower")])));
        assert!(is_low_battery(&props(&[("alarm", "lowBattery")])));
        assert!(is_low_battery(&props(&[("lowBattery", "true")])));
        assert!(!is_low_battery(&props(&[("lowBattery", "false")])));
        assert!(!is_low_battery(&props(&[("battery", "5")])));
    }
}
