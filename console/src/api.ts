// The one API client: every request of the console goes through `api`. Credentials are
// the session cookie (same origin only); unsafe methods carry the session's CSRF token;
// problem+json answers become typed errors; a 401 sends the user back to login (and then
// back to where they were, through the `unauthorized` hook the app installs).

import type { components } from './api-schema';

// The API's records are the types of its own OpenAPI document: `api-schema.d.ts` is
// generated from `safetrack openapi` by `npm run types` (openapi-typescript), and an API
// test fails when the committed file is not what the current document generates. A page
// that reads a field the document does not have fails `tsc`.

/** Every schema of the document, by name. */
export type Schemas = components['schemas'];

/**
 * A record as a read answers it: the document has one schema per record for reads and
 * writes, where the key fields (set by the server, or the path's) may be absent or null;
 * a read always holds them. Only fields of the schema can be named.
 */
export type Read<T, K extends keyof T> = T & { [P in K]-?: NonNullable<T[P]> };

/** A problem+json answer; fields may be missing when the answer was not one (a proxy's page). */
export type Problem = Partial<Schemas['Problem']>;
/** One `errors[]` entry of a 400: the field (`Recipients[2].ContactId`) and its message. */
export type ProblemField = Schemas['ProblemField'];
/** `GET /auth/session`, the login's answer. */
export type Session = Schemas['SessionCaller'];

export type Alert = Read<Schemas['Alert'], 'AlertId'>;
export type Device = Read<Schemas['Device'], 'DeviceId'>;
export type User = Schemas['User'];
export type Tenant = Schemas['Tenant'];
export type MoMessage = Schemas['MoMessage'];
export type MtMessage = Schemas['MtMessage'];
export type Geofence = Schemas['Geofence'];
export type EventNotification = Schemas['EventNotification'];
export type Recipient = Schemas['Recipient'];
export type Contact = Schemas['Contact'];
export type ContactEntry = Schemas['ContactEntry'];
export type DistributionList = Schemas['DistributionList'];
export type Delivery = Schemas['Delivery'];
export type Group = Schemas['Group'];
export type ApiToken = Schemas['ApiToken'];
/** A monitoring session (DESIGN §11): `GET /V2/{t}/monitoring`, `…/devices/{id}/monitoring`. */
export type MonitoringSession = Schemas['MonitoringSession'];
/** What a start sends and a PATCH changes. */
export type MonitoringSettings = Schemas['MonitoringSettings'];
/** What an operator's force stop sends (`POST …/monitoring/forcestop`): the reason, required. */
export type MonitoringForceStop = Schemas['MonitoringForceStop'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.name = 'ApiError';
  }

  /** The `<code>` of a `urn:safetrack:problem:<code>` type. */
  get code(): string | undefined {
    return this.problem.type?.startsWith('urn:safetrack:problem:')
      ? this.problem.type.slice('urn:safetrack:problem:'.length)
      : undefined;
  }
}
/** 401: no session, or it expired. */
export class UnauthorizedError extends ApiError {}
/** 403: the caller may not do this. */
export class ForbiddenError extends ApiError {}
export class NotFoundError extends ApiError {}
/** 409 / 412: someone else changed the record first. */
export class ConflictError extends ApiError {}
/** 400 / 422: what was sent is not valid (the problem names the fields). */
export class ValidationError extends ApiError {}
/** The server could not be reached at all. */
export class NetworkError extends Error {}

type Fetch = typeof fetch;

export interface ApiOptions {
  headers?: Record<string, string>;
  /** Answer the raw response (downloads, headers) instead of parsed JSON. */
  raw?: boolean;
  signal?: AbortSignal;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class Api {
  private csrf: string | undefined;
  /** Called once per 401 (outside the login request itself). */
  unauthorized: (() => void) | undefined;

  constructor(private readonly fetcher: Fetch = (...a) => fetch(...a)) {}

  setCsrf(token: string | null | undefined): void {
    this.csrf = token ?? undefined;
  }

  async request<T>(method: string, path: string, body?: unknown, options: ApiOptions = {}): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    if (body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = 'application/json';
    }
    if (UNSAFE.has(method) && this.csrf) headers['X-CSRF-Token'] = this.csrf;
    let response: Response;
    try {
      response = await this.fetcher(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
        signal: options.signal,
      });
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') throw e;
      throw new NetworkError(String(e));
    }
    if (!response.ok) throw await this.error(response, path);
    if (options.raw) return response as unknown as T;
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(path: string, options?: ApiOptions): Promise<T> {
    return this.request<T>('GET', path, undefined, options);
  }
  post<T>(path: string, body?: unknown, options?: ApiOptions): Promise<T> {
    return this.request<T>('POST', path, body ?? {}, options);
  }
  put<T>(path: string, body: unknown, options?: ApiOptions): Promise<T> {
    return this.request<T>('PUT', path, body, options);
  }
  /** An RFC 6902 JSON Patch. */
  patch<T>(path: string, operations: unknown[], options: ApiOptions = {}): Promise<T> {
    return this.request<T>('PATCH', path, operations, {
      ...options,
      headers: { ...options.headers, 'Content-Type': 'application/json-patch+json' },
    });
  }
  /** One page of a continuation-paged list, and the token of the next (null at the end). */
  async page<T>(path: string, token: string | null = null): Promise<{ items: T[]; next: string | null }> {
    const headers: Record<string, string> = token ? { 'X-CONTINUATIONTOKEN': token } : {};
    const response = await this.request<Response>('GET', path, undefined, { headers, raw: true });
    return { items: (await response.json()) as T[], next: response.headers.get('X-CONTINUATIONTOKEN') };
  }
  delete<T>(path: string, options?: ApiOptions): Promise<T> {
    return this.request<T>('DELETE', path, undefined, options);
  }

  /** Every page of a continuation-paged list (`X-CONTINUATIONTOKEN`). */
  async all<T>(path: string): Promise<T[]> {
    let out: T[] = [];
    let token: string | null = null;
    do {
      const page: { items: T[]; next: string | null } = await this.page<T>(path, token);
      // concat, not push(...items): a spread of a very long page overflows the call stack.
      out = out.concat(page.items);
      token = page.next;
    } while (token);
    return out;
  }

  private async error(response: Response, path: string): Promise<ApiError> {
    let problem: Problem = { status: response.status, title: response.statusText };
    try {
      const text = await response.text();
      if (text) problem = { ...problem, ...(JSON.parse(text) as Problem) };
    } catch {
      // Not problem+json (a proxy's page): the status says enough.
    }
    const status = response.status;
    if (status === 401) {
      if (!path.startsWith('/auth/session')) this.unauthorized?.();
      return new UnauthorizedError(status, problem);
    }
    if (status === 403) return new ForbiddenError(status, problem);
    if (status === 404) return new NotFoundError(status, problem);
    if (status === 409 || status === 412) return new ConflictError(status, problem);
    if (status === 400 || status === 422) return new ValidationError(status, problem);
    return new ApiError(status, problem);
  }
}

export const api = new Api();

/** `/V2/{tenant}/…` with each segment escaped. */
export function v2(tenant: string, ...segments: string[]): string {
  return ['/V2', tenant, ...segments].map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join('/');
}
