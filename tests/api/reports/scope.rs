//! Which devices a report covers: the filters (combined with AND, arrays repeated or
//! comma-separated), the tenant scope and `Subtenants`, and collections (CRUD, and
//! `CollectionId` in reports, across tenants only as far as the caller reaches).

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{DAY, device, ids, report};
use crate::alerts::{raise, sos_setup};
use crate::backend_tests;
use crate::common::{TestApp, assert_not_found, assert_problem, problem_fields};

backend_tests!(
    filters_combine,
    scope_and_subtenants,
    collections_crud,
    collection_id_in_reports,
);

const OVERVIEW: &str = "DevicesOverviewReport";
const ANY: &str = "IntervalType=yesterday";

async fn group(app: &TestApp, tenant: &str, name: &str) -> String {
    let response = app
        .admin
        .post(&format!("/V2/{tenant}/groups"), &json!({"Name": name}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    location.rsplit('/').next().unwrap().to_string()
}

async fn overview(app: &TestApp, tenant: &str, query: &str) -> Vec<String> {
    ids(&report(app, tenant, OVERVIEW, &format!("{ANY}&{query}")).await)
}

async fn filters_combine(app: TestApp) {
    let g1 = group(&app, "1000", "Vans").await;
    let g2 = group(&app, "1000", "Trucks").await;
    let (u1, _) = app.create_user("1000", "d1@example.com", "User").await;
    device(
        &app,
        "1000",
        "d1",
        json!({"GroupId": g1, "UserId": u1, "Tags": {"VehicleType": "Van"}}),
    )
    .await;
    device(
        &app,
        "1000",
        "d2",
        json!({"DeviceType": "Spot", "Status": "Inactive", "GroupId": g2, "Tags": {"VehicleType": "Truck"}}),
    )
    .await;
    device(&app, "1000", "d3", json!({})).await;
    assert_eq!(overview(&app, "1000", "").await, ["d1", "d2", "d3"]);
    assert_eq!(
        overview(&app, "1000", "DeviceIds=d1&DeviceIds=d3").await,
        ["d1", "d3"]
    );
    assert_eq!(
        overview(&app, "1000", "DeviceIds=d1,d2").await,
        ["d1", "d2"]
    );
    assert_eq!(
        overview(&app, "1000", "DeviceIds=nope").await,
        Vec::<String>::new()
    );
    assert_eq!(overview(&app, "1000", "DeviceTypes=Spot").await, ["d2"]);
    assert_eq!(
        overview(&app, "1000", "DeviceTypes=Spot,InReach").await,
        ["d1", "d2", "d3"]
    );
    assert_eq!(
        overview(&app, "1000", "DeviceStatus=Inactive").await,
        ["d2"]
    );
    assert_eq!(
        overview(&app, "1000", "DeviceStatus=Active").await,
        ["d1", "d3"]
    );
    assert_eq!(
        overview(&app, "1000", "VehicleTypeTags=van&VehicleTypeTags=Truck").await,
        ["d1", "d2"]
    );
    assert_eq!(
        overview(&app, "1000", "VehicleTypeTags=Truck").await,
        ["d2"]
    );
    assert_eq!(
        overview(&app, "1000", &format!("GroupIds={g1}")).await,
        ["d1"]
    );
    assert_eq!(
        overview(&app, "1000", &format!("GroupIds={g1},{g2}")).await,
        ["d1", "d2"]
    );
    assert_eq!(
        overview(&app, "1000", &format!("UserIds={u1}")).await,
        ["d1"]
    );
    // AND: each filter narrows.
    assert_eq!(
        overview(
            &app,
            "1000",
            "DeviceTypes=InReach&DeviceStatus=Active&VehicleTypeTags=Van"
        )
        .await,
        ["d1"]
    );
    assert_eq!(
        overview(&app, "1000", &format!("DeviceIds=d1,d2&GroupIds={g2}")).await,
        ["d2"]
    );
    assert_eq!(
        overview(&app, "1000", "DeviceIds=d2&DeviceStatus=Active").await,
        Vec::<String>::new()
    );
    // The same filters select the devices of the other reports.
    let utilisation = report(
        &app,
        "1000",
        "AssetUtilisationReport",
        &format!("{DAY}&DeviceTypes=Spot"),
    )
    .await;
    assert_eq!(ids(&utilisation), ["d2"]);
}

async fn scope_and_subtenants(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let a1 = app.create_tenant(&a, "A1").await;
    let b = app.create_tenant("1000", "B").await;
    device(&app, "1000", "root-dev", json!({})).await;
    device(&app, &a, "a-dev", json!({})).await;
    device(&app, &a1, "a1-dev", json!({})).await;
    sos_setup(&app, &b, "b-dev").await;
    raise(&app, &b, "b-dev", 1, &jiff::Timestamp::now().to_string()).await;

    assert_eq!(overview(&app, "1000", "").await, ["root-dev"]);
    assert_eq!(
        overview(&app, "1000", "Subtenants=true").await,
        ["a-dev", "a1-dev", "b-dev", "root-dev"]
    );
    assert_eq!(
        report(&app, "1000", "AlertsReport", "IntervalType=this-year")
            .await
            .len(),
        0
    );
    assert_eq!(
        report(
            &app,
            "1000",
            "AlertsReport",
            "IntervalType=this-year&Subtenants=true"
        )
        .await
        .len(),
        1
    );
    assert_eq!(
        overview(&app, &a, "Subtenants=true").await,
        ["a-dev", "a1-dev"]
    );

    // A manager of A: A's subtree only, whatever the filters name.
    app.create_user(&a, "manager@a.example", "Manager").await;
    let manager = app.client("manager@a.example", crate::common::PASSWORD);
    let path = |tenant: &str, query: &str| format!("/V2/{tenant}/reports/{OVERVIEW}?{ANY}&{query}");
    let rows: Value = manager
        .get(&path(&a, "Subtenants=true"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(ids(rows.as_array().unwrap()), ["a-dev", "a1-dev"]);
    let rows: Value = manager
        .get(&path(&a, "Subtenants=true&DeviceIds=b-dev,root-dev"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(rows, json!([]));
    let alerts: Value = manager
        .get(&format!(
            "/V2/{a}/reports/AlertsReport?IntervalType=this-year&Subtenants=true"
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(alerts, json!([]), "a foreign tenant's alert");
    // Tenants outside the caller's subtree do not exist for it.
    assert_not_found(manager.get(&path("1000", "Subtenants=true")).await).await;
    assert_not_found(manager.get(&path(&b, "")).await).await;
    assert_not_found(manager.get(&format!("/V2/{b}/reports")).await).await;
    // A1's own view never reaches up.
    let rows = overview(&app, &a1, "Subtenants=true").await;
    assert_eq!(rows, ["a1-dev"]);
}

async fn collections_crud(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let b = app.create_tenant("1000", "B").await;
    device(&app, &a, "a-dev", json!({})).await;
    device(&app, &b, "b-dev", json!({})).await;
    app.create_user(&a, "manager@a.example", "Manager").await;
    let manager = app.client("manager@a.example", crate::common::PASSWORD);
    let path = format!("/V2/{a}/collections");

    // Devices beyond the caller's reach, and bad records: 400 naming each.
    let problem = assert_problem(
        manager
            .post(
                &path,
                &json!({"Name": "Mixed", "DeviceIds": ["a-dev", "b-dev", "ghost"]}),
            )
            .await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["DeviceIds[1]", "DeviceIds[2]"]);
    let problem = assert_problem(
        manager.post(&path, &json!({"DeviceIds": [""]})).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(problem_fields(&problem), ["Name", "DeviceIds[0]"]);

    let created = manager
        .post(
            &path,
            &json!({"Name": "Vans", "DeviceIds": ["a-dev", "a-dev"]}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let location = created.headers()["location"].to_str().unwrap().to_string();
    let one = manager.get_json(&location).await;
    assert_eq!(one["Name"], "Vans");
    assert_eq!(one["DeviceIds"], json!(["a-dev"]));
    assert_eq!(one["TenantCode"], a);
    let id = one["CollectionId"].as_str().unwrap().to_string();
    assert_eq!(manager.get_json(&path).await.as_array().unwrap().len(), 1);

    let response = manager
        .put(&location, &json!({"Name": "Renamed", "DeviceIds": []}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let one = manager.get_json(&location).await;
    assert_eq!(one["Name"], "Renamed");
    assert_eq!(one["DeviceIds"], json!([]));
    // If-Match is honoured.
    let stale = manager
        .request(reqwest::Method::DELETE, &location)
        .header("if-match", "\"stale\"")
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), StatusCode::PRECONDITION_FAILED);

    // Read-only users read but do not write.
    app.create_user(&a, "reader@a.example", "ReadOnly").await;
    let reader = app.client("reader@a.example", crate::common::PASSWORD);
    assert_eq!(reader.get_json(&path).await.as_array().unwrap().len(), 1);
    assert_problem(
        reader.post(&path, &json!({"Name": "X"})).await,
        403,
        "forbidden",
    )
    .await;
    // Another tenant's collection is not there.
    assert_not_found(app.admin.get(&format!("/V2/{b}/collections/{id}")).await).await;
    assert_not_found(manager.get(&format!("/V2/{b}/collections")).await).await;

    assert_eq!(manager.delete(&location).await.status(), StatusCode::OK);
    assert_not_found(manager.get(&location).await).await;
    assert_not_found(manager.get(&format!("{path}/abc")).await).await;
}

async fn collection_id_in_reports(app: TestApp) {
    let a = app.create_tenant("1000", "A").await;
    let a1 = app.create_tenant(&a, "A1").await;
    let b = app.create_tenant("1000", "B").await;
    device(&app, &a, "a-dev", json!({})).await;
    device(&app, &a1, "a1-dev", json!({})).await;
    device(&app, &a, "a-other", json!({})).await;
    device(&app, &b, "b-dev", json!({})).await;
    let (user_id, manager) = app.create_user(&a, "manager@a.example", "Manager").await;

    // A's own collection spanning A and A1: filters on groups and devices are ignored,
    // no Subtenants needed.
    let created = manager
        .post(
            &format!("/V2/{a}/collections"),
            &json!({"Name": "Mine", "DeviceIds": ["a-dev", "a1-dev"]}),
        )
        .await;
    let own = created.headers()["location"]
        .to_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let rows: Value = manager
        .get(&format!(
            "/V2/{a}/reports/{OVERVIEW}?{ANY}&CollectionId={own}&DeviceIds=a-other&GroupIds=5"
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(ids(rows.as_array().unwrap()), ["a-dev", "a1-dev"]);

    // A collection of the root tenant, across A and B: not usable by A's manager...
    let created = app
        .admin
        .post(
            "/V2/1000/collections",
            &json!({"Name": "Cross", "DeviceIds": ["a-dev", "b-dev"]}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let cross = created.headers()["location"]
        .to_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let refused = manager
        .get(&format!(
            "/V2/{a}/reports/{OVERVIEW}?{ANY}&CollectionId={cross}"
        ))
        .await;
    let problem = assert_problem(refused, 400, "validation_failed").await;
    assert_eq!(problem_fields(&problem), ["CollectionId"]);
    // ...until named in the manager's CrossTenantCollections; even then only the devices
    // within the manager's reach appear.
    let response = app
        .admin
        .patch(
            &format!("/V2/{a}/users/{user_id}"),
            &json!([{"op": "add", "path": "/CrossTenantCollections", "value": format!("77,{cross}")}]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let rows: Value = manager
        .get(&format!(
            "/V2/{a}/reports/{OVERVIEW}?{ANY}&CollectionId={cross}"
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(ids(rows.as_array().unwrap()), ["a-dev"]);
    // The root administrator sees the whole collection from the root.
    let rows = report(
        &app,
        "1000",
        OVERVIEW,
        &format!("{ANY}&CollectionId={cross}"),
    )
    .await;
    assert_eq!(ids(&rows), ["a-dev", "b-dev"]);
    // From A, the root's collection covers A's subtree only.
    let rows = report(&app, &a, OVERVIEW, &format!("{ANY}&CollectionId={cross}")).await;
    assert_eq!(ids(&rows), ["a-dev"]);
    // UserIds still apply with a collection.
    let rows = report(
        &app,
        "1000",
        OVERVIEW,
        &format!("{ANY}&CollectionId={cross}&UserIds=999999"),
    )
    .await;
    assert!(rows.is_empty());
}
