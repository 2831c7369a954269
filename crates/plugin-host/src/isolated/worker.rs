//! The worker process: loads one plugin and answers the host's calls.
//!
//! Run by the server as `backgammond plugin-worker --name PATH` (see
//! [`serve`]). Before it reads the plugin, it takes away what a rules
//! plugin never needs: more memory than its limit (`RLIMIT_AS`), core
//! dumps, and, on Linux, sockets, running programs, signalling other
//! processes and tracing them (a seccomp filter: those calls fail with
//! `EPERM`). It exits when the host closes its pipe or exits.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use bg_engine::Board;
use bg_variant_api::{abi, proto};

use crate::call::{Identity, Request};
use crate::in_process::Calls;
use crate::isolated::frame;
use crate::load::open_plugin;

/// Runs a worker on this process's stdin and stdout until the host
/// closes stdin. `name` names the plugin in messages; `memory_limit` is
/// the address space allowed, in bytes.
pub fn serve(name: &Path, memory_limit: Option<u64>) -> ExitCode {
    match run(name, memory_limit) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("plugin worker for {}: {e}", name.display());
            ExitCode::FAILURE
        }
    }
}

fn run(name: &Path, memory_limit: Option<u64>) -> std::io::Result<()> {
    let mut requests = std::io::stdin().lock();
    // The answers get a descriptor of their own, and stdout becomes
    // stderr: whatever the plugin prints goes to the log, not into the
    // answers.
    let answers = {
        use std::os::fd::AsFd;
        let own = std::io::stdout().as_fd().try_clone_to_owned()?;
        rustix::stdio::dup2_stdout(std::io::stderr())?;
        std::fs::File::from(own)
    };
    let mut answers = std::io::BufWriter::new(answers);
    confine(memory_limit)?;
    exit_with_the_host();

    let Some(library) = frame::read_frame(&mut requests)? else {
        return Ok(());
    };
    let loaded = open_plugin(name, &library[..]).map_err(|e| e.to_string());
    drop(library);
    let hello = loaded
        .as_ref()
        .map(|(descriptor, calls)| Identity::of(descriptor, calls.has_scoreboard()))
        .map_err(Clone::clone);
    frame::write_frame(&mut answers, &frame::hello(&hello))?;
    let Ok((_, calls)) = loaded else {
        return Ok(());
    };
    let mut plays = Vec::new();
    while let Some(bytes) = frame::read_frame(&mut requests)? {
        let request = frame::OwnedRequest::read(&bytes).map_err(std::io::Error::other)?;
        let request = request.get();
        let mut answer = calls
            .call(request, &mut plays)
            .map_err(std::io::Error::other)?;
        if frame::carries_state(&request) && answer.status == abi::STATUS_OK {
            answer.next_board = board_of_answer(&calls, &request, &answer.bytes);
        }
        frame::write_frame(&mut answers, &frame::answer(&request, &answer, &plays))?;
    }
    answers.flush()
}

/// The board of the state in a `GameSetup` or `Transition` answer, asked
/// of the plugin here (None if the answer or the board cannot be read:
/// the host then asks, and sees the fault itself).
fn board_of_answer(calls: &Calls, request: &Request<'_>, bytes: &[u8]) -> Option<Board> {
    use prost::Message;
    let state = match request {
        Request::NewGame { .. } | Request::SetupPosition { .. } => {
            proto::GameSetup::decode(bytes).ok()?.state
        }
        _ => proto::Transition::decode(bytes).ok()?.state,
    };
    let answer = calls
        .call(Request::Board { state: &state }, &mut Vec::new())
        .ok()?;
    (answer.status == abi::STATUS_OK).then_some(answer.board)
}

/// Limits this process before any plugin code runs.
fn confine(memory_limit: Option<u64>) -> std::io::Result<()> {
    use rustix::process::{Resource, Rlimit, setrlimit};
    setrlimit(
        Resource::Core,
        Rlimit {
            current: Some(0),
            maximum: Some(0),
        },
    )?;
    if let Some(bytes) = memory_limit {
        setrlimit(
            Resource::As,
            Rlimit {
                current: Some(bytes),
                maximum: Some(bytes),
            },
        )?;
    }
    #[cfg(target_os = "linux")]
    sandbox::apply().map_err(std::io::Error::other)?;
    Ok(())
}

/// A worker must not outlive the host: one spinning in a call when the
/// host was killed would spin for ever. A thread checks once a second
/// that the parent is still the one that started it.
fn exit_with_the_host() {
    let parent = rustix::process::getppid();
    let watch = move || {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
            if rustix::process::getppid() != parent {
                std::process::exit(0);
            }
        }
    };
    // A small stack: it counts against the memory limit.
    if let Err(e) = std::thread::Builder::new()
        .name("watch-host".into())
        .stack_size(64 << 10)
        .spawn(watch)
    {
        eprintln!("plugin worker: no thread to watch the host: {e}");
    }
}

#[cfg(target_os = "linux")]
mod sandbox {
    use std::collections::BTreeMap;

    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter};

    /// System calls a rules plugin has no use for: the network, running
    /// programs, signalling or tracing other processes. (`tgkill` stays:
    /// `abort` signals its own thread with it.)
    const DENIED: &[libc::c_long] = &[
        libc::SYS_socket,
        libc::SYS_socketpair,
        libc::SYS_connect,
        libc::SYS_bind,
        libc::SYS_listen,
        libc::SYS_accept,
        libc::SYS_accept4,
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_kill,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_send_signal,
    ];

    /// Installs the filter on this thread and every thread it starts.
    pub(super) fn apply() -> Result<(), seccompiler::Error> {
        let rules = DENIED
            .iter()
            .map(|&call| (call, Vec::new()))
            .collect::<BTreeMap<_, _>>();
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            std::env::consts::ARCH.try_into()?,
        )?;
        let program: BpfProgram = filter.try_into()?;
        seccompiler::apply_filter(&program)
    }
}
