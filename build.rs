// `sqlx::migrate!` embeds the migrations at compile time; without this, adding or editing
// one does not rebuild the crate and a stale binary runs the old schema.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
