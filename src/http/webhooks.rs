//! Webhook settings: `/V2/{tenantVarCode}/webhooks`.

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, EmptyOk, Record, Representable};
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::webhook::WebhookSettings;
use crate::http::records::webhook::WebhookSettingsRecord;

impl Representable for WebhookSettings {
    const NAME: &'static str = "WebhookSettings";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_webhooks, put_webhooks))
}

/// Get the webhook settings.
///
/// `Urls: []` when none were saved. `Password` is always null. Needs the
/// ManageConfiguration permission: webhook URLs often carry secrets of their own
/// (tokens in the path or query).
#[utoipa::path(get, path = "/V2/{tenantVarCode}/webhooks", tag = "Webhooks",
    params(TenantParam),
    responses((status = 200, body = WebhookSettingsRecord), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn get_webhooks(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<Record<WebhookSettings>> {
    scope.require(Permission::ManageConfiguration)?;
    let settings = app
        .store
        .get_webhooks(scope.code())
        .await?
        .unwrap_or_else(WebhookSettings::none);
    // Serialising never shows the secret.
    Ok(Record(settings))
}

/// Replace the webhook settings.
///
/// At most 10 URLs, no duplicates; each an absolute http(s) URL and (unless the server
/// runs with `--allow-private-webhooks`) not a loopback, private, link-local or
/// unspecified IP literal nor `localhost` (names are not resolved when saving).
/// `Authentication`: `None` (or null; stored credentials are dropped), `Basic` (needs
/// `Username` and `Password`), `Bearer` (`Password` is the token), `HmacSha256`
/// (`Password` is the key, at least 16 characters). A null `Password` keeps the stored
/// one, which must then satisfy the new type, and only while every URL has the origin
/// (scheme, host and port) of a URL saved with it: a URL on any other origin needs the
/// `Password` again (400 naming it). `If-Match` is honoured (412).
#[utoipa::path(put, path = "/V2/{tenantVarCode}/webhooks", tag = "Webhooks",
    params(TenantParam), request_body = WebhookSettingsRecord,
    responses((status = 200, description = "Saved"), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 412, body = Problem)))]
async fn put_webhooks(
    scope: TenantScope,
    State(app): State<AppState>,
    IfMatch(if_match): IfMatch,
    Body(incoming): Body<WebhookSettingsRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let current = app.store.get_webhooks(scope.code()).await?;
    let settings = incoming.validated(current.as_ref(), app.allow_private_webhooks)?;
    // Without If-Match, still refuse to save if the settings (and so the kept secret)
    // changed between our read and our write.
    let expected = if_match.or_else(|| current.and_then(|c| c.etag));
    app.store
        .put_webhooks(scope.code(), &settings, expected.as_deref(), &scope.audit())
        .await?;
    Ok(EmptyOk)
}
