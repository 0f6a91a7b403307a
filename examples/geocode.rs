//! Offline reverse geocoding's cost (issue 48 §1), for `bench/geocode.sh`: the index's
//! build time and memory, then lookups per second on one thread — the nearest place with
//! its distance and direction (`place::nearest`), and the whole `Address` text
//! (`place::address`) — over points where devices are (boxes over Great Britain, central
//! Europe and the north-eastern United States) and over the whole globe (mostly sea).
//!
//!   cargo run --release --example geocode -- [lookups]

use std::hint::black_box;
use std::time::Instant;

use safetrack::domain::place::{self, Position};
use safetrack::domain::profile::DistanceUnits;

/// A small xorshift generator: the same points every run.
struct Points(u64);

impl Points {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn within(&mut self, (lat0, lat1): (f64, f64), (lon0, lon1): (f64, f64)) -> Position {
        let lat = lat0 + (lat1 - lat0) * self.unit();
        let lon = lon0 + (lon1 - lon0) * self.unit();
        Position::new(lat, lon).unwrap_or_else(|| unreachable!("inside the boxes"))
    }
}

const LAND: [((f64, f64), (f64, f64)); 3] = [
    ((50.0, 58.0), (-5.5, 1.5)),
    ((45.0, 54.0), (2.0, 16.0)),
    ((38.0, 44.0), (-80.0, -70.0)),
];

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn rate(label: &str, points: &[Position], lookup: impl Fn(Position) -> usize) {
    let started = Instant::now();
    let mut total = 0;
    for &p in points {
        total += lookup(black_box(p));
    }
    let secs = started.elapsed().as_secs_f64();
    let per_second = points.len() as f64 / secs;
    println!(
        "{label}: {:.2} M lookups/s ({:.0} ns each; {total})",
        per_second / 1e6,
        secs * 1e9 / points.len() as f64
    );
}

fn main() {
    let lookups: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(2_000_000);
    let before = rss_kb();
    let started = Instant::now();
    place::warm();
    println!(
        "index built in {:.3} s, RSS {} → {} MB",
        started.elapsed().as_secs_f64(),
        before / 1024,
        rss_kb() / 1024
    );
    let mut points = Points(0x9E37_79B9_7F4A_7C15);
    let land: Vec<Position> = (0..lookups)
        .map(|i| {
            let (lat, lon) = LAND[i % LAND.len()];
            points.within(lat, lon)
        })
        .collect();
    let globe: Vec<Position> = (0..lookups)
        .map(|_| points.within((-90.0, 90.0), (-180.0, 180.0)))
        .collect();
    let nearest = |p| place::nearest(p).name.len();
    let address = |p| {
        place::address(Some(p), &[], DistanceUnits::Metres)
            .map(|a| a.len())
            .unwrap_or(0)
    };
    rate("nearest, where devices are", &land, nearest);
    rate("address text, where devices are", &land, address);
    rate("nearest, anywhere on the globe", &globe, nearest);
    rate("address text, anywhere on the globe", &globe, address);
}
