//! Focused compiler tests: a small document and curation in, tools and diagnostics out.

use expect_test::{Expect, expect};
use serde_json::Value;

use crate::curation;
use crate::diagnostic::Diagnostic;
use crate::openapi::Document;
use crate::rate::{MAX_COUNT, Period, Rate, RateError};

use super::{InputSchema, compile, compile_chosen, compile_report, naming};
use crate::curation::Naming;

/// Compiles `openapi` (YAML) with `curation` (YAML) and renders every tool and diagnostic.
fn check(openapi: &str, curation_text: &str, expect: Expect) {
    let value: Value = serde_saphyr::from_str(openapi).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let (curation, mut diagnostics) =
        curation::parse(curation_text, "ferry.yaml", Default::default()).expect("curation is YAML");
    let (catalog, found) = compile(&document, &curation);
    diagnostics.extend(found);
    let mut out = String::new();
    for tool in &catalog.tools {
        let plan = &tool.operation().expect("an operation's tool").plan;
        out.push_str(&format!("{} = {} {}\n", tool.name, plan.method, plan.path));
        if let Some(title) = &tool.title {
            out.push_str(&format!("  title: {title}\n"));
        }
        if let Some(description) = &tool.description {
            out.push_str(&format!("  description: {description:?}\n"));
        }
        out.push_str(&format!(
            "  annotations: {} ({:?})\n",
            serde_json::to_string(&tool.annotations).unwrap(),
            tool.basis
        ));
        out.push_str(&format!("  input: {}\n", tool.input_schema));
        for parameter in &plan.parameters {
            out.push_str(&format!(
                "  {:?} {} <- {} {:?} explode={}{}\n",
                parameter.location,
                parameter.name,
                parameter.argument,
                parameter.style,
                parameter.explode,
                if parameter.required { " required" } else { "" }
            ));
        }
        if let Some(body) = &plan.body {
            out.push_str(&format!(
                "  body {} {:?} {:?}\n",
                body.media_type, body.encoding, body.placement
            ));
        }
        for credential in &plan.credentials {
            out.push_str(&format!(
                "  credential {}: {:?}\n",
                credential.scheme, credential.kind
            ));
        }
        if let Some(confirm) = &tool.confirm {
            out.push_str(&format!("  confirm: {confirm:?}\n"));
        }
        if !tool.unchecked_patterns.is_empty() {
            out.push_str(&format!(
                "  unchecked patterns: {:?}\n",
                tool.unchecked_patterns
            ));
        }
    }
    for diagnostic in &diagnostics {
        out.push_str(&format!("{diagnostic}\n"));
    }
    expect.assert_eq(&out);
}

const PETS: &str = r##"
openapi: 3.0.3
info: {title: Pets, version: "1.0"}
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      tags: [pets]
      parameters:
        - {name: limit, in: query, schema: {type: integer, maximum: 100}, description: How many}
    post:
      operationId: createPet
      tags: [pets, admin]
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, schema: {type: string}}
    get:
      operationId: getPet
      description: One pet by its id.
    put:
      operationId: putPet
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
    delete:
      operationId: deletePet
      tags: [admin]
    patch:
      operationId: patchPet
    head:
      operationId: headPet
components:
  schemas:
    Pet:
      type: object
      required: [id, name]
      properties:
        id: {type: integer, readOnly: true}
        name: {type: string}
        tag: {type: string, nullable: true}
"##;

#[test]
fn path_params_are_required_inputs() {
    check(
        PETS,
        "tools: {getPet: {}}",
        expect![[r#"
            getPet = GET /pets/{petId}
              description: "One pet by its id."
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
        "#]],
    );
}

#[test]
fn annotations_follow_the_method_alone() {
    check(
        PETS,
        "tools: {getPet: {}, putPet: {}, deletePet: {}, patchPet: {}, headPet: {}, createPet: {}}",
        expect![[r##"
            createPet = POST /pets
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"name":{"type":"string"},"tag":{"type":["string","null"]}},"required":["name"],"type":"object"}
              body application/json Json Merged(["name", "tag"])
            deletePet = DELETE /pets/{petId}
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
            getPet = GET /pets/{petId}
              description: "One pet by its id."
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
            headPet = HEAD /pets/{petId}
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
            patchPet = PATCH /pets/{petId}
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
            putPet = PUT /pets/{petId}
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"$defs":{"Pet":{"properties":{"name":{"type":"string"},"tag":{"type":["string","null"]}},"required":["name"],"type":"object"}},"additionalProperties":false,"properties":{"body":{"$ref":"#/$defs/Pet"},"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
              body application/json Json Argument("body")
        "##]],
    );
}

#[test]
fn annotation_overrides_are_judged_against_the_method() {
    check(
        PETS,
        r#"
tools:
  createPet:
    annotations: {destructiveHint: false}
    because: POST /pets only appends; it never changes an existing pet.
  patchPet:
    annotations: {idempotentHint: true}
  getPet:
    annotations: {readOnlyHint: false, openWorldHint: true}
  putPet:
    annotations: {idempotentHint: false}
    because: says nothing more
  deletePet:
    annotations: {readOnlyHint: true}
"#,
        expect![[r##"
            createPet = POST /pets
              annotations: {"destructiveHint":false} (CurationAsserted)
              input: {"additionalProperties":false,"properties":{"name":{"type":"string"},"tag":{"type":["string","null"]}},"required":["name"],"type":"object"}
              body application/json Json Merged(["name", "tag"])
            getPet = GET /pets/{petId}
              description: "One pet by its id."
              annotations: {"readOnlyHint":false,"openWorldHint":true} (CurationSound)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
            putPet = PUT /pets/{petId}
              annotations: {"readOnlyHint":false,"idempotentHint":false} (CurationSound)
              input: {"$defs":{"Pet":{"properties":{"name":{"type":"string"},"tag":{"type":["string","null"]}},"required":["name"],"type":"object"}},"additionalProperties":false,"properties":{"body":{"$ref":"#/$defs/Pet"},"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
              body application/json Json Argument("body")
            error: readOnlyHint: true is not justified by the method DELETE: add `because:` with the evidence, or drop the claim (DELETE /pets/{petId})
              --> curation:tools.deletePet
            error: idempotentHint: true is not justified by the method PATCH: add `because:` with the evidence, or drop the claim (PATCH /pets/{petId})
              --> curation:tools.patchPet
        "##]],
    );
}

#[test]
fn curation_chooses_by_id_method_path_and_tag_and_tag_false_wins() {
    check(
        PETS,
        r#"
tools:
  "get /pets/{petId}": {name: get_pet, title: Pet by id}
  patchPet: false
tags:
  pets: {}
  admin: false
"#,
        expect![[r#"
            get_pet = GET /pets/{petId}
              title: Pet by id
              description: "One pet by its id."
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
            listPets = GET /pets
              description: "List pets"
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"limit":{"description":"How many","maximum":100,"type":"integer"}},"type":"object"}
              Query limit <- limit Form explode=true
        "#]],
    );
}

#[test]
fn curation_typos_and_unmatched_entries_are_errors_with_their_path() {
    check(
        PETS,
        r#"
tool: {}
tools:
  getPets: {}
  listPets: {titel: x, annotations: {readOnly: true}}
  GET /nothing: {}
tags:
  missing: {}
server: {name: 3}
"#,
        expect![[r#"
            listPets = GET /pets
              description: "List pets"
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"limit":{"description":"How many","maximum":100,"type":"integer"}},"type":"object"}
              Query limit <- limit Form explode=true
            error: unknown key `tool`; did you mean `tools`?
              --> curation:tool
            error: `name` must be a string
              --> curation:server.name
            error: unknown key `titel`; did you mean `title`?
              --> curation:tools.listPets.titel
            error: unknown key `readOnly` (expected one of: readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
              --> curation:tools.listPets.annotations.readOnly
            error: "getPets" matches no operation (give an operationId or `METHOD /path`); did you mean "getPet"?
              --> curation:tools.getPets
            error: "GET /nothing" matches no operation (give an operationId or `METHOD /path`)
              --> curation:tools.GET /nothing
            error: no operation is tagged "missing"
              --> curation:tags.missing
        "#]],
    );
}

#[test]
fn body_goes_under_body_when_its_properties_collide_with_parameters() {
    check(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /things/{name}:
    post:
      operationId: create
      parameters: [{name: name, in: path, required: true, schema: {type: string}}]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties: {name: {type: string}, size: {type: integer}}
  /lists:
    post:
      operationId: createList
      requestBody:
        content:
          application/json:
            schema: {type: array, items: {type: string}, description: the names}
  /raw:
    put:
      operationId: upload
      requestBody:
        required: true
        content:
          application/octet-stream: {}
"##,
        "tools: {create: {}, createList: {}, upload: {}}",
        expect![[r#"
            create = POST /things/{name}
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"body":{"properties":{"name":{"type":"string"},"size":{"type":"integer"}},"type":"object"},"name":{"type":"string"}},"required":["name","body"],"type":"object"}
              Path name <- name Simple explode=false required
              body application/json Json Argument("body")
            createList = POST /lists
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"body":{"description":"the names","items":{"type":"string"},"type":"array"}},"type":"object"}
              body application/json Json Argument("body")
            upload = PUT /raw
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"body":{"contentEncoding":"base64","contentMediaType":"application/octet-stream","type":"string"}},"required":["body"],"type":"object"}
              body application/octet-stream Binary Argument("body")
        "#]],
    );
}

#[test]
fn parameters_keep_their_place_style_and_description() {
    check(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: items
      parameters:
        - {name: id, in: path, required: true, style: label, schema: {type: array, items: {type: integer}}}
        - {name: id, in: query, schema: {type: string}}
        - {name: filter, in: query, style: deepObject, explode: true, schema: {type: object}}
        - {name: tags, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: X-Request-Id, in: header, description: Trace id, schema: {type: string, format: uuid}}
        - {name: session, in: cookie, schema: {type: string}}
        - {name: q, in: query, content: {application/json: {schema: {type: object}}}}
        - {name: Accept, in: header, schema: {type: string}}
"##,
        "tools: {items: {}}",
        expect![[r#"
            items = GET /items/{id}
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"X-Request-Id":{"description":"Trace id","format":"uuid","type":"string"},"filter":{"type":"object"},"path_id":{"items":{"type":"integer"},"type":"array"},"q":{"type":"object"},"query_id":{"type":"string"},"session":{"type":"string"},"tags":{"items":{"type":"string"},"type":"array"}},"required":["path_id"],"type":"object"}
              Path id <- path_id Label explode=false required
              Query id <- query_id Form explode=true
              Query filter <- filter DeepObject explode=true
              Query tags <- tags PipeDelimited explode=false
              Header X-Request-Id <- X-Request-Id Simple explode=false
              Cookie session <- session Form explode=true
              Query q <- q Form explode=true
        "#]],
    );
}

#[test]
fn credentials_are_never_arguments() {
    check(
        r##"
swagger: "2.0"
info: {title: t, version: "1"}
host: api.example.com
basePath: /v1
securityDefinitions:
  key: {type: apiKey, in: header, name: X-Api-Key}
  query_key: {type: apiKey, in: query, name: api_key}
  oauth: {type: oauth2, flow: accessCode, authorizationUrl: "https://a", tokenUrl: "https://t", scopes: {}}
security: [{key: []}, {query_key: []}]
paths:
  /me:
    get:
      operationId: me
      security: [{oauth: []}, {key: []}, {query_key: []}]
      parameters:
        - {name: x-api-key, in: header, type: string, required: true}
        - {name: api_key, in: query, type: string}
        - {name: Authorization, in: header, type: string}
        - {name: token, in: query, type: string, required: true, description: Authentication token}
        - {name: verbose, in: query, type: boolean}
"##,
        "tools: {me: {}}",
        expect![[r#"
            me = GET /me
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"verbose":{"type":"boolean"}},"type":"object"}
              Query verbose <- verbose Form explode=false
              credential key: ApiKey { location: Header, name: "X-Api-Key" }
              credential query_key: ApiKey { location: Query, name: "api_key" }
              credential oauth: Bearer
              credential parameter token: ApiKey { location: Query, name: "token" }
        "#]],
    );
}

#[test]
fn swagger_2_form_and_body_parameters_become_bodies() {
    check(
        r##"
swagger: "2.0"
info: {title: t, version: "1"}
consumes: [application/json]
paths:
  /pets:
    post:
      operationId: addPet
      parameters:
        - {name: pet, in: body, required: true, schema: {$ref: "#/definitions/Pet"}}
  /pets/{id}/photo:
    post:
      operationId: uploadPhoto
      consumes: [multipart/form-data]
      parameters:
        - {name: id, in: path, required: true, type: integer, format: int64}
        - {name: file, in: formData, type: file, required: true}
        - {name: caption, in: formData, type: string, x-nullable: true}
  /search:
    post:
      operationId: search
      consumes: [application/x-www-form-urlencoded]
      parameters:
        - {name: terms, in: formData, type: array, items: {type: string}, collectionFormat: multi}
        - {name: min, in: formData, type: number, minimum: 0, exclusiveMinimum: true}
definitions:
  Pet:
    type: object
    required: [name]
    properties:
      name: {type: string, example: Rex}
      children: {type: array, items: {$ref: "#/definitions/Pet"}}
"##,
        "tools: {addPet: {}, uploadPhoto: {}, search: {}}",
        expect![[r##"
            addPet = POST /pets
              annotations: {} (Method)
              input: {"$defs":{"Pet":{"properties":{"children":{"items":{"$ref":"#/$defs/Pet"},"type":"array"},"name":{"examples":["Rex"],"type":"string"}},"required":["name"],"type":"object"}},"additionalProperties":false,"properties":{"children":{"items":{"$ref":"#/$defs/Pet"},"type":"array"},"name":{"examples":["Rex"],"type":"string"}},"required":["name"],"type":"object"}
              body application/json Json Merged(["name", "children"])
            search = POST /search
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"min":{"exclusiveMinimum":0,"type":"number"},"terms":{"items":{"type":"string"},"type":"array"}},"type":"object"}
              body application/x-www-form-urlencoded Form Merged(["terms", "min"])
            uploadPhoto = POST /pets/{id}/photo
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"caption":{"type":["string","null"]},"file":{"contentEncoding":"base64","type":"string"},"id":{"format":"int64","type":"integer"}},"required":["id","file"],"type":"object"}
              Path id <- id Simple explode=false required
              body multipart/form-data Multipart { files: ["file"] } Merged(["file", "caption"])
        "##]],
    );
}

#[test]
fn recursive_schemas_stay_valid_through_defs() {
    check(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /trees:
    put:
      operationId: putTree
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Node"}
components:
  schemas:
    Node:
      type: object
      properties:
        value: {type: integer, minimum: 1, exclusiveMinimum: true}
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
        parent: {allOf: [{$ref: "#/components/schemas/Node"}], nullable: true}
"##,
        "tools: {putTree: {}}",
        expect![[r##"
            putTree = PUT /trees
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"$defs":{"Node":{"properties":{"children":{"items":{"$ref":"#/$defs/Node"},"type":"array"},"parent":{"allOf":[{"$ref":"#/$defs/Node"}]},"value":{"exclusiveMinimum":1,"type":"integer"}},"type":"object"}},"additionalProperties":false,"properties":{"children":{"items":{"$ref":"#/$defs/Node"},"type":"array"},"parent":{"allOf":[{"$ref":"#/$defs/Node"}]},"value":{"exclusiveMinimum":1,"type":"integer"}},"type":"object"}
              body application/json Json Merged(["value", "children", "parent"])
        "##]],
    );
}

#[test]
fn names_are_derived_shortened_and_never_silently_deduplicated() {
    check(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get: {operationId: "repos/list-for-org"}
    post: {operationId: same}
  /b:
    get: {}
    post: {operationId: same}
  /c:
    get: {operationId: "this operation id is far too long to be a tool name so it is shortened with a stable hash"}
"##,
        "tools: {\"GET /a\": {}, \"GET /b\": {}, \"POST /a\": {}, \"POST /b\": {}, \"GET /c\": {}}",
        expect![[r#"
            get_b = GET /b
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            repos_list-for-org = GET /a
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            this_operation_id_is_far_too_long_to_be_a_tool_name_so_2256a270 = GET /c
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            error: tool name "same" is given to 2 operations; rename one with `name:` (POST /a, POST /b)
              --> curation:tools
        "#]],
    );
}

#[test]
fn document_extensions_are_honoured_only_when_the_curation_says_so() {
    let document = r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get: {operationId: a, x-mcp: {name: a_tool, title: From the document}}
    post: {operationId: b, x-mcp: true}
"##;
    check(document, "tools: {}", expect![[""]]);
    check(
        document,
        "document_extensions: true\ntools: {a: {title: From the curation}}",
        expect![[r#"
        a_tool = GET /a
          title: From the curation
          annotations: {"readOnlyHint":true} (Method)
          input: {"additionalProperties":false,"properties":{},"type":"object"}
        b = POST /a
          annotations: {} (Method)
          input: {"additionalProperties":false,"properties":{},"type":"object"}
    "#]],
    );
}

#[test]
fn patterns_the_linear_engine_cannot_compile_are_served_but_not_checked() {
    check(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      parameters:
        - {name: q, in: query, schema: {type: string, pattern: "^(?!admin).*$"}}
        - {name: r, in: query, schema: {type: string, pattern: "^[a-z]+$"}}
"##,
        "tools: {a: {}}",
        expect![[r#"
            a = GET /a
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"q":{"pattern":"^(?!admin).*$","type":"string"},"r":{"pattern":"^[a-z]+$","type":"string"}},"type":"object"}
              Query q <- q Form explode=true
              Query r <- r Form explode=true
              unchecked patterns: ["^(?!admin).*$"]
            warning: pattern "^(?!admin).*$" is not supported by the linear-time regex engine; it is served but not checked (GET /a)
              --> openapi#/paths/~1a/get
        "#]],
    );
}

#[test]
fn mirrored_headers_are_marked_and_credentials_refused() {
    let document = r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      parameters:
        - {name: region, in: query, schema: {type: string}}
        - {name: session_key, in: query, schema: {type: string}}
"##;
    check(
        document,
        "tools: {a: {mirror_headers: {region: Region}}}",
        expect![[r#"
        a = GET /a
          annotations: {"readOnlyHint":true} (Method)
          input: {"additionalProperties":false,"properties":{"region":{"type":"string","x-mcp-header":"Region"},"session_key":{"type":"string"}},"type":"object"}
          Query region <- region Form explode=true
          Query session_key <- session_key Form explode=true
    "#]],
    );
    // A tool with an argument that cannot be mirrored is not served.
    check(
        document,
        "tools: {a: {mirror_headers: {region: Region, session_key: Session}}}",
        expect![[r#"
            error: argument "session_key" looks like a credential and must not be mirrored into a header (GET /a)
              --> curation:tools.a.mirror_headers.session_key
        "#]],
    );
}

#[test]
fn paging_adds_the_cursor_argument_and_checks_the_ones_it_names() {
    check(
        PETS,
        r#"
tools:
  listPets:
    pagination: {next: link, size_argument: limit, size: 10}
  getPet:
    pagination: {size_argument: per_page}
"#,
        expect![[r#"
            listPets = GET /pets
              description: "List pets"
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"cursor":{"description":"Only to get a further page: the value that a result's last text block gives for this argument (\"call … again with these arguments\"). Omit it for the first page. It holds the next page's whole query, so query arguments that differ from it are refused beside it.","type":"string"},"limit":{"description":"How many","maximum":100,"type":"integer"}},"type":"object"}
              Query limit <- limit Form explode=true
            error: `pagination.size_argument` names "per_page", which is not an argument of the tool (GET /pets/{petId})
              --> curation:tools.getPet
        "#]],
    );
}

#[test]
fn credentials_need_an_upstream_named_explicitly() {
    check(
        PETS,
        "upstream_auth: {bearer: {env: PETS_TOKEN}}\ntools: {getPet: {}}",
        expect![[r#"
        getPet = GET /pets/{petId}
          description: "One pet by its id."
          annotations: {"readOnlyHint":true} (Method)
          input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
          Path petId <- petId Simple explode=false required
        error: credentials are configured, so name the upstream with `upstream:` or --upstream: ferry never sends credentials to a document's `servers` entry by default
          --> curation:upstream_auth
    "#]],
    );
    check(
        PETS,
        "upstream: https://pets.example\nupstream_auth: {bearer: {env: PETS_TOKEN}}\ntools: {}",
        expect![[""]],
    );
}

#[test]
fn a_body_with_conditions_is_spread_and_its_conditions_lifted_to_the_root_when_asked() {
    check(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /contacts:
    post:
      operationId: addContact
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $schema: https://json-schema.org/draft/2020-12/schema
              type: object
              properties:
                address: {$ref: "#/components/schemas/address"}
                phone: {type: string}
                email: {type: string}
              anyOf: [{required: [phone]}, {required: [email]}]
              additionalProperties: false
  /closed:
    post:
      operationId: closed
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties: {a: {type: string}}
              allOf: [{additionalProperties: false}]
  /scoped:
    put:
      operationId: scoped
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $id: https://example.com/scoped
              type: object
              properties: {item: {$ref: "#/$defs/item"}}
              $defs:
                item: {type: integer, $anchor: item}
components:
  schemas:
    address:
      $anchor: addressDef
      type: object
      properties: {city: {type: string}}
"##,
        "lift_composition: true\ntools: {addContact: {}, closed: {}, scoped: {}}",
        expect![[r##"
            addContact = POST /contacts
              annotations: {} (Method)
              input: {"$defs":{"address":{"$anchor":"addressDef","properties":{"city":{"type":"string"}},"type":"object"}},"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"anyOf":[{"required":["phone"]},{"required":["email"]}],"properties":{"address":{"$ref":"#/$defs/address"},"email":{"type":"string"},"phone":{"type":"string"}},"type":"object"}
              body application/json Json Merged(["address", "phone", "email"])
            closed = POST /closed
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"body":{"allOf":[{"additionalProperties":false}],"properties":{"a":{"type":"string"}},"type":"object"}},"required":["body"],"type":"object"}
              body application/json Json Argument("body")
            scoped = PUT /scoped
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"$defs":{"item":{"$anchor":"item","type":"integer"}},"additionalProperties":false,"properties":{"item":{"$ref":"#/$defs/item"}},"type":"object"}
              body application/json Json Merged(["item"])
            warning: tool "addContact": its input schema has anyOf at the root, which Anthropic's Messages API (`allOf`, `anyOf`, `oneOf`) and OpenAI's function calling (those and `not`) refuse, failing every request that lists it; drop `lift_composition: true` to keep such a body as one argument (POST /contacts)
              --> curation:tools.addContact
        "##]],
    );
}

#[test]
fn an_operation_whose_parameters_cannot_be_read_is_not_a_tool() {
    check(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a/{id}:
    get:
      operationId: unreadable
      parameters: [{$ref: "#/components/parameters/missing"}]
    put:
      operationId: undeclared
  /b:
    get:
      operationId: fine
"##,
        "tools: {unreadable: {}, undeclared: {}, fine: {}}",
        expect![[r##"
            fine = GET /b
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            error: `$ref` "#/components/parameters/missing" points at nothing (GET /a/{id})
              --> openapi#/paths/~1a~1{id}/get/parameters/0
            error: path parameter `id` is not declared (GET /a/{id})
              --> openapi#/paths/~1a~1{id}/get
            error: path parameter `id` is not declared (PUT /a/{id})
              --> openapi#/paths/~1a~1{id}/put
        "##]],
    );
}

#[test]
fn chosen_only_compile_serves_the_same_tools_and_errors() {
    let document = r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get: {operationId: a}
  /b:
    get: {operationId: b_tool}
  /c:
    get: {operationId: c, x-mcp: {nmae: typo}}
  /d/{id}:
    get:
      operationId: unchosenUnreadable
      parameters: [{$ref: "#/components/parameters/missing"}]
    put:
      operationId: chosenUnreadable
      parameters: [{$ref: "#/components/parameters/missing"}]
  /e:
    get: {operationId: e}
    put: {operationId: f}
"##;
    // `a` takes the name an unchosen operation would have (no collision: only tools
    // collide); `c`'s x-mcp is wrong, so it is off but still an error; `e` and `f` collide.
    let curation_text = "document_extensions: true\n\
        tools: {a: {name: b_tool}, chosenUnreadable: {}, e: {name: same}, f: {name: same}, \
        b_tool: {name: \"not valid\", enabled: false}}";
    let value: Value = serde_saphyr::from_str(document).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let (curation, parsed) =
        curation::parse(curation_text, "ferry.yaml", Default::default()).expect("curation is YAML");
    assert!(parsed.is_empty(), "{parsed:?}");
    let (full, full_diagnostics) = compile(&document, &curation);
    let (chosen, chosen_diagnostics) = compile_chosen(&document, &curation);

    assert_eq!(format!("{:?}", chosen.tools), format!("{:?}", full.tools));
    let errors = |diagnostics: &[crate::diagnostic::Diagnostic]| -> Vec<String> {
        diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(errors(&chosen_diagnostics), errors(&full_diagnostics));

    let mut out = String::new();
    for tool in &chosen.tools {
        let plan = &tool.operation().expect("an operation's tool").plan;
        out.push_str(&format!("tool {} = {}\n", tool.name, plan.path));
    }
    for report in &chosen.operations {
        out.push_str(&format!(
            "report {} {} ({})\n",
            report.method, report.path, report.choice
        ));
    }
    for diagnostic in &chosen_diagnostics {
        out.push_str(&format!("{diagnostic}\n"));
    }
    out.push_str("-- only in the full compile:\n");
    for diagnostic in full_diagnostics
        .iter()
        .filter(|d| !chosen_diagnostics.contains(d))
    {
        out.push_str(&format!("{diagnostic}\n"));
    }
    expect![[r##"
        tool b_tool = /a
        report GET /a (tools entry)
        report PUT /d/{id} (tools entry)
        report GET /e (tools entry)
        report PUT /e (tools entry)
        error: unknown key `nmae`; did you mean `name`? (GET /c)
          --> openapi#/paths/~1c/get/x-mcp/nmae
        error: `$ref` "#/components/parameters/missing" points at nothing (PUT /d/{id})
          --> openapi#/paths/~1d~1{id}/put/parameters/0
        error: path parameter `id` is not declared (PUT /d/{id})
          --> openapi#/paths/~1d~1{id}/put
        error: tool name "same" is given to 2 operations; rename one with `name:` (GET /e, PUT /e)
          --> curation:tools
        -- only in the full compile:
        warning: tool name "not valid" must match ^[A-Za-z0-9_-]{1,64}$ (GET /b)
          --> curation:tools.b_tool
        warning: `$ref` "#/components/parameters/missing" points at nothing (GET /d/{id})
          --> openapi#/paths/~1d~1{id}/get/parameters/0
        warning: path parameter `id` is not declared (GET /d/{id})
          --> openapi#/paths/~1d~1{id}/get
    "##]]
    .assert_eq(&out);
}

/// Issue 11: Anthropic's Messages API refuses a tool list in which any input schema has
/// `allOf`, `anyOf` or `oneOf` at its root (OpenAI's function calling, `not` too), so by
/// default a body that composes at its root stays one `body` argument, the keywords inside
/// it. Conditions (`if`/`then`/`else`, `dependentRequired`) are still lifted.
#[test]
fn a_body_that_composes_at_its_root_stays_one_argument_by_default() {
    check(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /contacts:
    post:
      operationId: addContact
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                phone: {type: string}
                email: {type: string}
              oneOf: [{required: [phone]}, {required: [email]}]
  /negated:
    post:
      operationId: negated
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties: {a: {type: string}}
              not: {required: [a]}
  /conditional:
    post:
      operationId: conditional
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties: {kind: {type: string}, phone: {type: string}}
              if: {properties: {kind: {const: phone}}}
              then: {required: [phone]}
"##,
        "tools: {addContact: {}, negated: {}, conditional: {}}",
        expect![[r#"
            addContact = POST /contacts
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"body":{"oneOf":[{"required":["phone"]},{"required":["email"]}],"properties":{"email":{"type":"string"},"phone":{"type":"string"}},"type":"object"}},"required":["body"],"type":"object"}
              body application/json Json Argument("body")
            conditional = POST /conditional
              annotations: {} (Method)
              input: {"additionalProperties":false,"if":{"properties":{"kind":{"const":"phone"}}},"properties":{"kind":{"type":"string"},"phone":{"type":"string"}},"then":{"required":["phone"]},"type":"object"}
              body application/json Json Merged(["kind", "phone"])
            negated = POST /negated
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"body":{"not":{"required":["a"]},"properties":{"a":{"type":"string"}},"type":"object"}},"required":["body"],"type":"object"}
              body application/json Json Argument("body")
        "#]],
    );
}

/// Issue 11: the curation can leave optional arguments out of a tool, a declared loss; the
/// `$defs` only they used go with them. A required argument cannot be left out.
#[test]
fn optional_arguments_can_be_omitted_and_their_defs_go_with_them() {
    check(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /items:
    post:
      operationId: addItem
      parameters:
        - {name: verbose, in: query, schema: {type: boolean}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string}
                details: {$ref: "#/components/schemas/Details"}
                owner: {$ref: "#/components/schemas/Owner"}
  /other:
    post:
      operationId: other
      parameters:
        - {name: verbose, in: query, schema: {type: boolean}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string}
components:
  schemas:
    Details:
      type: object
      properties: {notes: {$ref: "#/components/schemas/Notes"}}
    Notes: {type: string}
    Owner:
      type: object
      properties: {id: {type: string}, history: {type: array, items: {$ref: "#/components/schemas/Notes"}}}
"##,
        "tools:\n  addItem: {arguments: {omit: [/properties/verbose, /properties/details, /$defs/Owner/properties/history]}}\n  other: {arguments: {omit: [/properties/name, /properties/nothing, /required/0]}}\n",
        expect![[r##"
            addItem = POST /items
              annotations: {} (Method)
              input: {"$defs":{"Owner":{"properties":{"id":{"type":"string"}},"type":"object"}},"additionalProperties":false,"properties":{"name":{"type":"string"},"owner":{"$ref":"#/$defs/Owner"}},"required":["name"],"type":"object"}
              Query verbose <- verbose Form explode=true
              body application/json Json Merged(["name", "details", "owner"])
            error: cannot omit "/properties/name": the argument is required, and a call cannot be made without it (POST /other)
              --> curation:tools.other
            error: cannot omit "/properties/nothing": nothing in the tool's input schema is there (POST /other)
              --> curation:tools.other
            error: cannot omit "/required/0": it must point at a property: `.../properties/NAME` (POST /other)
              --> curation:tools.other
        "##]],
    );
}

/// Issue 11: a tool whose definition is over `max_tool_tokens` is warned about.
#[test]
fn a_tool_over_the_token_budget_is_warned_about() {
    check(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: big
      description: A description long enough to cost more than a handful of tokens.
  /b:
    get:
      operationId: small
"##,
        "max_tool_tokens: 60\ntools: {big: {}, small: {}}",
        expect![[r#"
            big = GET /a
              description: "A description long enough to cost more than a handful of tokens."
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            small = GET /b
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            warning: tool "big" costs about 73 tokens of context, over the budget of 60 (`max_tool_tokens`): leave optional arguments out with `arguments: {omit: [/properties/NAME]}`, or raise the budget (GET /a)
              --> curation:tools.big
        "#]],
    );
}

#[test]
fn schema_cycles_that_consume_nothing_make_the_operation_ineligible() {
    // Issue 9: `A: {$ref: B}, B: {$ref: A}` was served, and accepted any value.
    check(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /refs:
    post:
      operationId: refs
      parameters:
        - {name: q, in: query, schema: {$ref: "#/components/schemas/B"}}
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/A"}}}
  /composed:
    get:
      operationId: composed
      parameters:
        - {name: q, in: query, schema: {$ref: "#/components/schemas/C"}}
  /itself:
    post:
      operationId: itself
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/Itself"}}}
  /inner:
    post:
      operationId: inner
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {x: {$ref: "#/components/schemas/A"}}}
  /tangle:
    post:
      operationId: tangle
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/T1"}}}
  /tree:
    put:
      operationId: tree
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}
components:
  schemas:
    # Three loops among three schemas: reported once.
    T1: {anyOf: [{$ref: "#/components/schemas/T2"}, {$ref: "#/components/schemas/T3"}]}
    T2: {anyOf: [{$ref: "#/components/schemas/T1"}, {$ref: "#/components/schemas/T3"}]}
    T3: {oneOf: [{$ref: "#/components/schemas/T1"}, {type: string}]}
    A: {$ref: "#/components/schemas/B"}
    B: {$ref: "#/components/schemas/A"}
    C: {allOf: [{$ref: "#/components/schemas/D"}]}
    D: {anyOf: [{type: string}, {not: {$ref: "#/components/schemas/C"}}]}
    Itself: {$ref: "#/components/schemas/Itself"}
    Node:
      type: object
      properties:
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
        parent: {allOf: [{$ref: "#/components/schemas/Node"}]}
      additionalProperties: {$ref: "#/components/schemas/Node"}
"##,
        "tools: {refs: {}, composed: {}, itself: {}, inner: {}, tangle: {}, tree: {}}",
        expect![[r##"
            tree = PUT /tree
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"$defs":{"Node":{"additionalProperties":{"$ref":"#/$defs/Node"},"properties":{"children":{"items":{"$ref":"#/$defs/Node"},"type":"array"},"parent":{"allOf":[{"$ref":"#/$defs/Node"}]}},"type":"object"}},"additionalProperties":false,"properties":{"body":{"$ref":"#/$defs/Node"}},"required":["body"],"type":"object"}
              body application/json Json Argument("body")
            error: `$ref` cycle that never descends into the value: #/components/schemas/B → #/components/schemas/A → #/components/schemas/B; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /refs)
              --> openapi#/components/schemas/B
            error: `$ref` cycle that never descends into the value: #/components/schemas/C → #/components/schemas/D → #/components/schemas/C; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (GET /composed)
              --> openapi#/components/schemas/C
            error: `$ref` cycle that never descends into the value: #/components/schemas/Itself → #/components/schemas/Itself; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /itself)
              --> openapi#/components/schemas/Itself
            error: `$ref` cycle that never descends into the value: #/components/schemas/A → #/components/schemas/B → #/components/schemas/A; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /inner)
              --> openapi#/components/schemas/A
            error: `$ref` cycle that never descends into the value: #/components/schemas/T1 → #/components/schemas/T2 → #/components/schemas/T1; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /tangle)
              --> openapi#/components/schemas/T1
        "##]],
    );
}

#[test]
fn schema_cycles_through_conditions_and_recursive_refs_are_found_in_3_1() {
    check(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /conditions:
    post:
      operationId: conditions
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/If"}}}
  /dependent:
    post:
      operationId: dependent
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/Dependent"}}}
  /recursive:
    post:
      operationId: recursive
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/Recursive"}}}
  /siblings:
    post:
      operationId: siblings
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/Described"}}}
  /list:
    post:
      operationId: list
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/List"}}}
components:
  schemas:
    If: {if: {type: object}, then: {$ref: "#/components/schemas/Then"}, else: {type: string}}
    Then: {oneOf: [{type: integer}, {else: {$ref: "#/components/schemas/If"}}]}
    Dependent: {type: object, dependentSchemas: {a: {$ref: "#/components/schemas/Dependent"}}}
    Recursive: {$recursiveAnchor: true, anyOf: [{type: string}, {allOf: [{$recursiveRef: "#"}]}]}
    Described: {$ref: "#/components/schemas/Described", description: more words}
    List:
      $recursiveAnchor: true
      type: array
      prefixItems: [{$ref: "#/components/schemas/List"}]
      items: {$recursiveRef: "#"}
      contains: {$ref: "#/components/schemas/List"}
"##,
        "tools: {conditions: {}, dependent: {}, recursive: {}, siblings: {}, list: {}}",
        expect![[r##"
            list = POST /list
              annotations: {} (Method)
              input: {"$defs":{"List":{"contains":{"$ref":"#/$defs/List"},"items":{"$ref":"#/$defs/List"},"prefixItems":[{"$ref":"#/$defs/List"}],"type":"array"}},"additionalProperties":false,"properties":{"body":{"$ref":"#/$defs/List"}},"type":"object"}
              body application/json Json Argument("body")
            error: `$ref` cycle that never descends into the value: #/components/schemas/If → #/components/schemas/Then → #/components/schemas/If; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /conditions)
              --> openapi#/components/schemas/If
            error: `$ref` cycle that never descends into the value: #/components/schemas/Dependent → #/components/schemas/Dependent; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /dependent)
              --> openapi#/components/schemas/Dependent
            error: `$ref` cycle that never descends into the value: #/components/schemas/Recursive → #/components/schemas/Recursive; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /recursive)
              --> openapi#/components/schemas/Recursive
            error: `$ref` cycle that never descends into the value: #/components/schemas/Described → #/components/schemas/Described; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /siblings)
              --> openapi#/components/schemas/Described
        "##]],
    );
}

#[test]
fn schema_cycles_in_swagger_2_definitions_are_found() {
    check(
        r##"
swagger: "2.0"
info: {title: t, version: "1"}
consumes: [application/json]
paths:
  /loop:
    post:
      operationId: loop
      parameters:
        - {name: thing, in: body, required: true, schema: {$ref: "#/definitions/Thing"}}
  /pets:
    post:
      operationId: addPet
      parameters:
        - {name: pet, in: body, required: true, schema: {$ref: "#/definitions/Pet"}}
definitions:
  Thing: {allOf: [{$ref: "#/definitions/Other"}, {type: object}]}
  Other: {allOf: [{$ref: "#/definitions/Thing"}]}
  Pet:
    type: object
    properties:
      friends: {type: array, items: {$ref: "#/definitions/Pet"}}
"##,
        "tools: {addPet: {}}",
        expect![[r##"
            addPet = POST /pets
              annotations: {} (Method)
              input: {"$defs":{"Pet":{"properties":{"friends":{"items":{"$ref":"#/$defs/Pet"},"type":"array"}},"type":"object"}},"additionalProperties":false,"properties":{"friends":{"items":{"$ref":"#/$defs/Pet"},"type":"array"}},"type":"object"}
              body application/json Json Merged(["friends"])
            warning: `$ref` cycle that never descends into the value: #/definitions/Thing → #/definitions/Other → #/definitions/Thing; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items` (POST /loop)
              --> openapi#/definitions/Thing
        "##]],
    );
}

#[test]
fn a_long_chain_of_refs_is_reported_not_followed_off_the_stack() {
    // Each copy of a `$ref`'s target used to start its own depth count, so a chain of a few
    // thousand schemas overflowed the stack and aborted `ferry check`.
    let mut document = String::from(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    post:
      operationId: deep
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/S0"}}}
components:
  schemas:
"##,
    );
    for index in 0..3000 {
        document.push_str(&format!(
            "    S{index}: {{type: object, properties: {{next: {{$ref: \"#/components/schemas/S{}\"}}}}}}\n",
            index + 1
        ));
    }
    document.push_str("    S3000: {type: string}\n");
    check(
        &document,
        "tools: {deep: {}}",
        expect![[r#"
            error: schema is nested more than 128 deep through its `$ref`s (POST /a)
              --> openapi#/components/schemas/S64/properties/next
        "#]],
    );
}

/// Issue 11: documents write `pattern: 0`, `type: {…}` or a name twice in `required`, and the
/// schema copied from them failed the 2020-12 meta-schema, so clients refused the tool. A
/// repeated name is repaired; a malformed keyword is left out, with a warning naming where
/// it was and what was lost.
#[test]
fn malformed_keywords_are_left_out_with_a_warning_and_repeated_names_repaired() {
    check(
        r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /videos:
    post:
      operationId: addVideo
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [title, title, tags]
              properties:
                title: {type: string, pattern: 0, minLength: -1}
                tags: {type: {kind: list}, enum: 5}
                owner: {type: object, required: [id, 3], properties: {id: {type: [string, string]}}}
"##,
        "tools: {addVideo: {}}",
        expect![[r#"
            addVideo = POST /videos
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"owner":{"properties":{"id":{"type":["string"]}},"type":"object"},"tags":{},"title":{"type":"string"}},"required":["title","tags"],"type":"object"}
              body application/json Json Merged(["title", "tags", "owner"])
            warning: `pattern` is left out of the tool's input schema: its value is not a string, which JSON Schema does not allow, so what it said is not checked (POST /videos)
              --> openapi#/paths/~1videos/post/requestBody/content/application~1json/schema/properties/title/pattern
            warning: `minLength` is left out of the tool's input schema: its value is not a whole number of 0 or more, which JSON Schema does not allow, so what it said is not checked (POST /videos)
              --> openapi#/paths/~1videos/post/requestBody/content/application~1json/schema/properties/title/minLength
            warning: `type` is left out of the tool's input schema: its value is not a type name (or a list of them), which JSON Schema does not allow, so what it said is not checked (POST /videos)
              --> openapi#/paths/~1videos/post/requestBody/content/application~1json/schema/properties/tags/type
            warning: `enum` is left out of the tool's input schema: its value is not a list, which JSON Schema does not allow, so what it said is not checked (POST /videos)
              --> openapi#/paths/~1videos/post/requestBody/content/application~1json/schema/properties/tags/enum
            warning: `required` is left out of the tool's input schema: its value is not a list of property names, which JSON Schema does not allow, so what it said is not checked (POST /videos)
              --> openapi#/paths/~1videos/post/requestBody/content/application~1json/schema/properties/owner/required
        "#]],
    );
}

/// The token budget counts a tool's definition without building it: the count must be the
/// length of the very JSON `tools/list` serves, whatever the order of its keys.
#[test]
fn a_definition_is_measured_as_long_as_it_is_served() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/openapi/petstore-3.0/openapi.yaml");
    let document = crate::openapi::load(&path).expect("petstore loads");
    let curation = curation::Curation {
        all: true,
        ..curation::Curation::default()
    };
    let (mut catalog, _) = compile(&document, &curation);
    assert!(catalog.tools.len() > 10);
    catalog.tools[0].title = Some("A \"quoted\" title".into());
    for tool in &catalog.tools {
        let served = tool.to_json().to_string();
        let measured = serde_json::to_string(&tool.sorted_definition()).expect("serializes");
        assert_eq!(measured, served, "{}", tool.name);
        assert_eq!(super::trim::tool_tokens(tool), served.len().div_ceil(4));
    }
}

/// Each tool's rate limits and every diagnostic, for `curation_text` over [`PETS`].
fn check_limits(curation_text: &str, expect: Expect) {
    let value: Value = serde_saphyr::from_str(PETS).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let (curation, mut diagnostics) =
        curation::parse(curation_text, "ferry.yaml", Default::default()).expect("curation is YAML");
    let (catalog, found) = compile(&document, &curation);
    diagnostics.extend(found);
    let mut out = String::new();
    for tool in &catalog.tools {
        let limits = &tool.limits;
        let show =
            |rate: Option<crate::rate::Rate>| rate.map_or("-".to_string(), |r| r.to_string());
        out.push_str(&format!(
            "{}: {}, tool {}, class {}\n",
            tool.name,
            limits.class.as_str(),
            show(limits.tool),
            show(limits.class_limit)
        ));
    }
    for diagnostic in &diagnostics {
        out.push_str(&format!("{diagnostic}\n"));
    }
    expect.assert_eq(&out);
}

/// The class is the method's: a POST claimed read-only (with evidence) still spends the
/// writes budget, and HEAD spends the reads one.
#[test]
fn rate_limits_resolve_per_tool_by_the_methods_class() {
    check_limits(
        "rate_limits: {writes: 30/min, reads: 600/min}\n\
         tools:\n\
         \x20 listPets: {}\n\
         \x20 headPet: {}\n\
         \x20 createPet: {rate_limit: 5/min, annotations: {readOnlyHint: true}, because: it only searches}\n\
         \x20 putPet: {rate_limit: 2/s}\n\
         \x20 getPet: {rate_limit: 1/h}\n",
        expect![[r#"
            createPet: writes, tool 5/min, class 30/min
            getPet: reads, tool 1/h, class 600/min
            headPet: reads, tool -, class 600/min
            listPets: reads, tool -, class 600/min
            putPet: writes, tool 2/s, class 30/min
        "#]],
    );
    check_limits(
        "rate_limits: {writes: 10/sec}\ntools: {listPets: {}, deletePet: {}}\n",
        expect![[r#"
            deletePet: writes, tool -, class 10/s
            listPets: reads, tool -, class -
        "#]],
    );
}

#[test]
fn invalid_rate_limits_are_errors_that_say_the_accepted_form() {
    check_limits(
        "rate_limits: {writes: 30/minute, reads: 0/s, other: 1/s}\n\
         tools:\n\
         \x20 listPets: {rate_limit: 30}\n\
         \x20 getPet: {rate_limit: 5000000/h}\n\
         \x20 putPet: {rate_limits: 5/min}\n",
        expect![[r#"
            getPet: reads, tool -, class -
            listPets: reads, tool -, class -
            putPet: writes, tool -, class -
            error: unknown key `other` (expected one of: reads, writes)
              --> curation:rate_limits.other
            error: `reads` must allow at least 1 call per period: 0 would refuse every call
              --> curation:rate_limits.reads
            error: `writes` must be a rate such as `30/min`: a whole number from 1 to 1000000, `/`, and `s` (or `sec`), `min` or `h`
              --> curation:rate_limits.writes
            error: `rate_limit` must be a rate such as `30/min`: a whole number from 1 to 1000000, `/`, and `s` (or `sec`), `min` or `h`
              --> curation:tools.listPets.rate_limit
            error: `rate_limit` must allow at most 1000000 calls per period (for no limit, leave the key out)
              --> curation:tools.getPet.rate_limit
            error: unknown key `rate_limits`; did you mean `rate_limit`?
              --> curation:tools.putPet.rate_limits
        "#]],
    );
    check_limits(
        "rate_limits: 30/min\nrate_limit: 5/min\n",
        expect![[r#"
            error: unknown key `rate_limit`; did you mean `rate_limits`?
              --> curation:rate_limit
            error: `rate_limits` must be a mapping of classes to rates, such as `{writes: 30/min, reads: 600/min}`
              --> curation:rate_limits
        "#]],
    );
}

/// An `x-mcp` extension in the document cannot set a limit: only the operator may.
#[test]
fn a_document_extension_cannot_set_a_rate_limit() {
    let document = PETS.replace(
        "      operationId: getPet\n",
        "      operationId: getPet\n      x-mcp: {rate_limit: 1000000/s}\n",
    );
    let value: Value = serde_saphyr::from_str(&document).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let (curation, _) = curation::parse(
        "document_extensions: true\n",
        "ferry.yaml",
        Default::default(),
    )
    .expect("curation is YAML");
    let (catalog, diagnostics) = compile(&document, &curation);
    assert!(catalog.tools.iter().all(|tool| tool.limits.tool.is_none()));
    assert!(
        diagnostics
            .iter()
            .any(|d| d.message.contains("unknown key `rate_limit`")),
        "{diagnostics:?}"
    );
}

#[test]
fn reads_every_accepted_unit_and_writes_it_back_canonically() {
    let read: Vec<String> = ["30/min", "5/s", "5/sec", "1/h", "1000000/h"]
        .iter()
        .map(|text| Rate::parse(text).expect(text).to_string())
        .collect();
    assert_eq!(read, ["30/min", "5/s", "5/s", "1/h", "1000000/h"]);
    let rate = Rate::parse("30/min").expect("rate");
    assert_eq!(rate.period_nanos(), 60_000_000_000);
    assert_eq!(rate.interval_nanos(), 2_000_000_000);
}

#[test]
fn refuses_anything_else_with_the_form_it_expects() {
    for text in [
        "",
        "30",
        "/min",
        "30/",
        "30/m",
        "30/minute",
        "30/hr",
        "30 /min",
        " 30/min",
        "+30/min",
        "-1/min",
        "3.5/min",
        "30/MIN",
        "1_000/s",
        "30/min/s",
    ] {
        assert_eq!(Rate::parse(text), Err(RateError::Form), "{text:?}");
    }
    assert_eq!(Rate::parse("0/min"), Err(RateError::Zero));
    assert_eq!(Rate::parse("000/s"), Err(RateError::Zero));
    assert_eq!(Rate::parse("1000001/s"), Err(RateError::TooMany));
    assert_eq!(
        Rate::parse("99999999999999999999999/s"),
        Err(RateError::TooMany)
    );
    assert_eq!(Rate::new(0, Period::Second), None);
    assert_eq!(Rate::new(MAX_COUNT + 1, Period::Hour), None);
}

#[test]
fn a_confirming_tool_carries_its_parsed_message_and_typed_argument() {
    check(
        PETS,
        "tools:\n  deletePet: {confirm: {message: \"Delete pet {petId}? {{sure}}\", type_to_confirm: petId}}\n  getPet: {confirm: true}\n  putPet: {confirm: false}\n",
        expect![[r##"
            deletePet = DELETE /pets/{petId}
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
              confirm: Confirm { message: Some([Literal("Delete pet "), Argument("petId"), Literal("? {sure}")]), type_to_confirm: Some("petId") }
            getPet = GET /pets/{petId}
              description: "One pet by its id."
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
              confirm: Confirm { message: None, type_to_confirm: None }
            putPet = PUT /pets/{petId}
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"$defs":{"Pet":{"properties":{"name":{"type":"string"},"tag":{"type":["string","null"]}},"required":["name"],"type":"object"}},"additionalProperties":false,"properties":{"body":{"$ref":"#/$defs/Pet"},"petId":{"type":"string"}},"required":["petId"],"type":"object"}
              Path petId <- petId Simple explode=false required
              body application/json Json Argument("body")
            warning[confirm-refused-to-legacy-clients]: tool "getPet" asks the user to confirm each call: clients of MCP 2025-11-25, which cannot be asked, see the tool but every call of theirs is refused (`confirm_legacy: refuse`, the default); `confirm_legacy: allow` lets their calls through unconfirmed (GET /pets/{petId})
              --> curation:tools.getPet.confirm
            warning[confirm-refused-to-legacy-clients]: tool "deletePet" asks the user to confirm each call: clients of MCP 2025-11-25, which cannot be asked, see the tool but every call of theirs is refused (`confirm_legacy: refuse`, the default); `confirm_legacy: allow` lets their calls through unconfirmed (DELETE /pets/{petId})
              --> curation:tools.deletePet.confirm
        "##]],
    );
}

#[test]
fn confirm_names_only_arguments_the_tool_has() {
    check(
        PETS,
        "confirm_ttl: 0\nconfirm_key: secret\nconfirm_legacy: maybe\ntools:\n  deletePet: {confirm: {message: \"Delete {pet}?\", type_to_confirm: owner, shout: true}}\n  listPets: {confirm: {type_to_confirm: limit}}\n  getPet: {confirm: {message: \"Get {petId\"}}\n",
        expect![[r#"
            error: `confirm_ttl` is how long a confirmation request stays valid, in seconds: a whole number from 1 to 86400
              --> curation:confirm_ttl
            error: a key is never written in the file: name its environment variable, as `confirm_key: {env: FERRY_CONFIRM_KEY}`
              --> curation:confirm_key
            error: `confirm_legacy` is `refuse` (the default: a 2025-11-25 client cannot confirm, so its call to a confirming tool is refused) or `allow` (it proceeds unconfirmed, logged)
              --> curation:confirm_legacy
            error: unknown key `shout` (expected one of: message, type_to_confirm)
              --> curation:tools.deletePet.confirm.shout
            error: argument "limit" is not a string, so it cannot be typed back exactly (GET /pets)
              --> curation:tools.listPets.confirm.type_to_confirm
            error: the message has an unclosed { (write {{ for a brace) (GET /pets/{petId})
              --> curation:tools.getPet.confirm.message
            error: the message names {pet}, which is not an argument of the tool (DELETE /pets/{petId})
              --> curation:tools.deletePet.confirm.message
            error: "owner" is not an argument of the tool (DELETE /pets/{petId})
              --> curation:tools.deletePet.confirm.type_to_confirm
        "#]],
    );
}

#[test]
fn a_document_may_ask_for_confirmation_and_the_curation_may_switch_it_off() {
    let document = "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    delete:\n      operationId: a\n      x-mcp: {confirm: true}\n  /b:\n    delete:\n      operationId: b\n      x-mcp: {confirm: {message: 'Delete {nothing}?'}}\n";
    check(
        document,
        "document_extensions: true\ntools:\n  b: {confirm: false}\n",
        expect![[r#"
            a = DELETE /a
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
              confirm: Confirm { message: None, type_to_confirm: None }
            b = DELETE /b
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            warning[confirm-refused-to-legacy-clients]: tool "a" asks the user to confirm each call: clients of MCP 2025-11-25, which cannot be asked, see the tool but every call of theirs is refused (`confirm_legacy: refuse`, the default); `confirm_legacy: allow` lets their calls through unconfirmed (DELETE /a)
              --> curation:x-mcp of DELETE /a.confirm
        "#]],
    );
}

/// Compiles the pets document of `tests/data/arazzo/` with `curation` (YAML) and the Arazzo
/// document `arazzo` (YAML, as the file `pets.arazzo.yaml`), and renders every composite
/// tool and diagnostic.
fn check_workflows(arazzo: &str, curation_text: &str, expect: Expect) {
    let openapi = include_str!("../../tests/data/arazzo/pets.openapi.yaml");
    let value: Value = serde_saphyr::from_str(openapi).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let (curation, mut diagnostics) =
        curation::parse(curation_text, "ferry.yaml", Default::default()).expect("curation is YAML");
    let (mut catalog, found) = compile_chosen(&document, &curation);
    diagnostics.extend(found);
    let file = crate::openapi::SourceFile {
        name: "pets.arazzo.yaml".to_string(),
        value: serde_saphyr::from_str(arazzo).expect("Arazzo document is YAML"),
    };
    diagnostics.extend(super::add_workflows(
        &mut catalog,
        &document,
        &curation,
        &file,
    ));
    let mut out = String::new();
    for (tool, plan) in catalog
        .tools
        .iter()
        .filter_map(|tool| Some((tool, tool.workflow()?)))
    {
        let steps: Vec<String> = plan
            .steps
            .iter()
            .map(|s| format!("{}={}", s.step, s.label()))
            .collect();
        out.push_str(&format!(
            "{} = workflow {} [{}]\n  annotations: {}\n  basis: {:?}\n",
            tool.name,
            plan.workflow.id,
            steps.join(", "),
            serde_json::to_string(&tool.annotations).expect("annotations serialize"),
            tool.basis
        ));
        if let Some(description) = &tool.description {
            out.push_str(&format!("  description: {description:?}\n"));
        }
        out.push_str(&format!("  input: {}\n", tool.input_schema));
    }
    for diagnostic in &diagnostics {
        out.push_str(&format!("{diagnostic}\n"));
    }
    expect.assert_eq(&out);
}

const PETS_ARAZZO: &str = include_str!("../../tests/data/arazzo/pets.arazzo.yaml");

#[test]
fn chosen_workflows_become_composite_tools_and_only_those() {
    check_workflows(
        PETS_ARAZZO,
        r#"
openapi: ./pets.openapi.yaml
workflows:
  document: ./pets.arazzo.yaml
  tools:
    adoptFirstAvailable: {name: adopt_pet, title: Adopt a pet}
"#,
        expect![[r#"
            adopt_pet = workflow adoptFirstAvailable [findPet=GET /pets, adopt=POST /pets/{petId}/adoption]
              annotations: {"title":"Adopt a pet","readOnlyHint":false}
              basis: Method
              description: "Adopt the first available pet\n\nFinds an available pet, then adopts it for the owner given."
              input: {"additionalProperties":false,"properties":{"owner":{"description":"who adopts the pet","type":"string"}},"required":["owner"],"type":"object"}
            warning[workflow-optional-input-read]: parameter "petId" of step "get" reads the optional input "petId", which has no default: a call that leaves it out stops the workflow at this step, which cannot be sent without it; make the input required, or give it a default
              --> pets.arazzo.yaml#/workflows/1/steps/0/parameters/0
        "#]],
    );
}

#[test]
fn a_workflow_is_read_only_only_when_every_step_is() {
    check_workflows(
        PETS_ARAZZO,
        r#"
openapi: ./pets.openapi.yaml
workflows:
  document: ./pets.arazzo.yaml
  tools:
    showPet: {}
    adoptFirstAvailable: {annotations: {readOnlyHint: true}}
"#,
        expect![[r#"
            showPet = workflow showPet [get=GET /pets/{petId}]
              annotations: {"readOnlyHint":true}
              basis: Method
              description: "Show one pet"
              input: {"additionalProperties":false,"properties":{"petId":{"type":"integer"}},"type":"object"}
            error: readOnlyHint: true is not justified: a workflow is read-only only when every step's method justifies it (GET, HEAD, QUERY); add `because:` with the evidence, or drop the claim
              --> curation:workflows.tools.adoptFirstAvailable
            warning[workflow-optional-input-read]: parameter "petId" of step "get" reads the optional input "petId", which has no default: a call that leaves it out stops the workflow at this step, which cannot be sent without it; make the input required, or give it a default
              --> pets.arazzo.yaml#/workflows/1/steps/0/parameters/0
        "#]],
    );
    check_workflows(
        PETS_ARAZZO,
        r#"
openapi: ./pets.openapi.yaml
workflows:
  document: ./pets.arazzo.yaml
  tools:
    adoptFirstAvailable:
      annotations: {idempotentHint: true}
      because: the upstream refuses a second adoption of the same pet
"#,
        expect![[r#"
            adoptFirstAvailable = workflow adoptFirstAvailable [findPet=GET /pets, adopt=POST /pets/{petId}/adoption]
              annotations: {"readOnlyHint":false,"idempotentHint":true}
              basis: CurationAsserted
              description: "Adopt the first available pet\n\nFinds an available pet, then adopts it for the owner given."
              input: {"additionalProperties":false,"properties":{"owner":{"description":"who adopts the pet","type":"string"}},"required":["owner"],"type":"object"}
            warning[workflow-optional-input-read]: parameter "petId" of step "get" reads the optional input "petId", which has no default: a call that leaves it out stops the workflow at this step, which cannot be sent without it; make the input required, or give it a default
              --> pets.arazzo.yaml#/workflows/1/steps/0/parameters/0
        "#]],
    );
}

#[test]
fn steps_must_name_operations_and_parameters_the_document_has() {
    check_workflows(
        r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions:
  - {name: pets, url: https://example.test/pets.openapi.yaml}
  - {name: other, url: ./other.yaml}
workflows:
  - workflowId: w
    steps:
      - stepId: missing
        operationId: deletePet
      - stepId: wrongParameter
        operationId: findPets
        parameters:
          - {name: colour, in: query, value: red}
          - {name: status, in: header, value: x}
      - stepId: elsewhere
        operationId: $sourceDescriptions.other.getPet
      - stepId: byPath
        operationPath: '{$sourceDescriptions.pets.url}#/paths/~1pets~1{petId}/delete'
  - workflowId: unchosen
    steps:
      - {stepId: a, operationId: findPets, outputs: {x: $inputs.nothing}}
"#,
        r#"
openapi: ./pets.openapi.yaml
workflows:
  document: ./pets.arazzo.yaml
  tools:
    w: {}
    absent: {}
"#,
        expect![[r#"
            error: source description "other" names "./other.yaml", not a document ferry loaded ("./pets.openapi.yaml")
              --> pets.arazzo.yaml#/sourceDescriptions/1/url
            error: step "missing": the document has no operationId "deletePet"
              --> pets.arazzo.yaml#/workflows/0/steps/0
            error: GET /pets declares no query parameter "colour"
              --> pets.arazzo.yaml#/workflows/0/steps/1/parameters/0/name
            error: GET /pets declares no header parameter "status"
              --> pets.arazzo.yaml#/workflows/0/steps/1/parameters/1/name
            error: step "elsewhere" names the source "other", which is not a loaded OpenAPI document
              --> pets.arazzo.yaml#/workflows/0/steps/2
            error: step "byPath": the document has no operation at "/paths/~1pets~1{petId}/delete"
              --> pets.arazzo.yaml#/workflows/0/steps/3
            error: pets.arazzo.yaml has no workflow "absent" (it has: w, unchosen)
              --> curation:workflows.tools.absent
            warning: the workflow has no input "nothing"
              --> pets.arazzo.yaml#/workflows/1/steps/0/outputs/x
        "#]],
    );
}

#[test]
fn an_unreachable_step_is_a_warning_and_the_tool_stays() {
    check_workflows(
        r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: pets, url: ./pets.openapi.yaml}]
workflows:
  - workflowId: lookUp
    description: Looks a pet up.
    inputs: {type: object, required: [id], properties: {id: {type: integer, minimum: 1}}}
    steps:
      - stepId: get
        operationId: getPet
        parameters: [{name: petId, in: path, value: $inputs.id}]
        onSuccess: [{name: done, type: end}]
      - stepId: never
        operationId: findPets
"#,
        r#"
openapi: ./pets.openapi.yaml
workflows: {document: ./pets.arazzo.yaml, tools: {lookUp: {nmae: x}}}
"#,
        expect![[r#"
            lookUp = workflow lookUp [get=GET /pets/{petId}, never=GET /pets]
              annotations: {"readOnlyHint":true}
              basis: Method
              description: "Looks a pet up."
              input: {"additionalProperties":false,"properties":{"id":{"minimum":1,"type":"integer"}},"required":["id"],"type":"object"}
            error: unknown key `nmae`; did you mean `name`?
              --> curation:workflows.tools.lookUp.nmae
            warning: step "never" cannot be reached from the first step
              --> pets.arazzo.yaml#/workflows/0/steps/1
        "#]],
    );
}

#[test]
fn a_workflows_key_that_is_not_a_mapping_says_what_it_should_be() {
    let cases = [
        "workflows: 3\n",
        "workflows: {tools: {showPet: {}}}\n",
        "workflows: {document: ./pets.arazzo.yaml, tools: [showPet]}\n",
        "workflows: {document: ./pets.arazzo.yaml, tools: {showPet: 1}, extra: true}\n",
    ];
    let mut out = String::new();
    for case in cases {
        let (curation, diagnostics) =
            curation::parse(case, "ferry.yaml", Default::default()).expect("curation is YAML");
        out.push_str(&format!("{:?}\n", curation.workflows));
        for diagnostic in diagnostics {
            out.push_str(&format!("{diagnostic}\n"));
        }
    }
    expect![[r#"
        None
        error: `workflows` must be a mapping: `{document: FILE, tools: {workflowId: {...}}}`
          --> curation:workflows
        None
        error: `workflows` needs `document:`, the Arazzo file its workflows are written in
          --> curation:workflows
        Some(Workflows { document: "./pets.arazzo.yaml", tools: [] })
        error: `workflows.tools` must be a mapping from workflowId to settings (`{}` for the defaults)
          --> curation:workflows.tools
        Some(Workflows { document: "./pets.arazzo.yaml", tools: [] })
        error: unknown key `extra` (expected one of: document, tools)
          --> curation:workflows.extra
        error: a workflow entry is a mapping of settings (`{}` for the defaults) or `false`
          --> curation:workflows.tools.showPet
    "#]].assert_eq(&out);
}

#[test]
fn a_workflows_inputs_are_held_to_what_an_operations_schema_is() {
    check_workflows(
        "arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: pets, url: ./pets.openapi.yaml, type: openapi}]
workflows:
  - workflowId: lookUp
    inputs:
      type: object
      properties:
        code: {type: string, pattern: '(?<=a)b'}
      anyOf: [{required: [code]}]
    steps:
      - stepId: find
        operationId: findPets
        parameters: [{name: status, in: query, value: $inputs.code}]
",
        "openapi: ./pets.openapi.yaml
workflows: {document: ./pets.arazzo.yaml, tools: {lookUp: {}}}
",
        expect![[r#"
            lookUp = workflow lookUp [find=GET /pets]
              annotations: {"readOnlyHint":true}
              basis: Method
              input: {"additionalProperties":false,"anyOf":[{"required":["code"]}],"properties":{"code":{"pattern":"(?<=a)b","type":"string"}},"type":"object"}
            warning[workflow-optional-input-read]: parameter "status" of step "find" reads the optional input "code", which has no default: a call that leaves it out leaves this out too
              --> pets.arazzo.yaml#/workflows/0/steps/0/parameters/0
            warning: pattern "(?<=a)b" is not supported by the linear-time regex engine; it is served but not checked
              --> pets.arazzo.yaml#/workflows/0/inputs
            warning: the workflow's inputs have anyOf at the root, which Anthropic's Messages API (`allOf`, `anyOf`, `oneOf`) and OpenAI's function calling (those and `not`) refuse, failing every request that lists the tool; write the inputs as one object schema
              --> pets.arazzo.yaml#/workflows/0/inputs
        "#]],
    );
}

#[test]
fn a_report_compile_reports_the_same_and_keeps_no_input_schema() {
    let document = r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /items/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get: {operationId: getItem}
    put:
      operationId: putItem
      requestBody:
        content:
          application/json: {schema: {$ref: "#/components/schemas/Item"}}
  /other:
    get: {operationId: other}
    post: {operationId: broken, parameters: [{$ref: "#/components/parameters/missing"}]}
components:
  schemas:
    Item: {type: object, properties: {name: {type: string}, tags: {type: array, items: {type: string}}}}
"##;
    let value: Value = serde_saphyr::from_str(document).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let (curation, _) = curation::parse(
        "tools: {getItem: {}, putItem: {}, broken: {}}",
        "ferry.yaml",
        Default::default(),
    )
    .expect("curation is YAML");
    let (full, full_diagnostics) = compile(&document, &curation);
    let (report, report_diagnostics) = compile_report(&document, &curation);

    assert_eq!(report_diagnostics, full_diagnostics);
    assert_eq!(report.operations, full.operations);
    assert!(report.operations.iter().any(|r| r.tokens.is_some()));
    assert_eq!(report.tools.len(), 2);
    for (kept, whole) in report.tools.iter().zip(&full.tools) {
        assert!(kept.input_schema.is_none(), "{}", kept.name);
        assert!(!whole.input_schema.is_none(), "{}", whole.name);
        let mut without = whole.clone();
        without.input_schema = InputSchema::none();
        assert_eq!(format!("{:?}", kept), format!("{:?}", without));
    }
}

#[test]
fn a_large_document_compiles_on_many_threads_as_on_one() {
    // Enough operations for the parallel path, each kind of outcome in every run: a tool, a
    // tool with a warning (a pattern the linear-time engine cannot run), an operation that
    // cannot be a tool (an error, since all are chosen), and two that collide by name.
    let count = 2 * super::compile::PARALLEL_FROM + 7;
    let mut paths = serde_json::Map::new();
    for index in 0..count {
        let operation = match index % 4 {
            0 => serde_json::json!({"operationId": format!("get{index}")}),
            1 => serde_json::json!({"operationId": format!("find{index}"), "parameters": [
                {"name": "code", "in": "query", "schema": {"type": "string", "pattern": "^(?=a)"}}]}),
            2 => serde_json::json!({"operationId": format!("broken{index}"),
                "parameters": [{"$ref": "#/components/parameters/missing"}]}),
            _ => serde_json::json!({"operationId": if index % 8 == 3 { "twice" } else { "again" }}),
        };
        paths.insert(
            format!("/items{index}"),
            serde_json::json!({"get": operation}),
        );
    }
    let document = serde_json::json!({
        "openapi": "3.0.0",
        "info": {"title": "many", "version": "1"},
        "paths": paths,
    });
    let document = Document::from_value(document).expect("test document is OpenAPI");
    let (mut curation, _) =
        curation::parse("{}", "ferry.yaml", Default::default()).expect("curation is YAML");
    curation.all = true;
    for scope in [
        super::compile::Scope::Every,
        super::compile::Scope::Chosen,
        super::compile::Scope::Report,
    ] {
        let (one, one_diagnostics) = super::compile::compile_on(&document, &curation, scope, 1);
        let (many, many_diagnostics) = super::compile::compile_on(&document, &curation, scope, 3);
        assert!(
            one.tools.len() > count / 4,
            "{scope:?}: {} tools",
            one.tools.len()
        );
        assert!(
            one_diagnostics.iter().any(Diagnostic::is_error)
                && one_diagnostics.iter().any(|d| !d.is_error()),
            "{scope:?}: errors and warnings both"
        );
        assert_eq!(many_diagnostics, one_diagnostics, "{scope:?}");
        assert_eq!(many.operations, one.operations, "{scope:?}");
        assert_eq!(
            format!("{:?}", many.tools),
            format!("{:?}", one.tools),
            "{scope:?}"
        );
    }
}

#[test]
fn an_input_schema_nested_deeper_than_json_readers_take_is_not_a_tool() {
    // A default nested 130 deep: written out, no JSON reader with serde_json's guard (127
    // levels) could read the tool list back.
    let mut deep = serde_json::json!(1);
    for _ in 0..130 {
        deep = Value::Array(vec![deep]);
    }
    let document = serde_json::json!({
        "openapi": "3.1.0",
        "info": {"title": "deep", "version": "1"},
        "paths": {
            "/deep": {"get": {"operationId": "deep", "parameters": [
                {"name": "q", "in": "query", "schema": {"type": "array", "default": deep}}]}},
            "/shallow": {"get": {"operationId": "shallow"}},
        },
    });
    let document = Document::from_value(document).expect("test document is OpenAPI");
    let (mut curation, _) =
        curation::parse("{}", "ferry.yaml", Default::default()).expect("curation is YAML");
    curation.all = true;
    let (catalog, diagnostics) = compile(&document, &curation);
    let names: Vec<&str> = catalog
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    assert_eq!(names, ["shallow"]);
    let refused: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("more than 127 deep") && refused[0].contains("/paths/~1deep/get"),
        "{}",
        refused[0]
    );
    let report = catalog
        .operations
        .iter()
        .find(|r| r.path == "/deep")
        .expect("a report");
    assert!(
        report
            .reason
            .as_deref()
            .is_some_and(|why| why.contains("127")),
        "{report:?}"
    );
}

#[test]
fn snake_case_names_join_lowercase_words() {
    for (id, expected) in [
        ("repos/get-content", "repos_get_content"),
        ("issues/list-for-repo", "issues_list_for_repo"),
        ("getPetById", "get_pet_by_id"),
        ("GetCustomersCustomer", "get_customers_customer"),
        ("HTTPServerStatus", "http_server_status"),
        ("listV2Items", "list_v2_items"),
        ("already_snake", "already_snake"),
        ("  weird -- id!! ", "weird_id"),
    ] {
        assert_eq!(
            naming::derive(Naming::SnakeCase, Some(id), "get", "/x"),
            expected,
            "{id}"
        );
    }
    assert_eq!(
        naming::derive(Naming::SnakeCase, None, "get", "/pets/{petId}/photos"),
        "get_pets_pet_id_photos"
    );
    let long = "a".repeat(40) + "/" + &"b".repeat(40);
    let name = naming::derive(Naming::SnakeCase, Some(&long), "get", "/");
    assert!(
        name.len() <= naming::MAX_LEN && naming::is_valid(&name),
        "{name}"
    );
    assert_eq!(
        name,
        naming::derive(Naming::SnakeCase, Some(&long), "get", "/")
    );
}

// ---- OpenAPI 3.2 ----

/// What a method justifies, as RFC 9110 and the IANA HTTP Method Registry define the words,
/// written apart from `annotations` so that the two can be held together: a safe method
/// guarantees all three, an idempotent one idempotence, any other method nothing. The fixed
/// fields' OPTIONS and TRACE claim nothing, as POST does.
fn oracle(method: &str) -> &'static [super::annotations::Guarantee] {
    use super::annotations::Guarantee::{AdditiveOnly, Idempotent, ReadOnly};
    match method {
        "GET" | "HEAD" | "QUERY" | "PROPFIND" | "REPORT" | "SEARCH" | "PRI" => {
            &[ReadOnly, AdditiveOnly, Idempotent]
        }
        "PUT" | "DELETE" | "COPY" | "MOVE" | "MKCOL" | "PROPPATCH" | "UNLOCK" | "ACL" | "LINK"
        | "UNLINK" | "BIND" | "UNBIND" | "REBIND" | "CHECKIN" | "CHECKOUT" | "UNCHECKOUT"
        | "LABEL" | "MERGE" | "MKACTIVITY" | "MKCALENDAR" | "MKREDIRECTREF" | "MKWORKSPACE"
        | "ORDERPATCH" | "UPDATE" | "UPDATEREDIRECTREF" | "VERSION-CONTROL"
        | "BASELINE-CONTROL" => &[Idempotent],
        _ => &[],
    }
}

/// Every annotation state a curation can ask for (each hint absent, true or false: 27, by
/// 2 for `openWorldHint`, which asserts nothing) on every method a tool can call: a state
/// is allowed without `because:` exactly when what it asserts is within what the method
/// justifies, and the method's own state is the strongest such.
#[test]
fn annotations_are_sound_for_every_state_on_every_method() {
    use super::annotations::{self, Guarantee};
    use crate::curation::AnnotationOverrides;
    let methods = [
        "GET",
        "HEAD",
        "QUERY",
        "PUT",
        "DELETE",
        "POST",
        "PATCH",
        "OPTIONS",
        "TRACE",
        "PROPFIND",
        "REPORT",
        "SEARCH",
        "PRI",
        "COPY",
        "MOVE",
        "MKCOL",
        "PROPPATCH",
        "LOCK",
        "UNLOCK",
        "CONNECT",
        "PURGE",
        "propfind",
        "get",
        "*",
    ];
    let hints = [None, Some(true), Some(false)];
    let mut states = 0;
    for method in methods {
        let justified = oracle(method);
        assert_eq!(annotations::justified(method), justified, "{method}");
        let own = annotations::asserted(&annotations::from_method(method));
        // The method's state asserts everything it justifies that one state can assert.
        let strongest: Vec<Guarantee> = if justified.contains(&Guarantee::ReadOnly) {
            vec![Guarantee::ReadOnly]
        } else {
            justified.to_vec()
        };
        assert_eq!(own, strongest, "{method}");
        for read_only_hint in hints {
            for destructive_hint in hints {
                for idempotent_hint in hints {
                    for open_world_hint in [None, Some(true)] {
                        let overrides = AnnotationOverrides {
                            read_only_hint,
                            destructive_hint,
                            idempotent_hint,
                            open_world_hint,
                        };
                        let decision = annotations::decide(method, &overrides);
                        let beyond: Vec<Guarantee> = annotations::asserted(&decision.annotations)
                            .into_iter()
                            .filter(|g| !justified.contains(g))
                            .collect();
                        assert_eq!(decision.unjustified, beyond, "{method} {overrides:?}");
                        states += 1;
                    }
                }
            }
        }
    }
    assert_eq!(states, methods.len() * 54);
}

/// A 3.2 document served whole: a `query` operation with a body, `additionalOperations` with
/// a registered safe, a registered idempotent and an unregistered method, a `querystring`
/// parameter, a `cookie`-style cookie, a body whose Media Type Object is a reference.
const OAS32: &str = r##"
openapi: 3.2.0
info: {title: Files, version: "1"}
paths:
  /files:
    query:
      operationId: searchFiles
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [text]
              properties: {text: {type: string}, limit: {type: integer}}
    additionalOperations:
      PROPFIND: {operationId: listProperties}
      COPY: {operationId: copyFiles}
      PURGE: {}
  /files/{name}:
    parameters:
      - {name: name, in: path, required: true, schema: {type: string}}
    get:
      operationId: findFiles
      parameters:
        - name: filter
          in: querystring
          description: Which files
          content:
            application/x-www-form-urlencoded:
              schema:
                type: object
                properties:
                  owner: {type: string}
                  size: {type: array, items: {type: integer}}
          examples:
            mine: {dataValue: {owner: me}, serializedValue: "owner=me"}
        - {name: session, in: cookie, style: cookie, schema: {type: string}}
    put:
      operationId: putFile
      requestBody:
        content:
          application/json: {$ref: "#/components/mediaTypes/File"}
components:
  mediaTypes:
    File:
      schema:
        type: object
        properties: {content: {type: string}}
"##;

#[test]
fn a_32_document_serves_query_additional_operations_and_querystring() {
    check(
        OAS32,
        "tools: {searchFiles: {}, listProperties: {}, copyFiles: {}, PURGE /files: {}, findFiles: {}, putFile: {}}",
        expect![[r#"
            copyFiles = COPY /files
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            findFiles = GET /files/{name}
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"filter":{"description":"Which files","examples":[{"owner":"me"}],"properties":{"owner":{"type":"string"},"size":{"items":{"type":"integer"},"type":"array"}},"type":"object"},"name":{"type":"string"},"session":{"type":"string"}},"required":["name"],"type":"object"}
              Path name <- name Simple explode=false required
              QueryString filter <- filter Form explode=true
              Cookie session <- session Cookie explode=true
            listProperties = PROPFIND /files
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            purge_files = PURGE /files
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            putFile = PUT /files/{name}
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"content":{"type":"string"},"name":{"type":"string"}},"required":["name"],"type":"object"}
              Path name <- name Simple explode=false required
              body application/json Json Merged(["content"])
            searchFiles = QUERY /files
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"limit":{"type":"integer"},"text":{"type":"string"}},"required":["text"],"type":"object"}
              body application/json Json Merged(["text", "limit"])
        "#]],
    );
}

#[test]
fn as_written_keeps_what_every_client_accepts() {
    assert_eq!(
        naming::derive(Naming::AsWritten, Some("repos/get-content"), "get", "/"),
        "repos_get-content"
    );
    assert_eq!(
        naming::derive(Naming::AsWritten, Some("getPetById"), "get", "/"),
        "getPetById"
    );
}

/// Issue 24: Stripe's descriptions arrived as raw HTML. HTML elements are rendered as
/// Markdown, the words kept; a `<` that opens no element stays text, and text without
/// elements is not touched.
#[test]
fn html_in_descriptions_is_rendered_as_markdown_and_the_words_kept() {
    use super::prose::markdown;
    for (written, rendered) in [
        (
            "<p>Retrieves a Customer object.</p>",
            "Retrieves a Customer object.",
        ),
        (
            "<p>Use <code>expand[]</code> to get the <strong>full</strong> object.</p><p>See <a href=\"https://x.example/a\">the guide</a>.</p>",
            "Use `expand[]` to get the **full** object.\n\nSee [the guide](https://x.example/a).",
        ),
        ("<ul><li>one</li><li>two</li></ul>", "- one\n- two"),
        (
            "<p>A Map<String, Value> of a < b values</p>",
            // Escaped as Markdown writes a `<` that would otherwise open an HTML tag.
            "A Map\\<String, Value> of a < b values",
        ),
    ] {
        assert_eq!(markdown(written), rendered, "{written}");
    }
    for plain in [
        "Plain **Markdown** with `code` and a < b.",
        "Generic Map<String> is no element.",
    ] {
        assert!(
            matches!(markdown(plain), std::borrow::Cow::Borrowed(_)),
            "{plain}"
        );
    }
    let mut schema = serde_json::json!({
        "description": "<p>Top</p>",
        "properties": {
            "description": {"type": "string", "description": "<b>The</b> text"},
            "data": {"default": {"description": "<p>kept</p>"}, "enum": ["<p>kept</p>"]},
        },
    });
    super::prose::schema_descriptions(&mut schema);
    assert_eq!(
        schema,
        serde_json::json!({
            "description": "Top",
            "properties": {
                "description": {"type": "string", "description": "**The** text"},
                "data": {"default": {"description": "<p>kept</p>"}, "enum": ["<p>kept</p>"]},
            },
        })
    );
}

#[test]
fn query_and_additional_operations_are_not_read_before_32() {
    check(
        &OAS32.replace("openapi: 3.2.0", "openapi: 3.1.0"),
        "tools: {findFiles: {}, putFile: {}}",
        expect![[r#"
            putFile = PUT /files/{name}
              annotations: {"readOnlyHint":false,"idempotentHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"content":{"type":"string"},"name":{"type":"string"}},"required":["name"],"type":"object"}
              Path name <- name Simple explode=false required
              body application/json Json Merged(["content"])
            error: parameter `filter` is in an unknown place `querystring` (GET /files/{name})
              --> openapi#/paths/~1files~1{name}/get/parameters/0
            error: unknown parameter style `cookie` (GET /files/{name})
              --> openapi#/paths/~1files~1{name}/get/parameters/1/style
        "#]],
    );
}

#[test]
fn an_unregistered_method_claims_nothing_and_a_claim_needs_because() {
    check(
        OAS32,
        r#"
tools:
  PURGE /files: {annotations: {idempotentHint: true}}
  copyFiles: {annotations: {readOnlyHint: true}}
  listProperties: {annotations: {readOnlyHint: false}}
  searchFiles: {annotations: {destructiveHint: false}}
  "purge /files": {}
  "query /files": {title: By method}
"#,
        expect![[r#"
            listProperties = PROPFIND /files
              annotations: {"readOnlyHint":false} (CurationSound)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            searchFiles = QUERY /files
              title: By method
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{"limit":{"type":"integer"},"text":{"type":"string"}},"required":["text"],"type":"object"}
              body application/json Json Merged(["text", "limit"])
            error: "purge /files" matches no operation (give an operationId or `METHOD /path`); did you mean "PURGE /files"?
              --> curation:tools.purge /files
            error: this operation is already chosen by `tools.searchFiles` (QUERY /files)
              --> curation:tools.query /files
            error: readOnlyHint: true is not justified by the method COPY: add `because:` with the evidence, or drop the claim (COPY /files)
              --> curation:tools.copyFiles
            error: idempotentHint: true is not justified by the method PURGE: add `because:` with the evidence, or drop the claim (PURGE /files)
              --> curation:tools.PURGE /files
        "#]],
    );
}

/// What of 3.2 ferry cannot send as written: each a problem at its place, an error when the
/// operation is chosen, a warning otherwise.
const OAS32_UNSENDABLE: &str = r##"
openapi: 3.2.0
info: {title: Files, version: "1"}
paths:
  /files:
    post: {operationId: post}
    additionalOperations:
      POST: {operationId: postAgain}
      "BAD METHOD": {operationId: badMethod}
      post: {operationId: lowercasePost}
  /both:
    parameters:
      - {name: q, in: query, schema: {type: string}}
    get:
      operationId: both
      parameters:
        - {name: all, in: querystring, content: {application/x-www-form-urlencoded: {schema: {type: object}}}}
        - {name: again, in: querystring, content: {application/x-www-form-urlencoded: {schema: {type: object}}}}
  /json:
    get:
      operationId: json
      parameters:
        - {name: selector, in: querystring, content: {application/jsonpath: {schema: {type: string}}}}
  /encoded:
    get:
      operationId: encoded
      parameters:
        - name: form
          in: querystring
          content:
            application/x-www-form-urlencoded:
              schema: {type: object, properties: {tags: {type: array, items: {type: string}}}}
              encoding: {tags: {explode: false}}
  /text:
    get:
      operationId: text
      parameters:
        - {name: q, in: querystring, content: {application/x-www-form-urlencoded: {schema: {type: string}}}}
  /stream:
    patch:
      operationId: stream
      requestBody:
        content:
          application/jsonl:
            itemSchema: {type: object}
      responses:
        "200":
          description: events
          content:
            text/event-stream:
              itemSchema: {type: object, properties: {data: {type: string}}}
"##;

#[test]
fn what_32_ferry_cannot_send_as_written_is_explained_at_its_place() {
    check(
        OAS32_UNSENDABLE,
        "tools: {postAgain: {}, lowercasePost: {}, both: {}, json: {}, stream: {}}",
        expect![[r#"
            lowercasePost = post /files
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            stream = PATCH /stream
              annotations: {} (Method)
              input: {"additionalProperties":false,"properties":{"body":{"contentEncoding":"base64","contentMediaType":"application/jsonl","type":"string"}},"type":"object"}
              body application/jsonl Binary Argument("body")
            error[additional-operation-fixed-method]: `additionalOperations` MUST NOT contain any entry for the methods that can be defined by other fixed fields with Operation Object values: describe POST with the path item's `post` field (POST /files)
              --> openapi#/paths/~1files/additionalOperations/POST
            error[querystring-repeated]: a `querystring` parameter MUST NOT appear more than once: `again` is a second one beside `all` (GET /both)
              --> openapi#/paths/~1both/get/parameters/1
            error[querystring-beside-query]: a `querystring` parameter MUST NOT appear in the same operation (or in the operation's path-item) as any `in: "query"` parameters: `all` is the whole query string, and `q` is in it (GET /both)
              --> openapi#/paths/~1both/get/parameters/0
            error[querystring-not-form]: `querystring` parameter `selector` is `application/jsonpath`: ferry writes a query string only as a form (`application/x-www-form-urlencoded`) (GET /json)
              --> openapi#/paths/~1json/get/parameters/0/content/application~1jsonpath
            warning[additional-operation-method-not-token]: `additionalOperations` key "BAD METHOD" is not an HTTP method: a method is a token of letters, digits and !#$%&'*+-.^_`|~ (RFC 9110) (BAD METHOD /files)
              --> openapi#/paths/~1files/additionalOperations/BAD METHOD
            warning[querystring-not-form]: `querystring` parameter `form` sets an `encoding` of its own for some properties: ferry writes each property as a form's default (`style: form`, `explode: true`), so it would not send what this asks (GET /encoded)
              --> openapi#/paths/~1encoded/get/parameters/0/content/application~1x-www-form-urlencoded/encoding
            warning[querystring-not-form]: `querystring` parameter `q` is not an object: a form is written from an object's properties (GET /text)
              --> openapi#/paths/~1text/get/parameters/0/content/application~1x-www-form-urlencoded/schema
            warning[item-schema-not-validated]: `itemSchema` describes each item of this `application/jsonl` request body: ferry does not check the items, and sends the body as the caller gives it (PATCH /stream)
              --> openapi#/paths/~1stream/patch/requestBody/content/application~1jsonl/itemSchema
        "#]],
    );
}

const OAS32_TAGS: &str = r##"
openapi: 3.2.0
info: {title: Files, version: "1"}
tags:
  - {name: files, kind: nav}
  - {name: search, parent: files, kind: nav}
  - {name: deep, parent: search}
  - {name: lost, parent: nowhere}
  - {name: ping, parent: pong}
  - {name: pong, parent: ping}
paths:
  /a: {get: {operationId: inFiles, tags: [files]}}
  /b: {get: {operationId: inSearch, tags: [search]}}
  /c: {get: {operationId: inDeep, tags: [deep]}}
  /d: {get: {operationId: inLost, tags: [lost]}}
  /e: {get: {operationId: inPing, tags: [ping]}}
"##;

#[test]
fn a_tag_entry_chooses_the_operations_of_the_tags_under_it() {
    check(
        OAS32_TAGS,
        "tags: {files: {}, deep: false, nowhere: {}, pong: {}}",
        expect![[r#"
            inFiles = GET /a
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            inPing = GET /e
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            inSearch = GET /b
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            error: no operation is tagged "nowhere"
              --> curation:tags.nowhere
            warning[tag-parent-unknown]: tag "lost" names "nowhere" as its parent, which is not a tag of the document: a `tags:` entry for "nowhere" does not choose the operations tagged "lost"
              --> openapi#/tags/3/parent
            warning[tag-parent-cycle]: tag "ping" descends from itself through `parent` (ping → pong → ping): its ancestors are read up to the loop
              --> openapi#/tags/4/parent
            warning[tag-parent-cycle]: tag "pong" descends from itself through `parent` (pong → ping → pong): its ancestors are read up to the loop
              --> openapi#/tags/5/parent
        "#]],
    );
}

#[test]
fn a_dialect_ferry_does_not_read_and_a_self_that_is_no_base_are_said() {
    check(
        r##"
openapi: 3.2.0
$self: "https://api.ferry.test/v1/openapi.yaml#top"
jsonSchemaDialect: "http://json-schema.org/draft-07/schema#"
info: {title: t, version: "1"}
paths: {}
"##,
        "",
        expect![[r#"
            warning[json-schema-dialect-not-read]: `jsonSchemaDialect` names "http://json-schema.org/draft-07/schema#": ferry reads every Schema Object as JSON Schema 2020-12 (OpenAPI's dialect), in which its keywords may mean something else or nothing
              --> openapi#/jsonSchemaDialect
            warning[self-not-a-base]: `$self` is not this document's base URI, since it has a fragment, which `$self` MUST NOT: its relative references resolve against where it was read, and no reference reaches it by `$self`
              --> openapi#/$self
        "#]],
    );
    check(
        r##"
openapi: 3.2.0
$self: "https://api.ferry.test/v1/openapi.yaml"
jsonSchemaDialect: "https://spec.openapis.org/oas/3.2/dialect/2025-09-17"
info: {title: t, version: "1"}
paths: {}
"##,
        "",
        expect![[r#""#]],
    );
}

/// The snippets above that are meant as valid 3.2 documents are, by the official schema
/// (`tests/data/oas-schema/`); the one of what ferry cannot send breaks it only where 3.2
/// says MUST NOT.
#[test]
fn the_32_snippets_are_what_the_official_schema_says_they_are() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/oas-schema/schema-3.2-2025-11-23.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("JSON");
    let validator = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let errors = |text: &str| -> Vec<String> {
        let value: Value = serde_saphyr::from_str(text).expect("YAML");
        validator
            .iter_errors(&value)
            .map(|error| error.instance_path().to_string())
            .collect()
    };
    assert_eq!(errors(OAS32), Vec::<String>::new());
    assert_eq!(errors(OAS32_TAGS), Vec::<String>::new());
    assert_eq!(
        errors(OAS32_UNSENDABLE),
        [
            "/paths/~1files/additionalOperations",
            "/paths/~1files/additionalOperations",
            "/paths/~1both/get/parameters",
        ]
    );
}

/// Issue 29: the TypeScript SDK compiles output-schema patterns as ECMA-262 Unicode-mode
/// regular expressions and refuses the whole tool list over one it cannot read.
#[test]
fn output_patterns_are_written_as_clients_compile_them() {
    use super::ecma::{portable, portable_patterns};
    assert_eq!(
        portable(r"\#[a-zA-Z0-9]{6}").as_deref(),
        Ok("#[a-zA-Z0-9]{6}")
    );
    assert_eq!(portable(r"^a\-b[\-_]\d+$").as_deref(), Ok(r"^a-b[\-_]\d+$"));
    assert_eq!(portable(r"^{id}]x{2,}$").as_deref(), Ok(r"^\{id\}\]x{2,}$"));
    assert_eq!(
        portable(r"^(?:a|b)(?<name>c)(?=d)$").as_deref(),
        Ok(r"^(?:a|b)(?<name>c)(?=d)$")
    );
    for meant_otherwise in [r"abc\Z", r"(?i)abc", r"(?P<x>a)", r"\e"] {
        assert!(portable(meant_otherwise).is_err(), "{meant_otherwise}");
    }
    let mut schema = serde_json::json!({
        "type": "object",
        "properties": {"pattern": {"type": "string", "pattern": r"\#x"}},
        "patternProperties": {r"^\@": {"const": {"pattern": r"\#"}}},
        "$defs": {"Item": {"items": {"pattern": r"\:"}}},
    });
    portable_patterns(&mut schema).expect("portable");
    assert_eq!(
        schema,
        serde_json::json!({
            "type": "object",
            "properties": {"pattern": {"type": "string", "pattern": "#x"}},
            "patternProperties": {"^@": {"const": {"pattern": r"\#"}}},
            "$defs": {"Item": {"items": {"pattern": ":"}}},
        })
    );
}

/// Issue 29: a composite tool's output that reads a step's answer is typed from the step
/// operation's documented 2xx schemas where the pointer is followed with certainty (an
/// `anyOf` where several 2xx differ), and admits any JSON where it is not (through `oneOf`,
/// `additionalProperties`, a member one 2xx answer leaves undocumented) or where the step may
/// succeed on another status.
#[test]
fn composite_outputs_are_typed_only_where_the_document_is_certain() {
    let document = serde_json::json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/a": {"get": {"operationId": "opA", "responses": {
            "200": {"description": "ok", "content": {"application/json": {"schema": {
                "type": "object",
                "properties": {
                    "x": {"type": "integer"},
                    "u": {"oneOf": [{"type": "object", "properties": {"y": {"type": "string"}}}]},
                    "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"z": {"type": "string"}}}},
                    "list": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
                },
            }}}},
            "201": {"description": "made", "content": {"application/json": {"schema": {
                "type": "object", "properties": {"x": {"type": "string"}}
            }}}},
        }}},
        "/b": {"get": {"operationId": "opB", "responses": {
            "200": {"description": "ok", "content": {"application/json": {"schema": {
                "type": "array", "items": {"$ref": "#/components/schemas/Item"}
            }}}},
        }}}},
        "components": {"schemas": {"Item": {"type": "object", "properties": {"id": {"type": "string", "pattern": "^\\#[0-9]+$"}}}}},
    });
    let document = Document::from_value(document).expect("OpenAPI");
    let arazzo = r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: a, url: ./a.json}]
workflows:
  - workflowId: w
    steps:
      - stepId: s1
        operationId: opA
        outputs:
          x: $response.body#/x
          y: $response.body#/u/y
          z: $response.body#/m/k/z
          listed: $response.body#/list/0/id
          code: $statusCode
      - stepId: s2
        operationId: opA
        successCriteria: [{condition: $statusCode == 404}]
        outputs:
          x: $response.body#/x
      - stepId: s3
        operationId: opB
        outputs:
          id: $response.body#/0/id
    outputs:
      x: $steps.s1.outputs.x
      y: $steps.s1.outputs.y
      z: $steps.s1.outputs.z
      listed: $steps.s1.outputs.listed
      id: $steps.s3.outputs.id
      code: $steps.s1.outputs.code
      other: $steps.s2.outputs.x
"#;
    let (curation, _) = curation::parse(
        "openapi: ./a.json\nworkflows:\n  document: ./a.arazzo.yaml\n  tools: {w: {}}\n",
        "ferry.yaml",
        Default::default(),
    )
    .expect("curation is YAML");
    let (mut catalog, _) = compile_chosen(&document, &curation);
    let file = crate::openapi::SourceFile {
        name: "a.arazzo.yaml".to_string(),
        value: serde_saphyr::from_str(arazzo).expect("Arazzo document is YAML"),
    };
    let diagnostics = super::add_workflows(&mut catalog, &document, &curation, &file);
    assert!(
        !diagnostics.iter().any(Diagnostic::is_error),
        "{diagnostics:?}"
    );
    let tool = catalog
        .tools
        .iter()
        .find(|tool| tool.name == "w")
        .expect("w");
    let schema: Value = serde_json::from_str(
        &tool
            .output_schema
            .as_ref()
            .expect("declared")
            .served
            .to_string(),
    )
    .expect("JSON");
    assert_eq!(
        schema,
        serde_json::json!({
            "type": "object",
            "properties": {
                "x": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "y": {},
                "z": {},
                // The 201 answer does not document `list`: it may hold anything.
                "listed": {},
                // Written as clients compile it.
                "id": {"type": "string", "pattern": "^#[0-9]+$"},
                "code": {"type": "integer"},
                "other": {},
            },
            "additionalProperties": false,
        })
    );
}

#[test]
fn an_item_schema_the_validator_cannot_check_is_warned_of() {
    check(
        r##"
openapi: 3.2.0
info: {title: t, version: "1"}
paths:
  /lines:
    get:
      operationId: lines
      responses:
        "200":
          description: lines
          content:
            application/jsonl:
              itemSchema: {type: object, properties: {id: {type: string, pattern: "^(?=a)b"}}}
"##,
        "tools: {lines: {}}",
        expect![[r#"
            lines = GET /lines
              annotations: {"readOnlyHint":true} (Method)
              input: {"additionalProperties":false,"properties":{},"type":"object"}
            warning[items-unchecked]: the items of this stream are not checked: its item schema has the pattern "^(?=a)b", which the validator cannot compile (GET /lines)
              --> openapi#/paths/~1lines/get/responses/200/content/application~1jsonl/itemSchema
        "#]],
    );
}
