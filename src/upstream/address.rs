//! The upstream's base URL, checked once, and a call's URL under it.

use super::UpstreamError;

pub(super) fn base_url(text: &str) -> Result<reqwest::Url, UpstreamError> {
    let url = reqwest::Url::parse(text)
        .map_err(|_| UpstreamError::InvalidBaseUrl("not an absolute URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UpstreamError::InvalidBaseUrl(
            "the scheme must be http or https",
        ));
    }
    if url.host_str().is_none() {
        return Err(UpstreamError::InvalidBaseUrl("it has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UpstreamError::InvalidBaseUrl(
            "it carries credentials; use upstream_auth",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(UpstreamError::InvalidBaseUrl(
            "it cannot have a query or a fragment",
        ));
    }
    Ok(url)
}

/// The URL that parsing `base` (the base URL's text without a trailing `/`) followed by
/// `path_and_query` gives, built from the parsed `base_url` without parsing its scheme and
/// host again (host parsing runs IDNA, the costliest part of a call's URL). `base_path` is
/// the base URL's path without a trailing `/`.
pub(super) fn join(
    base: &str,
    base_url: &reqwest::Url,
    base_path: &str,
    path_and_query: &str,
) -> Result<reqwest::Url, url::ParseError> {
    // A fragment, or trailing characters a parser trims, take the general way.
    if path_and_query.contains('#')
        || path_and_query
            .bytes()
            .last()
            .is_some_and(|byte| byte <= b' ')
        || !path_and_query.starts_with('/')
    {
        let mut text = String::with_capacity(base.len() + path_and_query.len());
        text.push_str(base);
        text.push_str(path_and_query);
        return reqwest::Url::parse(&text);
    }
    let (path, query) = match path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (path_and_query, None),
    };
    let mut url = base_url.clone();
    if base_path.is_empty() {
        url.set_path(path);
    } else {
        let mut full = String::with_capacity(base_path.len() + path.len());
        full.push_str(base_path);
        full.push_str(path);
        url.set_path(&full);
    }
    url.set_query(query);
    Ok(url)
}
