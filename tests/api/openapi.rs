//! The OpenAPI document tells the whole truth: what every operation can answer, in the
//! media types it really uses (docs/decisions.md, HTTP). Shape assertions run on the
//! document itself; the API tests hold the server to the promises it makes.

use std::collections::BTreeMap;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::TestApp;

backend_tests!(
    served_document_is_the_printed_one,
    etag_promises_are_kept,
    links_lead_to_the_created_and_listed_records
);

const PROBLEM: &str = "#/components/schemas/Problem";

fn document() -> Value {
    serde_json::to_value(safetrack::http::openapi_document()).expect("document as JSON")
}

/// Every (method, path, operation) of the document.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            all.push((method.clone(), path.clone(), operation.clone()));
        }
    }
    all
}

fn has_parameter(operation: &Value, location: &str, name: &str) -> bool {
    operation["parameters"].as_array().is_some_and(|ps| {
        ps.iter()
            .any(|p| p["in"] == location && p["name"].as_str() == Some(name))
    })
}

fn assert_problem_response(label: &str, response: &Value) {
    let content = response["content"].as_object().expect("content");
    assert_eq!(
        content.keys().collect::<Vec<_>>(),
        ["application/problem+json"],
        "{label}: an error is problem+json and nothing else"
    );
    assert_eq!(
        content["application/problem+json"]["schema"]["$ref"], PROBLEM,
        "{label}"
    );
    assert!(
        !response["description"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{label} is described"
    );
}

/// Every `$ref` under `value`, with where it was found.
fn refs(value: &Value, at: &str, found: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if key == "$ref"
                    && let Some(target) = inner.as_str()
                {
                    found.push((at.to_string(), target.to_string()));
                }
                refs(inner, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                refs(inner, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn every_reference_names_a_schema_of_the_document() {
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let mut found = Vec::new();
    refs(&doc, "", &mut found);
    assert!(!found.is_empty());
    let dangling: Vec<_> = found
        .iter()
        .filter(|(_, target)| {
            target
                .strip_prefix("#/components/schemas/")
                .is_none_or(|name| !schemas.contains_key(name))
        })
        .collect();
    assert!(dangling.is_empty(), "references to nothing: {dangling:?}");
    // Query filters name their closed sets, so clients see the members.
    let alerts = &doc["paths"]["/V2/{tenantVarCode}/alerts"]["get"]["parameters"];
    let status = alerts
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "status"))
        .expect("status filter");
    assert_eq!(status["schema"]["$ref"], "#/components/schemas/AlertStatus");
    assert_eq!(
        schemas["Channel"]["enum"],
        json!(["Email", "Sms", "Voice", "Mt", "Webhook", "Garmin", "Push"])
    );
}

#[test]
fn every_v2_operation_documents_what_every_request_can_get() {
    let doc = document();
    let mut count = 0;
    for (method, path, operation) in operations(&doc) {
        if !path.starts_with("/V2/") {
            continue;
        }
        count += 1;
        let label = format!("{method} {path}");
        let responses = &operation["responses"];
        for status in ["401", "404", "406", "429", "500"] {
            assert_problem_response(&format!("{label} {status}"), &responses[status]);
        }
        assert!(
            responses["401"]["headers"]["WWW-Authenticate"].is_object(),
            "{label}: 401 names its scheme"
        );
        assert!(
            responses["429"]["headers"]["Retry-After"].is_object(),
            "{label}: 429 says when to retry"
        );
        if method != "get" {
            assert_problem_response(&format!("{label} 403"), &responses["403"]);
        }
        let has_body = operation["requestBody"].is_object();
        let has_query = operation["parameters"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
        if has_body {
            for status in ["400", "413", "415"] {
                assert_problem_response(&format!("{label} {status}"), &responses[status]);
            }
        } else {
            assert!(responses["413"].is_null(), "{label}: no body, no 413");
            assert!(responses["415"].is_null(), "{label}: no body, no 415");
        }
        if has_query {
            assert_problem_response(&format!("{label} 400"), &responses["400"]);
        }
    }
    assert!(count >= 59, "only {count} /V2 operations");
}

#[test]
fn problems_are_never_plain_json() {
    let doc = document();
    for (method, path, operation) in operations(&doc) {
        for (status, response) in operation["responses"].as_object().expect("responses") {
            let label = format!("{method} {path} {status}");
            for (media_type, content) in response["content"].as_object().into_iter().flatten() {
                if content["schema"]["$ref"] == PROBLEM {
                    assert_eq!(media_type, "application/problem+json", "{label}");
                }
            }
            if status.starts_with('4') || status.starts_with('5') {
                assert_problem_response(&label, response);
            }
        }
    }
}

#[test]
fn handler_annotations_keep_their_specific_words() {
    let doc = document();
    let paths = &doc["paths"];
    // Statuses only the handler knows about survive, with the handler's description.
    assert!(paths["/V2/{tenantVarCode}"]["delete"]["responses"]["409"].is_object());
    assert!(paths["/V2/{tenantVarCode}/users"]["post"]["responses"]["403"].is_object());
    assert_eq!(
        paths["/V2/{tenantVarCode}/geofences/{geofenceId}"]["get"]["responses"]["304"]["description"],
        "Not modified (If-None-Match)"
    );
    assert_eq!(
        paths["/V2/{tenantVarCode}/users"]["post"]["responses"]["200"]["description"],
        "Created; Location names the new user"
    );
    // Operations without a precondition do not gain one.
    let link = &paths["/V2/{tenantVarCode}/tenantexternallinks/{externalLinkId}"];
    assert!(link["delete"]["responses"]["412"].is_null());
    assert!(link["get"]["responses"]["304"].is_null());
    let profile = &paths["/V2/{tenantVarCode}/userprofile/{userId}"];
    assert!(profile["put"]["responses"]["412"].is_object());
    assert!(has_parameter(&profile["put"], "header", "If-Match"));
}

#[test]
fn versions_and_preconditions_go_together() {
    let doc = document();
    let paths = doc["paths"].as_object().expect("paths");
    let mut versioned = 0;
    for (path, item) in paths {
        if !path.starts_with("/V2/") {
            continue;
        }
        let get = &item["get"];
        if get.is_null() {
            // Actions on a record read elsewhere (e.g. attaching a region): their
            // preconditions are the parent's, checked where the parent is read.
            continue;
        }
        let has_304 = get["responses"]["304"].is_object();
        assert_eq!(
            has_304,
            has_parameter(get, "header", "If-None-Match"),
            "GET {path}: 304 exactly when If-None-Match is declared"
        );
        assert_eq!(
            has_304,
            get["responses"]["200"]["headers"]["ETag"].is_object(),
            "GET {path}: 304 exactly when the 200 carries an ETag"
        );
        if has_304 {
            versioned += 1;
        }
        for method in ["put", "patch", "delete"] {
            let operation = &item[method];
            if operation.is_null() {
                continue;
            }
            assert_eq!(
                has_304,
                has_parameter(operation, "header", "If-Match"),
                "{method} {path}: If-Match exactly on records with a version"
            );
            assert_eq!(
                has_304,
                operation["responses"]["412"].is_object(),
                "{method} {path}: 412 exactly on records with a version"
            );
        }
    }
    // Tenants, users, profiles, devices, groups, contacts, lists, both notification
    // levels, geofences, webhooks, MO messages, MT messages, alerts, itineraries and
    // their flights, journeys, hotels and travelers, risk regions, collections,
    // escalation policies, a device's monitoring session.
    assert_eq!(versioned, 23);
}

#[test]
fn success_bodies_declare_every_negotiated_media_type() {
    let doc = document();
    for (method, path, operation) in operations(&doc) {
        let ok = &operation["responses"]["200"];
        let Some(content) = ok["content"].as_object() else {
            continue;
        };
        if !path.starts_with("/V2/") || content.contains_key("text/event-stream") {
            // The live stream has one representation.
            continue;
        }
        let label = format!("{method} {path}");
        for media_type in [
            "application/json",
            "text/json",
            "text/plain",
            "application/octet-stream",
            "application/xml",
            "text/xml",
        ] {
            assert!(content.contains_key(media_type), "{label} {media_type}");
        }
        let is_list = content["application/json"]["schema"]["type"] == "array";
        assert_eq!(
            is_list,
            content.contains_key("text/csv"),
            "{label}: CSV exactly for lists"
        );
    }
}

#[test]
fn a_put_body_need_not_repeat_the_id_in_the_path() {
    let doc = document();
    let device = &doc["paths"]["/V2/{tenantVarCode}/devices/{deviceId}"];
    let put = &device["put"]["requestBody"]["content"]["application/json"]["schema"];
    assert!(
        !put["required"]
            .as_array()
            .expect("required")
            .contains(&json!("DeviceId"))
    );
    assert!(put["properties"]["DeviceId"].is_object());
    let created = &doc["components"]["schemas"]["Device"]["required"];
    assert!(
        created
            .as_array()
            .expect("required")
            .contains(&json!("DeviceId"))
    );
}

#[test]
fn operational_routes_are_documented_as_they_answer() {
    let doc = document();
    let paths = &doc["paths"];
    for path in ["/healthz", "/readyz", "/metrics"] {
        let get = &paths[path]["get"];
        assert!(get["responses"]["401"].is_null(), "{path} needs no login");
        assert!(get["responses"]["200"]["content"]["text/plain"].is_object());
    }
    assert_problem_response("/readyz 503", &paths["/readyz"]["get"]["responses"]["503"]);
}

async fn served_document_is_the_printed_one(app: TestApp) {
    let served: Value = app
        .anonymous()
        .get("/openapi.json")
        .await
        .json()
        .await
        .expect("openapi.json");
    assert_eq!(served, document());
}

fn location_id(response: &reqwest::Response) -> String {
    assert_eq!(response.status(), StatusCode::OK, "create");
    let location = response.headers()["location"].to_str().expect("Location");
    location.rsplit('/').next().expect("id").to_string()
}

/// Every GET the document promises an ETag (and 304) for answers with one, and honours
/// If-None-Match; every other single-record GET has none.
async fn etag_promises_are_kept(app: TestApp) {
    let admin = &app.admin;
    let mut ids: BTreeMap<&str, String> = BTreeMap::new();
    ids.insert("tenantVarCode", "1000".into());
    let (user, _) = app.create_user("1000", "etag@example.com", "Manager").await;
    ids.insert("userId", user);
    let group = admin
        .post("/V2/1000/groups", &json!({"Name": "Vans"}))
        .await;
    ids.insert("groupId", location_id(&group));
    let device = json!({"DeviceId": "300234010753370", "DeviceType": "InReach"});
    location_id(&admin.post("/V2/1000/devices", &device).await);
    ids.insert("deviceId", "300234010753370".into());
    // The device's current monitoring session (`GET …/monitoring` is 404 without one).
    let monitoring = admin
        .post("/V2/1000/devices/300234010753370/monitoring", &json!({}))
        .await;
    assert_eq!(monitoring.status(), StatusCode::OK, "monitoring session");
    let session = admin
        .get_json("/V2/1000/devices/300234010753370/monitoring")
        .await;
    ids.insert(
        "monitoringSessionId",
        session["MonitoringSessionId"]
            .as_str()
            .expect("MonitoringSessionId")
            .to_string(),
    );
    let posted = admin
        .post(
            "/V2/1000/devices/300234010753370/momessages?process=true",
            &json!([{"MessageType": "CheckIn"}]),
        )
        .await;
    let posted: Value = posted.json().await.expect("processed");
    ids.insert(
        "messageId",
        posted[0]["MessageId"]
            .as_str()
            .expect("MessageId")
            .to_string(),
    );
    // An SOS raises an alert and writes deliveries; a device command queues an MT message.
    let sos = json!({"NotificationName": "Raise", "EventsExpression": "Emergency",
        "RaiseAlert": true, "Severity": "2", "Recipients": [
            {"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"},
            {"Type": "SendTextMessage"}]});
    location_id(&admin.post("/V2/1000/eventnotifications", &sos).await);
    let raised: Value = admin
        .post(
            "/V2/1000/devices/300234010753370/momessages?process=true",
            &json!([{"MessageType": "CheckIn", "EmergencyState": "Active"}]),
        )
        .await
        .json()
        .await
        .expect("processed");
    ids.insert(
        "alertId",
        raised[0]["Notifications"][0]["AlertId"]
            .as_str()
            .expect("AlertId")
            .to_string(),
    );
    let deliveries = admin.get_json("/V2/1000/deliveries").await;
    ids.insert(
        "deliveryId",
        deliveries[0]["DeliveryId"]
            .as_str()
            .expect("DeliveryId")
            .to_string(),
    );
    let queued = admin
        .get_json("/V2/1000/devices/300234010753370/mtmessages")
        .await;
    let mt_message = queued[0]["MessageId"]
        .as_str()
        .expect("MT MessageId")
        .to_string();
    let itinerary = location_id(
        &admin
            .post("/V2/1000/itineraries", &json!({"PnrNumber": "ABC123"}))
            .await,
    );
    let parts = format!("/V2/1000/itineraries/{itinerary}");
    ids.insert("itineraryId", itinerary);
    let times =
        json!({"DepartureTime": "2026-07-03T08:00:00Z", "ArrivalTime": "2026-07-03T09:00:00Z"});
    let mut flight = times.clone();
    flight["FlightNumber"] = json!("BA117");
    ids.insert(
        "flightId",
        location_id(&admin.post(&format!("{parts}/flights"), &flight).await),
    );
    let mut journey = times.clone();
    journey["JourneyType"] = json!("Taxi");
    ids.insert(
        "journeyId",
        location_id(&admin.post(&format!("{parts}/journeys"), &journey).await),
    );
    let hotel = json!({"Name": "Stay", "CheckInTime": "2026-07-03T14:00:00Z",
        "CheckOutTime": "2026-07-04T10:00:00Z"});
    ids.insert(
        "hotelId",
        location_id(&admin.post(&format!("{parts}/hotels"), &hotel).await),
    );
    ids.insert(
        "travelerId",
        location_id(
            &admin
                .post(
                    &format!("{parts}/travelers"),
                    &json!({"EmailAddress": "traveler@example.com"}),
                )
                .await,
        ),
    );
    let region = json!({"GeometryId": "london", "Name": "London", "RiskLevel": 3,
        "Polygon": [[{"Lat": 51.3, "Lon": -0.5}, {"Lat": 51.7, "Lon": -0.5},
                     {"Lat": 51.7, "Lon": 0.3}, {"Lat": 51.3, "Lon": 0.3}]]});
    let created = admin.post("/V2/1000/riskregions", &region).await;
    assert_eq!(created.status(), StatusCode::OK, "risk region");
    ids.insert("geometryId", "london".into());
    let contact =
        json!({"ContactName": "Duty officer", "ContactEntries": [{"Address": "+447700900123"}]});
    let contact_id = location_id(&admin.post("/V2/1000/addressbookcontacts", &contact).await);
    let list = json!({"ListName": "Ops", "Recipients": [{"Type": "TenantContact", "ContactId": contact_id}]});
    ids.insert("contactId", contact_id);
    ids.insert(
        "listId",
        location_id(
            &admin
                .post("/V2/1000/addressbookdistributionlists", &list)
                .await,
        ),
    );
    let notification = json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
        "Severity": "2", "Recipients": [{"Type": "DeviceUserManagerSms"}]});
    let tenant_notification = location_id(
        &admin
            .post("/V2/1000/eventnotifications", &notification)
            .await,
    );
    let group_notification = location_id(
        &admin
            .post(
                &format!("/V2/1000/groups/{}/eventnotifications", ids["groupId"]),
                &notification,
            )
            .await,
    );
    let geofence = json!({"Name": "Depot", "GeofenceType": "circle",
        "CircleCentre": {"Lat": 51.5, "Lon": -0.12}, "CircleRadius": 250});
    ids.insert(
        "geofenceId",
        location_id(&admin.post("/V2/1000/geofences", &geofence).await),
    );
    let escalation =
        json!({"Name": "Nights", "Steps": [{"AfterMinutes": 0, "Instructions": "Call"}]});
    ids.insert(
        "escalationPolicyId",
        location_id(&admin.post("/V2/1000/escalationpolicies", &escalation).await),
    );
    let link = json!({"Name": "Handbook", "Link": "https://example.com/handbook", "Order": 1});
    ids.insert(
        "externalLinkId",
        location_id(&admin.post("/V2/1000/tenantexternallinks", &link).await),
    );
    let webhooks = json!({"Urls": [{"Url": "https://hooks.example.com/a", "Device": true}],
        "Authentication": "None"});
    assert_eq!(
        admin.put("/V2/1000/webhooks", &webhooks).await.status(),
        StatusCode::OK
    );

    let token = admin
        .post(
            "/V2/1000/apitokens",
            &json!({"Name": "doc", "Permissions": ["Read"]}),
        )
        .await;
    let token: Value = token.json().await.expect("token");
    ids.insert(
        "tokenId",
        token["TokenId"].as_str().expect("TokenId").to_string(),
    );

    let collection = json!({"Name": "Vans", "DeviceIds": []});
    ids.insert(
        "collectionId",
        location_id(&admin.post("/V2/1000/collections", &collection).await),
    );

    let doc = document();
    let mut checked = 0;
    for (method, path, operation) in operations(&doc) {
        if method != "get" || !path.starts_with("/V2/") || path.contains("deleteddevices") {
            continue;
        }
        let mut concrete = path.clone();
        if path.contains("mtmessages/{messageId}") {
            concrete = concrete.replace("{messageId}", &mt_message);
        }
        for (name, value) in &ids {
            concrete = concrete.replace(&format!("{{{name}}}"), value);
        }
        if path.contains("eventnotifications/{notificationId}") {
            let id = if path.contains("/groups/") {
                &group_notification
            } else {
                &tenant_notification
            };
            concrete = concrete.replace("{notificationId}", id);
        }
        assert!(!concrete.contains('{'), "no id for {path}");
        if path.contains("/reports/") {
            // Reports need a window.
            concrete.push_str("?IntervalType=yesterday");
        }
        let response = admin.get(&concrete).await;
        assert_eq!(response.status(), StatusCode::OK, "GET {concrete}");
        let etag = response.headers().get("etag").cloned();
        let promised = operation["responses"]["304"].is_object();
        assert_eq!(
            etag.is_some(),
            promised,
            "GET {path}: ETag sent exactly when the document promises one"
        );
        if let Some(etag) = etag {
            let again = admin
                .request(Method::GET, &concrete)
                .header("if-none-match", etag)
                .send()
                .await
                .expect("GET");
            assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "GET {path}");
        }
        if operation["responses"]["200"]["content"]["text/csv"].is_object() {
            let csv = admin
                .request(Method::GET, &concrete)
                .header("accept", "text/csv")
                .send()
                .await
                .expect("GET");
            assert_eq!(csv.status(), StatusCode::OK, "GET {path} as CSV");
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} GETs checked");
}

/// Issue 42 (schemathesis ST202): a required text the server refuses empty says
/// `minLength: 1`, so a client reading the document knows before it sends. Every
/// required string property of every schema either has a minimum length, or a pattern,
/// format or closed set that rules out the empty string.
#[test]
fn required_texts_say_they_cannot_be_empty() {
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    // The schemas a request body can hold: those its bodies name, and theirs in turn.
    let mut sent: Vec<String> = Vec::new();
    let mut found = Vec::new();
    for (_, _, operation) in operations(&doc) {
        refs(&operation["requestBody"], "", &mut found);
    }
    while let Some((_, reference)) = found.pop() {
        let name = reference
            .trim_start_matches("#/components/schemas/")
            .to_string();
        if !sent.contains(&name) {
            refs(&schemas[&name], "", &mut found);
            sent.push(name);
        }
    }
    let mut missing = Vec::new();
    for (name, schema) in schemas.iter().filter(|(name, _)| sent.contains(name)) {
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for field in required {
            let property = &schema["properties"][field];
            let is_text = property["type"] == "string"
                || property["type"]
                    .as_array()
                    .is_some_and(|types| types.iter().any(|t| t == "string"));
            let said = property["minLength"].as_u64().is_some_and(|n| n >= 1)
                || property.get("pattern").is_some()
                || property.get("enum").is_some()
                || property["readOnly"] == true;
            // RFC 6902: the empty pointer names the whole document.
            let whole_document = name == "PatchOperation" && field == "path";
            if is_text && !said && !whole_document {
                missing.push(format!("{name}.{field}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "required texts without minLength: {missing:?}"
    );
}

/// The console's types are this document's (issue 44): `console/src/api-schema.d.ts` is
/// what the pinned openapi-typescript generates from it, so `tsc` fails a page that reads a
/// field the document lacks, and this fails when the document changed without the file.
#[test]
fn the_consoles_types_are_generated_from_this_document() {
    crate::harness::console::npm_installed();
    let console = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("console");
    let work = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("console-types-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("temp dir");
    let document = work.join("openapi.json");
    let generated = work.join("api-schema.d.ts");
    std::fs::write(
        &document,
        safetrack::http::openapi_document()
            .to_pretty_json()
            .expect("document as JSON"),
    )
    .expect("write the document");
    // The same generator and arguments as `npm run types` (console/package.json).
    let output = std::process::Command::new(console.join("node_modules/.bin/openapi-typescript"))
        .arg(&document)
        .arg("--output")
        .arg(&generated)
        .current_dir(&console)
        .output()
        .expect("openapi-typescript");
    assert!(
        output.status.success(),
        "openapi-typescript failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let fresh = std::fs::read_to_string(&generated).expect("generated types");
    let committed =
        std::fs::read_to_string(console.join("src/api-schema.d.ts")).unwrap_or_default();
    if fresh == committed {
        let _ = std::fs::remove_dir_all(&work);
        return;
    }
    let line = fresh
        .lines()
        .zip(committed.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| fresh.lines().count().min(committed.lines().count()));
    panic!(
        "console/src/api-schema.d.ts is not what the current OpenAPI document generates \
         (first difference at line {}: {:?}, committed {:?}).\nRegenerate it (this test left \
         the current one in {}), then check the console (`npm test` in console/):\n    \
         cargo build && target/debug/safetrack openapi > target/openapi.json && (cd console \
         && npm run types)",
        line + 1,
        fresh.lines().nth(line).unwrap_or("<end>"),
        committed.lines().nth(line).unwrap_or("<end>"),
        generated.display(),
    );
}

/// The operation whose `operationId` is `id`: (method, path, operation).
fn operation_by_id(doc: &Value, id: &str) -> (String, String, Value) {
    operations(doc)
        .into_iter()
        .find(|(_, _, operation)| operation["operationId"] == id)
        .unwrap_or_else(|| panic!("no operation {id}"))
}

fn path_parameters(operation: &Value) -> Vec<String> {
    operation["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["in"] == "path")
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect()
}

/// Every link names an operation of the document and gives each of its path ids, from
/// what the source request had or what its answer holds; every create and every list of a
/// record with a path of its own links to reading it.
#[test]
fn links_give_every_path_id_of_the_operation_they_name() {
    let doc = document();
    let mut linked = 0;
    for (method, path, operation) in operations(&doc) {
        let Some(links) = operation["responses"]["200"]["links"].as_object() else {
            continue;
        };
        let label = format!("{method} {path}");
        let source_ids = path_parameters(&operation);
        let body = &operation["requestBody"]["content"]["application/json"]["schema"]["$ref"];
        for (name, link) in links {
            linked += 1;
            let target = link["operationId"].as_str().expect("operationId");
            assert_eq!(name, target, "{label}: a link is named after its operation");
            let (_, target_path, target_operation) = operation_by_id(&doc, target);
            let mut given: Vec<String> = link["parameters"]
                .as_object()
                .expect("parameters")
                .keys()
                .map(|k| {
                    k.strip_prefix("path.")
                        .expect("a path parameter")
                        .to_string()
                })
                .collect();
            let mut wanted = path_parameters(&target_operation);
            given.sort();
            wanted.sort();
            assert_eq!(given, wanted, "{label} → {target_path}");
            for (key, expression) in link["parameters"].as_object().expect("parameters") {
                let expression = expression.as_str().expect("an expression");
                if let Some(id) = expression.strip_prefix("$request.path.") {
                    assert!(
                        source_ids.iter().any(|s| s == id),
                        "{label}: {key} = {expression}"
                    );
                } else if expression.starts_with("$request.body#/") {
                    assert!(
                        body.is_string(),
                        "{label}: {key} = {expression}: no JSON body"
                    );
                } else {
                    assert!(
                        expression.starts_with("$response.body#/")
                            || expression == "$response.header.Location#regex:/([^/?#]+)$",
                        "{label}: {key} = {expression}"
                    );
                }
            }
        }
    }
    assert!(linked > 100, "{linked} links");
    for (create, read) in [
        ("create_contact", "get_contact"),
        ("create_device", "get_device"),
        ("create_device", "post_messages"),
        ("create_token", "get_token"),
        ("create_user", "get_profile"),
        ("create_itinerary", "create_flight"),
        ("post_mt_message", "get_mt_message"),
        ("post_messages", "get_message"),
        ("list_alerts", "acknowledge_alert"),
        ("list_deliveries", "retry_delivery"),
        ("list_itineraries", "get_itinerary"),
        ("list_links", "get_link"),
    ] {
        let (_, path, operation) = operation_by_id(&doc, create);
        assert!(
            operation["responses"]["200"]["links"][read].is_object(),
            "{create} ({path}) links to {read}"
        );
    }
}

/// What a link's expression gives, from the source request and its answer.
fn evaluate(
    expression: &str,
    path_ids: &BTreeMap<&str, String>,
    request: &Value,
    location: Option<&str>,
    answer: &Value,
) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some(id) = expression.strip_prefix("$request.path.") {
        return path_ids[id].clone();
    }
    if let Some(pointer) = expression.strip_prefix("$request.body#") {
        return text(request.pointer(pointer).expect(expression));
    }
    if let Some(pointer) = expression.strip_prefix("$response.body#") {
        return text(answer.pointer(pointer).expect(expression));
    }
    assert_eq!(expression, "$response.header.Location#regex:/([^/?#]+)$");
    let location = location.expect("Location");
    location
        .rsplit('/')
        .next()
        .expect("a last segment")
        .to_string()
}

/// Following a create's or a list's link reaches the record it created or listed.
async fn links_lead_to_the_created_and_listed_records(app: TestApp) {
    let doc = document();
    let admin = &app.admin;
    let tenant = BTreeMap::from([("tenantVarCode", "1000".to_string())]);
    let follow = async |source: &str,
                        target: &str,
                        path_ids: &BTreeMap<&str, String>,
                        request: &Value,
                        response: reqwest::Response|
           -> Value {
        assert_eq!(response.status(), StatusCode::OK, "{source}");
        let location = response
            .headers()
            .get("location")
            .map(|l| l.to_str().expect("Location").to_string());
        let answer: Value = if response.content_length() == Some(0) {
            Value::Null
        } else {
            response.json().await.unwrap_or(Value::Null)
        };
        let (_, _, operation) = operation_by_id(&doc, source);
        let link = &operation["responses"]["200"]["links"][target];
        let (_, mut path, _) = operation_by_id(&doc, target);
        for (key, expression) in link["parameters"].as_object().expect("a link") {
            let name = key.strip_prefix("path.").expect("path");
            let value = evaluate(
                expression.as_str().expect("expression"),
                path_ids,
                request,
                location.as_deref(),
                &answer,
            );
            path = path.replace(&format!("{{{name}}}"), &value);
        }
        let read = admin.get(&path).await;
        assert_eq!(
            read.status(),
            StatusCode::OK,
            "{source} → {target}: GET {path}"
        );
        read.json().await.expect("the record")
    };

    let contact = json!({"ContactName": "Ada Byron"});
    let created = admin.post("/V2/1000/addressbookcontacts", &contact).await;
    let read = follow("create_contact", "get_contact", &tenant, &contact, created).await;
    assert_eq!(read["ContactName"], "Ada Byron");
    let listed = admin.get("/V2/1000/addressbookcontacts").await;
    let again = follow(
        "list_contacts",
        "get_contact",
        &tenant,
        &Value::Null,
        listed,
    )
    .await;
    assert_eq!(again, read);

    // A client-chosen id: the request's, not the Location's.
    let device = json!({"DeviceId": "van_7:a", "DeviceType": "InReach"});
    let created = admin.post("/V2/1000/devices", &device).await;
    let read = follow("create_device", "get_device", &tenant, &device, created).await;
    assert_eq!(read["DeviceId"], "van_7:a");

    let token = json!({"Name": "linked", "Permissions": ["Read"]});
    let created = admin.post("/V2/1000/apitokens", &token).await;
    let read = follow("create_token", "get_token", &tenant, &token, created).await;
    assert_eq!(read["Name"], "linked");

    let itinerary = json!({"PnrNumber": "LNK123"});
    let created = admin.post("/V2/1000/itineraries", &itinerary).await;
    let read = follow(
        "create_itinerary",
        "get_itinerary",
        &tenant,
        &itinerary,
        created,
    )
    .await;
    assert_eq!(read["PnrNumber"], "LNK123");

    let mut device_ids = tenant.clone();
    device_ids.insert("deviceId", "van_7:a".to_string());
    let messages = json!([{"MessageType": "CheckIn", "Message": "linked"}]);
    let posted = admin
        .post(
            "/V2/1000/devices/van_7:a/momessages?process=true",
            &messages,
        )
        .await;
    let read = follow(
        "post_messages",
        "get_message",
        &device_ids,
        &messages,
        posted,
    )
    .await;
    assert_eq!(read["Message"], "linked");
}
