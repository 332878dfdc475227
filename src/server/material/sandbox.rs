//! Material, and files imported as lessons, are read in a child process,
//! never in the server's own.
//!
//! A PDF or Word reader handed a hostile file can overflow its stack (which
//! aborts the whole process: `catch_unwind` cannot catch it), inflate a few
//! kilobytes into gigabytes, or spin for minutes. So the server runs its own
//! binary again in the [`CHILD_ARG`] mode for each batch of files: the child
//! sets limits on itself (memory, CPU time, no files written, few files
//! opened) before it reads a byte of the upload, reads on a thread with a
//! fixed stack, and answers on stdout. The parent bounds how many children
//! run at once ([`Extractor`]), how long each may take, and how much of its
//! answer it reads. Whatever the file does, it costs its sender one refused
//! upload and the server one short-lived process.
//!
//! The wire between the two is deliberately plain: the parent names the job
//! (`Job`, in the environment) and writes the name's length (4 bytes,
//! big-endian), the name and the file's bytes; the child answers `O` and
//! the text, or `E` and the sentence for the teacher. What each job does
//! is given to `child_main` by the binary (`main.rs`), so this module
//! knows how to run a reader, not what each reads.

use std::{
    collections::HashSet,
    io::{Read, Write},
    path::PathBuf,
    process::{ExitCode, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::Semaphore,
};

use super::extract;

/// The first argument that makes the binary a reader of one file.
pub const CHILD_ARG: &str = "extract-material";
/// The variable that names the child's job.
const JOB_VAR: &str = "MARGIN_READER_JOB";

/// What a child reads a file for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// A file of material: its text.
    Material,
    /// A file imported as a lesson (a lesson, a .docx made here, a QTI
    /// package or cartridge): what it holds, as JSON.
    Import,
}

impl Job {
    fn as_str(self) -> &'static str {
        match self {
            Self::Material => "material",
            Self::Import => "import",
        }
    }
}

/// What one child may use.
#[derive(Clone, Debug)]
pub struct ChildLimits {
    /// Heap and other private memory (`RLIMIT_DATA`), in bytes.
    pub memory_bytes: u64,
    /// Processor time (`RLIMIT_CPU`), in seconds.
    pub cpu_secs: u64,
    /// Wall-clock time before the parent kills it.
    pub wall: Duration,
    /// The reading thread's stack, in bytes.
    pub stack_bytes: usize,
}

impl Default for ChildLimits {
    fn default() -> Self {
        Self { memory_bytes: 384 * 1024 * 1024, cpu_secs: 20, wall: Duration::from_secs(30), stack_bytes: 8 * 1024 * 1024 }
    }
}

/// How long an upload waits for a free reader before it is refused as busy.
const QUEUE_WAIT: Duration = Duration::from_secs(30);

/// Runs readers of material in child processes, a bounded number at once,
/// and one batch per account at a time (so one account's uploads cannot
/// hold every reader).
#[derive(Clone, Debug)]
pub struct Extractor {
    program: Option<PathBuf>,
    limits: ChildLimits,
    slots: Arc<Semaphore>,
    reading_for: Arc<Mutex<HashSet<String>>>,
}

/// An account's place while its files are read; dropping it frees it.
#[derive(Debug)]
pub struct AccountTurn {
    account: String,
    reading_for: Arc<Mutex<HashSet<String>>>,
}

impl Drop for AccountTurn {
    fn drop(&mut self) {
        self.reading_for.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.account);
    }
}

impl Extractor {
    /// Readers of `program` (the server's own binary when `None`), at most
    /// `at_once` of them running together.
    pub fn new(program: Option<PathBuf>, limits: ChildLimits, at_once: usize) -> Self {
        Self { program, limits, slots: Arc::new(Semaphore::new(at_once.max(1))), reading_for: Arc::default() }
    }

    /// The account's turn to have files read, or `Busy` while another batch
    /// of its own is being read.
    pub fn account_turn(&self, account: &str) -> Result<AccountTurn, Refusal> {
        let mut reading = self.reading_for.lock().unwrap_or_else(|e| e.into_inner());
        if !reading.insert(account.to_string()) {
            return Err(Refusal::AccountBusy);
        }
        Ok(AccountTurn { account: account.to_string(), reading_for: self.reading_for.clone() })
    }

    /// The text of the file `name`, or why there is none.
    pub async fn text_of(&self, name: &str, bytes: &[u8]) -> Result<String, Refusal> {
        // Sizes and kinds are refused here without starting anything.
        extract::precheck(name, bytes).map_err(Refusal::File)?;
        self.run(Job::Material, name, bytes).await
    }

    /// What the file `name`, imported as a lesson, holds: the child's
    /// answer for `Job::Import`, or why it holds nothing.
    pub async fn import_of(&self, name: &str, bytes: &[u8]) -> Result<String, Refusal> {
        self.run(Job::Import, name, bytes).await
    }

    /// `job` on the file `name` in a child, once a reader is free.
    async fn run(&self, job: Job, name: &str, bytes: &[u8]) -> Result<String, Refusal> {
        let _slot = match tokio::time::timeout(QUEUE_WAIT, self.slots.acquire()).await {
            Ok(Ok(slot)) => slot,
            _ => return Err(Refusal::Busy),
        };
        let program = match &self.program {
            Some(p) => p.clone(),
            None => own_binary().map_err(|e| Refusal::Server(format!("finding the server's binary: {e}")))?,
        };
        let mut child = tokio::process::Command::new(program)
            .arg(CHILD_ARG)
            .env(JOB_VAR, job.as_str())
            .env("MARGIN_EXTRACT_MEMORY", self.limits.memory_bytes.to_string())
            .env("MARGIN_EXTRACT_CPU", self.limits.cpu_secs.to_string())
            .env("MARGIN_EXTRACT_STACK", self.limits.stack_bytes.to_string())
            // The child needs nothing of the server's: no key, no database.
            .env_remove("AI_API_KEY")
            .env_remove("DATABASE_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| Refusal::Server(format!("starting a reader: {e}")))?;
        let (mut stdin, mut stdout) = (child.stdin.take(), child.stdout.take());
        let run = async {
            if let Some(mut input) = stdin.take() {
                // Names are cut to 200 characters before they get here.
                let name_bytes = name.as_bytes();
                let len = (name_bytes.len() as u32).to_be_bytes();
                // A child that died early closes its end: what it says next tells why.
                let _ = async {
                    input.write_all(&len).await?;
                    input.write_all(name_bytes).await?;
                    input.write_all(bytes).await?;
                    input.shutdown().await
                }
                .await;
            }
            let mut answer = Vec::new();
            if let Some(out) = stdout.take() {
                // The text is at most MAX_TEXT_BYTES; a child that says more is not believed.
                let _ = out.take(extract::MAX_TEXT_BYTES as u64 + 4096).read_to_end(&mut answer).await;
            }
            let status = child.wait().await;
            (answer, status)
        };
        match tokio::time::timeout(self.limits.wall, run).await {
            Ok((answer, Ok(status))) if status.success() => match answer.split_first() {
                Some((b'O', text)) => String::from_utf8(text.to_vec()).map_err(|_| Refusal::Unsafe(name.to_string())),
                Some((b'E', why)) => Err(Refusal::File(String::from_utf8_lossy(why).into_owned())),
                _ => Err(Refusal::Unsafe(name.to_string())),
            },
            Ok((_, Ok(status))) => {
                tracing::warn!(file = %name, %status, "a material reader stopped without an answer");
                Err(Refusal::Unsafe(name.to_string()))
            }
            Ok((_, Err(e))) => Err(Refusal::Server(format!("waiting for a reader: {e}"))),
            Err(_) => {
                tracing::warn!(file = %name, "a material reader ran out of time and was stopped");
                Err(Refusal::Unsafe(name.to_string()))
            }
        }
    }
}

/// The server's own binary: on Linux `/proc/self/exe`, which runs the
/// binary this process started from even after a deploy has replaced or
/// removed the file; elsewhere its path.
fn own_binary() -> std::io::Result<PathBuf> {
    let proc_self = PathBuf::from("/proc/self/exe");
    if proc_self.exists() {
        Ok(proc_self)
    } else {
        std::env::current_exe()
    }
}

/// Why a file gave no text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The file's own fault, in a sentence for the teacher.
    File(String),
    /// Reading it went past a limit or crashed the reader.
    Unsafe(String),
    /// Every reader is busy.
    Busy,
    /// Another upload of the same account is being read.
    AccountBusy,
    /// The server could not start a reader (for the log, not the teacher).
    Server(String),
}

impl Refusal {
    /// What the teacher reads.
    pub fn sentence(&self) -> String {
        match self {
            Self::File(why) => why.clone(),
            Self::Unsafe(name) => format!(
                "“{name}” could not be read safely: reading it needed far more memory or time than a file of its size should. \
                 Open it and save it again (or as a new PDF), or add its text as a .txt file."
            ),
            Self::Busy => "Margin is reading many files just now. Try adding this one again in a minute.".into(),
            Self::AccountBusy => "Margin is still reading the files you added a moment ago. Add these once that is done.".into(),
            Self::Server(_) => "Margin could not read the file just now. Try again.".into(),
        }
    }
}

/// What a child does with a file, by job: the answer's text, or the
/// sentence for the teacher.
pub type Reader = fn(Job, &str, &[u8]) -> Result<String, String>;

/// The child's side: limits first, then one file from stdin, `read` on a
/// thread of its own, the answer on stdout. Called by `main` before any
/// runtime or thread starts.
pub fn child_main(read: Reader) -> ExitCode {
    let number = |var: &str, default: u64| std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let d = ChildLimits::default();
    let memory = number("MARGIN_EXTRACT_MEMORY", d.memory_bytes);
    let cpu = number("MARGIN_EXTRACT_CPU", d.cpu_secs);
    let stack = number("MARGIN_EXTRACT_STACK", d.stack_bytes as u64) as usize;
    if let Err(e) = limit_self(memory, cpu) {
        eprintln!("could not limit the reader: {e}");
        return ExitCode::FAILURE;
    }
    let mut input = Vec::new();
    if std::io::stdin().lock().take(extract::MAX_FILE_BYTES as u64 + 4 + 4096).read_to_end(&mut input).is_err() || input.len() < 4 {
        return ExitCode::FAILURE;
    }
    let len = u32::from_be_bytes([input[0], input[1], input[2], input[3]]) as usize;
    let Some(name) = input.get(4..4 + len).map(|n| String::from_utf8_lossy(n).into_owned()) else { return ExitCode::FAILURE };
    let bytes = input.split_off(4 + len);
    // The reading thread has a stack of a known size with a guard page: a
    // file nested too deep ends this process, never the server.
    let job = if std::env::var(JOB_VAR).as_deref() == Ok(Job::Import.as_str()) { Job::Import } else { Job::Material };
    let reader = std::thread::Builder::new().stack_size(stack).spawn(move || read(job, &name, &bytes));
    let Ok(answer) = reader.map(|r| r.join()) else { return ExitCode::FAILURE };
    let mut out = std::io::stdout().lock();
    let written = match answer {
        Ok(Ok(text)) => out.write_all(b"O").and_then(|()| out.write_all(text.as_bytes())),
        Ok(Err(why)) => out.write_all(b"E").and_then(|()| out.write_all(why.as_bytes())),
        // A reader that panicked: no answer, which the parent words itself.
        Err(_) => return ExitCode::FAILURE,
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// Sets this process's limits: private memory, CPU seconds, no file
/// written, at most a few open files.
fn limit_self(memory: u64, cpu: u64) -> std::io::Result<()> {
    let set = |resource, value: u64| {
        let limit = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
        // SAFETY: setrlimit reads the struct we pass and nothing else.
        if unsafe { libc::setrlimit(resource, &limit) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    set(libc::RLIMIT_DATA, memory)?;
    // The reading thread has its own stack (`child_main`); this bounds the rest.
    set(libc::RLIMIT_STACK, 8 * 1024 * 1024)?;
    set(libc::RLIMIT_CPU, cpu)?;
    set(libc::RLIMIT_FSIZE, 0)?;
    set(libc::RLIMIT_NOFILE, 16)?;
    set(libc::RLIMIT_CORE, 0)
}
