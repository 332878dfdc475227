//! The Margin server binary: everything it does lives in `margin::server`.

#[cfg(feature = "ssr")]
#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = margin::server::cli::run(&args).await {
        return code;
    }
    margin::server::startup::run().await
}

#[cfg(not(feature = "ssr"))]
fn main() {
    // The browser bundle starts from `margin::hydrate`, not from here.
}
