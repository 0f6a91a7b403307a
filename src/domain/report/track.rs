//! A device's track, read one position at a time in time order: trips (movement runs
//! separated by stops of at least `stop_minutes`), distance (great-circle sum of
//! consecutive positions) and driving violations. Memory per device is constant: the
//! analyser keeps the previous point and the runs in progress, never the track.

use geo::{Bearing, Distance, Haversine, Point};
use jiff::Timestamp;

use super::{Thresholds, ViolationType};

/// One stored position of a device.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackPoint {
    pub time: Timestamp,
    pub lat: f64,
    pub lon: f64,
    /// Reported speed, km/h.
    pub speed: Option<f64>,
    /// Reported heading, degrees.
    pub heading: Option<f64>,
    /// The message it came from (its geofences are looked up for violation rows).
    pub message_id: i64,
}

/// Great-circle distance in metres.
pub fn distance_m(a: &TrackPoint, b: &TrackPoint) -> f64 {
    Haversine.distance(Point::new(a.lon, a.lat), Point::new(b.lon, b.lat))
}

fn bearing(a: &TrackPoint, b: &TrackPoint) -> f64 {
    Haversine.bearing(Point::new(a.lon, a.lat), Point::new(b.lon, b.lat))
}

fn seconds_between(a: Timestamp, b: Timestamp) -> f64 {
    (b.as_microsecond() - a.as_microsecond()) as f64 / 1_000_000.0
}

/// A finished trip.
#[derive(Debug, Clone, PartialEq)]
pub struct Trip {
    pub start: Timestamp,
    pub end: Timestamp,
    pub distance_m: f64,
}

impl Trip {
    pub fn duration_secs(&self) -> f64 {
        seconds_between(self.start, self.end)
    }

    /// The id of the journey in reports: the device and the trip's start (Unix seconds).
    pub fn journey_id(device_id: &str, start: Timestamp) -> String {
        format!("{device_id}-{}", start.as_second())
    }
}

/// A violation, found when its run of over-threshold segments ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub kind: ViolationType,
    /// Where and when the run started.
    pub at: TrackPoint,
    /// km/h for Speeding, m/s² otherwise.
    pub limit: f64,
    /// The worst value of the run.
    pub recorded: f64,
    pub duration_secs: f64,
    /// The start of the trip it happened in.
    pub trip_start: Option<Timestamp>,
}

/// A run of consecutive segments over one threshold.
#[derive(Debug, Clone)]
struct Run {
    at: TrackPoint,
    worst: f64,
    secs: f64,
}

/// What the analyser totals for a device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrackSummary {
    pub trips: u32,
    pub distance_m: f64,
    pub duration_secs: f64,
}

/// Streams a device's positions into trips and violations.
pub struct TrackAnalyser {
    thresholds: Thresholds,
    speed_limit_kmh: f64,
    previous: Option<TrackPoint>,
    /// Speed (km/h) and heading at the previous point, when known.
    previous_speed: Option<f64>,
    previous_heading: Option<f64>,
    trip: Option<Trip>,
    /// A stop in progress inside a trip: its start and the distance jitter within it.
    stop: Option<(Timestamp, f64)>,
    runs: [Option<Run>; 4],
    pub summary: TrackSummary,
}

impl TrackAnalyser {
    pub fn new(thresholds: Thresholds, speed_limit_kmh: Option<f64>) -> Self {
        TrackAnalyser {
            thresholds,
            speed_limit_kmh: speed_limit_kmh
                .filter(|l| l.is_finite() && *l > 0.0)
                .unwrap_or(thresholds.default_speed_limit_kmh),
            previous: None,
            previous_speed: None,
            previous_heading: None,
            trip: None,
            stop: None,
            runs: [None, None, None, None],
            summary: TrackSummary::default(),
        }
    }

    /// Adds the next position (in time order); returns the trips and violations it
    /// completed. Points at the same instant as the previous one are skipped.
    pub fn push(&mut self, point: TrackPoint, out: &mut Vec<Finding>) {
        let Some(previous) = self.previous.take() else {
            self.previous_speed = point.speed;
            self.previous_heading = point.heading;
            self.previous = Some(point);
            return;
        };
        let dt = seconds_between(previous.time, point.time);
        if dt <= 0.0 {
            self.previous = Some(previous);
            return;
        }
        let distance = distance_m(&previous, &point);
        let derived_kmh = distance / dt * 3.6;
        let moving = derived_kmh >= self.thresholds.stop_speed_kmh;
        self.trips(&previous, &point, distance, moving, out);

        let speed = point.speed.unwrap_or(derived_kmh);
        let heading = point
            .heading
            .or_else(|| moving.then(|| bearing(&previous, &point)));
        let trip_start = self.trip.as_ref().map(|t| t.start);
        // Speeding: the speed on arrival at this point.
        let speeding = (speed > self.speed_limit_kmh).then_some(speed);
        self.track_run(0, speeding, dt, &point, trip_start, out);
        // Longitudinal and lateral acceleration, m/s², between this point and the last.
        let (mut accelerating, mut braking, mut turning) = (None, None, None);
        if let Some(before) = self.previous_speed {
            let a = (speed - before) / 3.6 / dt;
            if a > self.thresholds.acceleration_ms2 {
                accelerating = Some(a);
            } else if -a > self.thresholds.braking_ms2 {
                braking = Some(-a);
            }
        }
        if let (Some(h0), Some(h1)) = (self.previous_heading, heading)
            && moving
        {
            let turn = ((h1 - h0 + 540.0).rem_euclid(360.0) - 180.0)
                .abs()
                .to_radians();
            let lateral = speed / 3.6 * turn / dt;
            if lateral > self.thresholds.turning_ms2 {
                turning = Some(lateral);
            }
        }
        self.track_run(1, accelerating, dt, &point, trip_start, out);
        self.track_run(2, braking, dt, &point, trip_start, out);
        self.track_run(3, turning, dt, &point, trip_start, out);
        self.previous_speed = Some(speed);
        self.previous_heading = heading.or(self.previous_heading);
        self.previous = Some(point);
    }

    fn trips(
        &mut self,
        previous: &TrackPoint,
        point: &TrackPoint,
        distance: f64,
        moving: bool,
        out: &mut Vec<Finding>,
    ) {
        let stop_secs = self.thresholds.stop_minutes * 60.0;
        if moving {
            if let Some((stop_start, jitter)) = self.stop.take() {
                let stopped = seconds_between(stop_start, previous.time);
                if stopped >= stop_secs {
                    self.close_trip(out);
                } else if let Some(trip) = self.trip.as_mut() {
                    trip.distance_m += jitter;
                }
            }
            let trip = self.trip.get_or_insert(Trip {
                start: previous.time,
                end: previous.time,
                distance_m: 0.0,
            });
            trip.end = point.time;
            trip.distance_m += distance;
        } else if self.trip.is_some() {
            let stop = self.stop.get_or_insert((previous.time, 0.0));
            stop.1 += distance;
        }
    }

    fn close_trip(&mut self, out: &mut Vec<Finding>) {
        if let Some(trip) = self.trip.take() {
            self.summary.trips += 1;
            self.summary.distance_m += trip.distance_m;
            self.summary.duration_secs += trip.duration_secs();
            out.push(Finding::Trip(trip));
        }
    }

    /// Extends or ends the run of violation `index` (`value`: this segment's value when
    /// over the threshold).
    fn track_run(
        &mut self,
        index: usize,
        value: Option<f64>,
        dt: f64,
        point: &TrackPoint,
        trip_start: Option<Timestamp>,
        out: &mut Vec<Finding>,
    ) {
        match (value, self.runs[index].as_mut()) {
            (Some(v), Some(run)) => {
                run.worst = run.worst.max(v);
                run.secs += dt;
            }
            (Some(v), None) => {
                self.runs[index] = Some(Run {
                    at: point.clone(),
                    worst: v,
                    secs: dt,
                });
            }
            (None, Some(_)) => self.end_run(index, trip_start, out),
            (None, None) => {}
        }
    }

    fn end_run(&mut self, index: usize, trip_start: Option<Timestamp>, out: &mut Vec<Finding>) {
        let Some(run) = self.runs[index].take() else {
            return;
        };
        let (kind, limit) = match index {
            0 => (ViolationType::Speeding, self.speed_limit_kmh),
            1 => (
                ViolationType::Acceleration,
                self.thresholds.acceleration_ms2,
            ),
            2 => (ViolationType::Braking, self.thresholds.braking_ms2),
            _ => (ViolationType::Turning, self.thresholds.turning_ms2),
        };
        out.push(Finding::Violation(Violation {
            kind,
            at: run.at,
            limit,
            recorded: run.worst,
            duration_secs: run.secs,
            trip_start,
        }));
    }

    /// Ends the track: the runs and the trip in progress are complete.
    pub fn finish(&mut self, out: &mut Vec<Finding>) {
        let trip_start = self.trip.as_ref().map(|t| t.start);
        for index in 0..self.runs.len() {
            self.end_run(index, trip_start, out);
        }
        self.stop = None;
        self.close_trip(out);
    }
}

/// What the analyser found.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    Trip(Trip),
    Violation(Violation),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kilometre of latitude (on the sphere `geo` uses for Haversine).
    const KM_LAT: f64 = 1.0 / 111.195;

    fn at(minute: f64, km_north: f64, speed: Option<f64>) -> TrackPoint {
        TrackPoint {
            time: Timestamp::from_second(1_780_000_000 + (minute * 60.0) as i64).unwrap(),
            lat: 51.0 + km_north * KM_LAT,
            lon: -1.0,
            speed,
            heading: None,
            message_id: 0,
        }
    }

    fn analyse(points: Vec<TrackPoint>) -> (TrackSummary, Vec<Finding>) {
        let mut analyser = TrackAnalyser::new(Thresholds::default(), None);
        let mut out = Vec::new();
        for p in points {
            analyser.push(p, &mut out);
        }
        analyser.finish(&mut out);
        (analyser.summary, out)
    }

    fn violations(findings: &[Finding]) -> Vec<&Violation> {
        findings
            .iter()
            .filter_map(|f| match f {
                Finding::Violation(v) => Some(v),
                Finding::Trip(_) => None,
            })
            .collect()
    }

    #[test]
    fn ten_km_at_60_kmh_is_one_ten_minute_trip() {
        let track = (0..=10).map(|m| at(m as f64, m as f64, None)).collect();
        let (summary, findings) = analyse(track);
        assert_eq!(summary.trips, 1);
        assert!((summary.distance_m - 10_000.0).abs() < 5.0, "{summary:?}");
        assert_eq!(summary.duration_secs, 600.0);
        assert!(violations(&findings).is_empty());
    }

    #[test]
    fn a_six_minute_stop_splits_the_trip() {
        let mut track: Vec<_> = (0..=5).map(|m| at(m as f64, m as f64, None)).collect();
        // Stopped at km 5 from minute 5 to minute 11.
        track.extend((6..=11).map(|m| at(m as f64, 5.0, Some(0.0))));
        track.extend((12..=16).map(|m| at(m as f64, (m - 6) as f64, None)));
        let (summary, findings) = analyse(track);
        assert_eq!(summary.trips, 2, "{findings:?}");
        assert!((summary.distance_m - 10_000.0).abs() < 5.0);
        assert_eq!(summary.duration_secs, 600.0);
    }

    #[test]
    fn a_four_minute_stop_does_not() {
        let mut track: Vec<_> = (0..=5).map(|m| at(m as f64, m as f64, None)).collect();
        track.extend((6..=9).map(|m| at(m as f64, 5.0, Some(0.0))));
        track.extend((10..=14).map(|m| at(m as f64, (m - 4) as f64, None)));
        let (summary, _) = analyse(track);
        assert_eq!(summary.trips, 1);
        // The trip includes the short stop.
        assert_eq!(summary.duration_secs, 14.0 * 60.0);
    }

    #[test]
    fn one_segment_at_130_over_a_100_limit_is_one_speeding() {
        // 1 km a minute (60 km/h), one minute at 130 km/h, then 60 again.
        let mut track: Vec<_> = (0..=3).map(|m| at(m as f64, m as f64, None)).collect();
        track.push(at(4.0, 3.0 + 130.0 / 60.0, None));
        track.extend((5..=7).map(|m| at(m as f64, m as f64 - 4.0 + 3.0 + 130.0 / 60.0, None)));
        let (_, findings) = analyse(track);
        let found = violations(&findings);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, ViolationType::Speeding);
        assert_eq!(found[0].limit, 100.0);
        assert!((found[0].recorded - 130.0).abs() < 0.5);
        assert_eq!(found[0].duration_secs, 60.0);
        assert!(found[0].trip_start.is_some());
    }

    #[test]
    fn the_device_limit_tag_overrides_the_default() {
        let track: Vec<_> = (0..=3).map(|m| at(m as f64, m as f64, None)).collect();
        let mut analyser = TrackAnalyser::new(Thresholds::default(), Some(50.0));
        let mut out = Vec::new();
        for p in track {
            analyser.push(p, &mut out);
        }
        analyser.finish(&mut out);
        let found = violations(&out);
        assert_eq!(found.len(), 1, "one run of three segments");
        assert_eq!(found[0].duration_secs, 180.0);
    }

    #[test]
    fn hard_braking_and_acceleration() {
        // Reported speeds every 5 s: 0 → 72 km/h (4 m/s²), steady, 72 → 0 (−4 m/s²).
        let point = |s: f64, km: f64, speed: f64| TrackPoint {
            time: Timestamp::from_second(1_780_000_000 + s as i64).unwrap(),
            ..at(0.0, km, Some(speed))
        };
        let track = vec![
            point(0.0, 0.0, 0.0),
            point(5.0, 0.05, 72.0),
            point(10.0, 0.15, 72.0),
            point(15.0, 0.2, 0.0),
        ];
        let (_, findings) = analyse(track);
        let kinds: Vec<_> = violations(&findings).iter().map(|v| v.kind).collect();
        assert_eq!(
            kinds,
            vec![ViolationType::Acceleration, ViolationType::Braking]
        );
    }

    #[test]
    fn a_sharp_turn_at_speed() {
        let point = |s: i64, heading: f64| TrackPoint {
            time: Timestamp::from_second(1_780_000_000 + s).unwrap(),
            heading: Some(heading),
            ..at(0.0, s as f64 * 0.015, Some(54.0))
        };
        // 15 m/s turning 90° in 5 s: 15 × (π/2) / 5 ≈ 4.7 m/s².
        let (_, findings) = analyse(vec![point(0, 0.0), point(5, 90.0), point(10, 90.0)]);
        let found = violations(&findings);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, ViolationType::Turning);
    }

    #[test]
    fn a_parked_device_makes_no_trip() {
        let track = (0..=30).map(|m| at(m as f64, 0.0, Some(0.0))).collect();
        let (summary, findings) = analyse(track);
        assert_eq!(summary.trips, 0);
        assert!(findings.is_empty());
    }
}
