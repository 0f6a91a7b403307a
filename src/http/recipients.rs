//! Recipient validation against the store: every list, contact and group a recipient
//! names must be visible from the path tenant. Shared by distribution lists and event
//! notifications.

use std::collections::HashSet;

use super::AppState;
use super::error::ApiResult;
use super::extract::TenantScope;
use crate::domain::address_book::{Contact, DistributionList};
use crate::domain::recipient::{
    MAX_RECIPIENTS, Recipient, RecipientTarget, RecipientType, validate_recipients,
};
use crate::domain::validation::Validator;
use crate::store::AddressBook;

/// Adds every recipient problem to `v` (static rules and unresolved references). The
/// message for a reference that does not resolve is the same whether the record exists
/// in another tenant or not at all.
pub async fn check_recipients(
    app: &AppState,
    scope: &TenantScope,
    recipients: &[Recipient],
    v: &mut Validator,
) -> ApiResult<()> {
    // Too many is reported by the record's own validation; look nothing up then.
    if recipients.len() > MAX_RECIPIENTS {
        return Ok(());
    }
    for reference in validate_recipients(recipients, v) {
        let prefix = &reference.field_prefix;
        match reference.target {
            RecipientTarget::List { id, tenant_code } => {
                let found = app
                    .store
                    .get_address_book::<DistributionList>(AddressBook::Lists, &scope.tenant, id)
                    .await?;
                match found {
                    None => v.add(
                        format!("{prefix}.ListId"),
                        format!("no distribution list {id} in this tenant"),
                    ),
                    Some(list) if tenant_code.as_ref().is_some_and(|t| *t != list.owner) => v.add(
                        format!("{prefix}.TenantCode"),
                        format!(
                            "list {id} does not belong to tenant {}",
                            tenant_code.unwrap_or_default()
                        ),
                    ),
                    Some(_) => {}
                }
            }
            RecipientTarget::Contact {
                id,
                tenant_code,
                detail_id,
            } => {
                let found = app
                    .store
                    .get_address_book::<Contact>(AddressBook::Contacts, &scope.tenant, id)
                    .await?;
                match found {
                    None => v.add(
                        format!("{prefix}.ContactId"),
                        format!("no contact {id} in this tenant"),
                    ),
                    Some(contact) => {
                        if tenant_code.as_ref().is_some_and(|t| *t != contact.owner) {
                            v.add(
                                format!("{prefix}.TenantCode"),
                                format!(
                                    "contact {id} does not belong to tenant {}",
                                    tenant_code.unwrap_or_default()
                                ),
                            );
                        }
                        if let Some(detail) = detail_id
                            && !contact
                                .record
                                .contact_entries
                                .iter()
                                .any(|e| e.entry_id.as_deref() == Some(detail.as_str()))
                        {
                            v.add(
                                format!("{prefix}.ContactDetailId"),
                                format!("contact {id} has no entry {detail}"),
                            );
                        }
                    }
                }
            }
            RecipientTarget::Group { id } => {
                if !app.store.group_exists(scope.code(), id).await? {
                    v.add(
                        format!("{prefix}.GroupId"),
                        format!("no group {id} in this tenant"),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Ids of the contacts and lists that lists visible from the path tenant name in
/// device recipients (`DeviceContact`, `DeviceList`): what devices keep in sync.
pub async fn synced_to_devices(
    app: &AppState,
    scope: &TenantScope,
) -> ApiResult<(HashSet<String>, HashSet<String>)> {
    let lists = app
        .store
        .list_address_book::<DistributionList>(AddressBook::Lists, &scope.tenant)
        .await?;
    let mut contacts = HashSet::new();
    let mut synced_lists = HashSet::new();
    for recipient in lists.iter().flat_map(|l| &l.record.recipients) {
        match (recipient.r#type, &recipient.contact_id, &recipient.list_id) {
            (Some(RecipientType::DeviceContact), Some(id), _) => {
                contacts.insert(id.clone());
            }
            (Some(RecipientType::DeviceList), _, Some(id)) => {
                synced_lists.insert(id.clone());
            }
            _ => {}
        }
    }
    Ok((contacts, synced_lists))
}

/// The first distribution list or event notification (in the subtree that can see the
/// record) naming the contact or list `id`, to refuse deleting it.
pub async fn referenced_by(
    app: &AppState,
    owner_path: &str,
    book: AddressBook,
    id: i64,
) -> ApiResult<Option<String>> {
    let id = id.to_string();
    let names_it = |recipients: &[Recipient]| {
        recipients.iter().any(|r| match book {
            AddressBook::Contacts => r.contact_id.as_deref() == Some(id.as_str()),
            AddressBook::Lists => r.list_id.as_deref() == Some(id.as_str()),
        })
    };
    let lists = app
        .store
        .list_address_book_in_subtree::<DistributionList>(AddressBook::Lists, owner_path)
        .await?;
    if let Some(list) = lists.into_iter().find(|l| names_it(&l.record.recipients)) {
        let name = list.record.list_name.unwrap_or_default();
        return Ok(Some(format!("distribution list {name} ({})", list.id)));
    }
    let notifications = app.store.list_notifications_in_subtree(owner_path).await?;
    Ok(notifications
        .into_iter()
        .find(|n| names_it(&n.record.recipients))
        .map(|n| {
            let name = n.record.notification_name.unwrap_or_default();
            format!("event notification {name} ({})", n.id)
        }))
}
