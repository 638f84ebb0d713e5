//! Finding ferry's own secrets in what an upstream sent, in the forms a client could read
//! them back from: as written, JSON-escaped (`\/`, `\u0041`, surrogate pairs) up to three
//! times over (JSON inside a JSON string), percent-encoded (either case, `+` or `%20` for a
//! space) up to three times over (`%252F`), any mix of those, a `%XX` whose `%` is
//! JSON-escaped, inside base64 (a basic credential is base64 of `user:password`, and an
//! upstream may echo a header base64-encoded), also when wrapped into lines as MIME and PEM
//! write it, and a hex secret in either case.
//!
//! An exact byte search is not enough: an upstream that writes the token JSON-escaped, as
//! PHP's `json_encode` writes every `/`, hides it from the search, and parsing the body
//! restores it in clear. HTML entities, compressed or archived bodies (gzip or brotli sent
//! unasked, zip, PDF), UTF-16 text and other encodings are not looked into.
//!
//! Pure: no IO.

use std::borrow::Cow;

use base64::Engine as _;
use memchr::memmem;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The fewest characters a secret searched for on its own has: a shorter one (a password
/// `2024`) also matches ordinary numbers and words, and replacing those would corrupt
/// results. Such a secret is still found inside the credential that carries it.
pub const MIN_SECRET_CHARS: usize = 8;

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
            // The percent layer reads every `+` as a space, the one a `%2B` became too.
            if value.contains('+') {
                secrets.add(&value.replace('+', " "));
            }
            // A hex secret may be echoed in the other case; any other is matched as written,
            // so that the case of ordinary text does not count.
            if value.bytes().all(|byte| byte.is_ascii_hexdigit()) {
                secrets.add(&value.to_ascii_lowercase());
                secrets.add(&value.to_ascii_uppercase());
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
    /// The body is searched as written, then with its JSON escapes decoded (again, up to
    /// [`MAX_PASSES`] times, while that changes something: JSON inside a JSON string), then
    /// with the line breaks inside base64 removed, then with its percent escapes decoded
    /// (again while a `%25` leaves more), which also finds a `%2F` whose `%` was JSON-escaped.
    /// Each decoded text replaces the one before, and no map of where its bytes came from is
    /// kept: only when a secret is found (rare) are the texts before it decoded again, to map
    /// the match back to the body's bytes.
    pub fn bytes<'b>(&self, body: &'b [u8], cut: bool) -> Cow<'b, [u8]> {
        if self.is_empty() {
            return Cow::Borrowed(body);
        }
        let mut spans = Vec::new();
        self.find(body, cut, &mut spans);
        let mut layers = Vec::new();
        let mut text = Cow::Borrowed(body);
        // Decoding is paid for only by a body that has escapes of that kind.
        for layer in LAYERS {
            let passes = match layer {
                Layer::Lines => 1,
                Layer::Json | Layer::Percent => MAX_PASSES,
            };
            for _ in 0..passes {
                if !layer.may_change(&text) {
                    break;
                }
                let Some(decoded) = layer.decode(&text) else {
                    break;
                };
                layers.push(layer);
                let mut found = Vec::new();
                self.find(&decoded, cut, &mut found);
                if !found.is_empty() {
                    spans.extend(origins(body, &layers, found));
                }
                text = Cow::Owned(decoded);
            }
        }
        drop(text);
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

    /// Adds the spans of every secret in `text` to `spans`, in `text`'s positions.
    fn find(&self, text: &[u8], cut: bool, spans: &mut Vec<(usize, usize)>) {
        for needle in &self.needles {
            for start in needle.find_iter(text) {
                spans.push((start, start + needle.needle().len()));
            }
        }
        if cut {
            self.find_cut(text, spans);
        }
    }

    /// A secret's beginning at the end of a cut text, or just before an escape the cut
    /// left unfinished.
    fn find_cut(&self, bytes: &[u8], spans: &mut Vec<(usize, usize)>) {
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
                    spans.push((end - len, bytes.len()));
                }
            }
        }
    }
}

/// How many times a layer of escapes is decoded again while that still changes the text: a
/// value escaped once more each time it is embedded rarely goes deeper.
const MAX_PASSES: usize = 3;

/// The decodings, in the order they are applied.
const LAYERS: [Layer; 3] = [Layer::Json, Layer::Lines, Layer::Percent];

/// One kind of escape a client may decode to read a secret back.
#[derive(Clone, Copy, Debug)]
enum Layer {
    /// JSON string escapes.
    Json,
    /// CR and LF between base64 characters, which MIME and PEM write every 64 or 76.
    Lines,
    /// Percent escapes, and `+` for a space.
    Percent,
}

/// A piece of a text a [`Layer`] reads: bytes it keeps, or an escape and what it stands for
/// (nothing, for a line break it removes).
enum Unit {
    Kept(usize, usize),
    Escape(usize, usize, Option<char>),
}

/// The base64 characters a wrapped line ends in before a break is removed: fewer could be
/// any word at the end of a line.
const WRAPPED_LINE_CHARS: usize = 16;

impl Layer {
    /// Whether `text` has anything this layer decodes; cheap, and true for most that do.
    fn may_change(self, text: &[u8]) -> bool {
        match self {
            Layer::Json => memchr::memchr(b'\\', text).is_some(),
            Layer::Percent => memchr::memchr(b'%', text).is_some(),
            // The character after the break is looked at first: in indented text it is a space.
            Layer::Lines => memchr::memchr2_iter(b'\r', b'\n', text).any(|at| {
                let before = &text[at.saturating_sub(WRAPPED_LINE_CHARS)..at];
                text.get(at + 1)
                    .is_some_and(|&b| is_base64(b) || b == b'\n')
                    && before.len() == WRAPPED_LINE_CHARS
                    && before.iter().rev().all(|&b| is_base64(b))
            }),
        }
    }

    /// `text` decoded, or `None` when there was nothing to decode.
    fn decode(self, text: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(text.len());
        let mut changed = false;
        self.units(text, |unit| match unit {
            Unit::Kept(start, end) => out.extend_from_slice(&text[start..end]),
            Unit::Escape(_, _, char) => {
                changed = true;
                if let Some(char) = char {
                    let mut utf8 = [0u8; 4];
                    out.extend_from_slice(char.encode_utf8(&mut utf8).as_bytes());
                }
            }
        });
        changed.then_some(out)
    }

    /// Calls `unit` with each piece of `text` in order.
    fn units(self, text: &[u8], mut unit: impl FnMut(Unit)) {
        let mut at = 0;
        let next = |from: usize| -> Option<usize> {
            let rest = &text[from..];
            let found = match self {
                Layer::Json => memchr::memchr(b'\\', rest),
                Layer::Percent => memchr::memchr2(b'%', b'+', rest),
                Layer::Lines => memchr::memchr2(b'\r', b'\n', rest),
            };
            found.map(|found| from + found)
        };
        let mut search = 0;
        while let Some(start) = next(search) {
            let escape = match self {
                Layer::Json => json_escape(&text[start..]).map(|(char, len)| (Some(char), len)),
                Layer::Percent if text[start] == b'+' => Some((Some(' '), 1)),
                Layer::Percent => percent_char(&text[start..]).map(|(char, len)| (Some(char), len)),
                Layer::Lines => {
                    let len = text[start..]
                        .iter()
                        .take_while(|&&b| matches!(b, b'\r' | b'\n'))
                        .count();
                    let between = start > 0
                        && is_base64(text[start - 1])
                        && text.get(start + len).is_some_and(|&b| is_base64(b));
                    between.then_some((None, len))
                }
            };
            match escape {
                Some((char, len)) => {
                    if at < start {
                        unit(Unit::Kept(at, start));
                    }
                    unit(Unit::Escape(start, start + len, char));
                    at = start + len;
                    search = at;
                }
                None => search = start + 1,
            }
        }
        if at < text.len() {
            unit(Unit::Kept(at, text.len()));
        }
    }

    /// `spans` in the text this layer decoded `text` to, as positions in `text`: a span
    /// that starts or ends inside an escape's character takes the whole escape.
    fn origins(self, text: &[u8], spans: &mut [(usize, usize)]) {
        let mut starts: Vec<(usize, usize)> = spans
            .iter()
            .enumerate()
            .map(|(index, span)| (span.0, index))
            .collect();
        let mut ends: Vec<(usize, usize)> = spans
            .iter()
            .enumerate()
            .map(|(index, span)| (span.1, index))
            .collect();
        starts.sort_unstable();
        ends.sort_unstable();
        let (mut next_start, mut next_end) = (0, 0);
        while ends.get(next_end).is_some_and(|&(at, _)| at == 0) {
            next_end += 1;
        }
        let mut decoded = 0;
        self.units(text, |unit| {
            let (from, to, len) = match unit {
                Unit::Kept(start, end) => (start, end, end - start),
                Unit::Escape(start, end, char) => (start, end, char.map_or(0, char::len_utf8)),
            };
            let kept = matches!(unit, Unit::Kept(..));
            let after = decoded + len;
            while let Some(&(at, index)) = starts.get(next_start).filter(|&&(at, _)| at < after) {
                spans[index].0 = if kept { from + (at - decoded) } else { from };
                next_start += 1;
            }
            while let Some(&(at, index)) = ends.get(next_end).filter(|&&(at, _)| at <= after) {
                spans[index].1 = if kept { from + (at - decoded) } else { to };
                next_end += 1;
            }
            decoded = after;
        });
        for &(_, index) in &starts[next_start..] {
            spans[index].0 = text.len();
        }
        for &(_, index) in &ends[next_end..] {
            spans[index].1 = text.len();
        }
    }
}

/// `spans` found in the text `layers` decoded `body` to, as positions in `body`. The texts
/// between are decoded again: this runs only when a secret was found.
fn origins(body: &[u8], layers: &[Layer], mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut texts = vec![Cow::Borrowed(body)];
    for layer in &layers[..layers.len() - 1] {
        let last = texts.last().expect("the body is the first text");
        let next = layer.decode(last).map_or_else(|| last.clone(), Cow::Owned);
        texts.push(next);
    }
    for (layer, text) in layers.iter().zip(&texts).rev() {
        layer.origins(text, &mut spans);
    }
    spans
}

fn is_base64(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'-' | b'_' | b'=')
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
