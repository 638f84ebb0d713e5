//! A rate as the curation writes it, `30/min`: a leaf that the curation reader and the
//! catalog both name, so neither imports the other for it.

use std::fmt;
use std::str::FromStr;

/// At most this many calls per period: past it a limit protects nothing and its arithmetic
/// would work below a microsecond.
pub const MAX_COUNT: u32 = 1_000_000;

/// How a rate is written, for error messages.
pub const RATE_FORM: &str = "a rate such as `30/min`: a whole number from 1 to 1000000, `/`, and `s` (or `sec`), `min` or `h`";

/// `count` calls per `period`, with a burst of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    count: u32,
    period: Period,
}

/// The period of a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    Second,
    Minute,
    Hour,
}

/// Why a text is not a rate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    #[error("must be {RATE_FORM}")]
    Form,
    #[error("must allow at least 1 call per period: 0 would refuse every call")]
    Zero,
    #[error("must allow at most {MAX_COUNT} calls per period (for no limit, leave the key out)")]
    TooMany,
}

impl Rate {
    /// `count` calls per `period`; `None` when `count` is 0 or over [`MAX_COUNT`].
    pub fn new(count: u32, period: Period) -> Option<Rate> {
        (1..=MAX_COUNT)
            .contains(&count)
            .then_some(Rate { count, period })
    }

    /// Reads `N/s`, `N/sec`, `N/min` or `N/h`.
    pub fn parse(text: &str) -> Result<Rate, RateError> {
        let (count, unit) = text.split_once('/').ok_or(RateError::Form)?;
        let period = match unit {
            "s" | "sec" => Period::Second,
            "min" => Period::Minute,
            "h" => Period::Hour,
            _ => return Err(RateError::Form),
        };
        // Digits only: no sign, space or underscore slips through `u32::from_str`.
        if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
            return Err(RateError::Form);
        }
        let count: u64 = count.parse().map_err(|_| RateError::TooMany)?;
        match count {
            0 => Err(RateError::Zero),
            n if n > u64::from(MAX_COUNT) => Err(RateError::TooMany),
            n => Ok(Rate {
                count: n as u32,
                period,
            }),
        }
    }

    /// Calls allowed per period, and at once after a quiet period.
    pub fn count(self) -> u32 {
        self.count
    }

    pub fn period(self) -> Period {
        self.period
    }

    /// The period in nanoseconds.
    pub fn period_nanos(self) -> u64 {
        self.period.seconds() * 1_000_000_000
    }

    /// The time one call takes out of the budget, in nanoseconds: the period over the count.
    pub fn interval_nanos(self) -> u64 {
        self.period_nanos() / u64::from(self.count)
    }
}

impl Period {
    pub fn seconds(self) -> u64 {
        match self {
            Period::Second => 1,
            Period::Minute => 60,
            Period::Hour => 3600,
        }
    }

    /// The unit as ferry writes it: `s`, `min`, `h`.
    pub fn unit(self) -> &'static str {
        match self {
            Period::Second => "s",
            Period::Minute => "min",
            Period::Hour => "h",
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.count, self.period.unit())
    }
}

impl FromStr for Rate {
    type Err = RateError;

    fn from_str(text: &str) -> Result<Rate, RateError> {
        Rate::parse(text)
    }
}
