//! No motion (DESIGN §11): during a session with `NoMotionMinutes` set, `NoMotion` is
//! raised when the device keeps reporting but has not moved more than 25 m for that
//! long. Pure: the session's motion record is moved on by reports and check-ins, and
//! says when the timer is due and whether, then, the device kept reporting.
//!
//! - The **anchor** is where the device was when it last moved more than 25 m (or the
//!   session's first fix), and since when. A report farther than 25 m from it moves the
//!   anchor there; a nearer one moves nothing but shows the device still reporting.
//! - A confirmed check-in restarts the window at the anchor (the person said "I am OK":
//!   stillness before that is not theirs to explain).
//! - The timer is due `NoMotionMinutes` after the anchor's time. It raises `NoMotion`
//!   only if the device reported in the second half of the window (`kept_reporting`):
//!   a device that stopped reporting is `Silent` or misses its check-in, which say so
//!   honestly. Otherwise it waits (`Parked`) for the next report, which re-arms it.

use geo::{Distance, Haversine, Point};
use jiff::{SignedDuration, Timestamp};

/// Movement within this many metres of the anchor is no movement (GPS jitter indoors
/// is of this order).
pub const STILL_WITHIN_METRES: f64 = 25.0;

/// Where the device was still since, and when it last reported.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Motion {
    /// `(latitude, longitude)` and since when the device is there.
    pub anchor: Option<((f64, f64), Timestamp)>,
    /// Its latest report (any message) at or after the anchor.
    pub reported_at: Option<Timestamp>,
}

/// What the no-motion timer does when it comes due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoMotionCheck {
    /// The device kept reporting from the same place: raise `NoMotion`.
    Raise,
    /// It did not report lately: wait for a report (which re-arms the timer).
    Parked,
}

fn metres((lat_a, lon_a): (f64, f64), (lat_b, lon_b): (f64, f64)) -> f64 {
    Haversine.distance(Point::new(lon_a, lat_a), Point::new(lon_b, lat_b))
}

impl Motion {
    /// A report sent at `at`, with its position when it has a fix. Reports older than
    /// the anchor (out of order) change nothing.
    pub fn report(&mut self, at: Timestamp, position: Option<(f64, f64)>) {
        if let Some((_, since)) = self.anchor
            && at < since
        {
            return;
        }
        if let Some(here) = position.filter(|(lat, lon)| lat.is_finite() && lon.is_finite()) {
            let moved = self
                .anchor
                .is_none_or(|(there, _)| metres(there, here) > STILL_WITHIN_METRES);
            if moved {
                self.anchor = Some((here, at));
            }
        }
        if self.anchor.is_some() {
            self.reported_at = Some(self.reported_at.map_or(at, |r| r.max(at)));
        }
    }

    /// A check-in confirmed at `at` restarts the window (the anchor's place is kept).
    pub fn confirmed(&mut self, at: Timestamp) {
        if let Some((place, since)) = self.anchor {
            self.anchor = Some((place, since.max(at)));
        }
    }

    /// When the timer is due for a window of `window` (`None`: no fix yet, or off).
    pub fn due(&self, window: SignedDuration) -> Option<Timestamp> {
        if window.is_zero() {
            return None;
        }
        let (_, since) = self.anchor?;
        since.checked_add(window).ok()
    }

    /// What the timer does when due, for a window of `window`.
    pub fn check(&self, window: SignedDuration) -> NoMotionCheck {
        let kept = match (self.anchor, self.reported_at) {
            (Some((_, since)), Some(reported)) => {
                let half = since.checked_add(window / 2).unwrap_or(Timestamp::MAX);
                reported >= half
            }
            _ => false,
        };
        if kept {
            NoMotionCheck::Raise
        } else {
            NoMotionCheck::Parked
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUMP_STATION: (f64, f64) = (54.6001, -3.1340);

    fn at(minute: i64) -> Timestamp {
        Timestamp::from_second(1_780_000_000 + minute * 60).expect("a time")
    }

    /// `metres` north of the pump station.
    fn north(metres: f64) -> (f64, f64) {
        (PUMP_STATION.0 + metres / 111_195.0, PUMP_STATION.1)
    }

    const WINDOW: SignedDuration = SignedDuration::from_mins(30);

    #[test]
    fn the_first_fix_anchors_and_jitter_within_25_m_is_still() {
        let mut motion = Motion::default();
        motion.report(at(0), None);
        assert_eq!(motion, Motion::default(), "no fix, no anchor");
        motion.report(at(1), Some(PUMP_STATION));
        assert_eq!(motion.anchor, Some((PUMP_STATION, at(1))));
        motion.report(at(10), Some(north(20.0)));
        motion.report(at(20), Some(north(24.0)));
        assert_eq!(motion.anchor, Some((PUMP_STATION, at(1))), "jitter");
        assert_eq!(motion.reported_at, Some(at(20)));
        assert_eq!(motion.due(WINDOW), Some(at(31)));
        assert_eq!(motion.check(WINDOW), NoMotionCheck::Raise);
    }

    #[test]
    fn moving_more_than_25_m_moves_the_anchor_and_the_due_time() {
        let mut motion = Motion::default();
        motion.report(at(0), Some(PUMP_STATION));
        motion.report(at(12), Some(north(30.0)));
        assert_eq!(motion.anchor, Some((north(30.0), at(12))));
        assert_eq!(motion.due(WINDOW), Some(at(42)));
        // An older report arriving late changes nothing.
        motion.report(at(5), Some(north(500.0)));
        assert_eq!(motion.anchor, Some((north(30.0), at(12))));
    }

    #[test]
    fn a_device_that_stopped_reporting_is_parked_not_raised() {
        let mut motion = Motion::default();
        motion.report(at(0), Some(PUMP_STATION));
        motion.report(at(14), None);
        assert_eq!(
            motion.check(WINDOW),
            NoMotionCheck::Parked,
            "quiet since 14"
        );
        motion.report(at(33), Some(north(3.0)));
        assert_eq!(motion.check(WINDOW), NoMotionCheck::Raise);
    }

    #[test]
    fn a_check_in_restarts_the_window_and_off_is_never_due() {
        let mut motion = Motion::default();
        motion.report(at(0), Some(PUMP_STATION));
        motion.confirmed(at(20));
        assert_eq!(motion.due(WINDOW), Some(at(50)));
        motion.confirmed(at(10));
        assert_eq!(motion.due(WINDOW), Some(at(50)), "never moves back");
        assert_eq!(motion.due(SignedDuration::ZERO), None);
        assert_eq!(Motion::default().due(WINDOW), None);
    }
}
