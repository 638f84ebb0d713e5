//! When a call tries again: the backoff between attempts, the upstream's `Retry-After`, and
//! the call's deadline, which no wait may pass.

use std::time::Duration;

use http::header;
use tokio::time::Instant;

/// `base × 2^attempt`, jittered to between half and all of it, at most ten seconds.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let full = base
        .saturating_mul(1u32 << attempt.min(16))
        .min(Duration::from_secs(10));
    let mut random = [0u8; 2];
    let fraction = match getrandom::fill(&mut random) {
        Ok(()) => f64::from(u16::from_le_bytes(random)) / f64::from(u16::MAX),
        Err(_) => 0.5,
    };
    full.mul_f64(0.5 + fraction / 2.0)
}

/// How long the upstream's time limit of `timeout` from `started` lasts: a limit too large
/// for the clock (`timeout_ms` has no upper bound) is a limit a century away.
pub(crate) fn deadline_after(started: Instant, timeout: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);
    started
        .checked_add(timeout.min(CENTURY))
        .unwrap_or_else(|| started + Duration::from_secs(86_400))
}

/// The wait before the next attempt: the upstream's `Retry-After`, or else the backoff.
/// `None` when the wait would not end before the call's deadline: then the answer that came
/// is the call's answer.
pub(crate) fn retry_wait(
    after: Option<Duration>,
    backoff: Duration,
    now: Instant,
    deadline: Instant,
) -> Option<Duration> {
    let delay = after.unwrap_or(backoff);
    let resume = now.checked_add(delay)?;
    (resume < deadline).then_some(delay)
}

/// `Retry-After` as a delay: delta-seconds, or an HTTP date (IMF-fixdate). Delta-seconds
/// too large to hold are the largest delay (as RFC 9111 §1.2.2 has it for delta-seconds); a
/// value of neither form is ignored.
pub(crate) fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    retry_after_value(headers.get(header::RETRY_AFTER)?.to_str().ok()?)
}

/// A `Retry-After` value as a delay, as [`retry_after`] reads it.
pub(crate) fn retry_after_value(value: &str) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit()) {
        return Some(Duration::from_secs(
            value.parse::<u64>().unwrap_or(u64::MAX),
        ));
    }
    let when = http_date(value)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    Some(Duration::from_secs(when.saturating_sub(now)))
}

/// Seconds since the epoch of an IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`.
pub(crate) fn http_date(text: &str) -> Option<u64> {
    let mut parts = text.split_ascii_whitespace();
    let (_weekday, day, month, year, time, zone) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    if zone != "GMT" {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|name| *name == month)? as i64 + 1;
    // `day` is 2DIGIT and `year` 4DIGIT, so the arithmetic below cannot overflow.
    let digits = |text: &str, count: usize| -> Option<i64> {
        (text.len() == count && text.bytes().all(|byte| byte.is_ascii_digit()))
            .then(|| text.parse().ok())?
    };
    let day = digits(day, 2).filter(|day| (1..=31).contains(day))?;
    let year = digits(year, 4)?;
    let mut clock = time.split(':').map(|part| digits(part, 2));
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if clock.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    u64::try_from(days * 86_400 + hour * 3_600 + minute * 60 + second).ok()
}
