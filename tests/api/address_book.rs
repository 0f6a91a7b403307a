use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::common::{Client, TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    contacts_round_trip_with_entry_ids,
    contact_validation_stores_nothing,
    lists_round_trip_and_reject_unknown_properties,
    recipients_are_validated_by_type,
    recipient_references_must_be_in_scope,
    shared_records_are_read_only_in_subtenants,
    referenced_records_cannot_be_deleted,
    sync_to_devices_is_derived,
    lists_negotiate_every_media_type,
    lists_accept_xml_and_text_and_round_trip,
    address_book_permissions_and_foreign_tenants,
);

async fn post_location(client: &Client, path: &str, body: &Value) -> String {
    let response = client.post(path, body).await;
    assert_eq!(response.status(), StatusCode::OK, "POST {path} {body}");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

async fn contact(app: &TestApp, tenant: &str, body: Value) -> String {
    post_location(
        &app.admin,
        &format!("/V2/{tenant}/addressbookcontacts"),
        &body,
    )
    .await
}

async fn list(app: &TestApp, tenant: &str, body: Value) -> String {
    post_location(
        &app.admin,
        &format!("/V2/{tenant}/addressbookdistributionlists"),
        &body,
    )
    .await
}

async fn count(app: &TestApp, path: &str) -> usize {
    app.admin.get_json(path).await.as_array().unwrap().len()
}

async fn contacts_round_trip_with_entry_ids(app: TestApp) {
    let id = contact(
        &app,
        "1000",
        json!({"ContactName": "Sam Responder", "IsEscalationContact": true, "CultureName": "en-GB",
               "SyncToDevices": true, "ContactId": "999",
               "ContactEntries": [{"Address": "sam@example.com"}, {"Address": "+447700900123"}]}),
    )
    .await;
    assert_ne!(id, "999");
    let path = format!("/V2/1000/addressbookcontacts/{id}");
    let stored = app.admin.get_json(&path).await;
    assert_eq!(stored["ContactId"], id);
    assert_eq!(stored["IsEscalationContact"], true);
    assert_eq!(
        stored["SyncToDevices"], false,
        "read-only, ignored on write"
    );
    let entries = stored["ContactEntries"].as_array().unwrap();
    assert_eq!(entries[0]["EntryId"], "1");
    assert_eq!(entries[1]["EntryId"], "2");
    assert!(entries[0]["LastUpdated"].is_string());
    let put = app
        .admin
        .put(&path, &json!({"ContactName": "Sam", "ContactEntries": [{"EntryId": "2", "Address": "+447700900123"}, {"Address": "sam2@example.com"}]}))
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    let after = app.admin.get_json(&path).await;
    assert_eq!(after["ContactName"], "Sam");
    assert_eq!(after["ContactEntries"][0]["EntryId"], "2");
    assert_eq!(
        after["ContactEntries"][0]["LastUpdated"],
        entries[1]["LastUpdated"]
    );
    assert_eq!(after["ContactEntries"][1]["EntryId"], "3");
    assert_eq!(count(&app, "/V2/1000/addressbookcontacts").await, 1);
    assert_eq!(app.admin.delete(&path).await.status(), StatusCode::OK);
    assert_not_found(app.admin.get(&path).await).await;
}

async fn contact_validation_stores_nothing(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000/addressbookcontacts",
            &json!({"ContactName": "", "CultureName": "!!", "ContactEntries": [{"Address": "nowhere"}, {}]}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    assert_eq!(
        problem_fields(&problem),
        [
            "ContactName",
            "CultureName",
            "ContactEntries[0].Address",
            "ContactEntries[1].Address"
        ]
    );
    let wrong_type = app
        .admin
        .post(
            "/V2/1000/addressbookcontacts",
            &json!({"ContactName": "x", "ContactEntries": "a"}),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(wrong_type, 400, "validation_failed").await),
        ["ContactEntries"]
    );
    assert_eq!(count(&app, "/V2/1000/addressbookcontacts").await, 0);
}

async fn lists_round_trip_and_reject_unknown_properties(app: TestApp) {
    let group = post_location(&app.admin, "/V2/1000/groups", &json!({"Name": "G"})).await;
    let id = list(
        &app,
        "1000",
        json!({"ListName": "Ops", "ListId": "77", "LastUpdated": "2020-01-01T00:00:00Z", "Recipients": [
            {"Type": "MessagingAddress", "MessagingAddress": "mail:ops@example.com"},
            {"Type": "NearestDevices", "Radius": "2.5"},
            {"Type": "ChangeGroup", "GroupId": group},
            {"Type": "DeviceUserEmail"}
        ]}),
    )
    .await;
    let path = format!("/V2/1000/addressbookdistributionlists/{id}");
    let stored = app.admin.get_json(&path).await;
    assert_eq!(stored["ListId"], id);
    assert_eq!(stored["ListName"], "Ops");
    assert_eq!(stored["SyncToDevices"], false);
    assert_ne!(stored["LastUpdated"], "2020-01-01T00:00:00Z");
    assert_eq!(stored["Recipients"].as_array().unwrap().len(), 4);
    assert_eq!(stored["Recipients"][1]["Radius"], "2.5");

    for (body, field) in [
        (
            json!({"ListName": "X", "Recipients": [], "Colour": "red"}),
            "Colour",
        ),
        (
            json!({"ListName": "X", "Recipients": [], "SyncToDevices": true}),
            "SyncToDevices",
        ),
        (
            json!({"ListName": "X", "Recipients": [{"Type": "DeviceUserSms", "Nickname": "x"}]}),
            "Recipients[0].Nickname",
        ),
        (json!({"ListName": "", "Recipients": []}), "ListName"),
        (json!({"ListName": "X"}), "Recipients"),
        (json!({"ListName": "X", "Recipients": "all"}), "Recipients"),
        (
            json!({"ListName": "X", "Recipients": [{"Type": "Pigeon"}]}),
            "Recipients[0].Type",
        ),
    ] {
        let response = app
            .admin
            .post("/V2/1000/addressbookdistributionlists", &body)
            .await;
        let problem = assert_problem(response, 400, "validation_failed").await;
        assert_eq!(problem_fields(&problem), [field], "{body}");
        if field == "Recipients[0].Type" {
            // A closed set's error names its members, so the client learns the right ones.
            let message = problem["errors"][0]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(
                    "'Pigeon' is no RecipientType: must be one of DeviceList, TenantList"
                ),
                "{message}"
            );
        }
    }
    let put = app
        .admin
        .put(&path, &json!({"ListName": "Ops 2", "Recipients": []}))
        .await;
    assert_eq!(put.status(), StatusCode::OK);
    assert_eq!(app.admin.get_json(&path).await["Recipients"], json!([]));
    let self_ref = app
        .admin
        .put(
            &path,
            &json!({"ListName": "Loop", "Recipients": [{"Type": "DeviceList", "ListId": id}]}),
        )
        .await;
    assert_eq!(
        problem_fields(&assert_problem(self_ref, 400, "validation_failed").await),
        ["Recipients[0].ListId"]
    );
    assert_eq!(
        count(&app, "/V2/1000/addressbookdistributionlists").await,
        1
    );
    assert_eq!(app.admin.get_json(&path).await["ListName"], "Ops 2");
}

async fn recipients_are_validated_by_type(app: TestApp) {
    let response = app
        .admin
        .post(
            "/V2/1000/addressbookdistributionlists",
            &json!({"ListName": "Bad", "Recipients": [
                {"Type": "DeviceList", "ListId": "1", "Radius": "5"},
                {"Type": "MessagingAddress", "MessagingAddress": "ops@example.com"},
                {"Type": "MessagingAddress", "MessagingAddress": "sms:0770"},
                {"Type": "NearestDevices", "Radius": "-2"},
                {"Type": "ChangeReportingFrequency", "ReportingFrequency": "often"},
                {"Type": "SendCheckInRequest"},
                {"Type": "SendTextMessage", "GroupId": "1"},
                {"Type": "NearestDevices", "Radius": 5}
            ]}),
        )
        .await;
    let problem = assert_problem(response, 400, "validation_failed").await;
    // A wrong JSON type stops parsing first: it alone is reported.
    assert_eq!(problem_fields(&problem), ["Recipients[7].Radius"]);
    let mut body = json!({"ListName": "Bad", "Recipients": [
        {"Type": "DeviceList", "ListId": "1", "Radius": "5"},
        {"Type": "MessagingAddress", "MessagingAddress": "ops@example.com"},
        {"Type": "MessagingAddress", "MessagingAddress": "sms:0770"},
        {"Type": "NearestDevices", "Radius": "-2"},
        {"Type": "ChangeReportingFrequency", "ReportingFrequency": "often"},
        {"Type": "SendCheckInRequest"},
        {"Type": "SendTextMessage", "GroupId": "1"}
    ]});
    let problem = assert_problem(
        app.admin
            .post("/V2/1000/addressbookdistributionlists", &body)
            .await,
        400,
        "validation_failed",
    )
    .await;
    let fields = problem_fields(&problem);
    for expected in [
        "Recipients[0].Radius",
        "Recipients[1].MessagingAddress",
        "Recipients[2].MessagingAddress",
        "Recipients[3].Radius",
        "Recipients[4].ReportingFrequency",
        "Recipients[5].Interval",
        "Recipients[6].GroupId",
    ] {
        assert!(
            fields.contains(&expected.to_string()),
            "{expected} in {fields:?}"
        );
    }
    body["Recipients"] = json!([{"Type": "SendCheckInRequest", "Interval": "30"}]);
    assert_eq!(
        app.admin
            .post("/V2/1000/addressbookdistributionlists", &body)
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        count(&app, "/V2/1000/addressbookdistributionlists").await,
        1
    );
}

async fn recipient_references_must_be_in_scope(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let b_contact = contact(&app, &b, json!({"ContactName": "B person"})).await;
    let b_list = list(&app, &b, json!({"ListName": "B list", "Recipients": []})).await;
    let b_group = post_location(
        &app.admin,
        &format!("/V2/{b}/groups"),
        &json!({"Name": "B"}),
    )
    .await;
    let a_contact = contact(
        &app,
        &a,
        json!({"ContactName": "A person", "ContactEntries": [{"Address": "a@example.com"}]}),
    )
    .await;
    for (recipient, field) in [
        (
            json!({"Type": "TenantContact", "ContactId": b_contact}),
            "Recipients[0].ContactId",
        ),
        (
            json!({"Type": "DeviceList", "ListId": b_list}),
            "Recipients[0].ListId",
        ),
        (
            json!({"Type": "ChangeGroup", "GroupId": b_group}),
            "Recipients[0].GroupId",
        ),
        (
            json!({"Type": "DeviceContact", "ContactId": "987654"}),
            "Recipients[0].ContactId",
        ),
        (
            json!({"Type": "DeviceContact", "ContactId": a_contact, "ContactDetailId": "9"}),
            "Recipients[0].ContactDetailId",
        ),
        (
            json!({"Type": "TenantContact", "ContactId": a_contact, "TenantCode": b}),
            "Recipients[0].TenantCode",
        ),
    ] {
        let body = json!({"ListName": "L", "Recipients": [recipient]});
        let response = app
            .admin
            .post(&format!("/V2/{a}/addressbookdistributionlists"), &body)
            .await;
        assert_eq!(
            problem_fields(&assert_problem(response, 400, "validation_failed").await),
            [field]
        );
    }
    let foreign = app
        .admin
        .post(&format!("/V2/{a}/addressbookdistributionlists"), &json!({"ListName": "L", "Recipients": [{"Type": "TenantContact", "ContactId": b_contact}]}))
        .await;
    let missing = app
        .admin
        .post(&format!("/V2/{a}/addressbookdistributionlists"), &json!({"ListName": "L", "Recipients": [{"Type": "TenantContact", "ContactId": "987654"}]}))
        .await;
    let (foreign, missing) = (
        assert_problem(foreign, 400, "validation_failed").await,
        assert_problem(missing, 400, "validation_failed").await,
    );
    assert_eq!(
        foreign["errors"][0]["message"]
            .as_str()
            .unwrap()
            .replace(&b_contact, "N"),
        missing["errors"][0]["message"]
            .as_str()
            .unwrap()
            .replace("987654", "N"),
        "no leak of foreign records"
    );
    let ok = json!({"ListName": "L", "Recipients": [{"Type": "TenantContact", "ContactId": a_contact, "ContactDetailId": "1", "TenantCode": a}]});
    assert_eq!(
        app.admin
            .post(&format!("/V2/{a}/addressbookdistributionlists"), &ok)
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        count(&app, &format!("/V2/{a}/addressbookdistributionlists")).await,
        1
    );
}

async fn shared_records_are_read_only_in_subtenants(app: TestApp) {
    let parent = app.create_tenant("1000", "Parent").await;
    let child = app.create_tenant(&parent, "Child").await;
    let shared = contact(
        &app,
        &parent,
        json!({"ContactName": "HQ desk", "AppliesToSubtenants": true}),
    )
    .await;
    let private = contact(&app, &parent, json!({"ContactName": "Private"})).await;
    let shared_list = list(
        &app,
        &parent,
        json!({"ListName": "HQ", "AppliesToSubtenants": true, "Recipients": []}),
    )
    .await;
    let (_, child_admin) = app
        .create_user(&child, "admin@child.example", "Administrator")
        .await;

    let contacts = child_admin
        .get_json(&format!("/V2/{child}/addressbookcontacts"))
        .await;
    let names: Vec<&str> = contacts
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ContactName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["HQ desk"]);
    assert_eq!(
        child_admin
            .get_json(&format!("/V2/{child}/addressbookcontacts/{shared}"))
            .await["ContactName"],
        "HQ desk"
    );
    assert_not_found(
        child_admin
            .get(&format!("/V2/{child}/addressbookcontacts/{private}"))
            .await,
    )
    .await;
    assert_eq!(
        count(&app, &format!("/V2/{child}/addressbookdistributionlists")).await,
        1
    );

    let put = child_admin
        .put(
            &format!("/V2/{child}/addressbookcontacts/{shared}"),
            &json!({"ContactName": "Mine now"}),
        )
        .await;
    assert_problem(put, 403, "forbidden").await;
    assert_problem(
        child_admin
            .delete(&format!("/V2/{child}/addressbookcontacts/{shared}"))
            .await,
        403,
        "forbidden",
    )
    .await;
    let put_list = child_admin
        .put(
            &format!("/V2/{child}/addressbookdistributionlists/{shared_list}"),
            &json!({"ListName": "x", "Recipients": []}),
        )
        .await;
    assert_problem(put_list, 403, "forbidden").await;
    // A child's list may name the shared contact.
    let body = json!({"ListName": "Child list", "Recipients": [{"Type": "TenantContact", "ContactId": shared, "TenantCode": parent}]});
    assert_eq!(
        child_admin
            .post(&format!("/V2/{child}/addressbookdistributionlists"), &body)
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/{parent}/addressbookcontacts/{shared}"))
            .await["ContactName"],
        "HQ desk"
    );
}

async fn referenced_records_cannot_be_deleted(app: TestApp) {
    let person = contact(&app, "1000", json!({"ContactName": "Ref"})).await;
    let inner = list(&app, "1000", json!({"ListName": "Inner", "Recipients": [{"Type": "DeviceContact", "ContactId": person}]})).await;
    let outer = list(
        &app,
        "1000",
        json!({"ListName": "Outer", "Recipients": [{"Type": "TenantList", "ListId": inner}]}),
    )
    .await;
    assert_problem(
        app.admin
            .delete(&format!("/V2/1000/addressbookcontacts/{person}"))
            .await,
        409,
        "conflict",
    )
    .await;
    assert_problem(
        app.admin
            .delete(&format!("/V2/1000/addressbookdistributionlists/{inner}"))
            .await,
        409,
        "conflict",
    )
    .await;
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/addressbookdistributionlists/{outer}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/addressbookdistributionlists/{inner}"))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        app.admin
            .delete(&format!("/V2/1000/addressbookcontacts/{person}"))
            .await
            .status(),
        StatusCode::OK
    );
}

async fn sync_to_devices_is_derived(app: TestApp) {
    let synced = contact(&app, "1000", json!({"ContactName": "On devices"})).await;
    let plain = contact(&app, "1000", json!({"ContactName": "Office only"})).await;
    let device_list = list(
        &app,
        "1000",
        json!({"ListName": "Dev", "Recipients": [{"Type": "DeviceContact", "ContactId": synced}]}),
    )
    .await;
    list(&app, "1000", json!({"ListName": "Wrapper", "Recipients": [{"Type": "DeviceList", "ListId": device_list}, {"Type": "TenantContact", "ContactId": plain}]})).await;
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/1000/addressbookcontacts/{synced}"))
            .await["SyncToDevices"],
        true
    );
    assert_eq!(
        app.admin
            .get_json(&format!("/V2/1000/addressbookcontacts/{plain}"))
            .await["SyncToDevices"],
        false
    );
    let lists = app
        .admin
        .get_json("/V2/1000/addressbookdistributionlists")
        .await;
    assert_eq!(lists[0]["SyncToDevices"], true);
    assert_eq!(lists[1]["SyncToDevices"], false);
}

async fn get_as(app: &TestApp, path: &str, accept: &str) -> reqwest::Response {
    app.admin
        .request(Method::GET, path)
        .header("accept", accept)
        .send()
        .await
        .unwrap()
}

async fn lists_negotiate_every_media_type(app: TestApp) {
    let id = list(&app, "1000", json!({"ListName": "Ops", "Recipients": [{"Type": "MessagingAddress", "MessagingAddress": "sms:+447700900123"}]})).await;
    let one = format!("/V2/1000/addressbookdistributionlists/{id}");
    let all = "/V2/1000/addressbookdistributionlists";
    for (accept, content_type) in [
        ("application/json", "application/json"),
        ("text/json", "text/json"),
        ("text/plain", "text/plain; charset=utf-8"),
        ("application/octet-stream", "application/octet-stream"),
        ("application/xml", "application/xml"),
        ("text/xml", "text/xml"),
    ] {
        for path in [one.as_str(), all] {
            let response = get_as(&app, path, accept).await;
            assert_eq!(response.status(), StatusCode::OK, "{path} as {accept}");
            assert_eq!(response.headers()["content-type"], content_type);
        }
    }
    let xml = get_as(&app, &one, "application/xml")
        .await
        .text()
        .await
        .unwrap();
    assert!(xml.contains("<DistributionList><ListId>"), "{xml}");
    assert!(xml.contains("<Recipients><Type>MessagingAddress</Type><MessagingAddress>sms:+447700900123</MessagingAddress></Recipients>"));
    let list_xml = get_as(&app, all, "text/xml").await.text().await.unwrap();
    assert!(list_xml.contains("<ArrayOfDistributionList><DistributionList>"));
    let csv = get_as(&app, all, "text/csv").await;
    assert!(
        csv.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let csv = csv.text().await.unwrap();
    assert!(
        csv.starts_with("ListId,ListName,AppliesToSubtenants,LastUpdated,Recipients,SyncToDevices"),
        "{csv}"
    );
    assert_problem(get_as(&app, &one, "text/csv").await, 406, "not_acceptable").await;
    assert_problem(get_as(&app, all, "image/png").await, 406, "not_acceptable").await;
}

async fn post_raw(app: &TestApp, content_type: &str, body: &str) -> reqwest::Response {
    app.admin
        .request(Method::POST, "/V2/1000/addressbookdistributionlists")
        .header("content-type", content_type)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

async fn lists_accept_xml_and_text_and_round_trip(app: TestApp) {
    let xml = "<DistributionList><ListName>From XML</ListName><AppliesToSubtenants>true</AppliesToSubtenants>\
        <Recipients><Type>MessagingAddress</Type><MessagingAddress>mail:a@example.com</MessagingAddress></Recipients>\
        <Recipients><Type>NearestDevices</Type><Radius>3</Radius></Recipients></DistributionList>";
    for content_type in [
        "application/xml",
        "text/xml",
        "application/vnd.safetrack+xml",
    ] {
        assert_eq!(
            post_raw(&app, content_type, xml).await.status(),
            StatusCode::OK,
            "{content_type}"
        );
    }
    let json_text = r#"{"ListName":"From text","Recipients":[{"Type":"DeviceUserSms"}]}"#;
    for content_type in [
        "text/plain",
        "text/json",
        "application/vnd.safetrack+json",
        "application/json; charset=utf-8",
    ] {
        assert_eq!(
            post_raw(&app, content_type, json_text).await.status(),
            StatusCode::OK,
            "{content_type}"
        );
    }
    let lists = app
        .admin
        .get_json("/V2/1000/addressbookdistributionlists")
        .await;
    assert_eq!(lists.as_array().unwrap().len(), 7);
    assert_eq!(lists[0]["ListName"], "From XML");
    assert_eq!(lists[0]["AppliesToSubtenants"], true);
    assert_eq!(
        lists[0]["Recipients"],
        json!([
            {"Type": "MessagingAddress", "TenantCode": null, "ContactId": null, "ContactDetailId": null, "ListId": null,
             "MessagingAddress": "mail:a@example.com", "Radius": null, "ReportingFrequency": null, "Interval": null, "GroupId": null},
            {"Type": "NearestDevices", "TenantCode": null, "ContactId": null, "ContactDetailId": null, "ListId": null,
             "MessagingAddress": null, "Radius": "3", "ReportingFrequency": null, "Interval": null, "GroupId": null}
        ])
    );
    // XML out, back in as XML (read-only SyncToDevices removed): the same list.
    let id = lists[0]["ListId"].as_str().unwrap();
    let path = format!("/V2/1000/addressbookdistributionlists/{id}");
    let out = get_as(&app, &path, "application/xml")
        .await
        .text()
        .await
        .unwrap();
    let back = out.replace("<SyncToDevices>false</SyncToDevices>", "");
    let put = app
        .admin
        .request(Method::PUT, &path)
        .header("content-type", "application/xml")
        .body(back)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::OK);
    let after = app.admin.get_json(&path).await;
    assert_eq!(after["Recipients"], lists[0]["Recipients"]);
    assert_eq!(after["ListName"], "From XML");

    assert_problem(
        post_raw(
            &app,
            "application/xml",
            "<DistributionList><ListName>x</Recipients>",
        )
        .await,
        400,
        "malformed_xml",
    )
    .await;
    let unknown = post_raw(
        &app,
        "application/xml",
        "<DistributionList><ListName>x</ListName><Colour>red</Colour></DistributionList>",
    )
    .await;
    let problem = assert_problem(unknown, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["Colour"]);
    assert_problem(
        post_raw(&app, "application/x-www-form-urlencoded", "ListName=x").await,
        415,
        "unsupported_media_type",
    )
    .await;
    assert_problem(
        post_raw(&app, "text/html", "<p>").await,
        415,
        "unsupported_media_type",
    )
    .await;
    assert_problem(
        post_raw(&app, "text/plain", "ListName: x").await,
        400,
        "malformed_json",
    )
    .await;
    assert_eq!(
        count(&app, "/V2/1000/addressbookdistributionlists").await,
        7
    );
}

async fn address_book_permissions_and_foreign_tenants(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    let b_contact = contact(&app, &b, json!({"ContactName": "B"})).await;
    let b_list = list(&app, &b, json!({"ListName": "B", "Recipients": []})).await;
    let (_, a_admin) = app
        .create_user(&a, "admin@a.example", "Administrator")
        .await;
    assert_not_found(
        a_admin
            .get(&format!("/V2/{a}/addressbookcontacts/{b_contact}"))
            .await,
    )
    .await;
    assert_not_found(a_admin.get(&format!("/V2/{b}/addressbookcontacts")).await).await;
    assert_not_found(
        a_admin
            .delete(&format!("/V2/{a}/addressbookdistributionlists/{b_list}"))
            .await,
    )
    .await;
    let (_, reader) = app
        .create_user("1000", "reader@example.com", "ReadOnly")
        .await;
    assert_eq!(
        reader.get("/V2/1000/addressbookcontacts").await.status(),
        StatusCode::OK
    );
    let denied = reader
        .post("/V2/1000/addressbookcontacts", &json!({"ContactName": "x"}))
        .await;
    assert_problem(denied, 403, "forbidden").await;
    let denied = reader
        .post(
            "/V2/1000/addressbookdistributionlists",
            &json!({"ListName": "x", "Recipients": []}),
        )
        .await;
    assert_problem(denied, 403, "forbidden").await;
    assert_eq!(count(&app, "/V2/1000/addressbookcontacts").await, 0);
    assert_eq!(
        count(&app, &format!("/V2/{b}/addressbookcontacts")).await,
        1
    );
}
