//! What the server does once it serves, as named checks of `/healthz`,
//! `/livez` and `/readyz` (k8s.io/apiserver's post-start hooks): each is
//! pending until its work is done (`poststarthook/<name>`, failing with
//! `not finished`), and a few plain checks report a state of their own
//! (`autoregister-completion`). The server registers them at start-up and
//! hands each task the [`Handle`] it reports through.

use std::sync::{Arc, Mutex, PoisonError};

/// The checks, in the order they are listed.
#[derive(Debug, Default)]
pub struct Checks {
    entries: Vec<(String, Handle)>,
}

/// Where one check's state is reported.
#[derive(Clone, Debug)]
pub struct Handle {
    state: Arc<Mutex<Result<(), String>>>,
    /// Whether the check is one of the informers `informer-sync` waits for.
    informer: bool,
}

impl Handle {
    fn pending(why: &str, informer: bool) -> Handle {
        Handle {
            state: Arc::new(Mutex::new(Err(why.to_owned()))),
            informer,
        }
    }

    /// The work is done: the check passes from now on.
    pub fn done(&self) {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner) = Ok(());
    }

    /// The check fails with `why` (a plain check's state).
    pub fn fail(&self, why: String) {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner) = Err(why);
    }

    /// The check's state.
    pub fn state(&self) -> Result<(), String> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Checks {
    /// Post-start hook `name` (listed as `poststarthook/<name>`), pending
    /// until its handle says it is done.
    pub fn hook(&mut self, name: &str) -> Handle {
        self.add(format!("poststarthook/{name}"), "not finished", false)
    }

    /// A post-start hook that starts informers: `informer-sync` waits for it
    /// too.
    pub fn informers_hook(&mut self, name: &str) -> Handle {
        self.add(format!("poststarthook/{name}"), "not finished", true)
    }

    /// A plain check `name`, failing with `pending` until told otherwise.
    pub fn check(&mut self, name: &str, pending: &str) -> Handle {
        self.add(name.to_owned(), pending, false)
    }

    fn add(&mut self, name: String, pending: &str, informer: bool) -> Handle {
        let handle = Handle::pending(pending, informer);
        self.entries.push((name, handle.clone()));
        handle
    }

    /// Every check, in order, with its state.
    pub fn states(&self) -> impl Iterator<Item = (&str, Result<(), String>)> {
        self.entries.iter().map(|(n, h)| (n.as_str(), h.state()))
    }

    /// `informer-sync`: every informer hook is done.
    pub fn informers_synced(&self) -> Result<(), String> {
        let pending: Vec<&str> = self
            .entries
            .iter()
            .filter(|(_, h)| h.informer && h.state().is_err())
            .map(|(n, _)| n.as_str())
            .collect();
        if pending.is_empty() {
            Ok(())
        } else {
            Err(format!("informers not started yet: {pending:?}"))
        }
    }

    /// The state of the check named `name`, if there is one.
    pub fn state_of(&self, name: &str) -> Option<Result<(), String>> {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, h)| h.state())
    }
}
