//! Boxing a future where it will run. `Box::pin(make())` builds the future on the stack and
//! then copies it, whole, into the box: for a request's future, kilobytes at every call
//! (its size is that of its deepest state, however little of it is filled in at the start).
//! [`future`] allocates first and has the future written straight into the allocation,
//! provided the async fn that makes it is not inlined (`#[inline(never)]`, which costs a
//! call): inlined, its future is still assembled on the stack and copied. A leaf: it knows
//! nothing of ferry.

use std::pin::Pin;

/// The future `make` returns, pinned on the heap, written there rather than moved there.
#[inline(always)]
pub fn future<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    Box::into_pin(Box::write(Box::new_uninit(), make()))
}
