//! The Margin server binary: everything it does lives in `margin::server`.

#[cfg(feature = "ssr")]
#[tokio::main]
async fn main() -> std::process::ExitCode {
    margin::server::startup::run().await
}

#[cfg(not(feature = "ssr"))]
fn main() {
    // The browser bundle starts from `margin::hydrate`, not from here.
}
