//! API tokens: `/V2/{t}/apitokens` and `/V2/{t}/apitokens/{tokenId}` (docs/decisions.md,
//! "API tokens and browser sessions"). A token belongs to the path tenant and acts within
//! its subtree with its own permissions; its secret is answered once, by the POST that
//! creates it.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::TenantScope;
use super::negotiate::{Body, EmptyOk, Record, RecordList, Representable};
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::api_token::{
    ApiToken, SHOWN_PREFIX_CHARS, TokenRequestError, new_token_secret, secret_hash,
};
use crate::domain::ids::ApiTokenId;
use crate::domain::time::now;
use crate::http::records::api_token::ApiTokenRequestRecord;
use crate::store::IssuedToken;

impl Representable for ApiToken {
    const NAME: &'static str = "ApiToken";
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tokens, create_token))
        .routes(routes!(get_token, revoke_token))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
pub struct TokenPath {
    pub tenantVarCode: String,
    pub tokenId: String,
}

/// A numeric token id, or 404.
fn token_id(raw: &str) -> ApiResult<ApiTokenId> {
    raw.parse().map_err(|_| ApiError::NotFound)
}

/// List the tenant's live API tokens (never their secrets). Needs
/// `ManageConfiguration`, as creating and revoking do.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/apitokens", tag = "API tokens",
    params(TenantParam),
    responses((status = 200, body = [ApiToken]), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn list_tokens(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<ApiToken>> {
    scope.require(Permission::ManageConfiguration)?;
    Ok(RecordList(app.store.list_api_tokens(scope.code()).await?))
}

/// Create an API token. `Permissions` default to the caller's own and may not exceed
/// them (403); unknown names are a 400 naming them. A token created with a token may
/// not outlive it: its `ExpiresAt` is capped at the creating token's, and revoking the
/// creating token revokes it too. The answer's `Token` is the secret,
/// shown this once: use it as `Authorization: Bearer <Token>`. Needs
/// `ManageConfiguration`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/apitokens", tag = "API tokens",
    params(TenantParam), request_body = ApiTokenRequestRecord,
    responses((status = 200, body = ApiToken, description = "Created; `Token` is the secret, shown only now"),
        (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem)))]
async fn create_token(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(request): Body<ApiTokenRequestRecord>,
) -> ApiResult<Record<ApiToken>> {
    scope.require(Permission::ManageConfiguration)?;
    let at = now();
    let token = request
        .validated(scope.caller.permissions, at)
        .map_err(|e| match e {
            TokenRequestError::Invalid(errors) => ApiError::Validation(errors.0),
            TokenRequestError::BeyondCreator(names) => ApiError::Forbidden(format!(
                "a token cannot have permissions its creator lacks: {}",
                names.join(", ")
            )),
        })?;
    let secret = new_token_secret();
    let prefix: String = secret.chars().take(SHOWN_PREFIX_CHARS).collect();
    let mut record = app
        .store
        .create_api_token(
            IssuedToken {
                tenant_code: scope.code(),
                token: &token,
                secret_hash: &secret_hash(&secret),
                prefix: &prefix,
                created_by: &scope.caller.actor_name(),
                at,
                parent: scope.caller.token_id(),
            },
            &scope.audit(),
        )
        .await?;
    record.token = Some(secret);
    Ok(Record(record))
}

/// Get an API token (never its secret). Needs `ManageConfiguration`.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/apitokens/{tokenId}", tag = "API tokens",
    params(TokenPath),
    responses((status = 200, body = ApiToken), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn get_token(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<TokenPath>,
) -> ApiResult<Record<ApiToken>> {
    scope.require(Permission::ManageConfiguration)?;
    let token = app
        .store
        .get_api_token(scope.code(), token_id(&path.tokenId)?)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Record(token))
}

/// Revoke an API token: refused from the next request on, on every process. Needs
/// `ManageConfiguration`.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/apitokens/{tokenId}", tag = "API tokens",
    params(TokenPath),
    responses((status = 200, description = "Revoked"), (status = 403, body = Problem),
        (status = 404, body = Problem)))]
async fn revoke_token(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<TokenPath>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    if !app
        .store
        .revoke_api_token(
            scope.code(),
            token_id(&path.tokenId)?,
            now(),
            &scope.audit(),
        )
        .await?
    {
        return Err(ApiError::NotFound);
    }
    Ok(EmptyOk)
}
