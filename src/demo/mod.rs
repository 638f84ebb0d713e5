//! The bundled example: a small pets API (in-process, on loopback), its OpenAPI document and
//! the curation `ferry demo` serves it with. It needs no network beyond 127.0.0.1.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::catalog::{self, Catalog};
use crate::curation::{self, CurationError};
use crate::diagnostic::Diagnostic;
use crate::openapi::{self, Document, LoadError};

/// The pets API's OpenAPI document.
pub const OPENAPI: &str = include_str!("openapi.yaml");
/// The curation served by `ferry demo`.
pub const CURATION: &str = include_str!("ferry.yaml");
/// The Arazzo document the curation's `workflows:` names: its composite tool, embedded like
/// the rest so the demo reads no file.
pub const ARAZZO: &str = include_str!("pets.arazzo.yaml");

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("the bundled document does not load: {0}")]
    Document(#[from] LoadError),
    #[error("the bundled curation does not parse: {0}")]
    Curation(#[from] CurationError),
}

/// Compiles the bundled document, curation and workflows, calling the pets API at
/// `upstream`.
pub fn catalog(upstream: &str) -> Result<(Catalog, Vec<Diagnostic>), DemoError> {
    let document = Document::from_value(openapi::parse(OPENAPI, "openapi.yaml")?)?;
    let (mut curation, mut diagnostics) =
        curation::parse(CURATION, "ferry.yaml", PathBuf::from("."))?;
    curation.upstream = Some(upstream.to_owned());
    let (mut catalog, compiled) = catalog::compile_chosen(&document, &curation);
    diagnostics.extend(compiled);
    let workflows = openapi::SourceFile {
        name: "pets.arazzo.yaml".into(),
        value: openapi::parse(ARAZZO, "pets.arazzo.yaml")?,
    };
    diagnostics.extend(catalog::add_workflows(
        &mut catalog,
        &document,
        &curation,
        &workflows,
    ));
    Ok((catalog, diagnostics))
}

/// Starts the pets API on `127.0.0.1:0`; returns its base URL. It runs until the runtime ends.
pub async fn start() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address: SocketAddr = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router()).await {
            tracing::error!(%error, "pets API stopped");
        }
    });
    Ok(format!("http://{address}"))
}

/// The pets API, seeded with three pets.
pub fn router() -> Router {
    let mut pets = BTreeMap::new();
    for (id, name, species, age) in [
        (1, "Tom", "cat", 3),
        (2, "Rex", "dog", 5),
        (3, "Tweety", "bird", 1),
    ] {
        pets.insert(
            id,
            Pet {
                id,
                name: name.into(),
                species: species.into(),
                age: Some(age),
            },
        );
    }
    let store = Arc::new(Store {
        pets: Mutex::new(pets),
        next_id: Mutex::new(4),
    });
    Router::new()
        .route("/pets", get(list_pets).post(create_pet))
        .route("/pets/{pet_id}", get(get_pet).delete(delete_pet))
        .with_state(store)
}

#[derive(Debug)]
struct Store {
    pets: Mutex<BTreeMap<u64, Pet>>,
    next_id: Mutex<u64>,
}

#[derive(Debug, Clone, Serialize)]
struct Pet {
    id: u64,
    name: String,
    species: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    age: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct NewPet {
    name: String,
    species: String,
    age: Option<u64>,
}

const SPECIES: [&str; 3] = ["cat", "dog", "bird"];

async fn list_pets(State(store): State<Arc<Store>>, RawQuery(query): RawQuery) -> Response {
    let mut species = None;
    let mut limit = 20usize;
    for (key, value) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match key.as_ref() {
            "species" => species = Some(value.into_owned()),
            "limit" => match value.parse::<usize>() {
                Ok(parsed) if (1..=100).contains(&parsed) => limit = parsed,
                _ => {
                    return problem(
                        StatusCode::BAD_REQUEST,
                        "Bad limit",
                        "limit must be an integer from 1 to 100",
                    );
                }
            },
            _ => {}
        }
    }
    let pets = lock(&store.pets);
    let listed: Vec<&Pet> = pets
        .values()
        .filter(|pet| {
            species
                .as_deref()
                .is_none_or(|wanted| pet.species == wanted)
        })
        .take(limit)
        .collect();
    json_response(StatusCode::OK, &json!(listed))
}

async fn get_pet(State(store): State<Arc<Store>>, Path(pet_id): Path<String>) -> Response {
    let Ok(id) = pet_id.parse::<u64>() else {
        return not_found(&pet_id);
    };
    match lock(&store.pets).get(&id) {
        Some(pet) => json_response(StatusCode::OK, &json!(pet)),
        None => not_found(&pet_id),
    }
}

async fn create_pet(State(store): State<Arc<Store>>, body: Bytes) -> Response {
    let new: NewPet = match serde_json::from_slice(&body) {
        Ok(new) => new,
        Err(error) => {
            return problem(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid pet",
                &error.to_string(),
            );
        }
    };
    if new.name.is_empty() || !SPECIES.contains(&new.species.as_str()) {
        return problem(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid pet",
            "a pet needs a name and a known species",
        );
    }
    let id = {
        let mut next = lock(&store.next_id);
        let id = *next;
        *next += 1;
        id
    };
    let pet = Pet {
        id,
        name: new.name,
        species: new.species,
        age: new.age,
    };
    lock(&store.pets).insert(id, pet.clone());
    json_response(StatusCode::CREATED, &json!(pet))
}

async fn delete_pet(State(store): State<Arc<Store>>, Path(pet_id): Path<String>) -> Response {
    let Ok(id) = pet_id.parse::<u64>() else {
        return not_found(&pet_id);
    };
    match lock(&store.pets).remove(&id) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => not_found(&pet_id),
    }
}

fn not_found(pet_id: &str) -> Response {
    problem(
        StatusCode::NOT_FOUND,
        "Pet not found",
        &format!("no pet has id {pet_id}"),
    )
}

/// An RFC 9457 Problem Details answer.
fn problem(status: StatusCode, title: &str, detail: &str) -> Response {
    let body = json!({
        "type": "about:blank",
        "title": title,
        "status": status.as_u16(),
        "detail": detail,
    });
    let mut response = json_response(status, &body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
