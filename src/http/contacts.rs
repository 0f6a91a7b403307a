//! Address book contacts: `/V2/{t}/addressbookcontacts`.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ApiResult, Problem};
use super::extract::{IfMatch, TenantScope};
use super::negotiate::{Body, EmptyOk, OkWithLocation, Record, RecordList, Representable};
use super::records::contact::ContactRecord;
use super::{AppState, TenantParam};
use crate::domain::access::Permission;
use crate::domain::address_book::Contact;
use crate::domain::ids::ContactId;
use crate::domain::shared::ensure_owner;
use crate::domain::time::now;
use crate::store::{AddressBookWrite, Owned};

impl Representable for Contact {
    const NAME: &'static str = "Contact";
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_contacts, create_contact))
        .routes(routes!(get_contact, update_contact, delete_contact))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(non_snake_case, dead_code)]
struct ContactPath {
    tenantVarCode: String,
    contactId: String,
}

fn present(owned: Owned<Contact>, synced: bool) -> Contact {
    Contact {
        contact_id: Some(owned.id),
        sync_to_devices: Some(synced),
        etag: Some(owned.etag),
        ..owned.record
    }
}

/// A contact visible from the path tenant, that the path tenant may change (not an
/// ancestor's shared contact: 403).
async fn owned_contact(
    app: &AppState,
    scope: &TenantScope,
    raw_id: &str,
) -> ApiResult<Owned<Contact>> {
    let id: ContactId = raw_id.parse().map_err(|_| ApiError::NotFound)?;
    let contact = app
        .store
        .get_address_book::<Contact>(&scope.tenant, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    ensure_owner(&contact.owner, scope.code(), "contact")?;
    Ok(contact)
}

/// List contacts: the tenant's own, then those ancestors share with subtenants.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/addressbookcontacts", tag = "Address book contacts",
    params(TenantParam), responses((status = 200, body = [ContactRecord]), (status = 404, body = Problem)))]
async fn list_contacts(
    scope: TenantScope,
    State(app): State<AppState>,
) -> ApiResult<RecordList<Contact>> {
    let (synced, _) = app.store.synced_to_devices(&scope.tenant).await?;
    let contacts = app
        .store
        .list_address_book::<Contact>(&scope.tenant)
        .await?;
    Ok(RecordList(
        contacts
            .into_iter()
            .map(|c| {
                let is_synced = synced.contains(&c.id);
                present(c, is_synced)
            })
            .collect(),
    ))
}

/// Create a contact; entries get server-assigned `EntryId`s.
#[utoipa::path(post, path = "/V2/{tenantVarCode}/addressbookcontacts", tag = "Address book contacts",
    params(TenantParam), request_body = ContactRecord,
    responses((status = 200, description = "Created; Location names the contact"), (status = 400, body = Problem),
        (status = 403, body = Problem)))]
async fn create_contact(
    scope: TenantScope,
    State(app): State<AppState>,
    Body(contact): Body<ContactRecord>,
) -> ApiResult<OkWithLocation> {
    scope.require(Permission::ManageConfiguration)?;
    let mut contact = contact.validated()?;
    contact.assign_entries(&[], now());
    let write = AddressBookWrite {
        record: &contact,
        applies_to_subtenants: contact.applies_to_subtenants,
        references: &[],
        removed_entries: &[],
    };
    let id = app
        .store
        .create_address_book(&scope.tenant, write, &scope.audit())
        .await?;
    Ok(OkWithLocation(format!(
        "/V2/{}/addressbookcontacts/{id}",
        scope.code()
    )))
}

/// Get a contact.
#[utoipa::path(get, path = "/V2/{tenantVarCode}/addressbookcontacts/{contactId}", tag = "Address book contacts",
    params(ContactPath), responses((status = 200, body = ContactRecord), (status = 404, body = Problem)))]
async fn get_contact(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ContactPath>,
) -> ApiResult<Record<Contact>> {
    let id: ContactId = path.contactId.parse().map_err(|_| ApiError::NotFound)?;
    let contact = app
        .store
        .get_address_book::<Contact>(&scope.tenant, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let (synced, _) = app.store.synced_to_devices(&scope.tenant).await?;
    let is_synced = synced.contains(&contact.id);
    Ok(Record(present(contact, is_synced)))
}

/// Replace a contact (entries sent back with their `EntryId` keep it).
#[utoipa::path(put, path = "/V2/{tenantVarCode}/addressbookcontacts/{contactId}", tag = "Address book contacts",
    params(ContactPath), request_body = ContactRecord,
    responses((status = 200, description = "Updated"), (status = 400, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 412, body = Problem)))]
async fn update_contact(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ContactPath>,
    IfMatch(if_match): IfMatch,
    Body(contact): Body<ContactRecord>,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let current = owned_contact(&app, &scope, &path.contactId).await?;
    let mut contact = contact.validated()?;
    contact.assign_entries(&current.record.contact_entries, now());
    let removed = contact.removed_entries(&current.record.contact_entries);
    let write = AddressBookWrite {
        record: &contact,
        applies_to_subtenants: contact.applies_to_subtenants,
        references: &[],
        removed_entries: &removed,
    };
    // Entry ids were kept against the version read: refuse if another write came between.
    let expected = if_match.unwrap_or(current.etag);
    app.store
        .update_address_book(
            &scope.tenant,
            current.id,
            write,
            Some(&expected),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}

/// Delete a contact; refused (409) while a distribution list names it.
#[utoipa::path(delete, path = "/V2/{tenantVarCode}/addressbookcontacts/{contactId}", tag = "Address book contacts",
    params(ContactPath),
    responses((status = 200, description = "Deleted"), (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem), (status = 412, body = Problem)))]
async fn delete_contact(
    scope: TenantScope,
    State(app): State<AppState>,
    Path(path): Path<ContactPath>,
    IfMatch(if_match): IfMatch,
) -> ApiResult<EmptyOk> {
    scope.require(Permission::ManageConfiguration)?;
    let current = owned_contact(&app, &scope, &path.contactId).await?;
    app.store
        .delete_address_book::<Contact>(
            scope.code(),
            current.id,
            if_match.as_deref(),
            &scope.audit(),
        )
        .await?;
    Ok(EmptyOk)
}
