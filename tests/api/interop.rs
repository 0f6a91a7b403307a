//! What existing clients send: contact addresses with the `mail:`/`sms:` prefix, and XML
//! arrays in the wrapped form .NET serialisers write (`<Recipients><Recipient>…`).

use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_problem, problem_fields};

backend_tests!(
    contact_addresses_plain_or_prefixed_are_kept_as_sent,
    mismatched_contact_addresses_are_refused_and_store_nothing,
    wrapped_xml_lists_round_trip,
    wrapped_xml_contacts_round_trip,
    wrapped_xml_notifications_round_trip,
    wrapped_xml_geofence_with_a_hole_round_trips,
    wrapped_xml_users_and_webhooks,
    wrapped_xml_errors_name_the_item_and_store_nothing,
);

const CONTACTS: &str = "/V2/1000/addressbookcontacts";
const LISTS: &str = "/V2/1000/addressbookdistributionlists";

async fn send_xml(client: &Client, method: Method, path: &str, xml: &str) -> Response {
    client
        .request(method, path)
        .header("content-type", "application/xml")
        .body(xml.to_string())
        .send()
        .await
        .expect("XML request")
}

/// The id at the end of a 200's `Location`.
fn created_id(response: &Response) -> String {
    assert_eq!(response.status(), StatusCode::OK, "create");
    let location = response.headers()["location"].to_str().unwrap();
    location.rsplit('/').next().unwrap().to_string()
}

/// `value` without the named fields, at any depth (server-assigned ids and times).
fn without(value: &Value, keys: &[&str]) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter(|(k, _)| !keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), without(v, keys)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| without(v, keys)).collect()),
        other => other.clone(),
    }
}

async fn count(app: &TestApp, path: &str) -> usize {
    app.admin.get_json(path).await.as_array().unwrap().len()
}

async fn contact_addresses_plain_or_prefixed_are_kept_as_sent(app: TestApp) {
    let addresses = [
        "mail:ops@example.com",
        "sms:+441234567890",
        "ops@example.com",
        "+44 1234 567890",
    ];
    let entries: Vec<Value> = addresses.iter().map(|a| json!({"Address": a})).collect();
    let response = app
        .admin
        .post(
            CONTACTS,
            &json!({"ContactName": "Ops desk", "ContactEntries": entries}),
        )
        .await;
    let id = created_id(&response);
    let path = format!("{CONTACTS}/{id}");
    let stored = app.admin.get_json(&path).await;
    let read: Vec<&str> = stored["ContactEntries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["Address"].as_str().unwrap())
        .collect();
    assert_eq!(read, addresses);

    // Sent back unchanged, entries keep their ids and times; XML keeps the prefix too.
    let put = app
        .admin
        .put(
            &path,
            &json!({"ContactName": "Ops desk", "ContactEntries": stored["ContactEntries"]}),
        )
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    let after = app.admin.get_json(&path).await;
    assert_eq!(after["ContactEntries"], stored["ContactEntries"]);
    let xml = app
        .admin
        .request(Method::GET, &path)
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        xml.contains("<Address>sms:+441234567890</Address>"),
        "{xml}"
    );

    // A list may name a prefixed entry.
    let list = json!({"ListName": "Desk", "Recipients": [
        {"Type": "TenantContact", "ContactId": id, "ContactDetailId": "2"}]});
    assert_eq!(app.admin.post(LISTS, &list).await.status(), StatusCode::OK);
}

async fn mismatched_contact_addresses_are_refused_and_store_nothing(app: TestApp) {
    let bad = [
        ("mail:+441234567890", "sms:"),
        ("sms:ops@example.com", "mail:"),
        ("mail:", "not a valid e-mail address"),
        ("sms:+44 abc", "must start with +"),
        ("tel:+441234567890", "neither"),
        ("ops@example.com", ""),
    ];
    let entries: Vec<Value> = bad.iter().map(|(a, _)| json!({"Address": a})).collect();
    let response = app
        .admin
        .post(
            CONTACTS,
            &json!({"ContactName": "Ops", "ContactEntries": entries}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        (0..5)
            .map(|i| format!("ContactEntries[{i}].Address"))
            .collect::<Vec<_>>()
    );
    for (i, (address, expected)) in bad.iter().take(5).enumerate() {
        let message = problem["errors"][i]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{address}: {message}");
    }
    assert_eq!(count(&app, CONTACTS).await, 0);

    // A PUT with a mismatched address changes nothing either.
    let id = created_id(
        &app.admin
            .post(
                CONTACTS,
                &json!({"ContactName": "Ops", "ContactEntries": [{"Address": "mail:ops@example.com"}]}),
            )
            .await,
    );
    let path = format!("{CONTACTS}/{id}");
    let before = app.admin.get_json(&path).await;
    let put = app
        .admin
        .put(
            &path,
            &json!({"ContactName": "Changed", "ContactEntries": [{"Address": "sms:ops@example.com"}]}),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(put, 400, "validation_failed").await),
        ["ContactEntries[0].Address"]
    );
    assert_eq!(app.admin.get_json(&path).await, before);
}

/// Server-assigned fields of lists and contacts (and of contact entries).
const LIST_ASSIGNED: [&str; 2] = ["ListId", "LastUpdated"];
const CONTACT_ASSIGNED: [&str; 2] = ["ContactId", "LastUpdated"];

async fn wrapped_xml_lists_round_trip(app: TestApp) {
    let person = created_id(
        &app.admin
            .post(
                CONTACTS,
                &json!({"ContactName": "Sam", "ContactEntries": [{"Address": "sms:+447700900123"}]}),
            )
            .await,
    );
    let as_json = json!({"ListName": "Ops", "AppliesToSubtenants": true, "Recipients": [
        {"Type": "TenantContact", "ContactId": person, "ContactDetailId": "1"},
        {"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"},
        {"Type": "NearestDevices", "Radius": "2.5"},
        {"Type": "DeviceUserSms"}
    ]});
    let json_id = created_id(&app.admin.post(LISTS, &as_json).await);
    let expected = app.admin.get_json(&format!("{LISTS}/{json_id}")).await;

    let wrapped = format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
        <DistributionList xmlns:i="http://www.w3.org/2001/XMLSchema-instance">
          <ListName>Ops</ListName>
          <AppliesToSubtenants>true</AppliesToSubtenants>
          <Recipients>
            <Recipient><Type>TenantContact</Type><ContactId>{person}</ContactId><ContactDetailId>1</ContactDetailId></Recipient>
            <Recipient><Type>MessagingAddress</Type><MessagingAddress>mail:ops@example.com</MessagingAddress></Recipient>
            <Recipient><Type>NearestDevices</Type><Radius>2.5</Radius><ListId i:nil="true"/></Recipient>
            <Recipient><Type>DeviceUserSms</Type></Recipient>
          </Recipients>
        </DistributionList>"#
    );
    let xml_id = created_id(&send_xml(&app.admin, Method::POST, LISTS, &wrapped).await);
    let path = format!("{LISTS}/{xml_id}");
    let from_xml = app.admin.get_json(&path).await;
    assert_eq!(
        without(&from_xml, &LIST_ASSIGNED),
        without(&expected, &LIST_ASSIGNED)
    );

    // One recipient, wrapped; then an empty wrapper: an empty (not a missing) array.
    let one = "<DistributionList><ListName>Ops</ListName><Recipients>\
               <Recipient><Type>DeviceUserSms</Type></Recipient></Recipients></DistributionList>";
    assert_eq!(
        send_xml(&app.admin, Method::PUT, &path, one).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get_json(&path).await["Recipients"],
        json!([{"Type": "DeviceUserSms", "TenantCode": null, "ContactId": null,
                "ContactDetailId": null, "ListId": null, "MessagingAddress": null,
                "Radius": null, "ReportingFrequency": null, "Interval": null, "GroupId": null}])
    );
    let empty = "<DistributionList><ListName>Ops</ListName><Recipients/></DistributionList>";
    assert_eq!(
        send_xml(&app.admin, Method::PUT, &path, empty)
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.get_json(&path).await["Recipients"], json!([]));

    // Output stays as documented: repeated elements.
    let xml = app
        .admin
        .request(Method::GET, &format!("{LISTS}/{json_id}"))
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(xml.contains("</Recipients><Recipients><Type>"), "{xml}");
    assert!(!xml.contains("<Recipient>"), "{xml}");
}

async fn wrapped_xml_contacts_round_trip(app: TestApp) {
    let as_json = json!({"ContactName": "Sam", "IsEscalationContact": true, "CultureName": "en-GB",
        "ContactEntries": [{"Address": "mail:sam@example.com"}, {"Address": "+447700900123"}]});
    let json_id = created_id(&app.admin.post(CONTACTS, &as_json).await);
    let expected = app.admin.get_json(&format!("{CONTACTS}/{json_id}")).await;
    let wrapped = "<Contact><ContactName>Sam</ContactName><IsEscalationContact>true</IsEscalationContact>\
        <CultureName>en-GB</CultureName><ContactEntries>\
        <ContactEntry><Address>mail:sam@example.com</Address></ContactEntry>\
        <ContactEntry><Address>+447700900123</Address></ContactEntry>\
        </ContactEntries></Contact>";
    let xml_id = created_id(&send_xml(&app.admin, Method::POST, CONTACTS, wrapped).await);
    let path = format!("{CONTACTS}/{xml_id}");
    assert_eq!(
        without(&app.admin.get_json(&path).await, &CONTACT_ASSIGNED),
        without(&expected, &CONTACT_ASSIGNED)
    );
    // PUT, wrapped, one entry sent back with its EntryId.
    let one = "<Contact><ContactName>Sam</ContactName><ContactEntries><ContactEntry>\
        <EntryId>2</EntryId><Address>+447700900123</Address></ContactEntry></ContactEntries></Contact>";
    assert_eq!(
        send_xml(&app.admin, Method::PUT, &path, one).await.status(),
        StatusCode::OK
    );
    let after = app.admin.get_json(&path).await;
    assert_eq!(after["ContactEntries"].as_array().unwrap().len(), 1);
    assert_eq!(after["ContactEntries"][0]["EntryId"], "2");
    assert_eq!(after["IsEscalationContact"], false);
}

async fn wrapped_xml_notifications_round_trip(app: TestApp) {
    let base = "/V2/1000/eventnotifications";
    let as_json = json!({"NotificationName": "SOS", "EventsExpression": "Emergency",
        "RaiseAlert": true, "Severity": "2", "Recipients": [
            {"Type": "MessagingAddress", "MessagingAddress": "sms:+447700900123"},
            {"Type": "DeviceUserManagerSms"}]});
    let json_id = created_id(&app.admin.post(base, &as_json).await);
    let expected = app.admin.get_json(&format!("{base}/{json_id}")).await;
    let wrapped = "<EventNotification><NotificationName>SOS</NotificationName>\
        <EventsExpression>Emergency</EventsExpression><RaiseAlert>true</RaiseAlert>\
        <Severity>2</Severity><Recipients>\
        <Recipient><Type>MessagingAddress</Type><MessagingAddress>sms:+447700900123</MessagingAddress></Recipient>\
        <Recipient><Type>DeviceUserManagerSms</Type></Recipient>\
        </Recipients></EventNotification>";
    let xml_id = created_id(&send_xml(&app.admin, Method::POST, base, wrapped).await);
    let from_xml = app.admin.get_json(&format!("{base}/{xml_id}")).await;
    assert_eq!(
        without(&from_xml, &["NotificationId"]),
        without(&expected, &["NotificationId"])
    );
    // PUT in the wrapped form onto the JSON-made one: the same record.
    assert_eq!(
        send_xml(
            &app.admin,
            Method::PUT,
            &format!("{base}/{json_id}"),
            wrapped
        )
        .await
        .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin.get_json(&format!("{base}/{json_id}")).await,
        expected
    );
}

fn ring_xml(points: &[(f64, f64)]) -> String {
    let points: String = points
        .iter()
        .map(|(lat, lon)| format!("<Position><Lat>{lat}</Lat><Lon>{lon}</Lon></Position>"))
        .collect();
    format!("<ArrayOfPosition>{points}</ArrayOfPosition>")
}

fn ring_json(points: &[(f64, f64)]) -> Value {
    points
        .iter()
        .map(|(lat, lon)| json!({"Lat": lat, "Lon": lon}))
        .collect()
}

async fn wrapped_xml_geofence_with_a_hole_round_trips(app: TestApp) {
    let base = "/V2/1000/geofences";
    let outline = [(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, 0.0)];
    let hole = [(0.2, 0.2), (0.2, 0.4), (0.4, 0.4)];
    let as_json = json!({"Name": "Yard", "GeofenceType": "polygon", "MinZoom": 3,
        "PolygonPositions": [ring_json(&outline), ring_json(&hole)],
        "Properties": {"site": "north"}});
    let json_id = created_id(&app.admin.post(base, &as_json).await);
    let json_path = format!("{base}/{json_id}");
    let expected = app.admin.get_json(&json_path).await;
    assert_eq!(expected["PolygonPositions"].as_array().unwrap().len(), 2);

    let wrapped = |name: &str| {
        format!(
            "<Geofence><Name>{name}</Name><GeofenceType>polygon</GeofenceType><MinZoom>3</MinZoom>\
             <PolygonPositions>{}{}</PolygonPositions><Properties><site>north</site></Properties></Geofence>",
            ring_xml(&outline),
            ring_xml(&hole)
        )
    };
    let xml_id = created_id(&send_xml(&app.admin, Method::POST, base, &wrapped("Yard 2")).await);
    let assigned = ["GeofenceId", "Name", "Timestamp"];
    assert_eq!(
        without(
            &app.admin.get_json(&format!("{base}/{xml_id}")).await,
            &assigned
        ),
        without(&expected, &assigned)
    );
    // PUT in the wrapped form onto the JSON-made one: nothing changes but the time.
    let put = send_xml(&app.admin, Method::PUT, &json_path, &wrapped("Yard")).await;
    assert_eq!(put.status(), StatusCode::OK);
    assert_eq!(
        without(&app.admin.get_json(&json_path).await, &["Timestamp"]),
        without(&expected, &["Timestamp"])
    );

    // A polyline, wrapped.
    let line = "<Geofence><Name>Road</Name><GeofenceType>polyline</GeofenceType>\
        <FenceWidth>25</FenceWidth><PolylinePositions><Position><Lat>0</Lat><Lon>0</Lon></Position>\
        <Position><Lat>1</Lat><Lon>1</Lon></Position></PolylinePositions></Geofence>";
    let line_id = created_id(&send_xml(&app.admin, Method::POST, base, line).await);
    assert_eq!(
        app.admin.get_json(&format!("{base}/{line_id}")).await["PolylinePositions"],
        ring_json(&[(0.0, 0.0), (1.0, 1.0)])
    );
}

async fn wrapped_xml_users_and_webhooks(app: TestApp) {
    let user = r#"<User xmlns="http://schemas.datacontract.org/2004/07/Clients"
        xmlns:i="http://www.w3.org/2001/XMLSchema-instance">
        <FirstName i:nil="true"/><Password>a-long-password</Password>
        <SecondaryFacilityIds xmlns:a="http://schemas.microsoft.com/2003/10/Serialization/Arrays">
          <a:string>north</a:string><a:string>south</a:string>
        </SecondaryFacilityIds>
        <UserRoleId>User</UserRoleId><Username>jane@example.com</Username></User>"#;
    let id = created_id(&send_xml(&app.admin, Method::POST, "/V2/1000/users", user).await);
    let stored = app.admin.get_json(&format!("/V2/1000/users/{id}")).await;
    assert_eq!(stored["SecondaryFacilityIds"], json!(["north", "south"]));
    assert_eq!(stored["FirstName"], Value::Null);

    let hooks = "/V2/1000/webhooks";
    let as_json = json!({"Urls": [
        {"Url": "https://hooks.example.com/a", "Device": true},
        {"Url": "https://hooks.example.com/b", "User": true}],
        "Authentication": "HmacSha256", "Password": "a-shared-signing-key"});
    assert_eq!(
        app.admin.put(hooks, &as_json).await.status(),
        StatusCode::OK
    );
    let expected = app.admin.get_json(hooks).await;
    assert_eq!(
        app.admin.put(hooks, &json!({})).await.status(),
        StatusCode::OK
    );
    let wrapped = "<WebhookSettings><Urls>\
        <WebhookUrl><Url>https://hooks.example.com/a</Url><Device>true</Device></WebhookUrl>\
        <WebhookUrl><Url>https://hooks.example.com/b</Url><User>true</User></WebhookUrl>\
        </Urls><Authentication>HmacSha256</Authentication><Password>a-shared-signing-key</Password>\
        </WebhookSettings>";
    assert_eq!(
        send_xml(&app.admin, Method::PUT, hooks, wrapped)
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(app.admin.get_json(hooks).await, expected);
}

async fn wrapped_xml_errors_name_the_item_and_store_nothing(app: TestApp) {
    let bad_type = "<DistributionList><ListName>Ops</ListName><Recipients>\
        <Recipient><Type>DeviceUserSms</Type></Recipient><Recipient><Type>Pigeon</Type></Recipient>\
        </Recipients></DistributionList>";
    let problem = assert_problem(
        send_xml(&app.admin, Method::POST, LISTS, bad_type).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["Recipients[1].Type"]);
    let bad_value = "<DistributionList><ListName>Ops</ListName><Recipients>\
        <Recipient><Type>MessagingAddress</Type><MessagingAddress>mail:+447700900123</MessagingAddress></Recipient>\
        </Recipients></DistributionList>";
    let problem = assert_problem(
        send_xml(&app.admin, Method::POST, LISTS, bad_value).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["Recipients[0].MessagingAddress"]);
    let unclosed = "<DistributionList><ListName>Ops</ListName><Recipients><Recipient>\
        <Type>DeviceUserSms</Type></Recipients></DistributionList>";
    assert_problem(
        send_xml(&app.admin, Method::POST, LISTS, unclosed).await,
        400,
        "malformed_xml",
    )
    .await;
    let bad_point = format!(
        "<Geofence><Name>Yard</Name><GeofenceType>polygon</GeofenceType><PolygonPositions>{}</PolygonPositions></Geofence>",
        ring_xml(&[(0.0, 0.0), (0.0, 1.0), (1.0, 1.0)]).replace("<Lat>1</Lat>", "<Lat>north</Lat>")
    );
    let problem = assert_problem(
        send_xml(&app.admin, Method::POST, "/V2/1000/geofences", &bad_point).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["PolygonPositions[0][2].Lat"]);
    assert_eq!(count(&app, LISTS).await, 0);
    assert_eq!(count(&app, "/V2/1000/geofences").await, 0);
}
