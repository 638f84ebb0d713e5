//! The random values a request carries: multipart boundaries, idempotency keys and trace
//! and confirmation ids, as hex or as UUIDs.

use std::fmt::Write as _;

/// `N` random bytes as lower-case hex. Falls back to the clock if the system has no
/// randomness to give (the value is a boundary or a key, not a secret).
pub fn random_hex<const N: usize>() -> String {
    let mut bytes = [0u8; N];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_nanos())
            .unwrap_or_default();
        for (index, byte) in bytes.iter_mut().enumerate() {
            *byte = (nanos >> ((index % 16) * 8)) as u8;
        }
    }
    let mut hex = String::with_capacity(N * 2);
    for byte in bytes {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// A random version 4 UUID, the shape idempotency keys usually take.
pub(super) fn uuid_v4() -> String {
    let hex = random_hex::<16>();
    let mut chars: Vec<char> = hex.chars().collect();
    chars[12] = '4';
    chars[16] = ['8', '9', 'a', 'b'][chars[16].to_digit(16).unwrap_or(0) as usize % 4];
    let hex: String = chars.into_iter().collect();
    uuid_text(&hex)
}

/// 32 hex digits written as a UUID: `8-4-4-4-12`.
pub(crate) fn uuid_text(hex: &str) -> String {
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
