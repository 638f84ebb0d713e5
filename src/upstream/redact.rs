//! Finding ferry's own secrets in what an upstream sent, in every form a client could read
//! them back from: as written, JSON-escaped (`\/`, `\u0041`, surrogate pairs),
//! percent-encoded (either case, `+` for a space), any mix of those, a `%XX` whose `%` is
//! JSON-escaped, and inside base64 (a basic credential is base64 of `user:password`, and an
//! upstream may echo a header base64-encoded).
//!
//! An exact byte search is not enough: an upstream that writes the token JSON-escaped, as
//! PHP's `json_encode` writes every `/`, hides it from the search, and parsing the body
//! restores it in clear. HTML entities and other encodings a client would not decode by
//! itself are not looked for.
//!
//! Pure: no IO.

use std::borrow::Cow;

use base64::Engine as _;
use memchr::memmem;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The shortest part of a secret recognized at the end of a body cut at the size cap: a cut
/// may fall inside a secret, and its first characters would otherwise be served.
const PARTIAL_CHARS: usize = 4;

/// Base64 runs shorter than this are not looked for: too short a run could be anything.
const MIN_BASE64_CHARS: usize = 6;

/// The secrets of one call, each with the forms it is looked for in, prepared once.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Texts to find: the secrets themselves (and, for one with a space, the space written
    /// `+`), and the base64 characters that encode only a secret's bytes, at each of the
    /// three offsets it can have inside a larger encoded text, in both alphabets.
    needles: Vec<memmem::Finder<'static>>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} forms)", self.needles.len())
    }
}

impl Secrets {
    /// The secrets `values` (empty ones are ignored).
    pub fn new<S: AsRef<str>>(values: impl IntoIterator<Item = S>) -> Secrets {
        Secrets::default().with(values)
    }

    /// These secrets and `values` as well.
    pub fn with<S: AsRef<str>>(&self, values: impl IntoIterator<Item = S>) -> Secrets {
        let mut secrets = self.clone();
        for value in values {
            let value = value.as_ref();
            if value.is_empty() {
                continue;
            }
            secrets.add(value);
            if value.contains(' ') {
                secrets.add(&value.replace(' ', "+"));
            }
            for core in base64_cores(value.as_bytes()) {
                secrets.add(&core);
            }
        }
        secrets
    }

    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    fn add(&mut self, needle: &str) {
        if !self
            .needles
            .iter()
            .any(|known| known.needle() == needle.as_bytes())
        {
            self.needles
                .push(memmem::Finder::new(needle.as_bytes()).into_owned());
        }
    }

    /// `body` with every occurrence of a secret, in any form, replaced by [`REDACTED`].
    /// When the body was `cut` at the size cap, a secret's beginning at its very end is
    /// replaced too.
    ///
    /// The body is searched as written, then with its JSON escapes decoded, then with its
    /// percent escapes decoded too (which also finds a `%2F` whose `%` was JSON-escaped);
    /// a match in a decoded text is mapped back to the bytes it came from.
    pub fn bytes<'b>(&self, body: &'b [u8], cut: bool) -> Cow<'b, [u8]> {
        if self.is_empty() {
            return Cow::Borrowed(body);
        }
        let mut spans = Vec::new();
        let raw = Decoded::raw(body);
        self.find(&raw, cut, &mut spans);
        // Decoding is paid for only by a body that has escapes of that kind.
        let json = match memchr::memchr(b'\\', body) {
            Some(_) => {
                let json = raw.decode(json_escape);
                self.find(&json, cut, &mut spans);
                json
            }
            None => raw,
        };
        if memchr::memchr(b'%', &json.bytes).is_some() {
            let percent = json.decode(percent_char);
            self.find(&percent, cut, &mut spans);
        }
        if spans.is_empty() {
            return Cow::Borrowed(body);
        }
        spans.sort_unstable();
        let mut out = Vec::with_capacity(body.len());
        let mut copied = 0;
        for (start, end) in spans {
            if end <= copied {
                continue;
            }
            if start >= copied {
                out.extend_from_slice(&body[copied..start]);
                out.extend_from_slice(REDACTED.as_bytes());
            }
            copied = end;
        }
        out.extend_from_slice(&body[copied.min(body.len())..]);
        Cow::Owned(out)
    }

    /// `text` with every occurrence of a secret, in any form, replaced by [`REDACTED`].
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.bytes(text.as_bytes(), false) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes)
                    .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into()),
            ),
        }
    }

    /// Adds the body spans of every secret in `text` to `spans`.
    fn find(&self, text: &Decoded<'_>, cut: bool, spans: &mut Vec<(usize, usize)>) {
        for needle in &self.needles {
            for start in needle.find_iter(&text.bytes) {
                let end = start + needle.needle().len();
                spans.push((text.origin(start), text.origin(end)));
            }
        }
        if cut {
            self.find_cut(text, spans);
        }
    }

    /// A secret's beginning at the end of a cut text, or just before an escape the cut
    /// left unfinished.
    fn find_cut(&self, text: &Decoded<'_>, spans: &mut Vec<(usize, usize)>) {
        let bytes = &text.bytes[..];
        let tail = bytes.len().saturating_sub(12);
        let unfinished = memchr::memrchr2(b'%', b'\\', &bytes[tail..]).map(|at| tail + at);
        for end in std::iter::once(bytes.len()).chain(unfinished) {
            for needle in &self.needles {
                let Ok(needle) = std::str::from_utf8(needle.needle()) else {
                    continue;
                };
                let prefixes = needle
                    .char_indices()
                    .map(|(at, _)| at)
                    .skip(PARTIAL_CHARS.min(needle.chars().count()));
                if let Some(len) = prefixes
                    .filter(|&len| bytes[..end].ends_with(&needle.as_bytes()[..len]))
                    .last()
                {
                    spans.push((text.origin(end - len), text.body_len));
                }
            }
        }
    }
}

/// A body with some escapes decoded, and where each decoded byte came from.
struct Decoded<'b> {
    bytes: Cow<'b, [u8]>,
    /// One list per decoding, the last one first: (position after, position before) at
    /// the start and end of each escape that decoding replaced, in order; between two
    /// marks, positions advance together.
    marks: Vec<Vec<(usize, usize)>>,
    body_len: usize,
}

impl<'b> Decoded<'b> {
    fn raw(body: &'b [u8]) -> Decoded<'b> {
        Decoded {
            bytes: Cow::Borrowed(body),
            marks: Vec::new(),
            body_len: body.len(),
        }
    }

    /// The body position of position `at` here.
    fn origin(&self, mut at: usize) -> usize {
        for marks in &self.marks {
            let index = marks.partition_point(|&(here, _)| here <= at);
            if let Some((here, before)) = index.checked_sub(1).map(|index| marks[index]) {
                at = before + (at - here);
            }
        }
        at
    }

    /// This text with each escape `decode` reads (a character and the bytes it took)
    /// replaced by its character.
    fn decode(&self, decode: fn(&[u8]) -> Option<(char, usize)>) -> Decoded<'b> {
        let bytes = &self.bytes;
        let mut out = Vec::with_capacity(bytes.len());
        let mut marks = Vec::new();
        let mut at = 0;
        while let Some(found) = memchr::memchr2(b'\\', b'%', &bytes[at..]) {
            let start = at + found;
            out.extend_from_slice(&bytes[at..start]);
            match decode(&bytes[start..]) {
                Some((char, len)) => {
                    marks.push((out.len(), start));
                    let mut utf8 = [0u8; 4];
                    out.extend_from_slice(char.encode_utf8(&mut utf8).as_bytes());
                    marks.push((out.len(), start + len));
                    at = start + len;
                }
                None => {
                    out.push(bytes[start]);
                    at = start + 1;
                }
            }
        }
        out.extend_from_slice(&bytes[at..]);
        if marks.is_empty() {
            return Decoded {
                bytes: self.bytes.clone(),
                marks: self.marks.clone(),
                body_len: self.body_len,
            };
        }
        let mut chain = vec![marks];
        chain.extend(self.marks.iter().cloned());
        Decoded {
            bytes: Cow::Owned(out),
            marks: chain,
            body_len: self.body_len,
        }
    }
}

fn hex(bytes: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(bytes).ok()?;
    if !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

/// A percent-encoded character: one `%XX`, or the two to four a non-ASCII character takes.
fn percent_char(bytes: &[u8]) -> Option<(char, usize)> {
    let byte = |index: usize| -> Option<u8> {
        let at = 3 * index;
        if *bytes.get(at)? != b'%' {
            return None;
        }
        u8::try_from(hex(bytes.get(at + 1..at + 3)?)?).ok()
    };
    let lead = byte(0)?;
    let len = match lead {
        0x00..=0x7f => return Some((char::from(lead), 3)),
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return None,
    };
    let mut utf8 = vec![lead];
    for index in 1..len {
        utf8.push(byte(index)?);
    }
    let text = std::str::from_utf8(&utf8).ok()?;
    text.chars().next().map(|char| (char, 3 * len))
}

/// A JSON string escape: `\/`, `\"`, `\\`, `\n` and the like, `\uXXXX`, or a surrogate
/// pair.
fn json_escape(bytes: &[u8]) -> Option<(char, usize)> {
    if bytes.first() != Some(&b'\\') {
        return None;
    }
    let simple = match *bytes.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex(bytes.get(2..6)?)?;
            if let Some(char) = char::from_u32(unit) {
                return Some((char, 6));
            }
            if !(0xd800..0xdc00).contains(&unit) || bytes.get(6..8)? != b"\\u" {
                return None;
            }
            let low = hex(bytes.get(8..12)?)?;
            if !(0xdc00..0xe000).contains(&low) {
                return None;
            }
            let char = char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00))?;
            return Some((char, 12));
        }
        _ => return None,
    };
    Some((simple, 2))
}

/// The base64 characters that encode only `secret`'s bytes, for each of the three offsets
/// it can sit at inside a larger encoded text, in the standard and the URL-safe alphabet.
/// Characters at either end also carry bits of the neighbouring bytes, so they are left off.
fn base64_cores(secret: &[u8]) -> Vec<String> {
    let mut cores = Vec::new();
    for offset in 0..3 {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret);
        let first = (8 * offset).div_ceil(6);
        let last = (8 * (offset + secret.len())) / 6;
        if last < first + MIN_BASE64_CHARS {
            continue;
        }
        for engine in [
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            let encoded = engine.encode(&bytes);
            cores.push(encoded[first..last].to_string());
        }
    }
    cores
}
