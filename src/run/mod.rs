//! Running a tool's call that is made of several exchanges with the APIs: a composite tool's
//! workflow, whose steps each go through [`crate::upstream`] as one operation's call
//! ([`workflow`]). `upstream` below it makes one operation's call (its attempts, and the
//! polls that follow a long-running operation's `202 Accepted`) and never names this module.

pub mod workflow;
