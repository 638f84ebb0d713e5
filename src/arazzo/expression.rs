//! Arazzo runtime expressions (`$inputs.petId`, `$response.body#/id`) and criteria: `simple`
//! conditions (`$statusCode == 200 && $response.body#/status == 'available'`), `regex`
//! patterns and RFC 9535 `jsonpath` queries, each parsed once into a typed value: nothing
//! here is parsed or compiled again per call.

use std::fmt;

/// A runtime expression, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expression {
    /// `$url`: the request's URL.
    Url,
    /// `$method`: the request's method.
    Method,
    /// `$statusCode`: the response's status.
    StatusCode,
    /// `$request.…`: a part of the step's request.
    Request(Source),
    /// `$response.…`: a part of the step's response.
    Response(Source),
    /// `$inputs.name`, with a JSON pointer into it (empty for the whole value).
    Input { name: String, pointer: String },
    /// `$outputs.name`: an output of the step (or workflow) being read.
    Output { name: String, pointer: String },
    /// `$steps.step.outputs.name`: an output of an earlier step.
    StepOutput {
        step: String,
        name: String,
        pointer: String,
    },
}

/// The part of a request or response an expression reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `header.Name`: header names are matched without regard to case, so kept lowercase.
    Header(String),
    Query(String),
    Path(String),
    /// `body`, with a JSON pointer into it (empty for the whole body).
    Body(String),
}

/// Why a runtime expression or condition does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExpressionError(pub String);

/// A Criterion Object: what must hold for a step to succeed, or for an action to be taken.
#[derive(Debug, Clone, PartialEq)]
pub enum Criterion {
    /// `type: simple` (or no type): comparisons of expressions and literals.
    Simple(Condition),
    /// `type: regex`: the pattern matches somewhere in the context's value, a string or a
    /// number or boolean as JSON writes it.
    Regex {
        context: Expression,
        pattern: Pattern,
    },
    /// `type: jsonpath`: the query, run with the context's value as its root node, selects at
    /// least one node.
    JsonPath { context: Expression, query: Query },
}

/// A regular expression, compiled once (bounded in size) by the linear-time `regex` engine.
#[derive(Clone)]
pub struct Pattern(regex::Regex);

/// An RFC 9535 JSONPath query, parsed once.
#[derive(Clone, PartialEq)]
pub struct Query {
    text: String,
    path: serde_json_path::JsonPath,
}

/// A `simple` condition: comparisons joined by `&&` and `||` (`&&` binding tighter), as a
/// list of alternatives each of which is a list of comparisons that must all hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub any: Vec<Vec<Comparison>>,
}

/// `left op right`, or a lone operand that must be `true`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub left: Operand,
    pub test: Option<(Operator, Operand)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Expression(Expression),
    Literal(serde_json::Value),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

/// Parses a runtime expression written alone (`$inputs.petId`).
pub fn parse(text: &str) -> Result<Expression, ExpressionError> {
    let fail = |message: String| Err(ExpressionError(message));
    let Some(rest) = text.strip_prefix('$') else {
        return fail(format!(
            "{text:?} is not a runtime expression (it must start with `$`)"
        ));
    };
    match rest {
        "url" => return Ok(Expression::Url),
        "method" => return Ok(Expression::Method),
        "statusCode" => return Ok(Expression::StatusCode),
        _ => {}
    }
    let (head, tail) = rest.split_once('.').unwrap_or((rest, ""));
    match head {
        "request" => source(tail, text).map(Expression::Request),
        "response" => source(tail, text).map(Expression::Response),
        "inputs" => {
            let (name, pointer) = named(tail, text, "input")?;
            Ok(Expression::Input { name, pointer })
        }
        "outputs" => {
            let (name, pointer) = named(tail, text, "output")?;
            Ok(Expression::Output { name, pointer })
        }
        "steps" => {
            let Some((step, output)) = tail.split_once(".outputs.") else {
                return fail(format!(
                    "{text:?} does not name a step's output (write `$steps.STEP.outputs.NAME`)"
                ));
            };
            if !is_name(step) {
                return fail(format!("{text:?} names no step"));
            }
            let (name, pointer) = named(output, text, "output")?;
            Ok(Expression::StepOutput {
                step: step.to_string(),
                name,
                pointer,
            })
        }
        "workflows" | "sourceDescriptions" | "components" => fail(format!(
            "`${head}` expressions are not supported yet (in {text:?})"
        )),
        _ => fail(format!(
            "{text:?} is not a runtime expression ferry knows (expected `$url`, `$method`, `$statusCode`, `$request.`, `$response.`, `$inputs.`, `$outputs.` or `$steps.`)"
        )),
    }
}

/// Parses a `simple` condition.
pub fn parse_condition(text: &str) -> Result<Condition, ExpressionError> {
    let tokens = tokenize(text)?;
    let mut any = vec![Vec::new()];
    let mut tokens = tokens.into_iter().peekable();
    loop {
        let left = operand(tokens.next(), text)?;
        let test = match tokens.peek() {
            Some(Token::Operator(operator)) => {
                let operator = *operator;
                tokens.next();
                Some((operator, operand(tokens.next(), text)?))
            }
            _ => None,
        };
        if let Some(all) = any.last_mut() {
            all.push(Comparison { left, test });
        }
        match tokens.next() {
            None => break,
            Some(Token::And) => {}
            Some(Token::Or) => any.push(Vec::new()),
            Some(token) => {
                return Err(ExpressionError(format!(
                    "unexpected {token} in condition {text:?} (expected `&&`, `||` or the end)"
                )));
            }
        }
    }
    Ok(Condition { any })
}

/// Compiled regular expressions are bounded so a hostile pattern cannot exhaust memory, as
/// the catalog bounds an OpenAPI `pattern`.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// How deeply a JSONPath query may nest brackets and parentheses: its parser recurses on them.
const QUERY_DEPTH_LIMIT: usize = 32;

/// Compiles a `regex` criterion's pattern.
pub fn parse_pattern(text: &str) -> Result<Pattern, ExpressionError> {
    match regex::RegexBuilder::new(text)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
    {
        Ok(regex) => Ok(Pattern(regex)),
        Err(regex::Error::CompiledTooBig(_)) => Err(ExpressionError(format!(
            "pattern {text:?} compiles to more than {} KiB: write a smaller one",
            PATTERN_SIZE_LIMIT / 1024
        ))),
        Err(error) => {
            // The syntax error's last line says what is wrong; the lines above draw where.
            let error = error.to_string();
            let reason = error
                .lines()
                .rev()
                .find_map(|line| line.strip_prefix("error: "))
                .unwrap_or("it does not parse");
            Err(ExpressionError(format!(
                "pattern {text:?} is not a regular expression the linear-time engine reads: {reason}"
            )))
        }
    }
}

/// Parses a `jsonpath` criterion's query (RFC 9535, such as `$[?@.status == 'open']`).
pub fn parse_query(text: &str) -> Result<Query, ExpressionError> {
    let mut depth = 0usize;
    for byte in text.bytes() {
        match byte {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > QUERY_DEPTH_LIMIT {
            return Err(ExpressionError(format!(
                "JSONPath query {text:?} nests brackets more than {QUERY_DEPTH_LIMIT} deep"
            )));
        }
    }
    if !text.starts_with('$') {
        return Err(ExpressionError(format!(
            "{text:?} is not an RFC 9535 JSONPath query: a query starts at its root, `$` (such as `$[?@.status == 'open']`)"
        )));
    }
    match serde_json_path::JsonPath::parse(text) {
        Ok(path) => Ok(Query {
            text: text.to_string(),
            path,
        }),
        Err(error) => Err(ExpressionError(format!(
            "{text:?} is not an RFC 9535 JSONPath query: {} (at character {})",
            error.message(),
            error.position()
        ))),
    }
}

impl Criterion {
    /// Every expression it reads, in order.
    pub fn expressions(&self) -> Vec<&Expression> {
        match self {
            Criterion::Simple(condition) => condition.expressions().collect(),
            Criterion::Regex { context, .. } | Criterion::JsonPath { context, .. } => {
                vec![context]
            }
        }
    }
}

impl Pattern {
    pub fn is_match(&self, text: &str) -> bool {
        self.0.is_match(text)
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.as_str()).finish()
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Query {
    /// Whether the query selects at least one node of `root`.
    pub fn selects(&self, root: &serde_json::Value) -> bool {
        !self.path.query(root).is_empty()
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Debug for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Query").field(&self.text).finish()
    }
}

impl Condition {
    /// Every expression it reads, in order.
    pub fn expressions(&self) -> impl Iterator<Item = &Expression> {
        let operands = self.any.iter().flatten().flat_map(|comparison| {
            std::iter::once(&comparison.left)
                .chain(comparison.test.as_ref().map(|(_, right)| right))
        });
        operands.filter_map(|operand| match operand {
            Operand::Expression(expression) => Some(expression),
            Operand::Literal(_) => None,
        })
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operator::Equal => "==",
            Operator::NotEqual => "!=",
            Operator::Less => "<",
            Operator::LessOrEqual => "<=",
            Operator::Greater => ">",
            Operator::GreaterOrEqual => ">=",
        })
    }
}

/// `header.Name`, `query.name`, `path.name`, `body` or `body#/pointer`.
fn source(tail: &str, text: &str) -> Result<Source, ExpressionError> {
    if let Some(pointer) = tail.strip_prefix("body") {
        return match pointer.strip_prefix('#') {
            None if pointer.is_empty() => Ok(Source::Body(String::new())),
            Some(pointer) if pointer.is_empty() || pointer.starts_with('/') => {
                Ok(Source::Body(pointer.to_string()))
            }
            _ => Err(ExpressionError(format!(
                "{text:?}: a body reference is `body` or `body#/json/pointer`"
            ))),
        };
    }
    let (kind, name) = tail.split_once('.').unwrap_or((tail, ""));
    if name.is_empty() && matches!(kind, "header" | "query" | "path") {
        return Err(ExpressionError(format!(
            "{text:?} names no {kind} parameter"
        )));
    }
    match kind {
        "header" if name.bytes().all(is_token_byte) => {
            Ok(Source::Header(name.to_ascii_lowercase()))
        }
        "header" => Err(ExpressionError(format!(
            "{text:?}: {name:?} is not a header name"
        ))),
        "query" => Ok(Source::Query(name.to_string())),
        "path" => Ok(Source::Path(name.to_string())),
        _ => Err(ExpressionError(format!(
            "{text:?}: expected `header.`, `query.`, `path.` or `body` after the request or response"
        ))),
    }
}

/// `name` or `name#/pointer`.
fn named(tail: &str, text: &str, what: &str) -> Result<(String, String), ExpressionError> {
    let (name, pointer) = tail.split_once('#').unwrap_or((tail, ""));
    if !is_name(name) {
        return Err(ExpressionError(format!("{text:?} names no {what}")));
    }
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err(ExpressionError(format!(
            "{text:?}: what follows `#` must be a JSON pointer (`#/a/b`)"
        )));
    }
    Ok((name.to_string(), pointer.to_string()))
}

/// Arazzo's names for inputs, steps and outputs: `^[a-zA-Z0-9\.\-_]+$`.
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}

/// RFC 9110's `tchar`.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Expression(Expression),
    Literal(serde_json::Value),
    Operator(Operator),
    And,
    Or,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Expression(_) => f.write_str("expression"),
            Token::Literal(value) => write!(f, "value {value}"),
            Token::Operator(operator) => write!(f, "`{operator}`"),
            Token::And => f.write_str("`&&`"),
            Token::Or => f.write_str("`||`"),
        }
    }
}

fn operand(token: Option<Token>, text: &str) -> Result<Operand, ExpressionError> {
    match token {
        Some(Token::Expression(expression)) => Ok(Operand::Expression(expression)),
        Some(Token::Literal(value)) => Ok(Operand::Literal(value)),
        Some(token) => Err(ExpressionError(format!(
            "unexpected {token} in condition {text:?} (expected an expression or a value)"
        ))),
        None => Err(ExpressionError(format!(
            "condition {text:?} ends where an expression or a value was expected"
        ))),
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, ExpressionError> {
    let fail = |message: String| Err(ExpressionError(message));
    let mut tokens = Vec::new();
    let mut rest = text.trim_start();
    while let Some(first) = rest.chars().next() {
        let (token, length) = match first {
            '$' => {
                let end = rest
                    .find(|c: char| c.is_whitespace() || "=!<>&|()".contains(c))
                    .unwrap_or(rest.len());
                (Token::Expression(parse(&rest[..end])?), end)
            }
            '\'' | '"' => {
                let Some(end) = rest[1..].find(first) else {
                    return fail(format!("unterminated string in condition {text:?}"));
                };
                let value = serde_json::Value::String(rest[1..=end].to_string());
                (Token::Literal(value), end + 2)
            }
            '&' if rest.starts_with("&&") => (Token::And, 2),
            '|' if rest.starts_with("||") => (Token::Or, 2),
            '=' if rest.starts_with("==") => (Token::Operator(Operator::Equal), 2),
            '!' if rest.starts_with("!=") => (Token::Operator(Operator::NotEqual), 2),
            '<' if rest.starts_with("<=") => (Token::Operator(Operator::LessOrEqual), 2),
            '>' if rest.starts_with(">=") => (Token::Operator(Operator::GreaterOrEqual), 2),
            '<' => (Token::Operator(Operator::Less), 1),
            '>' => (Token::Operator(Operator::Greater), 1),
            '(' | ')' | '[' | ']' | '!' => {
                return fail(format!(
                    "`{first}` in condition {text:?} is not supported yet (only comparisons joined by `&&` and `||`)"
                ));
            }
            _ => {
                let end = rest
                    .find(|c: char| c.is_whitespace() || "=!<>&|()".contains(c))
                    .unwrap_or(rest.len());
                let word = &rest[..end];
                if word.is_empty() {
                    return fail(format!(
                        "`{first}` in condition {text:?} is not an operator (write `&&`, `||`, `==`, `!=`, `<`, `<=`, `>` or `>=`)"
                    ));
                }
                let value = match word {
                    "true" => serde_json::Value::Bool(true),
                    "false" => serde_json::Value::Bool(false),
                    "null" => serde_json::Value::Null,
                    _ => match serde_json::from_str::<serde_json::Number>(word) {
                        Ok(number) => serde_json::Value::Number(number),
                        Err(_) => {
                            return fail(format!(
                                "{word:?} in condition {text:?} is not an expression or a value (quote a string: '{word}')"
                            ));
                        }
                    },
                };
                (Token::Literal(value), end)
            }
        };
        tokens.push(token);
        rest = rest[length..].trim_start();
    }
    if tokens.is_empty() {
        return fail("the condition is empty".to_string());
    }
    Ok(tokens)
}

impl fmt::Display for Expression {
    /// The expression as Arazzo writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointed = |f: &mut fmt::Formatter<'_>, pointer: &str| {
            if pointer.is_empty() {
                Ok(())
            } else {
                write!(f, "#{pointer}")
            }
        };
        let source = |f: &mut fmt::Formatter<'_>, source: &Source| match source {
            Source::Header(name) => write!(f, "header.{name}"),
            Source::Query(name) => write!(f, "query.{name}"),
            Source::Path(name) => write!(f, "path.{name}"),
            Source::Body(pointer) => {
                f.write_str("body")?;
                pointed(f, pointer)
            }
        };
        match self {
            Expression::Url => f.write_str("$url"),
            Expression::Method => f.write_str("$method"),
            Expression::StatusCode => f.write_str("$statusCode"),
            Expression::Request(part) => {
                f.write_str("$request.")?;
                source(f, part)
            }
            Expression::Response(part) => {
                f.write_str("$response.")?;
                source(f, part)
            }
            Expression::Input { name, pointer } => {
                write!(f, "$inputs.{name}")?;
                pointed(f, pointer)
            }
            Expression::Output { name, pointer } => {
                write!(f, "$outputs.{name}")?;
                pointed(f, pointer)
            }
            Expression::StepOutput {
                step,
                name,
                pointer,
            } => {
                write!(f, "$steps.{step}.outputs.{name}")?;
                pointed(f, pointer)
            }
        }
    }
}
