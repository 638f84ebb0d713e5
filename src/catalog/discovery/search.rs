//! The ranking behind `search_operations`: BM25F over each operation's name, summary,
//! description, path segments, tags, parameter names and the verbs its method stands for.
//!
//! Written here rather than taken from a search library: the index is a few hundred lines'
//! worth of ideas at most (a tokenizer, a light stemmer, one posting list per term), it is
//! built once when the catalog compiles, and a query only adds up numbers already weighed
//! then. Every posting holds its term's whole BM25 contribution for its operation, the
//! fields' weights and the length normalisation applied at build time, so a query over
//! Microsoft Graph beta's 22,361 operations reads a few posting lists and sorts what they
//! touched (`bench/README.md` has the figures).

use std::collections::HashMap;

use super::CallClass;
use crate::catalog::Annotations;

/// The most operations one search answers.
pub const MAX_LIMIT: u64 = 50;
/// The most operations one `describe_operation` call answers.
pub const MAX_DESCRIBED: u64 = 20;
/// How many operations a search answers unless asked for another number.
pub const DEFAULT_LIMIT: usize = 10;

/// The fields an entry's words are counted in, apart.
const FIELDS: usize = 8;
const F_NAME: usize = 0;
const F_SUMMARY: usize = 1;
const F_PATH: usize = 2;
const F_RESOURCE: usize = 3;
const F_TAGS: usize = 4;
const F_VERBS: usize = 5;
const F_DESCRIPTION: usize = 6;
const F_PARAMETERS: usize = 7;

/// Each field's weight and length normalisation (BM25F's `b`, per field).
fn field_weights() -> [(f32, f32); FIELDS] {
    [
        (NAME, 0.8),
        (SUMMARY, 0.8),
        (PATH, 0.8),
        (RESOURCE, 0.0),
        (TAGS, 0.0),
        (VERBS, 0.0),
        (DESCRIPTION, B),
        (PARAMETERS, B),
    ]
}

/// BM25's term-frequency saturation and length normalisation, at their usual values.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// How much a word counts in each field. The name and the summary say what the operation
/// does in a few words; the path's literal segments and the tags say what it acts on; the
/// method's verbs what it does to it; a long description and the parameter names mostly
/// say how, so each of their words counts for less.
const NAME: f32 = 2.0;
const SUMMARY: f32 = 3.0;
const PATH: f32 = 1.0;
/// The path's last literal segment names what the operation acts on (`stargazers`).
const RESOURCE: f32 = 1.5;
const TAGS: f32 = 1.0;
const VERBS: f32 = 1.0;
const DESCRIPTION: f32 = 0.4;
const PARAMETERS: f32 = 0.4;
/// The description's words past this many are not indexed: the first sentences say what
/// the operation is; the rest are details that rank every long description up.
const DESCRIPTION_WORDS: usize = 60;
/// Where an operation has no summary, how many of its description's first words stand in
/// for one.
const SUMMARY_WORDS: usize = 12;
/// A query word this long or longer also matches the index's words it begins (`star` finds
/// `stargazers`, `contribut` finds `contributors`), at [`PREFIX_WEIGHT`].
const PREFIX_CHARS: usize = 5;
const PREFIX_WEIGHT: f32 = 0.6;
/// The most index words one query word reaches by its prefix.
const PREFIX_TERMS: usize = 64;

/// One operation behind the discovery tools, as a search answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its tool's name, which describing and calling take.
    pub tool: String,
    pub operation_id: Option<String>,
    pub method: String,
    pub path: String,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub tags: Vec<String>,
    /// Its arguments' names.
    pub parameters: Vec<String>,
    /// Which calling tool calls it.
    pub class: CallClass,
    /// Its tool's annotations, as `tools/list` would serve them.
    pub annotations: Annotations,
    /// Whether the user confirms each call.
    pub confirms: bool,
    /// About how many tokens its definition costs.
    pub tokens: usize,
}

/// What a search keeps beside its query.
#[derive(Debug, Clone, Default)]
pub struct Filter<'f> {
    pub tag: Option<&'f str>,
    pub class: Option<CallClass>,
    pub path_prefix: Option<&'f str>,
}

impl Filter<'_> {
    fn keeps(&self, entry: &Entry) -> bool {
        self.tag
            .is_none_or(|tag| entry.tags.iter().any(|t| t.eq_ignore_ascii_case(tag)))
            && self.class.is_none_or(|class| entry.class == class)
            && self
                .path_prefix
                .is_none_or(|prefix| entry.path.starts_with(prefix))
    }
}

/// Every operation behind an API's discovery tools, and the postings that rank them. A term
/// is held once, by its id: the postings, the sorted list prefixes are looked up in and each
/// entry's path words all name it by that.
#[derive(Debug, Default)]
pub struct SearchIndex {
    entries: Vec<Entry>,
    /// Each term's id, by its text.
    ids: HashMap<Box<str>, u32>,
    /// Each term's text, by its id.
    texts: Vec<Box<str>>,
    /// Each term's postings, by its id: an entry and the term's whole score there.
    postings: Vec<Box<[(u32, f32)]>>,
    /// Every term's id, in the order of their texts, for the words a query word begins.
    sorted: Vec<u32>,
    /// Each entry's path words that tell it from others (those in fewer than a third of the
    /// paths), for what a query leaves unsaid.
    path_words: Vec<Box<[u32]>>,
    /// Each entry's place, by its tool's name.
    by_name: HashMap<String, u32>,
}

impl SearchIndex {
    /// Indexes `entries`: each field's words counted, then every term's BM25F score per
    /// entry worked out once.
    pub fn new(entries: Vec<Entry>) -> SearchIndex {
        let mut ids: HashMap<Box<str>, u32> = HashMap::new();
        let mut texts: Vec<Box<str>> = Vec::new();
        let mut intern = |word: String| -> u32 {
            if let Some(&id) = ids.get(word.as_str()) {
                return id;
            }
            let id = texts.len() as u32;
            let word = word.into_boxed_str();
            texts.push(word.clone());
            ids.insert(word, id);
            id
        };
        // Each entry's words, each with its field, and each field's length.
        let mut said: Vec<Vec<(u32, u8)>> = Vec::with_capacity(entries.len());
        let mut lengths: Vec<[f32; FIELDS]> = Vec::with_capacity(entries.len());
        let mut path_words: Vec<Box<[u32]>> = Vec::with_capacity(entries.len());
        for entry in &entries {
            let mut words_of: Vec<(u32, u8)> = Vec::new();
            let mut length = [0.0f32; FIELDS];
            let mut add = |field: usize, text: &str, limit: usize| {
                for word in words(text).take(limit) {
                    words_of.push((intern(word), field as u8));
                    length[field] += 1.0;
                }
            };
            add(
                F_NAME,
                entry.operation_id.as_deref().unwrap_or(&entry.tool),
                usize::MAX,
            );
            // A document without summaries (Stripe's) says what an operation does in its
            // description's first words.
            match &entry.summary {
                Some(summary) => add(F_SUMMARY, summary, usize::MAX),
                None => add(
                    F_SUMMARY,
                    entry.description.as_deref().unwrap_or(""),
                    SUMMARY_WORDS,
                ),
            }
            let segments = literal_segments(&entry.path);
            add(F_PATH, &segments, usize::MAX);
            add(F_RESOURCE, last_segment(&entry.path), usize::MAX);
            for tag in &entry.tags {
                add(F_TAGS, tag, usize::MAX);
            }
            add(F_VERBS, verbs(&entry.method), usize::MAX);
            add(
                F_DESCRIPTION,
                entry.description.as_deref().unwrap_or(""),
                DESCRIPTION_WORDS,
            );
            for parameter in &entry.parameters {
                add(F_PARAMETERS, parameter, usize::MAX);
            }
            let mut path: Vec<u32> = words(&segments).map(&mut intern).collect();
            path.sort_unstable();
            path.dedup();
            path_words.push(path.into_boxed_slice());
            words_of.sort_unstable();
            said.push(words_of);
            lengths.push(length);
        }
        let count = entries.len() as f32;
        let mut average = [0.0f32; FIELDS];
        for length in &lengths {
            for (sum, length) in average.iter_mut().zip(length) {
                *sum += length;
            }
        }
        for sum in &mut average {
            *sum = (*sum / count.max(1.0)).max(1.0);
        }
        let weights = field_weights();
        // Each entry's weighed term frequencies: every field's count, normalised by that
        // field's length against its average, times the field's weight.
        let mut documents = vec![0u32; texts.len()];
        let frequencies: Vec<Vec<(u32, f32)>> = said
            .into_iter()
            .zip(&lengths)
            .map(|(words_of, length)| {
                let mut weighed: Vec<(u32, f32)> = Vec::new();
                for (id, field) in words_of {
                    let (weight, b) = weights[field as usize];
                    let norm = 1.0 - b + b * length[field as usize] / average[field as usize];
                    match weighed.last_mut() {
                        Some((last, tf)) if *last == id => *tf += weight / norm,
                        _ => {
                            documents[id as usize] += 1;
                            weighed.push((id, weight / norm));
                        }
                    }
                }
                weighed
            })
            .collect();
        let idf: Vec<f32> = documents
            .iter()
            .map(|&n| {
                let n = n as f32;
                (1.0 + (count - n + 0.5) / (n + 0.5)).ln()
            })
            .collect();
        let mut postings: Vec<Vec<(u32, f32)>> = documents
            .iter()
            .map(|&n| Vec::with_capacity(n as usize))
            .collect();
        for (position, weighed) in frequencies.into_iter().enumerate() {
            for (id, tf) in weighed {
                let score = idf[id as usize] * tf * (K1 + 1.0) / (tf + K1);
                postings[id as usize].push((position as u32, score));
            }
        }
        let mut in_paths = vec![0usize; texts.len()];
        for path in &path_words {
            for &id in path.iter() {
                in_paths[id as usize] += 1;
            }
        }
        for path in &mut path_words {
            if path
                .iter()
                .any(|&id| in_paths[id as usize] * 3 >= entries.len().max(3))
            {
                let kept: Vec<u32> = path
                    .iter()
                    .copied()
                    .filter(|&id| in_paths[id as usize] * 3 < entries.len().max(3))
                    .collect();
                *path = kept.into_boxed_slice();
            }
        }
        let mut sorted: Vec<u32> = (0..texts.len() as u32).collect();
        sorted.sort_unstable_by(|a, b| texts[*a as usize].cmp(&texts[*b as usize]));
        let by_name = entries
            .iter()
            .enumerate()
            .map(|(position, entry)| (entry.tool.clone(), position as u32))
            .collect();
        SearchIndex {
            entries,
            ids,
            texts,
            postings: postings.into_iter().map(Vec::into_boxed_slice).collect(),
            sorted,
            path_words,
            by_name,
        }
    }

    /// Every operation, in the catalog's order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The operation whose tool is `name`, when it is behind these tools.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name
            .get(name)
            .map(|&position| &self.entries[position as usize])
    }

    /// The best `limit` operations for `query` that `filter` keeps and `allowed` lets the
    /// caller see, best first, and how many matched in all. An empty query (or one of no
    /// indexed word) answers the operations the filter keeps, in the catalog's order; a
    /// query that is an operation's name or operationId answers it first.
    pub fn search<'i>(
        &'i self,
        query: &str,
        filter: &Filter<'_>,
        limit: usize,
        allowed: impl Fn(&Entry) -> bool,
    ) -> (Vec<&'i Entry>, usize) {
        let keeps = |entry: &Entry| filter.keeps(entry) && allowed(entry);
        let mut scores = vec![0.0f32; self.entries.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut said: Vec<String> = words(&phrased(query)).collect();
        said.dedup();
        // Each word said counts once, by the best of the words it stands for in an entry.
        let mut best = vec![0.0f32; self.entries.len()];
        let mut best_touched: Vec<u32> = Vec::new();
        let mut reached: Vec<u32> = Vec::new();
        for word in &said {
            for (id, weight) in self.expand(word) {
                reached.push(id);
                for &(position, score) in self.postings[id as usize].iter() {
                    let slot = &mut best[position as usize];
                    if *slot == 0.0 {
                        best_touched.push(position);
                    }
                    *slot = slot.max(weight * score);
                }
            }
            for position in best_touched.drain(..) {
                let slot = &mut scores[position as usize];
                if *slot == 0.0 {
                    touched.push(position);
                }
                *slot += std::mem::take(&mut best[position as usize]);
            }
        }
        reached.sort_unstable();
        reached.dedup();
        // An operation on something the query never names (a customer's bank accounts, for
        // a customer) counts for less, each such path word again.
        for &position in &touched {
            let unsaid = self.path_words[position as usize]
                .iter()
                .filter(|id| reached.binary_search(id).is_err())
                .count();
            if unsaid > 0 {
                scores[position as usize] *= PATH_UNSAID.powi(unsaid as i32);
            }
        }
        if let Some(methods) = intent(&said) {
            for &position in &touched {
                if methods.contains(&self.entries[position as usize].method.as_str()) {
                    scores[position as usize] *= INTENT_BOOST;
                }
            }
        }
        let exact = query.trim();
        let named = match self.by_name.get(exact) {
            Some(&position) => Some(position as usize),
            // An operationId that is not its tool's name: only a query of one word can be.
            None if !exact.contains(char::is_whitespace) => self
                .entries
                .iter()
                .position(|entry| entry.operation_id.as_deref() == Some(exact)),
            None => None,
        };
        if let Some(position) = named {
            if scores[position] == 0.0 {
                touched.push(position as u32);
            }
            scores[position] = f32::MAX;
        }
        if touched.is_empty() {
            let kept: Vec<&Entry> = self.entries.iter().filter(|e| keeps(e)).collect();
            let total = kept.len();
            return (kept.into_iter().take(limit).collect(), total);
        }
        touched.retain(|&position| keeps(&self.entries[position as usize]));
        let total = touched.len();
        // Best first; equal scores in the catalog's order, so an answer never varies.
        let order = |a: &u32, b: &u32| {
            scores[*b as usize]
                .total_cmp(&scores[*a as usize])
                .then(a.cmp(b))
        };
        if touched.len() > limit {
            touched.select_nth_unstable_by(limit, order);
            touched.truncate(limit);
        }
        touched.sort_unstable_by(order);
        let found = touched
            .into_iter()
            .map(|position| &self.entries[position as usize])
            .collect();
        (found, total)
    }
}

/// The words of `text` as the index holds them: split at every character that is not a
/// letter or digit and where a lowercase letter meets an uppercase one, lowercased,
/// stemmed, without the words that say nothing about an operation.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    split(text)
        .map(|word| word.to_lowercase())
        .filter(|word| word.len() > 1 && !STOP_WORDS.contains(&word.as_str()))
        .map(|word| {
            let stemmed = stem(&word);
            match SAME.iter().find(|(long, _)| *long == stemmed) {
                Some((_, short)) => short.to_string(),
                None => stemmed,
            }
        })
}

/// Words an API writes in full or cut short, each as the index holds both.
const SAME: &[(&str, &str)] = &[
    ("repository", "repo"),
    ("organization", "org"),
    ("organisation", "org"),
    ("configuration", "config"),
    ("authentication", "auth"),
    ("authorization", "auth"),
    ("information", "info"),
    ("application", "app"),
    ("environment", "env"),
    ("statistic", "stat"),
    ("subscription", "subscription"),
];

/// `text`'s runs of letters and digits, each cut again where camelCase starts a new word.
fn split(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).flat_map(|run| {
        let mut pieces = Vec::new();
        let mut start = 0;
        let chars: Vec<(usize, char)> = run.char_indices().collect();
        for window in chars.windows(2) {
            let ((_, a), (at, b)) = (window[0], window[1]);
            if a.is_lowercase() && b.is_uppercase() {
                pieces.push(&run[start..at]);
                start = at;
            }
        }
        pieces.push(&run[start..]);
        pieces.into_iter().filter(|piece| !piece.is_empty())
    })
}

/// A light English stemmer: plurals and the common verb endings, so `issues`, `starred`
/// and `listing` meet `issue`, `star` and `list`.
fn stem(word: &str) -> String {
    let n = word.len();
    if n <= 3 || !word.is_ascii() {
        return word.to_string();
    }
    let strip = |suffix: &str| &word[..n - suffix.len()];
    let undouble = |root: &str| {
        let bytes = root.as_bytes();
        match bytes {
            [.., a, b] if a == b && !matches!(a, b'l' | b's' | b'z') => {
                root[..root.len() - 1].to_string()
            }
            _ => root.to_string(),
        }
    };
    if word.ends_with("ies") && n > 4 {
        format!("{}y", strip("ies"))
    } else if word.ends_with("sses")
        || word.ends_with("xes")
        || word.ends_with("ches")
        || word.ends_with("shes")
    {
        strip("es").to_string()
    } else if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        word.to_string()
    } else if word.ends_with('s') {
        strip("s").to_string()
    } else if word.ends_with("ing") && n > 5 {
        undouble(strip("ing"))
    } else if word.ends_with("ed") && n > 4 {
        let root = strip("ed");
        match root.strip_suffix('i') {
            Some(stem) => format!("{stem}y"),
            None => undouble(root),
        }
    } else {
        word.to_string()
    }
}

/// The path's segments that are not parameters: `/repos/{owner}/{repo}/issues` says
/// `repos issues`.
fn literal_segments(path: &str) -> String {
    path.split('/')
        .filter(|segment| !segment.starts_with('{'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The path's last segment that is not a parameter: `/repos/{owner}/{repo}/issues/{n}` acts
/// on `issues`.
fn last_segment(path: &str) -> &str {
    path.rsplit('/')
        .find(|segment| !segment.is_empty() && !segment.starts_with('{'))
        .unwrap_or("")
}

/// The methods a query's verbs ask for, when it has such a verb: what a user says they
/// want done (`show`, `close`, `remove`) tells a read from a write before any noun does.
fn intent(said: &[String]) -> Option<&'static [&'static str]> {
    const READ: &[&str] = &["GET", "QUERY", "HEAD"];
    const CREATE: &[&str] = &["POST", "PUT"];
    const CHANGE: &[&str] = &["PATCH", "PUT", "POST"];
    const DELETE: &[&str] = &["DELETE"];
    said.iter().find_map(|word| match word.as_str() {
        "show" | "list" | "get" | "see" | "view" | "find" | "look" | "lookup" | "read" | "who"
        | "which" | "what" | "fetch" | "download" | "check" | "retrieve" => Some(READ),
        "create" | "add" | "make" | "new" | "open" | "file" | "post" | "send" | "start"
        | "register" | "invite" | "publish" | "give" | "assign" | "attach" | "subscribe" => {
            Some(CREATE)
        }
        "update" | "change" | "edit" | "rename" | "modify" | "close" | "set" | "mark"
        | "replace" => Some(CHANGE),
        "delete" | "remove" | "erase" | "drop" | "kick" | "unset" => Some(DELETE),
        _ => None,
    })
}

const PATH_UNSAID: f32 = 0.75;

/// How much more an operation counts when its method is what the query's verb asks for.
const INTENT_BOOST: f32 = 2.0;

/// The verbs a request's method stands for, as a user words what it does.
fn verbs(method: &str) -> &'static str {
    match method {
        "GET" | "QUERY" => "get list show",
        "HEAD" => "check",
        "POST" => "create add",
        "PUT" => "set replace",
        "PATCH" => "update edit",
        "DELETE" => "delete remove",
        _ => "",
    }
}

impl SearchIndex {
    /// A query word and the index's words it also stands for, each with the weight it
    /// counts at: itself; the words users say it for ([`SYNONYMS`]); the words it begins.
    fn expand(&self, word: &str) -> Vec<(u32, f32)> {
        let mut terms = Vec::new();
        let id = |term: &str| self.ids.get(term).copied();
        if !EXPANDED_ONLY.contains(&word)
            && let Some(id) = id(word)
        {
            terms.push((id, 1.0));
        }
        for (said, meant) in SYNONYMS {
            if *said == word {
                // A word that stands only for others means them whole.
                let weight = if EXPANDED_ONLY.contains(&word) {
                    1.0
                } else {
                    SYNONYM_WEIGHT
                };
                terms.extend(meant.iter().filter_map(|term| Some((id(term)?, weight))));
            }
        }
        let chars = word.chars().count();
        if chars >= PREFIX_CHARS - 1 {
            // A four-letter word reaches only compounds it begins (`star`, `stargazer`),
            // not its near neighbours (`repo`, `report`).
            let longer = if chars >= PREFIX_CHARS { 1 } else { 4 };
            let text = |id: &u32| self.texts[*id as usize].as_ref();
            let start = self.sorted.partition_point(|id| text(id) < word);
            terms.extend(
                self.sorted[start..]
                    .iter()
                    .take_while(|id| text(id).starts_with(word))
                    .filter(|id| text(id).len() >= word.len() + longer)
                    .take(PREFIX_TERMS)
                    .map(|&id| (id, PREFIX_WEIGHT)),
            );
        }
        terms
    }
}

/// Words that mean something in a question only through what they stand for: `my` asks for
/// what is the caller's own, and is otherwise a word of examples (`my-team`).
const EXPANDED_ONLY: &[&str] = &["my", "me", "mine", "who", "what", "which"];

/// `query` with each phrase users say for one word replaced by it (lowercased).
fn phrased(query: &str) -> String {
    let mut query = format!(" {} ", query.to_lowercase());
    for (phrase, word) in PHRASES {
        query = query.replace(&format!(" {phrase} "), &format!(" {word} "));
    }
    query
}

/// Phrases whose words alone would mislead (`logged in` is not about logs).
const PHRASES: &[(&str, &str)] = &[
    ("show me", "show"),
    ("tell me", "show"),
    ("give me", "get"),
    ("logged in", "authenticated"),
    ("signed in", "authenticated"),
    ("log in", "authenticate"),
    ("sign in", "authenticate"),
    ("look up", "retrieve"),
    ("set up", "create"),
    ("how much", "get"),
    ("how many", "get"),
    ("pull request", "pull"),
    ("pull requests", "pull"),
];

/// What a word users say for another counts at.
const SYNONYM_WEIGHT: f32 = 0.7;

/// Words a user says for what an API's documents word otherwise; each meant word counts at
/// less than the word said. Generic English about acting on data, nothing of one API.
const SYNONYMS: &[(&str, &[&str])] = &[
    ("remove", &["delete"]),
    ("delete", &["remove"]),
    ("erase", &["delete"]),
    ("drop", &["delete", "remove"]),
    ("kick", &["remove"]),
    ("cancel", &["delete"]),
    ("stop", &["cancel", "delete"]),
    ("add", &["create"]),
    ("make", &["create"]),
    ("new", &["create"]),
    ("open", &["create"]),
    ("start", &["create"]),
    ("create", &["add"]),
    ("register", &["create"]),
    ("file", &["create"]),
    ("change", &["update"]),
    ("edit", &["update"]),
    ("modify", &["update"]),
    ("rename", &["update"]),
    ("close", &["update"]),
    ("set", &["update"]),
    ("update", &["edit"]),
    ("show", &["get", "list"]),
    ("see", &["get", "list"]),
    ("view", &["get"]),
    ("fetch", &["get", "retrieve"]),
    ("get", &["retrieve"]),
    ("download", &["get", "retrieve"]),
    ("find", &["get", "list", "search"]),
    ("look", &["get", "search"]),
    ("lookup", &["get", "search"]),
    ("read", &["get"]),
    ("detail", &["get", "retrieve"]),
    ("which", &["list"]),
    ("who", &["list", "user", "people", "member"]),
    ("what", &["list", "get"]),
    ("every", &["list"]),
    ("user", &["account"]),
    ("account", &["user"]),
    ("person", &["user"]),
    ("people", &["user"]),
    ("someone", &["user", "member"]),
    ("member", &["user"]),
    ("my", &["authenticated", "user", "me"]),
    ("me", &["authenticated", "user", "me"]),
    ("mine", &["authenticated", "user", "me"]),
    ("send", &["create"]),
    ("post", &["create"]),
    ("write", &["create", "update"]),
    ("reply", &["comment"]),
    ("note", &["comment"]),
    ("bug", &["issue"]),
    ("ticket", &["issue"]),
    ("pay", &["payment", "charge"]),
    ("invite", &["invitation"]),
    ("like", &["reaction"]),
    ("thumb", &["reaction"]),
    ("approve", &["review"]),
    ("ask", &["request"]),
    ("history", &["list"]),
    ("access", &["permission", "collaborator"]),
    ("left", &["limit"]),
    ("remaining", &["limit"]),
    ("quota", &["limit"]),
    ("subscribe", &["subscription"]),
    ("unsubscribe", &["subscription"]),
];

/// Words that say nothing about which operation is meant.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "for", "to", "in", "on", "by", "with", "and", "or", "is", "are", "be",
    "it", "its", "this", "that", "these", "those", "we", "our", "you", "your", "from", "at", "as",
    "into", "all", "any", "some", "please", "can", "could", "do", "doe", "would", "should", "will",
    "there", "how", "about", "want", "need", "just", "so", "if", "then", "than", "also", "whose",
];
