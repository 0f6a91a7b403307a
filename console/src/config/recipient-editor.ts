// The recipients of a notification or a distribution list: the chosen ones (each with a
// remove button and its error place `Recipients[i]`), and a row to add one — a type the
// API knows, then the address book contact, list, group or value that type needs.
import { api, v2 } from '../api';
import { h } from '../dom';
import { t, type Key } from '../i18n';
import { en } from '../i18n/en';
import { FormErrors, uid } from './form';
import {
  makeRecipient,
  recipientDetail,
  recipientTypes,
  recipientValue,
  type Contact,
  type DistributionList,
  type Recipient,
} from './recipients';

export interface Directory {
  contacts: Map<string, Contact>;
  lists: Map<string, DistributionList>;
  groups: { GroupId?: string | null; Name?: string | null }[];
  types: string[];
}

/** The tenant's address book, lists and groups, and the recipient types. */
export async function loadDirectory(tc: string): Promise<Directory> {
  const [contacts, lists, groups, types] = await Promise.all([
    api.get<Contact[]>(v2(tc, 'addressbookcontacts')).catch(() => [] as Contact[]),
    api.get<DistributionList[]>(v2(tc, 'addressbookdistributionlists')).catch(() => [] as DistributionList[]),
    api.get<{ GroupId?: string; Name?: string }[]>(v2(tc, 'groups')).catch(() => []),
    recipientTypes(),
  ]);
  return {
    contacts: new Map(contacts.map((c) => [c.ContactId ?? '', c])),
    lists: new Map(lists.map((l) => [l.ListId ?? '', l])),
    groups,
    types,
  };
}

export function recipientTypeLabel(type: string): string {
  const key = `config.recipient.${type}`;
  return key in en ? t(key as Key) : type;
}

export class RecipientEditor {
  readonly element: HTMLElement;
  private recipients: Recipient[] = [];
  private readonly chosen = h('ul', { class: 'recipients', 'data-testid': 'recipients' });
  private readonly type = h('select', { id: uid('rtype') });
  private readonly valueBox = h('div', { class: 'recipient-value' });
  private value: HTMLInputElement | HTMLSelectElement | null = null;
  private detail: HTMLSelectElement | null = null;

  constructor(
    private directory: Directory,
    private readonly errors: FormErrors,
    private readonly editable: boolean,
  ) {
    const add = h('button', { type: 'button', 'data-testid': 'add-recipient' }, t('config.recipients.add'));
    add.addEventListener('click', () => this.add());
    this.type.addEventListener('change', () => this.showValue());
    this.element = h(
      'fieldset',
      { class: 'recipient-editor' },
      h('legend', {}, t('config.recipients.legend')),
      errors.slot('Recipients'),
      this.chosen,
      editable
        ? h('div', { class: 'recipient-add' },
            h('div', { class: 'field' }, h('label', { for: this.type.id }, t('config.recipients.type')), this.type),
            this.valueBox,
            add)
        : null,
    );
    this.setTypes();
  }

  setDirectory(directory: Directory): void {
    this.directory = directory;
    this.setTypes();
    this.render();
  }

  private setTypes(): void {
    const keep = this.type.value;
    this.type.replaceChildren(...this.directory.types.map((ty) => h('option', { value: ty }, recipientTypeLabel(ty))));
    if (keep && this.directory.types.includes(keep)) this.type.value = keep;
    else if (this.directory.types.includes('TenantContact')) this.type.value = 'TenantContact';
    this.showValue();
  }

  set(recipients: Recipient[] | null | undefined): void {
    this.recipients = [...(recipients ?? [])];
    this.render();
  }

  get(): Recipient[] {
    return [...this.recipients];
  }

  private showValue(): void {
    const type = this.type.value;
    this.value = null;
    this.detail = null;
    const id = uid('rv');
    const label = (key: Key): HTMLElement => h('label', { for: id }, t(key));
    const kind = recipientValue(type);
    if (kind === 'contact') {
      const select = h('select', { id }, ...[...this.directory.contacts.values()].map((c) => h('option', { value: c.ContactId ?? '' }, c.ContactName ?? '')));
      const detailId = uid('rd');
      const detail = h('select', { id: detailId });
      const fillDetail = (): void => {
        const c = this.directory.contacts.get(select.value);
        detail.replaceChildren(
          h('option', { value: '' }, t('config.recipients.allEntries')),
          ...(c?.ContactEntries ?? []).map((e) => h('option', { value: e.EntryId ?? '' }, e.Address ?? '')),
        );
      };
      select.addEventListener('change', fillDetail);
      fillDetail();
      this.value = select;
      this.detail = detail;
      this.valueBox.replaceChildren(
        ...(this.directory.contacts.size
          ? [
              h('div', { class: 'field' }, label('config.recipients.contact'), select),
              h('div', { class: 'field' }, h('label', { for: detailId }, t('config.recipients.entry')), detail),
            ]
          : [h('p', { class: 'hint' }, t('config.recipients.noContacts'))]),
      );
    } else if (kind === 'list') {
      const select = h('select', { id }, ...[...this.directory.lists.values()].map((l) => h('option', { value: l.ListId ?? '' }, l.ListName ?? '')));
      this.value = select;
      this.valueBox.replaceChildren(
        this.directory.lists.size ? h('div', { class: 'field' }, label('config.recipients.list'), select) : h('p', { class: 'hint' }, t('config.recipients.noLists')),
      );
    } else if (kind === 'group') {
      const select = h('select', { id }, ...this.directory.groups.map((g) => h('option', { value: g.GroupId ?? '' }, g.Name ?? g.GroupId ?? '')));
      this.value = select;
      this.valueBox.replaceChildren(h('div', { class: 'field' }, label('config.recipients.group'), select));
    } else if (kind !== 'none') {
      const key: Key = kind === 'address' ? 'config.recipients.address' : kind === 'radius' ? 'config.recipients.radius' : kind === 'frequency' ? 'config.recipients.frequency' : 'config.recipients.interval';
      const input = h('input', { id, type: kind === 'address' ? 'text' : 'number', step: 'any', min: kind === 'address' ? null : 1, autocomplete: 'off' });
      this.value = input;
      this.valueBox.replaceChildren(h('div', { class: 'field' }, label(key), input));
    } else {
      this.valueBox.replaceChildren();
    }
  }

  private add(): void {
    const type = this.type.value;
    if (!type) return;
    const needs = recipientValue(type) !== 'none';
    if (needs && !this.value?.value.trim()) {
      this.value?.setAttribute('aria-invalid', 'true');
      this.value?.focus();
      return;
    }
    this.value?.removeAttribute('aria-invalid');
    this.recipients.push(makeRecipient(type, this.value?.value ?? '', this.detail?.value ?? ''));
    if (this.value instanceof HTMLInputElement) this.value.value = '';
    this.render();
  }

  private render(): void {
    this.errors.forget('Recipients[');
    this.chosen.replaceChildren(
      ...this.recipients.map((r, i) => {
        const detail = recipientDetail(r, this.directory.contacts, this.directory.lists);
        const text = detail ? `${recipientTypeLabel(r.Type ?? '')}: ${detail}` : recipientTypeLabel(r.Type ?? '');
        const remove = this.editable
          ? h('button', { type: 'button', 'aria-label': t('config.recipients.remove', { recipient: text }) }, t('config.remove'))
          : null;
        remove?.addEventListener('click', () => {
          this.recipients.splice(i, 1);
          this.render();
        });
        const row = h('li', { 'data-type': r.Type ?? '' }, h('span', {}, text), remove);
        row.append(this.errors.slot(`Recipients[${i}]`, ...(remove ? [remove] : [])));
        return row;
      }),
    );
    if (!this.recipients.length) this.chosen.append(h('li', { class: 'hint' }, t('config.recipients.none')));
  }
}
