// The address book: contacts (a name and the addresses that reach them) and distribution
// lists (named sets of recipients), each listed, created, edited and deleted.
import { api, v2 } from '../../api';
import { h, replaceRows } from '../../dom';
import { t } from '../../i18n';
import { tenant } from '../../session';
import { mayConfigure } from '../../config/access';
import { FormErrors, checkbox, describeFailure, field, sectionNav, statusLine, textInput, uid } from '../../config/form';
import { RecipientEditor, loadDirectory, type Directory } from '../../config/recipient-editor';
import type { Contact, ContactEntry, DistributionList } from '../../config/recipients';

function records(caption: string, testid: string, columns: string[]): { table: HTMLTableElement; rows: HTMLTableSectionElement } {
  const rows = h('tbody');
  const table = h(
    'table',
    { class: 'records', 'data-testid': testid },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))),
    rows,
  );
  return { table, rows };
}

function rowActions(manage: boolean, name: string, onEdit: () => void, onDelete: () => void): HTMLElement {
  return h('td', { class: 'row-actions' },
    h('button', { type: 'button', onclick: onEdit, 'aria-label': t(manage ? 'config.editNamed' : 'config.showNamed', { name }) }, manage ? t('config.edit') : t('config.show')),
    manage ? h('button', { type: 'button', onclick: onDelete, 'aria-label': t('config.deleteNamed', { name }) }, t('config.delete')) : null);
}

/** An address as operators read it: `mail:a@b` → `a@b (e-mail)`, `sms:+44…` → `+44… (SMS)`; else as it is. */
export function addressWords(address: string): string {
  const m = /^(mail|sms):(.*)$/i.exec(address.trim());
  if (!m) return address;
  return t(m[1]?.toLowerCase() === 'mail' ? 'config.contacts.asMail' : 'config.contacts.asSms', { address: m[2] ?? '' });
}

export function addressBookPage(outlet: HTMLElement): void {
  const tc = tenant();
  const manage = mayConfigure();
  const status = statusLine('addressbook-status');
  let directory: Directory = { contacts: new Map(), lists: new Map(), groups: [], types: [] };

  // ---- contacts ----
  const contactErrors = new FormErrors();
  const contactName = textInput('', { required: true, maxlength: 200, autocomplete: 'off' });
  const escalation = checkbox(false);
  const contactShared = checkbox(false);
  const culture = textInput('', { autocomplete: 'off', placeholder: 'en-GB' });
  const entries = h('ul', { class: 'entries', 'data-testid': 'contact-entries' });
  const addEntry = h('button', { type: 'button', 'data-testid': 'add-address' }, t('config.contacts.addAddress'));
  const contactHeading = h('h3', { tabindex: -1, id: 'contact-editor-heading' });
  const contactForm = h(
    'form',
    { class: 'config-form', 'data-testid': 'contact-form', novalidate: true, hidden: true, 'aria-labelledby': contactHeading.id },
    contactHeading,
    contactErrors.summary,
    field(t('config.contacts.name'), contactName, contactErrors, 'ContactName'),
    h('fieldset', {}, h('legend', {}, t('config.contacts.addresses')), contactErrors.slot('ContactEntries'), entries, manage ? addEntry : null),
    field(t('config.contacts.escalation'), escalation, contactErrors, 'IsEscalationContact', t('config.contacts.escalationHint')),
    field(t('config.appliesToSubtenants'), contactShared, contactErrors, 'AppliesToSubtenants'),
    field(t('config.contacts.culture'), culture, contactErrors, 'CultureName'),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', 'data-testid': 'save-contact' }, t('config.save')),
      h('button', { type: 'button', onclick: () => closeContact() }, t('config.cancel'))),
  );
  let entryRows: { input: HTMLInputElement; entryId: string | null }[] = [];
  let editingContact: Contact | null = null;

  const renderEntries = (): void => {
    contactErrors.forget('ContactEntries[');
    entries.replaceChildren(
      ...entryRows.map((row, i) => {
        const id = row.input.id || (row.input.id = uid('addr'));
        const remove = h('button', { type: 'button', 'aria-label': t('config.contacts.removeAddress', { n: i + 1 }) }, t('config.remove'));
        remove.addEventListener('click', () => {
          entryRows.splice(i, 1);
          renderEntries();
        });
        return h('li', { class: 'field' },
          h('label', { for: id }, t('config.contacts.address', { n: i + 1 })),
          row.input,
          manage ? remove : null,
          contactErrors.slot(`ContactEntries[${i}]`, row.input));
      }),
    );
  };
  const newEntry = (e?: ContactEntry): void => {
    const input = textInput(e?.Address ?? '', { autocomplete: 'off', placeholder: t('config.contacts.addressPlaceholder') });
    if (!manage) input.disabled = true;
    entryRows.push({ input, entryId: e?.EntryId ?? null });
  };
  addEntry.addEventListener('click', () => {
    newEntry();
    renderEntries();
    entryRows[entryRows.length - 1]?.input.focus();
  });

  const openContact = (c: Contact | null): void => {
    editingContact = c;
    contactErrors.clear();
    contactForm.hidden = false;
    contactHeading.textContent = c ? t('config.contacts.editing', { name: c.ContactName ?? '' }) : t('config.contacts.new');
    contactName.value = c?.ContactName ?? '';
    escalation.checked = !!c?.IsEscalationContact;
    contactShared.checked = !!c?.AppliesToSubtenants;
    culture.value = c?.CultureName ?? '';
    entryRows = [];
    for (const e of c?.ContactEntries ?? []) newEntry(e);
    if (!entryRows.length) newEntry();
    renderEntries();
    contactHeading.focus();
  };
  function closeContact(): void {
    editingContact = null;
    contactForm.hidden = true;
  }
  contactForm.addEventListener('submit', (e) => {
    e.preventDefault();
    contactErrors.clear();
    const body: Contact = {
      ContactName: contactName.value,
      IsEscalationContact: escalation.checked,
      AppliesToSubtenants: contactShared.checked,
      CultureName: culture.value.trim() || null,
      ContactEntries: entryRows
        .filter((r) => r.input.value.trim() || r.entryId)
        .map((r) => (r.entryId ? { EntryId: r.entryId, Address: r.input.value.trim() } : { Address: r.input.value.trim() })),
    };
    const id = editingContact?.ContactId;
    void (id ? api.request('PUT', v2(tc, 'addressbookcontacts', id), body) : api.post(v2(tc, 'addressbookcontacts'), body))
      .then(async () => {
        status.textContent = t('config.saved', { name: body.ContactName ?? '' });
        closeContact();
        await load();
      })
      .catch((error: unknown) => {
        contactErrors.show(error);
        (contactForm.querySelector('[aria-invalid=true]') as HTMLElement | null)?.focus();
      });
  });

  // ---- distribution lists ----
  const listErrors = new FormErrors();
  const listName = textInput('', { required: true, maxlength: 200, autocomplete: 'off' });
  const listShared = checkbox(false);
  const members = new RecipientEditor(directory, listErrors, manage);
  const listHeading = h('h3', { tabindex: -1, id: 'list-editor-heading' });
  const listForm = h(
    'form',
    { class: 'config-form', 'data-testid': 'list-form', novalidate: true, hidden: true, 'aria-labelledby': listHeading.id },
    listHeading,
    listErrors.summary,
    field(t('config.lists.name'), listName, listErrors, 'ListName'),
    field(t('config.appliesToSubtenants'), listShared, listErrors, 'AppliesToSubtenants'),
    members.element,
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', 'data-testid': 'save-list' }, t('config.save')),
      h('button', { type: 'button', onclick: () => closeList() }, t('config.cancel'))),
  );
  let editingList: DistributionList | null = null;
  const openList = (l: DistributionList | null): void => {
    editingList = l;
    listErrors.clear();
    listForm.hidden = false;
    listHeading.textContent = l ? t('config.lists.editing', { name: l.ListName ?? '' }) : t('config.lists.new');
    listName.value = l?.ListName ?? '';
    listShared.checked = !!l?.AppliesToSubtenants;
    members.set(l?.Recipients);
    listHeading.focus();
  };
  function closeList(): void {
    editingList = null;
    listForm.hidden = true;
  }
  listForm.addEventListener('submit', (e) => {
    e.preventDefault();
    listErrors.clear();
    const body = { ListName: listName.value, AppliesToSubtenants: listShared.checked, Recipients: members.get() };
    const id = editingList?.ListId;
    void (id ? api.request('PUT', v2(tc, 'addressbookdistributionlists', id), body) : api.post(v2(tc, 'addressbookdistributionlists'), body))
      .then(async () => {
        status.textContent = t('config.saved', { name: body.ListName });
        closeList();
        await load();
      })
      .catch((error: unknown) => {
        listErrors.show(error);
        (listForm.querySelector('[aria-invalid=true]') as HTMLElement | null)?.focus();
      });
  });

  // ---- the page ----
  const contacts = records(t('config.contacts.heading'), 'contact-list', [t('config.contacts.name'), t('config.contacts.addresses'), t('config.contacts.escalation'), t('config.actions')]);
  const lists = records(t('config.lists.heading'), 'list-list', [t('config.lists.name'), t('config.lists.members'), t('config.actions')]);
  const newContact = h('button', { type: 'button', 'data-testid': 'new-contact', onclick: () => openContact(null) }, t('config.contacts.new'));
  const newList = h('button', { type: 'button', 'data-testid': 'new-list', onclick: () => openList(null) }, t('config.lists.new'));
  outlet.append(
    h('main', { class: 'config-page' },
      h('h1', {}, t('config.addressBook.heading')),
      sectionNav('/config/addressbook'),
      status,
      manage ? null : h('p', { class: 'hint' }, t('config.readOnly')),
      h('section', { 'aria-labelledby': 'contacts-heading' },
        h('h2', { id: 'contacts-heading' }, t('config.contacts.heading')),
        manage ? newContact : null, contacts.table, contactForm),
      h('section', { 'aria-labelledby': 'lists-heading' },
        h('h2', { id: 'lists-heading' }, t('config.lists.heading')),
        manage ? newList : null, lists.table, listForm)),
  );

  const remove = async (path: string, name: string, after: () => void): Promise<void> => {
    if (!confirm(t('config.confirmDelete', { name }))) return;
    try {
      await api.delete(path);
      status.textContent = t('config.deleted', { name });
      after();
      await load();
    } catch (error) {
      status.textContent = describeFailure(error);
    }
  };

  const render = (): void => {
    replaceRows(
      contacts.rows,
      [...directory.contacts.values()].map((c) =>
        h('tr', { 'data-contact': c.ContactId ?? '' },
          h('td', {}, c.ContactName ?? ''),
          h('td', { 'data-label': t('config.contacts.addresses') }, (c.ContactEntries ?? []).map((e) => addressWords(e.Address ?? '')).join(', ')),
          h('td', { 'data-label': t('config.contacts.escalation') }, c.IsEscalationContact ? t('config.yes') : t('config.no')),
          rowActions(manage, c.ContactName ?? '', () => openContact(c), () =>
            void remove(v2(tc, 'addressbookcontacts', c.ContactId ?? ''), c.ContactName ?? '', () => {
              if (editingContact?.ContactId === c.ContactId) closeContact();
            })))),
      'data-contact',
    );
    if (!directory.contacts.size) contacts.rows.append(h('tr', {}, h('td', { colspan: 4 }, t('config.contacts.empty'))));
    replaceRows(
      lists.rows,
      [...directory.lists.values()].map((l) =>
        h('tr', { 'data-list': l.ListId ?? '' },
          h('td', {}, l.ListName ?? ''),
          h('td', { 'data-label': t('config.lists.members') }, String(l.Recipients?.length ?? 0)),
          rowActions(manage, l.ListName ?? '', () => openList(l), () =>
            void remove(v2(tc, 'addressbookdistributionlists', l.ListId ?? ''), l.ListName ?? '', () => {
              if (editingList?.ListId === l.ListId) closeList();
            })))),
      'data-list',
    );
    if (!directory.lists.size) lists.rows.append(h('tr', {}, h('td', { colspan: 3 }, t('config.lists.empty'))));
  };

  const load = async (): Promise<void> => {
    try {
      directory = await loadDirectory(tc);
      members.setDirectory(directory);
      render();
    } catch (error) {
      status.textContent = describeFailure(error);
    }
  };

  if (!manage) {
    for (const f of [contactForm, listForm]) {
      f.querySelectorAll<HTMLElement>('input, select, textarea, button[type=submit]').forEach((c) => c.setAttribute('disabled', ''));
    }
  }
  void load();
}
