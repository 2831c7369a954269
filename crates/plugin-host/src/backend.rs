//! Where a plugin's code runs: in this process, or in a worker process.
//!
//! [`Plugin`](crate::Plugin) speaks to a plugin through one
//! [`Request`](crate::call::Request) per ABI function and reads back an
//! [`Answer`](crate::call::Answer): the status and the bytes the function
//! wrote (its payload, or its error message), plus the board or the legal
//! plays of the two calls that write those. [`Backend::InProcess`] calls
//! the library's functions directly ([`crate::in_process`]);
//! [`Backend::Isolated`] sends the same request to a worker process that
//! calls them ([`crate::isolated`]). Everything the host checks in an
//! answer is checked above this, the same way for both.

use bg_engine::LegalPlay;

use crate::call::{Answer, Request};
use crate::in_process::Calls;
use crate::isolated::Workers;

/// Where the plugin's code runs.
pub(crate) enum Backend {
    /// In this process: a call that crashes ends the process.
    InProcess(Calls),
    /// In worker processes: a call that crashes or runs past its deadline
    /// ends the worker, and the call faults.
    Isolated(Box<Workers>),
}

impl Backend {
    /// Makes the call. `plays` receives a `LegalPlays` request's plays.
    /// `Err` is a fault the transport saw (a worker that died or sent
    /// garbage), with what happened.
    pub(crate) fn call(
        &self,
        request: Request<'_>,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<Answer, String> {
        match self {
            Backend::InProcess(calls) => calls.call(request, plays),
            Backend::Isolated(workers) => workers.call(request, plays),
        }
    }
}
