//! The Margin server binary: everything it does lives in `margin::server`.
//! Run as `margin extract-material` it is instead the child process that
//! reads one file of a teacher's material, or one imported as a lesson
//! (`server::material::sandbox`);
//! that mode starts before any runtime, so the child is one small process.

#[cfg(feature = "ssr")]
fn main() -> std::process::ExitCode {
    use margin::server::{cli, lessons::imports, material::{extract, sandbox}, startup};
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(sandbox::CHILD_ARG) {
        return sandbox::child_main(|job, name, bytes| match job {
            sandbox::Job::Material => extract::text_of(name, bytes),
            sandbox::Job::Import => imports::answer(bytes),
        });
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("could not start the server's runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        if let Some(code) = cli::run(&args).await {
            return code;
        }
        startup::run().await
    })
}

#[cfg(not(feature = "ssr"))]
fn main() {
    // The browser bundle starts from `margin::hydrate`, not from here.
}
