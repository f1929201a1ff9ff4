//! Startup algorithms registered at run time: a researcher's own algorithm, written outside this
//! crate (a Python class through the bindings, docs/OWN-ALGORITHM.md), declared like a built-in one
//! and run by the same controller.
//!
//! A plug-in is registered once per process with its declaration ([`register`]): the scenario
//! check, `startlab algorithms` and the simulator then find it by name beside the built-in
//! [`super::DECLS`]. Its [`PluginFactory`] builds one [`StartupAlgorithm`] per flow.
//!
//! A plug-in's hooks return values, so a plug-in that fails (a Python exception) cannot return an
//! error through them. It asks the driver to stop instead ([`request_halt`]): the request is
//! per thread (the thread running the simulation runs the hooks), the simulator checks it after
//! every event of a run that uses plug-ins and stops, and the bindings report the failure.

use super::StartupAlgorithm;
use crate::decl::{FlowContext, Params};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::RwLock;

/// Builds a registered plug-in's algorithm for one flow.
pub trait PluginFactory: std::fmt::Debug + Send + Sync {
    /// The algorithm for these parameters (checked against the declaration) on this flow. A
    /// factory that fails calls [`request_halt`] and returns an algorithm that does nothing.
    fn build(&self, params: &Params<'_>, cx: &FlowContext) -> Box<dyn StartupAlgorithm + Send + Sync>;
}

/// A registered plug-in's algorithm for one flow, under its registered name.
#[derive(Debug)]
pub struct PluginStartup {
    name: &'static str,
    algorithm: Box<dyn StartupAlgorithm + Send + Sync>,
    on_ce: super::CeRule,
    signals: &'static [super::Signal],
}

impl PluginStartup {
    /// `algorithm`, registered as `name`, with its declaration's CE rule and signals.
    pub fn new(name: &'static str, algorithm: Box<dyn StartupAlgorithm + Send + Sync>, on_ce: super::CeRule, signals: &'static [super::Signal]) -> Self {
        PluginStartup { name, algorithm, on_ce, signals }
    }
    /// The declared signals (`[trace] startup`).
    pub fn signals(&self) -> &'static [super::Signal] {
        self.signals
    }
    /// The registered name.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// What it does on a CE mark in startup.
    pub fn on_ce(&self) -> super::CeRule {
        self.on_ce
    }
    /// The algorithm, read-only.
    pub fn algorithm(&self) -> &dyn StartupAlgorithm {
        &*self.algorithm
    }
    /// The algorithm.
    pub fn algorithm_mut(&mut self) -> &mut dyn StartupAlgorithm {
        &mut *self.algorithm
    }
}

/// Registered plug-ins by name (a `BTreeMap`: listed in name order, never in hash order).
static PLUGINS: RwLock<BTreeMap<&'static str, &'static super::StartupDecl>> = RwLock::new(BTreeMap::new());

/// Registers `decl` (its `build` must be [`super::Build::Plugin`]) under its name, replacing an
/// earlier plug-in of that name (a module imported again). Refuses a built-in algorithm's name.
///
/// The declaration lives as long as the process (a replaced one too: scenarios resolved earlier
/// may still name it), so a plug-in is registered once per definition, not per run.
pub fn register(decl: super::StartupDecl) -> Result<&'static super::StartupDecl, String> {
    let name = decl.info.name;
    if super::DECLS.iter().any(|d| d.info.name == name) {
        return Err(format!("{name:?} is a built-in startup algorithm; a plug-in needs a name of its own"));
    }
    if !decl.is_plugin() {
        return Err(format!("{name:?}: a plug-in's declaration is built by a PluginFactory"));
    }
    let leaked: &'static super::StartupDecl = Box::leak(Box::new(decl));
    PLUGINS.write().unwrap_or_else(|e| e.into_inner()).insert(name, leaked);
    Ok(leaked)
}

/// The registered plug-in named `name`.
pub fn get(name: &str) -> Option<&'static super::StartupDecl> {
    PLUGINS.read().unwrap_or_else(|e| e.into_inner()).get(name).copied()
}

/// Every registered plug-in, in name order.
pub fn all() -> Vec<&'static super::StartupDecl> {
    PLUGINS.read().unwrap_or_else(|e| e.into_inner()).values().copied().collect()
}

thread_local! {
    static HALT: Cell<bool> = const { Cell::new(false) };
}

/// A plug-in failed on this thread: the run it belongs to must stop after the current event.
pub fn request_halt() {
    HALT.with(|h| h.set(true));
}

/// Whether a plug-in on this thread asked to stop (and [`clear_halt`] was not called since).
pub fn halt_requested() -> bool {
    HALT.with(Cell::get)
}

/// Forgets a stop request (before a run starts or resumes on this thread).
pub fn clear_halt() {
    HALT.with(|h| h.set(false));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::AlgorithmInfo;
    use crate::startup::{Build, StartupAction, StartupDecl};
    use crate::{AckEvent, CcView};

    #[derive(Debug)]
    struct Doubling;
    impl StartupAlgorithm for Doubling {
        fn on_ack(&mut self, view: &CcView, _: &AckEvent) -> StartupAction {
            StartupAction::grow(view.mss as f64)
        }
    }
    #[derive(Debug)]
    struct Factory;
    impl PluginFactory for Factory {
        fn build(&self, _: &Params<'_>, _: &FlowContext) -> Box<dyn StartupAlgorithm + Send + Sync> {
            Box::new(Doubling)
        }
    }
    static FACTORY: Factory = Factory;

    fn declaration(name: &'static str) -> StartupDecl {
        StartupDecl {
            info: AlgorithmInfo { name, role: "startup", summary: "test", source: "test", params: &[] },
            build: Build::Plugin(&FACTORY),
            check: crate::decl::no_check,
            per_response: false,
            router_approval: false,
            sets_initial_window: false,
            on_ce: crate::startup::CeRule::ExitAsLoss,
            signals: &[],
        }
    }

    #[test]
    fn a_registered_plugin_is_found_by_name_and_builds_under_it() {
        register(declaration("test-doubling")).unwrap();
        let d = crate::startup::decl("test-doubling").expect("registered");
        let values = BTreeMap::new();
        let cx = FlowContext { mss: 1000, header: 40, initial_window: 1, acks: crate::startup::AckCounting::PerPacket, handshake: false, infinite_ssthresh: true, quic: false };
        assert_eq!(d.instantiate(&Params::new(&values), &cx).name(), "test-doubling");
        assert!(all().iter().any(|d| d.info.name == "test-doubling"));
    }

    #[test]
    fn a_builtin_name_is_refused() {
        let e = register(declaration("hystart")).unwrap_err();
        assert!(e.contains("built-in"), "{e}");
    }

    #[test]
    fn a_halt_request_is_per_thread_and_cleared() {
        clear_halt();
        request_halt();
        assert!(halt_requested());
        assert!(!std::thread::spawn(halt_requested).join().unwrap());
        clear_halt();
        assert!(!halt_requested());
    }
}
