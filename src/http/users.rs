//! Users: `/V2/{tenantVarCode}/users` and `/users/{userId or username}`.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, Query, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, Representable};
use super::paging::Page;
use super::patch::apply_patch;
use super::records::user::UserRecord;
use super::{AppState, TenantParam};
use crate::auth::hash_password;
use crate::domain::access::{Permission, Role};
use crate::domain::ids::UserId;
use crate::domain::user::{User, UserFields, UserRef};
use crate::store::{NewUser, StoredUser, UserUpdate};

/// Most users one page returns (the contract's limit).
pub const MAX_PAGE_SIZE: u32 = 10_000;
/// A page with photos ends early once it holds this many bytes of them (the token goes
/// on from the next user), so what a listing holds, and renders as XML or CSV, stays
/// bounded whatever the page size: at least four of the largest photos (4 MiB) a page.
pub const PAGE_PHOTO_BUDGET: usize = 16 * 1024 * 1024;
/// Users fetched at a time while filling a page with photos.
const PHOTO_CHUNK: u32 = 4;

impl Representable for User {
    const NAME: &'static str = "User";
    fn etag(&self) -> Option<&str> {
        Some(&self.etag)
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_users, create_user))
        .routes(routes!(get_user, update_user, patch_user, delete_user))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListUsersQuery {
    /// Include the users of every subtenant.
    #[serde(default)]
    subtenants: bool,
    /// Include each user's Base64 photo.
    #[serde(default)]
    photo: bool,
    /// Ask for fewer than 10,000 users per page.
    #[param(minimum = 1, maximum = 10000)]
    page_size: Option<u32>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct PhotoQuery {
    /// Include the Base64 photo.
    #[serde(default)]
    photo: bool,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct UserPath {
    tenantVarCode: String,
    /// A user id, or a username (anything containing `@`).
    userId: String,
}

/// List users, paged by `X-CONTINUATIONTOKEN`. With `photo=true` a page ends early past
/// 16 MiB of photos.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/users", tag = "Users",
    params(TenantParam, ListUsersQuery,
        ("X-CONTINUATIONTOKEN" = Option<String>, Header, description = "Token from the previous page")),
    responses((status = 200, body = [UserRecord], headers(("X-CONTINUATIONTOKEN" = String, description = "Present while more users exist"))),
        (status = 400, body = Problem), (status = 404, body = Problem)))]
async fn list_users(
    scope: TenantScope,
    State(app): State<AppState>,
    Query(query): Query<ListUsersQuery>,
    headers: HeaderMap,
) -> ApiResult<Page<User>> {
    let listing = format!("users:{}:{}", scope.code(), query.subtenants);
    let request =
        app.paging
            .page_request::<i64>(&headers, &listing, query.page_size, MAX_PAGE_SIZE)?;
    let tenants = scope.tenants(query.subtenants);
    if !query.photo {
        let fetched = app
            .store
            .list_users(
                &tenants,
                request.after.unwrap_or(0),
                request.size + 1,
                false,
            )
            .await?;
        let page = Page::from_fetched(fetched, request, &app.paging, &listing, |u| u.id.get());
        return Ok(Page {
            items: page.items.into_iter().map(|u| u.user).collect(),
            next: page.next,
        });
    }
    // With photos: a few users at a time, ending the page early past the byte budget.
    let size = request.size as usize;
    let mut items: Vec<StoredUser> = Vec::new();
    let mut photo_bytes = 0usize;
    let full =
        |items: &[StoredUser], bytes: usize| items.len() == size || bytes >= PAGE_PHOTO_BUDGET;
    let more = 'fill: loop {
        let after = items
            .last()
            .map_or(request.after.unwrap_or(0), |u| u.id.get());
        let rows = app
            .store
            .list_users(&tenants, after, PHOTO_CHUNK, true)
            .await?;
        let exhausted = (rows.len() as u32) < PHOTO_CHUNK;
        for row in rows {
            if full(&items, photo_bytes) {
                break 'fill true;
            }
            photo_bytes += row.user.photo.as_ref().map_or(0, String::len);
            items.push(row);
        }
        if exhausted {
            break false;
        }
        if full(&items, photo_bytes) {
            let after = items.last().map_or(0, |u| u.id.get());
            let probe = app.store.list_users(&tenants, after, 1, false).await?;
            break !probe.is_empty();
        }
    };
    let next = if more {
        items
            .last()
            .map(|u| app.paging.issue(&listing, &u.id.get()))
    } else {
        None
    };
    Ok(Page {
        items: items.into_iter().map(|u| u.user).collect(),
        next,
    })
}

/// Create a user. `Password` is required; the response carries `Location`.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/users", tag = "Users", params(TenantParam),
    request_body = UserRecord,
    responses((status = 200, description = "Created; Location names the new user"),
        (status = 400, body = Problem), (status = 403, body = Problem), (status = 409, body = Problem)))]
async fn create_user(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(incoming): Body<UserRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::ManageUsers)?;
    let mut incoming = incoming.validated(true)?;
    authorize_role(&scope, None, incoming.role)?;
    check_manager(&app, &scope, &incoming, None).await?;
    // `validated(true)` refuses a record without a password.
    let password = incoming
        .password
        .take()
        .ok_or_else(|| ApiError::field("Password", "is required"))?;
    let password_hash = hash_password(password.into_text()).await?;
    if incoming.photo.as_deref() == Some("") {
        incoming.photo = None;
    }
    let id = app
        .store
        .create_user(
            NewUser {
                tenant_code: scope.code().clone(),
                user: incoming,
                password_hash,
            },
            Some(&scope.audit()),
        )
        .await?;
    Ok(OkWithLocation(format!("/V2/{}/users/{id}", scope.code())))
}

async fn find_user(
    app: &AppState,
    scope: &TenantScope,
    user_ref: &str,
    with_photo: bool,
) -> ApiResult<StoredUser> {
    app.store
        .get_user(scope.code(), &UserRef::parse(user_ref), with_photo)
        .await?
        .ok_or(ApiError::NotFound)
}

/// Get a user by id or username.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/users/{userId}", tag = "Users",
    params(UserPath, PhotoQuery),
    responses((status = 200, body = UserRecord), (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, body = Problem)))]
async fn get_user(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<UserPath>,
    Query(query): Query<PhotoQuery>,
) -> ApiResult<Record<User>> {
    Ok(Record(
        find_user(&app, &scope, &path.userId, query.photo)
            .await?
            .user,
    ))
}

/// Replace a user. Omit `Password` to keep it; omit `Photo` to keep it ("" removes it);
/// omit `UserRoleId` to keep the role. Only the user, an Administrator or a caller whose
/// role is above the user's may set `Password` (403). Demoting or disabling the root
/// tenant's last active Administrator is a 409.
#[utoipa::path(put, path = "/V2/{tenantVarCode}/users/{userId}", tag = "Users", params(UserPath),
    request_body = UserRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn update_user(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<UserPath>,
    IfMatch(if_match): IfMatch,
    Body(incoming): Body<UserRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageUsers)?;
    let existing = find_user(&app, &scope, &path.userId, true).await?;
    save_user(&app, &scope, existing, incoming, if_match).await
}

/// Patch a user with a JSON Patch (`application/json-patch+json`); the rules of PUT apply.
#[utoipa::path(patch, path = "/V2/{tenantVarCode}/users/{userId}", tag = "Users", params(UserPath),
    request_body(content = Vec<super::openapi::PatchOperation>, content_type = "application/json-patch+json"),
    responses((status = 200, description = "Updated"), (status = 400, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn patch_user(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<UserPath>,
    IfMatch(if_match): IfMatch,
    Body(patch): Body<json_patch::Patch>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageUsers)?;
    let existing = find_user(&app, &scope, &path.userId, true).await?;
    let patched = apply_patch(&UserRecord::from(&existing.user), &patch)?;
    // Without If-Match, still refuse to overwrite a change made since we read the record.
    let expected = if_match.or_else(|| Some(existing.user.etag.clone()));
    save_user(&app, &scope, existing, patched, expected).await
}

/// Delete a user (and their profile). Not one's own account (403), nor the root tenant's
/// last active Administrator (409).
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/users/{userId}", tag = "Users", params(UserPath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn delete_user(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<UserPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageUsers)?;
    let existing = find_user(&app, &scope, &path.userId, false).await?;
    if scope.caller.user() == Some(existing.id) {
        return Err(ApiError::Forbidden(
            "you cannot delete your own account".into(),
        ));
    }
    authorize_role(&scope, Some(existing.role), existing.role)?;
    app.store
        .delete_user(
            scope.code(),
            existing.id,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    app.auth.forget_user(existing.id);
    Ok(EmptyOk)
}

/// The shared tail of PUT and PATCH.
async fn save_user(
    app: &AppState,
    scope: &TenantScope,
    existing: StoredUser,
    incoming: UserRecord,
    if_match: Option<String>,
) -> ApiResult<EmptyOk> {
    let mut incoming = incoming;
    // `UserRoleId` is optional: a replacement that leaves it out keeps the stored role
    // (falling back to `User` would demote an administrator who only changed a name).
    if incoming.user_role_id.as_deref().is_none_or(str::is_empty) {
        incoming.user_role_id = Some(existing.role.as_str().to_string());
    }
    let mut incoming = incoming.validated(false)?;
    authorize_role(scope, Some(existing.role), incoming.role)?;
    if incoming.password.is_some() {
        authorize_password_change(scope, &existing)?;
    }
    check_manager(app, scope, &incoming, Some(existing.id)).await?;
    let password_hash = match incoming.password.take() {
        Some(p) => Some(hash_password(p.into_text()).await?),
        None => None,
    };
    incoming.photo = match incoming.photo.take() {
        None => existing.user.photo.clone(),
        Some(p) if p.is_empty() => None,
        Some(p) => Some(p),
    };
    app.store
        .update_user(
            UserUpdate {
                tenant_code: scope.code(),
                id: existing.id,
                user: &incoming,
                password_hash,
            },
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    app.auth.forget_user(existing.id);
    Ok(EmptyOk)
}

/// Nobody manages a user above their own role, or hands out a role above their own.
fn authorize_role(scope: &TenantScope, current: Option<Role>, wanted: Role) -> ApiResult<()> {
    let caller = scope.caller.role;
    if current.is_some_and(|r| !caller.may_assign(r)) {
        return Err(ApiError::Forbidden(format!(
            "a {caller} cannot manage a user whose role is above their own"
        )));
    }
    if !caller.may_assign(wanted) {
        return Err(ApiError::Forbidden(format!(
            "a {caller} cannot assign the {wanted} role"
        )));
    }
    Ok(())
}

/// Anyone may set their own password; another user's only an Administrator, or a caller
/// whose role is above the user's (a Manager sets a User's, never a fellow Manager's).
fn authorize_password_change(scope: &TenantScope, user: &StoredUser) -> ApiResult<()> {
    let caller = scope.caller.role;
    if scope.caller.user() == Some(user.id)
        || caller == Role::Administrator
        || caller.outranks(user.role)
    {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!(
        "a {caller} cannot change the password of another {}",
        user.role
    )))
}

/// `ManagerUserId` must name an existing user within the caller's scope (not the user).
async fn check_manager(
    app: &AppState,
    scope: &TenantScope,
    user: &UserFields,
    own_id: Option<UserId>,
) -> ApiResult<()> {
    let Some(id) = user.details.manager_user_id else {
        return Ok(());
    };
    if Some(id) == own_id {
        return Err(ApiError::field(
            "ManagerUserId",
            "a user cannot be their own manager",
        ));
    }
    if !app
        .store
        .user_exists_in_subtree(&scope.caller.tenant_path, id)
        .await?
    {
        return Err(ApiError::field(
            "ManagerUserId",
            format!("no user {id} in your scope"),
        ));
    }
    Ok(())
}
