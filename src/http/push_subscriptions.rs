//! Web Push (issue 46 §2, DESIGN §12): `GET /V2/{tenantVarCode}/pushsubscriptions/vapidpublickey`,
//! the server's VAPID public key a browser subscribes with (`applicationServerKey`).

use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiResult, Problem};
use super::extract::TenantScope;
use super::negotiate::{Record, Representable};
use super::{AppState, TenantParam};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(vapid_public_key))
}

/// The server's VAPID public key.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct VapidPublicKey {
    /// The P-256 public key as an uncompressed point (65 bytes), base64url without
    /// padding: the `applicationServerKey` of `PushManager.subscribe`.
    #[schema(
        example = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    )]
    pub public_key: String,
}

impl Representable for VapidPublicKey {
    const NAME: &'static str = "VapidPublicKey";
}

/// Get the server's VAPID public key.
///
/// The same key for every tenant, every process sharing the database and across restarts
/// (generated at first start, kept in the database). Any caller in the tenant's scope.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/pushsubscriptions/vapidpublickey", tag = "Push subscriptions",
    params(TenantParam),
    responses((status = 200, body = VapidPublicKey), (status = 404, body = Problem)))]
async fn vapid_public_key(
    _scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<Record<VapidPublicKey>> {
    let key = app.store.vapid_key().await?;
    Ok(Record(VapidPublicKey {
        public_key: key.public_key_base64url(),
    }))
}
