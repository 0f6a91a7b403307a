//! A webhook receiver for `bench/deliveries.sh`: answers every POST with 200 (after an
//! optional delay, to stand in for a receiver that does some work) and records each
//! request's `webhook-id` with its arrival time, so the benchmark can compute
//! created → delivered latency and count duplicates.
//!
//!   cargo run --release --example webhook_receiver -- <port> [delay_ms]
//!
//! `GET /arrivals` answers CSV lines `webhook-id,arrival_unix_micros`;
//! `GET /count` the number of requests so far; `POST /reset` forgets them.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::{get, post};

type Arrivals = Arc<Mutex<Vec<(String, u128)>>>;

async fn receive(State((arrivals, delay)): State<(Arrivals, Duration)>, headers: HeaderMap) {
    let id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    if let Ok(mut arrivals) = arrivals.lock() {
        arrivals.push((id, at));
    }
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

async fn arrivals(State((arrivals, _)): State<(Arrivals, Duration)>) -> String {
    let arrivals = arrivals.lock().map(|a| a.clone()).unwrap_or_default();
    arrivals
        .iter()
        .map(|(id, at)| format!("{id},{at}\n"))
        .collect()
}

async fn count(State((arrivals, _)): State<(Arrivals, Duration)>) -> String {
    arrivals.lock().map(|a| a.len()).unwrap_or(0).to_string()
}

async fn reset(State((arrivals, _)): State<(Arrivals, Duration)>) {
    if let Ok(mut arrivals) = arrivals.lock() {
        arrivals.clear();
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().unwrap_or_else(|| "0".into()).parse()?;
    let delay = Duration::from_millis(args.next().unwrap_or_else(|| "0".into()).parse()?);
    let state: (Arrivals, Duration) = (Arc::default(), delay);
    let app = Router::new()
        .route("/arrivals", get(arrivals))
        .route("/count", get(count))
        .route("/reset", post(reset))
        .fallback(receive)
        .with_state(state);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on {}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
