//! Running a tool's call that is made of several exchanges with the APIs: an operation's
//! call followed, when it is long-running, from its `202 Accepted` to its end ([`follow`]),
//! and a composite tool's workflow, whose steps are each such a call ([`workflow`]).
//! `upstream` below it makes one exchange (and its retries) and never names this module.

pub mod follow;
pub mod workflow;
